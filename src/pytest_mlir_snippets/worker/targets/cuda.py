"""The ``cuda`` target: NVVM and PTX through the ``mlir`` wheel's NVPTX backend.

Compiling to PTX needs no GPU and no CUDA toolkit (``gpu-module-to-binary`` with
``format=isa``); optimization runs use it (``iteration.compile_iteration``).
Where a CUDA driver reports a device, compile also JIT-compiles the host code and
execute runs it: ``cuda_runtime.HostRuntime`` serves its ``mgpu*`` calls and its
allocations (managed memory), and the results are judged like the cpu target's,
against the recorded outputs or the cpu target's plain lowering (differential).
Without a device, execute items skip with "no CUDA device".
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from pytest_mlir_snippets.protocol import ENVIRONMENT, SKIP, Kind, Options
from pytest_mlir_snippets.worker import benchstats
from pytest_mlir_snippets.worker.lowering import jit, mlirtools
from pytest_mlir_snippets.worker.lowering import passes as lowering
from pytest_mlir_snippets.worker.lowering.runtime_libs import runner_libraries
from pytest_mlir_snippets.worker.lowering.single_thread import single_thread_launches
from pytest_mlir_snippets.worker.targets.base import Backend, Compiled, SnippetFailure
from pytest_mlir_snippets.worker.targets.cpu import BUFFERIZE, FRONT, PLAIN, CpuBackend
from pytest_mlir_snippets.worker.targets.cuda_runtime import Driver, DriverAPI, HostRuntime

HOST_COPY = "mlir_snippets.host_copy"  # a copy the host makes (a constant into managed memory)
DEFAULT_CHIP = "sm_80"
_CHIP = re.compile(r"^sm_(\d+)[a-z]?$")
# the bufferized snippet to GPU kernels: parallel loops tiled (inner tile = threads),
# mapped to blocks and threads, outlined; TO_NVVM then lowers host and device.
# Between the two, a function left without a launch gets a single-thread one
# (``single_thread.single_thread_launches``).
TO_GPU = (
    "func.func(convert-linalg-to-parallel-loops,"
    " scf-parallel-loop-tiling{parallel-loop-tile-sizes=16,16 no-min-max-bounds=true}, gpu-map-parallel-loops,"
    " convert-parallel-loops-to-gpu)"
)
OUTLINE = "gpu-kernel-outlining, func.func(lower-affine), convert-scf-to-cf"


def ptx_features(chip: str) -> str:
    """The PTX version a chip needs (LLVM's default, 6.0, aborts the process for sm_80
    and later): sm_100+ 8.6, sm_90 8.0, sm_89 7.8, sm_80 7.0, older 6.0."""
    m = _CHIP.match(chip)
    if m is None:
        raise SnippetFailure(Kind.UNSUPPORTED, f"--mlir-cuda-chip {chip!r} is not a CUDA chip name like sm_80")
    number = int(m.group(1))
    for least, version in ((100, 86), (90, 80), (89, 78), (80, 70)):
        if number >= least:
            return f"+ptx{version}"
    return "+ptx60"


def default_pipeline(chip: str) -> list[str]:
    """The cuda target's pipeline: the cpu target's front half, GPU mapping, then NVVM
    and PTX (``prepare`` runs between the parts)."""
    return [f"builtin.module({FRONT}, {PLAIN}, {BUFFERIZE})", f"builtin.module({TO_GPU})",
            f"builtin.module({OUTLINE})",
            f"builtin.module(gpu-lower-to-nvvm-pipeline{{cubin-format=isa cubin-chip={chip}"
            f" cubin-features={ptx_features(chip)}}})"]


class BetweenParts:
    """What runs between the parts of a cuda pipeline: ``prepare`` always, and before
    outlining (the default pipeline), single-thread launches for the functions the
    mapping gave none (their names are kept in ``single_thread``)."""

    def __init__(self, pipeline: list[str]) -> None:
        self.pipeline = pipeline
        self.done = 0
        self.single_thread: list[str] = []

    def __call__(self, module: Any) -> None:
        self.done += 1
        if self.done < len(self.pipeline) and self.pipeline[self.done] == f"builtin.module({OUTLINE})":
            self.single_thread += single_thread_launches(module, HOST_COPY)
        prepare(module)


def prepare(module: Any) -> None:
    """Between the parts: the cpu rewrites; ``memref.copy`` (slices, concats, reshapes
    after bufferization) as ``linalg.copy``, which becomes a kernel; and constants
    (``memref.get_global``, host memory a kernel cannot read) copied by the host into
    a buffer of their own, which the runtime allocates in managed memory."""
    from mlir import ir
    from mlir.dialects import linalg

    lowering.prepare_for_llvm(module)
    for op in mlirtools.ops_where(module, ir, lambda op: op.name == "memref.copy" and HOST_COPY not in op.attributes):
        with ir.InsertionPoint(op), op.location:
            linalg.copy(op.operands[0], outs=[op.operands[1]])
        op.erase()
    for op in mlirtools.ops_where(module, ir, lambda op: op.name == "memref.get_global"):
        _constant_to_buffer(op, ir)


def _constant_to_buffer(op: Any, ir: Any) -> None:
    from mlir.dialects import func, memref

    host = op.operation.parent
    while host is not None and host.name not in ("func.func", "gpu.module", "gpu.func"):
        host = host.parent
    if host is None or host.name != "func.func" or any(HOST_COPY in use.owner.attributes for use in op.result.uses):
        return  # in a kernel, or already copied (prepare runs between each part)
    location = op.location
    with ir.InsertionPoint(op), location:
        source = memref.GetGlobalOp(op.result.type, op.attributes["name"].value).result
        buffer = memref.alloc(op.result.type, [], [])
        copy = memref.CopyOp(source, buffer)
    copy.attributes[HOST_COPY] = ir.UnitAttr.get()
    op.result.replace_all_uses_with(buffer)
    op.erase()
    returns = [block.operations[len(block.operations) - 1] for block in host.regions[0].blocks]
    returns = [r for r in returns if isinstance(r.opview, func.ReturnOp)]
    if not any(operand == buffer for r in returns for operand in r.operands):
        for terminator in returns:  # the caller does not own it: free it on the way out
            with ir.InsertionPoint(terminator), location:
                memref.dealloc(buffer)


def cuda_devices() -> tuple[int, str]:
    """(number of CUDA devices, why none) from the driver, without any CUDA package."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError as error:
        return 0, f"the CUDA driver cannot be loaded ({error})"
    if driver.cuInit(0) != 0:
        return 0, "cuInit failed"
    count = ctypes.c_int(0)
    if driver.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return 0, "the driver reports no device"
    return count.value, ""


