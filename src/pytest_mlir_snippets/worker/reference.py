"""Another target as the reference of this one: the second compiler of a differential check.

IREE's compiler bindings and the upstream ``mlir`` bindings ship libraries of the same
names (``libnanobind-mlir.so``, ``libMLIRPythonSupport-mlir.so``) built differently:
whichever is loaded second fails to import. So a worker asks a worker of the other
target (a child process of its own, started at the first function that needs it and
kept) for the reference outputs: the ``reference`` request, answered by that target's
``Backend.reference_for`` (an IREE worker asks the cpu target: StableHLO's interpreter,
else its lowering; a cpu worker asks iree-cpu). The child is in the worker's process
group, so the sandbox's kill (a crash, a timeout) takes it too; it also dies with the
worker (the parent-death signal).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import replace
from typing import Any

import numpy as np

from pytest_mlir_snippets import children
from pytest_mlir_snippets.protocol import GOLDEN, Golden, Kind, Options, Request, read_message, write_message
from pytest_mlir_snippets.worker.core import Reference, SnippetFailure


class OtherTarget:
    """A worker of ``target`` in a child process, answering ``reference`` requests."""

    def __init__(self, target: str) -> None:
        self.target = target
        self._proc: subprocess.Popen[bytes] | None = None

    def _started(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            # its stderr is the worker's (the item's captured output); stdout carries responses
            self._proc = subprocess.Popen([sys.executable, "-m", "pytest_mlir_snippets.worker", self.target],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          preexec_fn=children.die_with_parent())
        return self._proc

    def outputs(self, module: str, function: str, options: Options, inputs: list[np.ndarray]) -> Reference:
        """The other target's outputs for ``function`` of ``module`` on ``inputs``; a
        ``SnippetFailure`` when it cannot give them (it cannot compile or run the function)."""
        proc = self._started()
        assert proc.stdin is not None and proc.stdout is not None
        request = Request("reference", module, function, replace(options, target=self.target, pipeline=None),
                          {"inputs": inputs})
        try:
            write_message(proc.stdin, request)  # type: ignore[arg-type]
            response: Any = read_message(proc.stdout)  # type: ignore[arg-type]
        except (BrokenPipeError, OSError):
            response = None
        if response is None:  # the child died (an abort in its lowering): started again next time
            code = proc.wait()
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"the reference ({self.target} target) crashed (exit code "
                                 f"{code}) computing the expected outputs")
        if not response.ok:
            first = next((d.message for d in response.diagnostics if d.severity == "error"), "")
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"the reference ({self.target} target) failed: "
                                 f"{response.message}" + (f" ({first.splitlines()[0]})" if first else ""),
                                 response.diagnostics)
        return Reference(list(response.info["values"]), str(response.info["reference"]),
                         Golden(response.info[GOLDEN]))

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.kill(self._proc.pid, signal.SIGKILL)
        self._proc = None
