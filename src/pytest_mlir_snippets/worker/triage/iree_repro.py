"""Which pass of IREE's compiler failed, and the command that fails the same way.

IREE's compile runs in the worker through its Python API, whose pass manager gives no way
to name the pass that failed. On a failure, ``iree-compile`` (the installed tool) compiles
the same text with the same flags and MLIR's local crash reproducer
(``--mlir-pass-pipeline-crash-reproducer`` with ``--mlir-pass-pipeline-local-reproducer``):
on a pass's failure or crash it writes the IR that pass received, its pipeline a
one-pass ``builtin.module(...)`` in the file's ``mlir_reproducer`` resource
(``iree-opt --run-reproducer FILE`` runs it). That pass is ``failing_pass``; the item's
``reproduce.sh`` runs ``iree-compile`` on the text the compile was given
(``failing_input``), with the item's flags.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

from pytest_mlir_snippets.mlirtext.native import native_tool
from pytest_mlir_snippets.protocol import Triage
from pytest_mlir_snippets.worker.triage.failingpass import steps

_PIPELINE = re.compile(r'^\s*pipeline:\s*"(.*)",?\s*$', re.MULTILINE)
LOCATE_TIMEOUT = 120.0  # seconds for iree-compile to fail again


def locate(text: str, flags: list[str], parsed: bool = True, timeout: float = LOCATE_TIMEOUT) -> Triage:
    """The command that compiles ``text`` as the worker did (``failing_tool``,
    ``failing_args``, ``failing_input``: the text it reads), and when ``iree-compile``'s
    reproducer names one, the failing pass as written in its pipeline (``failing_pass``)
    and the IR it received (``before_pass_ir``, runnable by ``iree-opt --run-reproducer``);
    else ``failing_pass`` is ``iree-compile`` (``import`` when ``text`` did not parse)."""
    args = [*flags, "-o", "/dev/null"]
    found = Triage(failing_pass="iree-compile" if parsed else "import", failing_tool="iree-compile",
                   failing_args=args, failing_input=text, before_pass_ir=text)
    compiler = native_tool("iree-compile")
    if not Path(compiler).is_file() or not parsed:
        return found
    with tempfile.TemporaryDirectory(prefix="mlir-iree-repro-") as folder:
        source, repro = Path(folder) / "input.mlir", Path(folder) / "repro.mlir"
        source.write_text(text)
        try:
            subprocess.run([compiler, str(source), *args, f"--mlir-pass-pipeline-crash-reproducer={repro}",
                            "--mlir-pass-pipeline-local-reproducer", "--mlir-disable-threading"],
                           capture_output=True, timeout=timeout, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return found
        written = repro.read_text(errors="replace") if repro.is_file() else ""
    pipeline = _PIPELINE.search(written)
    passes = steps(pipeline.group(1)) if pipeline else []
    if passes:
        found.failing_pass, found.before_pass_ir = passes[-1][0], written
    return found
