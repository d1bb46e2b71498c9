"""The cuda target's compile pipeline: the cpu target's front half, GPU mapping, NVVM
and PTX through the ``mlir`` wheel's NVPTX backend (no GPU nor CUDA toolkit needed:
``gpu-module-to-binary`` with ``format=isa``), and what runs between its parts.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_mlir_snippets.protocol import Kind
from pytest_mlir_snippets.worker.lowering import mlirtools
from pytest_mlir_snippets.worker.lowering import passes as lowering
from pytest_mlir_snippets.worker.lowering.single_thread import single_thread_launches
from pytest_mlir_snippets.worker.targets.base import SnippetFailure
from pytest_mlir_snippets.worker.targets.cpu import BUFFERIZE, FRONT, PLAIN

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
