"""The cpu target as a reference for a target that cannot load it in its own process.

IREE's compiler bindings and the upstream ``mlir`` bindings ship libraries of the same
names (``libnanobind-mlir.so``, ``libMLIRPythonSupport-mlir.so``) built differently:
whichever is loaded second fails to import. So an IREE worker asks a cpu worker of
its own (a child process, started at the first snippet without recorded outputs and
kept) for the reference outputs: the ``reference`` request, answered by
``CpuBackend.reference_for`` (StableHLO's interpreter, else the plain lowering).
The child is in the worker's process group, so the sandbox's kill (a crash, a
timeout) takes it too; it also dies with the worker (the parent-death signal).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from dataclasses import replace
from typing import Any

import numpy as np

from pytest_mlir_snippets.protocol import Kind, Options, Request, read_message, write_message
from pytest_mlir_snippets.worker.targets.base import SnippetFailure

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the worker that started it dies."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class CpuReference:
    """A cpu worker in a child process, answering ``reference`` requests."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None

    def _started(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            # its stderr is the worker's (the item's captured output); stdout carries responses
            self._proc = subprocess.Popen([sys.executable, "-m", "pytest_mlir_snippets.worker", "cpu"],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, preexec_fn=_die_with_parent)
        return self._proc

    def outputs(self, module: str, function: str, options: Options,
                inputs: list[np.ndarray]) -> tuple[list[np.ndarray], str]:
        """The cpu target's outputs for ``function`` of ``module`` on ``inputs``, and their name."""
        proc = self._started()
        assert proc.stdin is not None and proc.stdout is not None
        request = Request("reference", module, function, replace(options, target="cpu"), {"inputs": inputs})
        try:
            write_message(proc.stdin, request)  # type: ignore[arg-type]
            response: Any = read_message(proc.stdout)  # type: ignore[arg-type]
        except (BrokenPipeError, OSError):
            response = None
        if response is None:  # the child died (an abort in the cpu lowering): started again next time
            code = proc.wait()
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"the reference (cpu target) crashed (exit code {code}) "
                                 "computing the expected outputs")
        if not response.ok:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"the reference (cpu target) failed: {response.message}",
                                 response.diagnostics)
        return list(response.info["values"]), str(response.info["reference"])

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.kill(self._proc.pid, signal.SIGKILL)
        self._proc = None
