"""The goldens that evaluate a function op by op, each in a process of its own, so that
their death is their own.

StableHLO's interpreter aborts the process on ops it does not evaluate (``LLVM ERROR:
Unsupported op: chlo.erf``) and dies of SIGFPE on some it does; PyTorch's ATen runs native
kernels too. In the worker, that would be the item's crash, charged to the code under
test. So the worker keeps a child per such golden (``python -m
pytest_mlir_snippets.worker.judging.goldenprocess GOLDEN``, started at its first use, kept,
started again after it died) that answers ``Reference`` requests with the golden's
outputs. The child dies with the worker (the parent-death signal) and inherits its memory
limit.

A golden that cannot evaluate the function, failed, died, or gave no answer in time
(``reference.SHARE`` of the time left to the item) is a golden that could not be computed,
in words: ``GoldenUnavailable`` ("StableHLO's interpreter aborted: Unsupported op:
chlo.erf"); the caller tries the next golden.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable

import numpy as np

from pytest_mlir_snippets import children
from pytest_mlir_snippets.protocol import Kind, Options, Recorded, Reference, Response, read_request, write_message
from pytest_mlir_snippets.worker.core import SnippetFailure
from pytest_mlir_snippets.workerprocess import WorkerProcess

INTERPRETER, TORCH = "interpreter", "torch"  # the goldens a child evaluates
_LLVM_ERROR = re.compile(r"LLVM ERROR: (.*)")
_OP_TEXT = re.compile(r'(Unsupported op: )(?:[^=]*= )?"?([a-z_]\w*\.[\w.]+)\b.*')  # the op's name, not its text


class GoldenUnavailable(Exception):
    """The golden gave no outputs (why, in words); the caller tries the next one."""


class GoldenProcess:
    """The child process of one golden (``INTERPRETER``, ``TORCH``), started at its first use."""

    def __init__(self, golden: str) -> None:
        self._process = WorkerProcess(golden, fixed_layout=False, module=__name__)

    def outputs(self, name: str, module: str, function: str, options: Options, inputs: list[np.ndarray],
                timeout: float | None) -> list[np.ndarray]:
        """The golden's outputs for ``function`` of ``module`` on ``inputs``, within ``timeout``
        seconds; ``GoldenUnavailable`` with the reason otherwise (``name``: the golden in words)."""
        response = self._process.call(Reference(module, function, Recorded(inputs), options=options), timeout)
        if response.ok and response.values is not None:
            return list(response.values)
        raise GoldenUnavailable(died(name, response, timeout))

    def close(self) -> None:
        self._process.close()


def died(name: str, response: Response, timeout: float | None) -> str:
    """Why the golden gave no outputs, in one line: what it said, how it died."""
    if response.kind is Kind.TIMEOUT:
        return f"{name} gave no outputs within {timeout or 0:.1f} s: it was stopped"
    if response.kind is Kind.CRASH:
        said = [m.group(1).strip() for m in _LLVM_ERROR.finditer(response.stderr)]
        if said:
            return f"{name} aborted: " + _OP_TEXT.sub(r"\1\2", said[-1])[:300]
        status = children.exit_status(response.returncode) if response.returncode is not None else "died"
        return f"{name} {status}"
    return response.message or f"{name} answered no outputs"


def _interpret(request: Reference, inputs: list[np.ndarray]) -> list[np.ndarray]:
    from pytest_mlir_snippets.worker.judging.interpreter import InterpreterUnavailable, interpret

    try:
        return interpret(request.module, request.function, inputs, "cpu")
    except InterpreterUnavailable as why:
        raise GoldenUnavailable(f"the StableHLO interpreter could not run it: {why}") from None


def _torch(request: Reference, inputs: list[np.ndarray]) -> list[np.ndarray]:
    from pytest_mlir_snippets.worker.judging import torcheval
    from pytest_mlir_snippets.worker.judging.torchvalues import NotEvaluable

    try:
        return torcheval.evaluate(request.module, request.function, inputs)
    except NotEvaluable as why:
        raise GoldenUnavailable(str(why)) from None
    except Exception as why:  # the golden's failure, never the item's
        raise GoldenUnavailable(f"{torcheval.name_for(request.module)} failed: {type(why).__name__}: {why}") from None


EVALUATORS: dict[str, Callable[[Reference, list[np.ndarray]], list[np.ndarray]]] = {
    INTERPRETER: _interpret, TORCH: _torch}


def answer(golden: str, request: Reference) -> Response:
    """The golden's outputs on the request's inputs, or why there are none."""
    inputs = list(request.recorded.inputs) if request.recorded else []
    try:
        return Response(Kind.PASS, values=EVALUATORS[golden](request, inputs))
    except GoldenUnavailable as why:
        return Response(Kind.UNSUPPORTED, str(why))
    except SnippetFailure as failure:  # torch-mlir is not installed
        return Response(failure.kind, failure.message)
    except Exception as error:  # the golden's failure, never the item's
        return Response(Kind.EXECUTE_ERROR, f"the {golden} golden failed: {type(error).__name__}: {error}")


def main() -> int:
    """Requests on stdin, answers on a private copy of stdout; fds 1 and 2 go to the
    parent's capture file, where an abort's ``LLVM ERROR`` line is read back."""
    golden = sys.argv[1]
    requests = os.fdopen(0, "rb", buffering=0)
    responses = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    while True:
        request = read_request(requests)
        if request is None:
            os._exit(0)  # no teardown of MLIR's bindings
        assert isinstance(request, Reference), f"a golden's process takes Reference requests, not {request}"
        write_message(responses, answer(golden, request))


if __name__ == "__main__":
    sys.exit(main())
