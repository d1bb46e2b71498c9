"""The commands of IREE's tools that compile a snippet as an iree target's item did: the
target's ``iree-compile.sh``, a failed execute's ``reproduce.sh`` (``worker/triage/iree_driver.py``) and
the cuts of ``--mlir-bisect`` (``worker/triage/iree_bisect.py``)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pytest_mlir_snippets.worker.targets.iree_compiler import ONNX_TO_TORCH

# the snippet's own types at the boundary: IREE demotes f64 to f32 by default, and the
# inputs, recorded outputs and reference are the snippet's f64
KEEP_ABI = ("--iree-input-demote-f64-to-f32=false",)
# flags that choose the target device: when a config gives its own, the target's are left out
DEVICE_FLAGS = ("--iree-hal-target-backends", "--iree-hal-target-device", "--iree-hal-local-target-device-backends")


def compile_commands(flags: list[str], route: str, vmfb: str,
                     tool: Callable[[str], str] = str) -> list[list[str]]:
    """The commands that compile ``snippet.mlir`` to ``vmfb`` as an item did (the onnx
    route: ``iree-opt`` first); ``tool`` names each tool's executable."""
    own_type = any(f.startswith("--iree-input-type=") for f in flags)
    if route.startswith("onnx via") and not own_type:
        pipeline = f"--pass-pipeline=builtin.module({ONNX_TO_TORCH})"
        return [[tool("iree-opt"), "snippet.mlir", pipeline, "-o", "snippet.torch.mlir"],
                [tool("iree-compile"), "snippet.torch.mlir", *flags, "--iree-input-type=torch", "-o", vmfb]]
    kind = route.split()[0]
    extra = [] if own_type or kind == "none" else [f"--iree-input-type={kind}"]
    return [[tool("iree-compile"), "snippet.mlir", *flags, *extra, "-o", vmfb]]


# IREE's element type names (signless integers, as a compiled function's results are)
_ELEMENTS = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64", "bool": "i1", "int8": "i8",
             "uint8": "i8", "int16": "i16", "uint16": "i16", "int32": "i32", "uint32": "i32", "int64": "i64",
             "uint64": "i64"}
IGNORED = "--expected_output=(ignored)"  # a scalar result: iree-run-module cannot compare one (IREE 3.x)


def expected_output(index: int, value: np.ndarray) -> tuple[str, bytes, str]:
    """Result ``index``'s expected ``value`` for ``iree-run-module``: (file name, raw bytes,
    flag). Typed raw bytes (``2x3xi32=@expected_output_0.bin``), not ``.npy``: IREE reads an
    ``.npy`` of integers as signed (``si32``), which never equals a signless result."""
    value = np.ascontiguousarray(value)
    name = f"expected_output_{index}.bin"
    element = _ELEMENTS.get(value.dtype.name, value.dtype.name)
    shape = "".join(f"{d}x" for d in value.shape)
    return name, value.tobytes(), f"--expected_output={shape}{element}=@{name}"
