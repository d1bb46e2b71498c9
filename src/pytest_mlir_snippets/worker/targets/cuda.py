"""The ``cuda`` target: PTX through the ``mlir`` wheel's NVPTX backend on any machine;
where a CUDA device is, the host code runs over upstream MLIR's CUDA runtime.

Compiling to PTX needs no GPU and no CUDA toolkit (``cuda_pipeline``); optimization
runs use it (``iteration.compile_iteration``). Where cuda-python's driver reports a
device (``cuda_driver``), compile also JIT-compiles the host code with upstream's
``libmlir_cuda_runtime.so`` and runner libraries (``cuda_host``), and execute runs it
on inputs in managed memory; results are judged like the cpu target's, against the
recorded outputs or the cpu target's plain lowering (differential). Without a device,
execute items skip with "no CUDA device".
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from pytest_mlir_snippets.protocol import DeviceFacts, Kind, Options, Recorded
from pytest_mlir_snippets.worker import benchstats
from pytest_mlir_snippets.worker.judging.goldens import Goldens
from pytest_mlir_snippets.worker.judging.judge import judge_outputs, run_inputs
from pytest_mlir_snippets.worker.lowering import jit
from pytest_mlir_snippets.worker.lowering import passes as lowering
from pytest_mlir_snippets.worker.native_io import StderrWatch
from pytest_mlir_snippets.worker.targets import cuda_host
from pytest_mlir_snippets.worker.targets.base import Backend, Compiled, Executed, SnippetFailure
from pytest_mlir_snippets.worker.targets.cpu import CpuBackend
from pytest_mlir_snippets.worker.targets.cuda_driver import Device, DriverError, chip, devices
from pytest_mlir_snippets.worker.targets.cuda_pipeline import (
    DEFAULT_CHIP,
    HOST_COPY,
    BetweenParts,
    default_pipeline,
    prepare,
    ptx_features,
)


def cuda_devices() -> tuple[int, str]:
    """(number of CUDA devices, why none), from cuda-python's driver."""
    return devices()


@dataclass
class Program:
    """A compiled snippet: its PTX, and the host code JIT-compiled where it can run."""

    ptx: str
    engine: Any = None
    initialized: bool = False


