"""Which step a crashed compile died in: a compile whose worker died (an LLVM assertion,
SIGSEGV, SIGFPE in a pass) runs again in a worker of its own, with ``protocol.PROGRESS_ENV``
naming a file. That worker runs its pipelines one pass at a time and writes, before each
pass and each of the plugin's own steps, the step and the IR it received
(``worker/triage/failingpass.py``); after the crash the file names the step, as a compile
error names its pass (``failing_pass``, ``before_pass_ir``, the command that runs it alone).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from pytest_mlir_snippets.client import Sandbox
from pytest_mlir_snippets.protocol import (
    PROGRESS_ENV,
    Compile,
    FunctionRequest,
    IterationCompile,
    Kind,
    Request,
    Response,
    apply_info,
)

MIN_SECONDS = 1.0  # a second run with less time left than this is not tried


def locate(target: str, memory_limit: int | None, request: Request, crashed: Response,
           timeout: float | None) -> Response:
    """``crashed`` (the answer to the compile ``request``) with the step that crashed, when
    the compile crashes again, one pass at a time, in a step the worker marked; else as it was.
    ``timeout``: the first run's, of which the second gets what the first left. A snippet's
    compile and an optimization run's iteration's (schedule and pipeline) alike."""
    if type(request) not in (Compile, IterationCompile) or not isinstance(request, FunctionRequest) \
            or crashed.kind is not Kind.CRASH or not request.module:
        return crashed  # (a RUN line's compile, LitCompile: lit's command, not a pipeline of passes)
    if timeout is not None:  # what is left of the caller's time (pytest-timeout's, with a budget)
        timeout -= crashed.seconds
        if timeout < MIN_SECONDS:
            return crashed
    with tempfile.TemporaryDirectory(prefix="mlir-triage-") as folder:
        progress = Path(folder) / "progress.json"
        sandbox = Sandbox(target, memory_limit, env={**os.environ, PROGRESS_ENV: str(progress)})
        try:
            again = sandbox.call(request, timeout)
        finally:
            sandbox.close()
        if again.kind is not Kind.CRASH or not progress.is_file():
            return crashed
        try:
            found = json.loads(progress.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return crashed
    located = Response(crashed.kind)  # what the progress file says, read as the worker wrote it
    if not isinstance(found, dict) or not apply_info(located, found) or located.triage is None \
            or not located.triage.failing_pass:
        return crashed
    crashed.triage = located.triage  # a worker that died answered no triage of its own
    crashed.message = f"{crashed.message} in {located.triage.failing_pass}"
    return crashed

