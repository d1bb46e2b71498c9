"""Another target as the reference of this one: the second compiler of a differential check.

IREE's compiler bindings and the upstream ``mlir`` bindings ship libraries of the same
names (``libnanobind-mlir.so``, ``libMLIRPythonSupport-mlir.so``) built differently:
whichever is loaded second fails to import. So a worker asks a worker of the other
target (a ``client.Sandbox`` of its own, started at the first function that needs it and
kept) for the reference outputs: the ``reference`` request, answered by that target's
``Backend.reference_for`` (an IREE worker asks the cpu target: StableHLO's interpreter,
else its lowering; a cpu worker asks iree-cpu). The child dies with the worker (the
parent-death signal), so the sandbox's kill of the worker (a crash, a timeout) takes it too.

The reference has most of the time left to the request (``SHARE`` of it, to
``Options.deadline``; the rest is for the next golden and the answer): a reference that
hangs or crashes is a reference that could not be computed (``SnippetFailure``, which the
judge turns into "no independent golden" with the reason), not the item's crash or timeout.
What the child wrote to its stderr joins the worker's (the item's captured output).
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace

import numpy as np

from pytest_mlir_snippets.client import Sandbox
from pytest_mlir_snippets.protocol import Kind, Options, Response
from pytest_mlir_snippets.worker.core import Reference, SnippetFailure

SHARE = 0.8  # of the time left to the request, what the reference may take


def share(options: Options) -> float | None:
    """The seconds a reference may take: ``SHARE`` of the time left to the request (None: no limit)."""
    return None if options.deadline is None else max(0.1, (options.deadline - time.monotonic()) * SHARE)


class OtherTarget:
    """A worker of ``target`` in a child process, answering ``reference`` requests."""

    def __init__(self, target: str) -> None:
        self.target = target
        self._sandbox = Sandbox(target, fixed_layout=False)  # the worker's memory limit is inherited

    def outputs(self, module: str, function: str, options: Options, inputs: list[np.ndarray]) -> Reference:
        """The other target's outputs for ``function`` of ``module`` on ``inputs``; a
        ``SnippetFailure`` when it cannot give them (it cannot compile or run the function,
        it crashed, it did not answer in time)."""
        timeout = share(options)
        response = self._sandbox.reference(module, function, replace(options, target=self.target, pipeline=None),
                                           inputs, timeout)
        if response.stderr:
            sys.stderr.write(response.stderr)
            sys.stderr.flush()
        if not response.ok:
            raise SnippetFailure(Kind.EXECUTE_ERROR, self._failed(response, timeout), response.diagnostics)
        if response.values is None or response.verdict is None or response.verdict.golden is None:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"the reference ({self.target} target) answered no outputs")
        return Reference(list(response.values), response.verdict.reference, response.verdict.golden)

    def _failed(self, response: Response, timeout: float | None) -> str:
        """Why the reference gave no outputs, in one line first."""
        who = f"the reference ({self.target} target)"
        if response.kind is Kind.CRASH:  # started again at the next request
            return f"{who} crashed (exit code {response.returncode}) computing the expected outputs"
        if response.kind is Kind.TIMEOUT:
            return (f"{who} gave no outputs within {timeout:.1f} s (four fifths of the time left to the item): "
                    "it was stopped")
        first = next((d.message for d in response.diagnostics if d.severity == "error"), "")
        return f"{who} failed: {response.message}" + (f" ({first.splitlines()[0]})" if first else "")

    def close(self) -> None:
        self._sandbox.close()
