"""A failed compile's reproducer, kept beside its artifacts whatever the options: the IR the
failing pass was given (``before-<pass>.mlir``) and ``reproduce.sh``, which runs that pass
alone on it with the installed command-line tool (``mlir-opt``, or ``torch-mlir-opt`` for
the StableHLO and torch legalizations) and fails as the item did.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from pytest_mlir_snippets.mlirtext.litscript import tool
from pytest_mlir_snippets.protocol import Response

_UNSAFE = re.compile(r"[^\w.\-]+")


def remove(folder: Path) -> None:
    """A reproducer an earlier run left in ``folder``, gone (the item compiles now): the
    folder too when nothing else is in it."""
    script = folder / "reproduce.sh"
    if not script.is_file():
        return
    for path in (script, *folder.glob("before-*.mlir"), folder / "driver.mlir"):
        path.unlink(missing_ok=True)
    if {p.name for p in folder.iterdir()} <= {"snippet.mlir"}:
        (folder / "snippet.mlir").unlink(missing_ok=True)
        folder.rmdir()


def write(folder: Path, response: Response, title: str) -> Path | None:
    """``reproduce.sh`` (and the IR it reads) in ``folder`` for a compile that failed in a
    pass the worker named, replacing an earlier one; None when it named none (the failure
    is elsewhere)."""
    info = response.info
    if not info.get("failing_pipeline") or not info.get("before_pass_ir"):
        return None
    remove(folder)
    folder.mkdir(parents=True, exist_ok=True)
    failing = str(info["failing_pass"])
    before = folder / f"before-{_UNSAFE.sub('_', failing.split('{')[0])}.mlir"
    before.write_text(str(info["before_pass_ir"]))
    command = [tool(str(info.get("failing_tool", "mlir-opt"))), "--allow-unregistered-dialect", before.name,
               f"--pass-pipeline={info['failing_pipeline']}"]
    script = folder / "reproduce.sh"
    script.write_text("#!/bin/sh\n"
                      f"# {title}: {response.message.splitlines()[0] if response.message else response.kind.value}\n"
                      f"# {before.name} is the IR {failing} was given (the plugin's steps before it applied);\n"
                      "# this runs that pass alone on it, as the item's compile did.\n"
                      'cd "$(dirname "$0")" || exit 2\n'
                      f"exec {' '.join(shlex.quote(part) for part in command)}\n")
    script.chmod(0o755)
    return script
