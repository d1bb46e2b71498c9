"""The ``cuda`` target: NVVM and PTX through the ``mlir`` wheel's NVPTX backend.

Compiling to PTX needs no GPU and no CUDA toolkit (``gpu-module-to-binary`` with
``format=isa``); optimization runs use it (``iteration.compile_iteration``).
Running needs a CUDA driver and device; without one, execute, correctness and
benchmark items skip with "no CUDA device".
"""

from __future__ import annotations

import ctypes
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..protocol import Kind, Options
from .base import Backend, Compiled, SnippetFailure

NOT_YET = "running on a CUDA device is not implemented yet (issue 7): compile, PTX, host_ops and launch checks run"


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
        raise SnippetFailure(Kind.UNSUPPORTED, "snippet files are not compiled for the cuda target yet (issue 7); "
                             "optimization runs are")

    def execute(self, compiled: Compiled, options: Options,
                golden: dict[str, Any] | None) -> tuple[dict[str, float], dict[str, Any]]:
        raise SnippetFailure(Kind.UNSUPPORTED, NOT_YET)

    def open_device(self, device_id: int | None) -> dict[str, Any]:
        count, why = cuda_devices()
        if not count:
            raise SnippetFailure(Kind.UNSUPPORTED, f"no CUDA device: {why}")
        raise SnippetFailure(Kind.UNSUPPORTED, NOT_YET)
