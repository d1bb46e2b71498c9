"""Which dialects each target takes, whether or not its compiler is installed here.

A snippet with an op of a dialect this build cannot handle is ``unsupported`` on this
target (a skip) only when another target takes that dialect (a TTIR snippet on cpu);
a dialect no target knows is a typo, a ``compile-error`` with a "did you mean" hint
(``"lianlg.abs"``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from pytest_mlir_snippets.protocol import Diagnostic, Kind
from pytest_mlir_snippets.worker.core import SnippetFailure

# upstream MLIR's dialects (what the cpu and cuda targets' bindings register)
UPSTREAM = frozenset({
    "acc", "affine", "amdgpu", "amx", "arith", "arm_neon", "arm_sme", "arm_sve", "async", "bufferization", "builtin",
    "cf", "complex", "dlti", "emitc", "func", "gpu", "index", "irdl", "linalg", "llvm", "math", "memref", "mesh",
    "ml_program", "mpi", "nvgpu", "nvvm", "omp", "pdl", "pdl_interp", "polynomial", "ptr", "quant", "rocdl", "scf",
    "shape", "shard", "smt", "sparse_tensor", "spirv", "tensor", "tosa", "transform", "ub", "vcix", "vector", "wasmssa",
    "x86vector", "xegpu", "xevm"})
# front ends the cpu and cuda targets lower to linalg first (worker/lowering/frontend.py)
FRONT_ENDS = frozenset({"stablehlo", "chlo", "vhlo", "mhlo", "sdy", "torch", "torch_c", "onnx", "tm_tensor", "check"})
# tt-mlir's (ttmetal, ttnn), with what its front end takes
TT = frozenset({"ttir", "ttnn", "ttcore", "tt", "ttkernel", "ttmetal", "d2m", "emitpy", "sdy", "stablehlo", "chlo",
                "func", "builtin", "arith", "tensor", "linalg", "scf", "cf", "math", "memref", "emitc", "llvm"})
# what IREE takes as input, its own dialects included
IREE_INPUT = frozenset({
    "builtin", "func", "arith", "math", "tensor", "linalg", "scf", "cf", "complex", "vector", "affine", "index",
    "ub", "shape", "quant", "ml_program", "tosa", "stablehlo", "chlo", "torch", "torch_c", "tm_tensor", "util",
    "flow", "hal", "stream", "iree_linalg_ext", "iree_tensor_ext", "iree_encoding", "check"})
IREE = IREE_INPUT | {"iree_codegen", "iree_gpu", "iree_vector_ext", "iree_input", "io_parameters", "vm", "vmvx",
                     "hal_inline", "hal_loader"}

TAKES: dict[str, frozenset[str]] = {
    "cpu": UPSTREAM | FRONT_ENDS, "cuda": UPSTREAM | FRONT_ENDS, "ttmetal": TT, "ttnn": TT,
    "iree-cpu": IREE, "iree-cuda": IREE}
KNOWN = frozenset().union(*TAKES.values())


def hint(dialect: str) -> str:
    """`` (did you mean 'linalg'?)`` for a dialect no target knows, else ``""``."""
    close = difflib.get_close_matches(dialect, sorted(KNOWN), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def dialect_failure(dialects: Iterable[str], target: str, diagnostics: list[Diagnostic] | None = None,
                    detail: str = "") -> SnippetFailure:
    """Ops of ``dialects`` that ``target`` cannot handle here: a compile-error when one of
    them is known to no target (a typo), else unsupported, naming the targets that take them."""
    found = sorted(set(dialects))
    unknown = [d for d in found if d not in KNOWN]
    if unknown:
        message = "; ".join(f"dialect '{d}' is known to no target{hint(d)}" for d in unknown)
        return SnippetFailure(Kind.COMPILE_ERROR, message, diagnostics)
    names = ", ".join(f"'{d}'" for d in found)
    takers = sorted(t for t, taken in TAKES.items() if t != target and all(d in taken for d in found))
    where = f"; {', '.join(takers)} take{'s' if len(takers) == 1 else ''} it" if takers else ""
    return SnippetFailure(Kind.UNSUPPORTED, f"dialect {names} is not available for target {target}{detail}{where}",
                          diagnostics)