class CudaBackend(Backend):
    name = "cuda"
    forgets_compiled = True  # a reset context has none of the modules programs loaded

    def __init__(self) -> None:
        self._device: Device | None = None
        self._why_not: str | None = None  # why nothing can run here ("": it can)
        self._broken = ""  # why the device is unusable after a failed reset
        self._device_id = 0
        self._goldens = Goldens(plain=CpuBackend())  # the references of its runs
        self._chip: str | None = None
        self._watch = StderrWatch()

    def _runnable(self) -> Device | None:
        if self._why_not is None:
            count, why = devices()
            self._why_not = "" if count else f"no CUDA device: {why}"
            if count:
                self._device = Device()
        return self._device

    def _device_chip(self) -> str:
        """The device's chip where there is one, else DEFAULT_CHIP."""
        if self._chip is None:
            try:
                self._chip = chip(self._device_id) if self._runnable() is not None else DEFAULT_CHIP
            except Exception:
                self._chip = DEFAULT_CHIP
        return self._chip

    def configure(self, options: Options) -> None:
        self._device_id = options.device_id or 0

    def compile(self, module: str, function: str, options: Options,
                constants: Mapping[int, np.ndarray] | None = None) -> Compiled:
        """To PTX, on any machine (``Compiled.handle`` is a ``Program``); with a device,
        the host code is JIT-compiled too."""
        from pytest_mlir_snippets.worker.optrun.iteration import gpu_assembly, launches

        chip = options.cuda_chip or self._device_chip()
        pipeline = [options.pipeline] if options.pipeline else default_pipeline(chip)
        between = BetweenParts(pipeline)
        with lowering.lowered(module, function, pipeline, self.name, constants, between=between) as low:
            from mlir import ir

            ptx = gpu_assembly(low.module, ir)
            kernels = launches(low.module, ir)
            final = str(low.module) if options.print_ir else ""
            program = self._program(low, ptx, options.opt_level)
        if not ptx:
            args, results = low.signature
            if all(spec.kind == "scalar" for spec in [*args, *results]):
                raise SnippetFailure(Kind.UNSUPPORTED, "a function of scalars only: nothing to run on the GPU")
            raise SnippetFailure(Kind.COMPILE_ERROR, "the pipeline made no gpu.binary: nothing would run on the GPU")
        low.kept.chip, low.kept.kernel_count, low.kept.ptx_lines = chip, len(kernels), ptx.count("\n")
        low.kept.single_thread = bool(between.single_thread)  # no parallel loop: the work runs as one thread
        if options.print_ir:  # --mlir-print-ir or --mlir-save-artifacts: keep kernels.ptx
            low.facts.ptx = ptx
        return Compiled(final, function, low.signature, program, low.facts, low.kept)

    def compile_iteration(self, model: str, schedule: str, pipeline: str, function: str) -> Compiled:
        """An optimization-run iteration: schedule, then ``pass_pipeline.txt`` (to the
        LLVM dialect and a ``gpu.binary``) one step at a time (``optrun.iteration.Steps``),
        the host code JIT-compiled where a device is; its reference is the model itself.
        Constants stay where the pipeline put them (kernels reading host globals need a
        driver with HMM)."""
        from pytest_mlir_snippets.worker.optrun.iteration import lowered_iteration

        with lowered_iteration(model, schedule, pipeline, function, self.name) as (low, done):
            program = self._program(low, done.ptx, 3)
        low.facts.ptx, low.kept.source = done.ptx, model
        return Compiled(done.text, function, low.signature, program, low.facts, low.kept, done.facts)

    def _program(self, low: Any, ptx: str, opt_level: int) -> Program:
        """The PTX, and where a device is, the host code JIT-compiled over upstream's runtime."""
        program = Program(ptx)
        if ptx and self._runnable() is not None:
            try:
                program.engine = cuda_host.engine(low.module, opt_level)
            except Exception as error:
                raise low.diagnostics.failure(Kind.COMPILE_ERROR, "translation to LLVM failed", error,
                                              failing_pass="translation") from None
        return program

    def execute(self, compiled: Compiled, options: Options,
                golden: Recorded | None) -> Executed:
        """Judged as every target's runs are (``judge.judge_outputs``): the checks, the
        recorded outputs, else this target's references (``goldens.REFERENCES``)."""
        inputs = run_inputs(compiled, options, golden)
        return judge_outputs(compiled, options, golden, inputs, self.run(compiled, inputs, options),
                             lambda: self._goldens.reference(self.name, compiled, options, inputs))

    def run(self, compiled: Compiled, inputs: list[np.ndarray], options: Options) -> list[np.ndarray]:
        with self._call(compiled, inputs) as call:
            call.run()
            self._check("the GPU run failed")
            return [np.array(v, copy=True) for v in call.outputs()]

    def benchmark(self, compiled: Compiled, options: Options, golden: Recorded | None) -> dict[str, float]:
        """Wall time of the call (its launches, each synchronized by the host code), as on cpu."""
        device = self._started()
        with self._call(compiled, run_inputs(compiled, options, golden)) as call:
            stats = benchstats.measure(call.run, options, after=lambda: call.release(device.free))
            self._check("the GPU run failed")
            return stats

    @contextmanager
    def _call(self, compiled: Compiled, inputs: list[np.ndarray]) -> Iterator[jit.Call]:
        """A call of ``compiled`` on managed copies of ``inputs``; all freed afterwards."""
        device = self._started()
        program: Program = compiled.handle
        if program.engine is None:
            raise SnippetFailure(Kind.UNSUPPORTED, "no CUDA device when it was compiled: nothing to run",
                                 environment=True, skip=True)
        if not program.initialized:  # global constructors load the kernels' modules (mgpuModuleLoad)
            self._watch.start()
            program.engine.initialize()
            program.initialized = True
            self._check("loading the kernels failed")
        args, results = compiled.signature
        placed = [_managed_copy(device, v) if spec.kind == "memref" else v for v, spec in zip(inputs, args)]
        call = jit.Call(program.engine, compiled.function, args, results, placed)
        self._watch.start()
        try:
            yield call
        except SnippetFailure:
            raise
        except Exception as error:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"execution failed: {error}") from None
        finally:
            try:
                call.release(device.free)
                for value, spec in zip(placed, args):
                    if spec.kind == "memref":
                        device.free(value.ctypes.data)
            except DriverError:
                pass  # the run failed already: reset() takes the device's memory away

    def _started(self) -> Device:
        device = self._runnable()
        if device is None:  # a skip, not `unsupported`: the machine lacks the device
            raise SnippetFailure(Kind.UNSUPPORTED, self._why_not or "no CUDA device",
                                 environment=True, skip=True)
        if self._broken:
            raise SnippetFailure(Kind.EXECUTE_ERROR, self._broken)
        return device

    def _check(self, what: str) -> None:
        """Driver errors since the watch started: those upstream's wrappers printed, and the
        context's own (a kernel fault shows at the next synchronization)."""
        failures = cuda_host.runtime_failures(self._watch.lines())
        try:
            self._started().synchronize()
        except DriverError as error:
            failures.append(str(error))
        if failures:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"{what}: " + "; ".join(dict.fromkeys(failures)))

    def open_device(self, device_id: int | None) -> DeviceFacts:
        device = self._started()
        self._device_id = device_id or 0
        try:
            description = device.open(self._device_id)
            cuda_host.set_default_device(self._device_id)
        except DriverError as error:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"the device could not be opened: {error}") from None
        return DeviceFacts(description, device_id)

    def probe(self) -> None:
        try:
            self._started().probe()
        except DriverError as error:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"the device probe failed: {error}") from None

    def reset(self) -> None:
        """After a failed run (a kernel fault leaves the context unusable): reset the
        device's primary context and probe it; compiled programs load their modules
        again. A device that does not come back fails the items after it."""
        device = self._device
        if device is None or device.context is None:
            return
        try:
            device.reset()
            device.probe()
        except DriverError as error:
            self._broken = f"the device did not come back after a reset: {error}"

    def close_device(self) -> None:
        if self._device is not None and self._device.context is not None:
            self._device.close()


def _managed_copy(device: Device, value: np.ndarray) -> np.ndarray:
    """``value`` copied into managed memory (kernels and the host reach it alike)."""
    import ctypes

    value = np.ascontiguousarray(value)
    pointer = device.alloc_managed(value.nbytes)
    raw = np.ctypeslib.as_array((ctypes.c_uint8 * max(value.nbytes, 1)).from_address(pointer))
    copy: np.ndarray = raw[:value.nbytes].view(value.dtype).reshape(value.shape)
    copy[...] = value
    return copy


__all__ = ["HOST_COPY", "BetweenParts", "CudaBackend", "cuda_devices", "default_pipeline", "prepare",
           "ptx_features"]
