"""The interface every target implements. It runs inside the sandbox worker.

A backend compiles one standalone module, opens its device, and executes a
compiled module with inputs. It reports problems by raising ``SnippetFailure``;
anything else that escapes is a bug in the backend and is shown as one.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping

import numpy as np

from pytest_mlir_snippets.protocol import DeviceFacts, Kind, Options, Recorded, Triage
from pytest_mlir_snippets.worker.core import Compiled, Executed, Kept, Reference, SnippetFailure

# the core types, re-exported for backends
__all__ = ["Backend", "Compiled", "Executed", "Kept", "Reference", "SnippetFailure"]


class Backend(abc.ABC):
    """One target. Subclasses live in one module each under ``worker/targets/``."""

    name: str = ""

    def missing(self) -> str | None:
        """Why this target cannot work here (missing packages), or None."""
        return None

    @abc.abstractmethod
    def compile(self, module: str, function: str, options: Options,
                constants: Mapping[int, np.ndarray] | None = None) -> Compiled:
        """Compile the split module; raise SnippetFailure(COMPILE_ERROR or UNSUPPORTED).

        ``constants``: the recorded values of small integer inputs, when the snippet
        has recorded data. A backend may bake them in when the function does not
        compile as written (then ``facts.baked`` says which), never otherwise.
        """

    @abc.abstractmethod
    def execute(self, compiled: Compiled, options: Options, recorded: Recorded | None) -> Executed:
        """Run and check against the reference; return the judged run or raise."""

    def run(self, compiled: Compiled, inputs: list[np.ndarray], options: Options) -> list[np.ndarray]:
        """Run ``compiled`` on the caller's ``inputs`` (checked against its signature:
        ``worker.given``) and return its results, unjudged (``mlir_device.run``)."""
        raise SnippetFailure(Kind.UNSUPPORTED, f"target {self.name} does not run given inputs (mlir_device.run) "
                             "yet: its backend has no run()")

    def compile_iteration(self, model: str, schedule: str, pipeline: str, function: str) -> Compiled:
        """An optimization-run iteration (``model_linalg.mlir``, its ``transform.mlir``
        and ``pass_pipeline.txt``) compiled once, ready to run: everything its stages
        read is in the result (``Compiled.ir``, the text of ``vN/llvm.mlir`` or ``vN/gpu.mlir``;
        ``iteration``: host ops, kernels, ``compiled_digest``; ``facts.ptx``), so that what is checked is what is
        run and timed (``worker/optrun/iteration.py``)."""
        raise SnippetFailure(Kind.UNSUPPORTED, f"optimization runs are not run on target {self.name} yet")

    def benchmark(self, compiled: Compiled, options: Options, recorded: Recorded | None) -> dict[str, float]:
        """Time ``compiled`` (``benchstats.measure``); return its statistics."""
        raise SnippetFailure(Kind.UNSUPPORTED, f"benchmarks are not run on target {self.name}")

    def reference_for(self, module: str, function: str, options: Options, inputs: list[np.ndarray]) -> Reference:
        """Reference outputs for another target's run on ``inputs`` (``worker/judging/reference.py``):
        a second compiler's (cpu for the IREE targets, iree-cpu for cpu)."""
        raise SnippetFailure(Kind.UNSUPPORTED, f"target {self.name} gives no reference outputs")

    def bisect(self, module: str, function: str, options: Options, recorded: Recorded | None,
               constants: Mapping[int, np.ndarray]) -> Triage:
        """A golden-mismatch's ``diverged_after``: the step of its pipeline after which its
        results stop matching (``worker/triage/bisect.py``), and the cuts tried (``bisect_cuts``)."""
        raise SnippetFailure(Kind.UNSUPPORTED, f"--mlir-bisect: target {self.name} does not bisect yet")

    # Device lifecycle: the defaults suit a target whose device is the host.
    def configure(self, options: Options) -> None:  # noqa: B027 - optional, empty by default
        """Take the run's device options (before ``open_device``)."""

    def open_device(self, device_id: int | None) -> DeviceFacts:
        """Open the device; return a description of it."""
        return DeviceFacts("host", device_id)

    def probe(self) -> None:  # noqa: B027 - optional, empty by default
        """Check that the open device still works; raise if not."""

    forgets_compiled = False  # whether reset() makes what was compiled before unusable

    def reset(self) -> None:  # noqa: B027 - optional, empty by default
        """Bring the device back to a known state after a failed item."""

    def close_device(self) -> None:  # noqa: B027 - optional, empty by default
        """Release the device."""