@dataclass
class Program:
    """A compiled snippet: its PTX, and the host code JIT-compiled where it can run."""

    ptx: str
    engine: Any = None
    initialized: bool = False


class CudaBackend(Backend):
    name = "cuda"
    forgets_compiled = True  # a reset context has none of the modules programs loaded

    def __init__(self, driver: DriverAPI | None = None) -> None:
        self._runtime = HostRuntime(driver) if driver is not None else None
        self._why_not = "" if driver is not None else None  # why nothing can run here ("": it can)
        self._cpu = CpuBackend()  # inputs and the reference results
        self._chip: str | None = None

    def _runnable(self) -> HostRuntime | None:
        if self._why_not is None:
            count, why = cuda_devices()
            self._why_not = "" if count else f"no CUDA device: {why}"
            if count:
                self._runtime = HostRuntime(Driver())
        return self._runtime

    def _device_chip(self) -> str:
        """The device's chip where there is one, else DEFAULT_CHIP."""
        if self._chip is None:
            runtime = self._runnable()
            query = getattr(runtime.driver, "chip", None) if runtime is not None else None
            try:
                self._chip = str(query()) if query is not None else DEFAULT_CHIP
            except Exception:
                self._chip = DEFAULT_CHIP
        return self._chip

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
        info = dict(low.info, chip=chip, kernels=len(kernels), ptx_lines=ptx.count("\n"))
        if between.single_thread:  # no parallel loop: the work runs as one thread
            info["single_thread"] = True
        if options.print_ir:  # --mlir-print-ir or --mlir-save-artifacts: keep kernels.ptx
            info["ptx"] = ptx
        return Compiled(final, function, low.signature, program, info)

    def compile_iteration(self, model: str, schedule: str, pipeline: str, function: str) -> Compiled:
        """An optimization-run iteration: schedule, then ``pass_pipeline.txt`` (to the
        LLVM dialect and a ``gpu.binary``), the host code JIT-compiled where a device
        is; its reference is the model itself. Constants stay where the pipeline put
        them (kernels reading host globals need a driver with HMM)."""
        from pytest_mlir_snippets.worker.optrun.iteration import (
            INTERPRETER,
            full_pipeline,
            gpu_assembly,
            iteration_source,
        )

        text = iteration_source(model, schedule)
        with lowering.lowered(text, function, [INTERPRETER, full_pipeline(pipeline)], self.name) as low:
            from mlir import ir

            ptx = gpu_assembly(low.module, ir)
            program = self._program(low, ptx, 3)
        return Compiled("", function, low.signature, program, dict(low.info, source=model))

    def _program(self, low: Any, ptx: str, opt_level: int) -> Program:
        """The PTX, and where a device is, the host code JIT-compiled with this runtime."""
        program = Program(ptx)
        runtime = self._runnable()
        if ptx and runtime is not None:
            try:
                program.engine = self._cpu.engine_type(low.module, opt_level=opt_level,
                                                       shared_libs=runner_libraries())
                runtime.register(program.engine)
            except Exception as error:
                raise low.diagnostics.failure(Kind.COMPILE_ERROR, "translation to LLVM failed", error) from None
        return program

    def execute(self, compiled: Compiled, options: Options,
                golden: dict[str, Any] | None) -> tuple[dict[str, float], dict[str, Any]]:
        inputs = self._cpu.inputs(compiled, options, golden)
        with self._call(compiled, inputs) as call:
            call.run()
            self._synchronize()
            actual = [np.array(v, copy=True) for v in call.outputs()]
        return self._cpu.judge(compiled, options, golden, inputs, actual)

    def benchmark(self, compiled: Compiled, options: Options, golden: dict[str, Any] | None) -> dict[str, float]:
        """Wall time of the call (its launches, each synchronized), as on cpu."""
        runtime = self._started()
        with self._call(compiled, self._cpu.inputs(compiled, options, golden)) as call:
            def run() -> None:
                call.run()
                runtime.check()
            return benchstats.measure(run, options, after=lambda: call.release(runtime.release))

    @contextmanager
    def _call(self, compiled: Compiled, inputs: list[np.ndarray]) -> Iterator[jit.Call]:
        """A call of ``compiled`` on managed copies of ``inputs``; all freed afterwards."""
        runtime = self._started()
        program: Program = compiled.handle
        if program.engine is None:
            raise SnippetFailure(Kind.UNSUPPORTED, "no CUDA device when it was compiled: nothing to run",
                                 info={ENVIRONMENT: True, SKIP: True})
        if not program.initialized:  # global constructors load the kernels' modules
            program.engine.initialize()
            program.initialized = True
            self._synchronize()
        args, results = compiled.signature
        placed = [runtime.managed_copy(v) if spec.kind == "memref" else v for v, spec in zip(inputs, args)]
        call = jit.Call(program.engine, compiled.function, args, results, placed)
        try:
            yield call
        except SnippetFailure:
            raise
        except Exception as error:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"execution failed: {error}") from None
        finally:
            call.release(runtime.release)
            for value, spec in zip(placed, args):
                if spec.kind == "memref":
                    runtime.release(value.ctypes.data)

    def _started(self) -> HostRuntime:
        runtime = self._runnable()
        if runtime is None:  # a skip, not `unsupported`: the machine lacks the device
            raise SnippetFailure(Kind.UNSUPPORTED, self._why_not or "no CUDA device",
                                 info={ENVIRONMENT: True, SKIP: True})
        return runtime

    def _synchronize(self) -> None:
        runtime = self._started()
        try:
            runtime.check()
            runtime.driver.synchronize()
        except Exception as error:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"the GPU run failed: {error}") from None

    def open_device(self, device_id: int | None) -> dict[str, Any]:
        runtime = self._started()
        return {"device": runtime.driver.open(device_id or 0), "id": device_id}

    def reset(self) -> None:
        """After a failed run (a kernel fault leaves the context unusable): free what is
        left and start the device afresh; compiled programs load their modules again."""
        runtime = self._runtime
        if runtime is not None:
            runtime.error = None
            runtime.release_all()
            runtime.driver.reset()

    def close_device(self) -> None:
        if self._runtime is not None:
            self._runtime.release_all()
            self._runtime.driver.close()
