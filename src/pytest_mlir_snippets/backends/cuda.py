"""The ``cuda`` target: NVVM and PTX through the ``mlir`` wheel's NVPTX backend.

Compiling to PTX needs no GPU and no CUDA toolkit (``gpu-module-to-binary`` with
``format=isa``); optimization runs use it (``iteration.compile_iteration``).
Running needs a CUDA driver and device; without one, execute, correctness and
benchmark items skip with "no CUDA device".
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..protocol import Kind, Options
from . import lowering, mlirtools
from .base import Backend, Compiled, SnippetFailure
from .cpu import BUFFERIZE, FRONT, PLAIN

NOT_YET = ("running on a CUDA device is not implemented yet: compile and PTX (and a run's host_ops and launch"
           " checks) run")
DEFAULT_CHIP = "sm_80"
_CHIP = re.compile(r"^sm_(\d+)[a-z]?$")
# the bufferized snippet to GPU kernels: parallel loops tiled (inner tile = threads),
# mapped to blocks and threads, outlined; TO_NVVM then lowers host and device.
TO_GPU = (
    "func.func(convert-linalg-to-parallel-loops,"
    " scf-parallel-loop-tiling{parallel-loop-tile-sizes=16,16 no-min-max-bounds=true}, gpu-map-parallel-loops,"
    " convert-parallel-loops-to-gpu), gpu-kernel-outlining, func.func(lower-affine),"
    " convert-scf-to-cf"
)


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
            f"builtin.module(gpu-lower-to-nvvm-pipeline{{cubin-format=isa cubin-chip={chip}"
            f" cubin-features={ptx_features(chip)}}})"]


def prepare(module: Any) -> None:
    """Between the parts: the cpu rewrites, and ``memref.copy`` (slices, concats,
    reshapes after bufferization) as ``linalg.copy``, which becomes a kernel."""
    from mlir import ir
    from mlir.dialects import linalg

    lowering.prepare_for_llvm(module)
    for op in mlirtools.ops_where(module, ir, lambda op: op.name == "memref.copy"):
        with ir.InsertionPoint(op), op.location:
            linalg.copy(op.operands[0], outs=[op.operands[1]])
        op.erase()


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


class CudaBackend(Backend):
    name = "cuda"

    def compile(self, module: str, function: str, options: Options,
                constants: Mapping[int, np.ndarray] | None = None) -> Compiled:
        """To PTX, on any machine: ``Compiled.handle`` is the PTX text."""
        from .iteration import gpu_assembly, launches

        chip = options.cuda_chip or DEFAULT_CHIP
        pipeline = [options.pipeline] if options.pipeline else default_pipeline(chip)
        with lowering.lowered(module, function, pipeline, self.name, constants, between=prepare) as low:
            from mlir import ir

            ptx = gpu_assembly(low.module, ir)
            kernels = launches(low.module, ir)
            final = str(low.module) if options.print_ir else ""
        if not ptx:
            args, results = low.signature
            if all(spec.kind == "scalar" for spec in [*args, *results]):
                raise SnippetFailure(Kind.UNSUPPORTED, "a function of scalars only: nothing to run on the GPU")
            raise SnippetFailure(Kind.COMPILE_ERROR, "the pipeline made no gpu.binary: nothing would run on the GPU")
        info = dict(low.info, chip=chip, kernels=len(kernels), ptx_lines=ptx.count("\n"))
        if options.print_ir:  # --mlir-print-ir or --mlir-save-artifacts: keep kernels.ptx
            info["ptx"] = ptx
        return Compiled(final, function, low.signature, ptx, info)

    def execute(self, compiled: Compiled, options: Options,
                golden: dict[str, Any] | None) -> tuple[dict[str, float], dict[str, Any]]:
        raise SnippetFailure(Kind.UNSUPPORTED, NOT_YET)

    def open_device(self, device_id: int | None) -> dict[str, Any]:
        count, why = cuda_devices()
        if not count:
            raise SnippetFailure(Kind.UNSUPPORTED, f"no CUDA device: {why}")
        raise SnippetFailure(Kind.UNSUPPORTED, NOT_YET)
