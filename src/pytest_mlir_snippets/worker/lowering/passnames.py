"""Which passes a pipeline names that MLIR does not know, and the registered ones nearest
to each: what a bad ``--mlir-pipeline`` or ``vN/pass_pipeline.txt`` is told.

The registered names come from the wheel's ``mlir-opt --list-passes`` (the same build as
the bindings), read once per worker and only when a pipeline fails to parse.
"""

from __future__ import annotations

import difflib
import re
import subprocess
from functools import cache

from pytest_mlir_snippets.mlirtext.litscript import tool

_UNKNOWN = re.compile(r"'([^']+)' does not refer to a registered pass or pass pipeline")
_LISTED = re.compile(r"^  --([\w-]+)\b", re.M)


@cache
def registered() -> tuple[str, ...]:
    """Every pass and pass pipeline name ``mlir-opt`` lists (none when it cannot run)."""
    try:
        done = subprocess.run([tool("mlir-opt"), "--list-passes"], capture_output=True, text=True, timeout=60,
                              check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return tuple(sorted(set(_LISTED.findall(done.stdout))))


def unknown_passes(message: str) -> str:
    """For a pass manager's parse error: each unknown name with its nearest registered
    names (``'canonicalise' is not a registered pass (nearest: canonicalize)``); "" when
    the error is another one."""
    lines = []
    for name in dict.fromkeys(_UNKNOWN.findall(message)):
        near = difflib.get_close_matches(name, registered(), n=3, cutoff=0.6)
        lines.append(f"'{name}' is not a registered pass" + (f" (nearest: {', '.join(near)})" if near else
                                                               " (mlir-opt --list-passes lists them)"))
    return "; ".join(lines)


def check_pipeline(text: str) -> str:
    """"" when upstream's pass manager parses ``text``, else why not, in one line."""
    from mlir import ir, passmanager

    with ir.Context():
        try:
            passmanager.PassManager.parse(text)
        except ValueError as error:
            message = str(error)
            return unknown_passes(message) or message.splitlines()[0].removeprefix("MLIR Textual PassPipeline "
                                                                                   "Parser:")
    return ""


__all__ = ["check_pipeline", "registered", "unknown_passes"]
