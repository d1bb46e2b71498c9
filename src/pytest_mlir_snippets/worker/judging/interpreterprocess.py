"""StableHLO's interpreter in a process of its own, so that its death is its own.

The interpreter aborts the process on ops it does not evaluate (``LLVM ERROR: Unsupported
op: chlo.erf``) and dies of SIGFPE on some it does (integer division by zero): in the
worker, that would be the item's crash, charged to the code under test. So the worker
keeps a child (``python -m pytest_mlir_snippets.worker.judging.interpreterprocess``,
started at the first StableHLO function without recorded outputs, kept, started again
after it died) that answers ``Reference`` requests with the interpreter's outputs. The
child dies with the worker (the parent-death signal) and inherits its memory limit.

A child that died, or gave no answer in time (``reference.SHARE`` of the time left to the
item), is a golden that could not be computed, in words: ``InterpreterUnavailable``
("StableHLO's interpreter aborted: Unsupported op: chlo.erf"); the caller tries the next
golden.
"""

from __future__ import annotations

import os
import re
import sys

import numpy as np

from pytest_mlir_snippets import children
from pytest_mlir_snippets.protocol import Kind, Options, Recorded, Reference, Response, read_request, write_message
from pytest_mlir_snippets.worker.core import SnippetFailure
from pytest_mlir_snippets.worker.judging.interpreter import InterpreterUnavailable, interpret
from pytest_mlir_snippets.workerprocess import WorkerProcess

NAME = "StableHLO's interpreter"
_LLVM_ERROR = re.compile(r"LLVM ERROR: (.*)")
_OP_TEXT = re.compile(r'(Unsupported op: )(?:[^=]*= )?"?([a-z_]\w*\.[\w.]+)\b.*')  # the op's name, not its text


class InterpreterProcess:
    """The interpreter's child process, started at its first use."""

    def __init__(self) -> None:
        self._process = WorkerProcess("cpu", fixed_layout=False, module=__name__)

    def outputs(self, module: str, function: str, options: Options, inputs: list[np.ndarray],
                timeout: float | None) -> list[np.ndarray]:
        """The interpreter's outputs for ``function`` of ``module`` on ``inputs``, within
        ``timeout`` seconds; ``InterpreterUnavailable`` with the reason otherwise."""
        response = self._process.call(Reference(module, function, Recorded(inputs), options=options), timeout)
        if response.ok and response.values is not None:
            return list(response.values)
        raise InterpreterUnavailable(died(response, timeout))

    def close(self) -> None:
        self._process.close()


def died(response: Response, timeout: float | None) -> str:
    """Why the interpreter gave no outputs, in one line: what it said, how it died."""
    if response.kind is Kind.TIMEOUT:
        return f"{NAME} gave no outputs within {timeout or 0:.1f} s: it was stopped"
    if response.kind is Kind.CRASH:
        said = [m.group(1).strip() for m in _LLVM_ERROR.finditer(response.stderr)]
        if said:
            return f"{NAME} aborted: " + _OP_TEXT.sub(r"\1\2", said[-1])[:300]
        status = children.exit_status(response.returncode) if response.returncode is not None else "died"
        return f"{NAME} {status}"
    return response.message or f"{NAME} answered no outputs"


def answer(request: Reference) -> Response:
    """The interpreter's outputs on the request's inputs, or why there are none."""
    inputs = request.recorded.inputs if request.recorded else []
    try:
        return Response(Kind.PASS, values=interpret(request.module, request.function, list(inputs), "cpu"))
    except InterpreterUnavailable as why:
        return Response(Kind.UNSUPPORTED, f"the StableHLO interpreter could not run it: {why}")
    except SnippetFailure as failure:  # torch-mlir is not installed
        return Response(failure.kind, f"the StableHLO interpreter could not run it: {failure.message}")
    except Exception as error:  # the golden's failure, never the item's
        return Response(Kind.EXECUTE_ERROR, f"{NAME} failed: {type(error).__name__}: {error}")


def main() -> int:
    """Requests on stdin, answers on a private copy of stdout; fds 1 and 2 go to the
    parent's capture file, where an abort's ``LLVM ERROR`` line is read back."""
    requests = os.fdopen(0, "rb", buffering=0)
    responses = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    while True:
        request = read_request(requests)
        if request is None:
            os._exit(0)  # no teardown of MLIR's bindings
        assert isinstance(request, Reference), f"the interpreter's process takes Reference requests, not {request}"
        write_message(responses, answer(request))


if __name__ == "__main__":
    sys.exit(main())
