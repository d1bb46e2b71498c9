"""ONNX's node cases as snippet folders in the layout of IREE's ONNX tests, which the
plugin runs with their recorded data (``golden/recorded.py``): per case ``<name>/model.mlir``
(torch-mlir's import, with a ``// mlir-snippets: rtol= atol=`` line carrying the case's
own tolerance), ``input_N.bin``, ``output_N.bin`` and ``run_module_io_flags.txt``. A case with bf16 outputs
gets the harness's bf16 rtol (at least 2^-6).
``onnx-tests.json`` lists what was written, what did not import (and why), and what was
left out as unmatchable.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from pytest_mlir_snippets.onnx_backend.importer import ImportFailure, import_model
from pytest_mlir_snippets.onnx_backend.smalltypes import carried_inputs
from pytest_mlir_snippets.onnx_backend.suite import node_cases, unmatchable
from pytest_mlir_snippets.paths import IREE_FLAGS

SUMMARY = "onnx-tests.json"
# numpy's names of the element types iree-run-module's flags spell otherwise
ELEMENTS = {"float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16", "bool": "i1",
            "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "int4": "i4", "int2": "i2",
            "uint64": "ui64", "uint32": "ui32", "uint16": "ui16", "uint8": "ui8", "uint4": "ui4", "uint2": "ui2",
            "complex64": "complex<f32>", "complex128": "complex<f64>", "float8_e4m3fn": "f8E4M3FN",
            "float8_e4m3fnuz": "f8E4M3FNUZ", "float8_e5m2": "f8E5M2", "float8_e5m2fnuz": "f8E5M2FNUZ",
            "float8_e8m0fnu": "f8E8M0FNU", "float4_e2m1fn": "f4E2M1FN"}


# ONNX's harness compares bf16 outputs with at least this rtol (two bf16 ULPs,
# ``Runner.assert_similar_outputs``): the recorded mode does too
BF16_RTOL = 2**-6


class NotWritable(ValueError):
    """A value the layout cannot hold (a sequence, an optional, a string tensor)."""


def flag(name: str, value: Any, folder: Path) -> str:
    """``SHAPExTYPE=@name.bin``, the raw little-endian data written beside it."""
    if not isinstance(value, np.ndarray):
        raise NotWritable(f"{name} is a {type(value).__name__} (a sequence or optional), not a tensor")
    element = ELEMENTS.get(value.dtype.name)
    if element is None:
        raise NotWritable(f"{name} has element type {value.dtype.name}, which the recorded layout cannot hold")
    data = value.astype(np.uint8) if value.dtype == np.bool_ else value
    raw = np.ascontiguousarray(data).astype(data.dtype.newbyteorder("<"), copy=False).tobytes()
    (folder / f"{name}.bin").write_bytes(raw)
    return "x".join([*(str(d) for d in value.shape), element]) + f"=@{name}.bin"


def tensor(value: Any) -> Any:
    """A data set's value as the harness reads it: a ``TensorProto`` as numpy's array (f8 and
    4-bit types as ml_dtypes'), a sequence or optional as it is."""
    from onnx import TensorProto, numpy_helper

    if isinstance(value, TensorProto):
        return numpy_helper.to_array(value)
    return value if isinstance(value, list | np.ndarray) or value is None else np.asarray(value)


def with_tolerance(text: str, rtol: float, atol: float) -> str:
    """The import with the case's own tolerance on the line above its function."""
    return re.sub(r"(?m)^(\s*)(func\.func)", rf"\1// mlir-snippets: rtol={rtol:g} atol={atol:g}\n\1\2", text,
                  count=1)


def write_case(case: Any, folder: Path) -> None:
    """One case's folder (its first data set); raises ImportFailure or NotWritable."""
    imported = import_model(case.model)
    inputs, outputs = case.data_sets[0]
    folder.mkdir(parents=True, exist_ok=True)
    # small types (f8, f4, 4-bit...) as the bytes the import carries them in (``smalltypes``)
    fed = carried_inputs([tensor(v) for v in inputs], imported.small_inputs)
    expected = carried_inputs([tensor(v) for v in outputs], imported.small_outputs)
    try:
        lines = [f"--input={flag(f'input_{i}', v, folder)}" for i, v in enumerate(fed)]
        lines += [f"--expected_output={flag(f'output_{i}', v, folder)}" for i, v in enumerate(expected)]
    except NotWritable:
        for file in folder.iterdir():
            file.unlink()
        folder.rmdir()
        raise
    bf16 = any(isinstance(v, np.ndarray) and v.dtype.name == "bfloat16" for v in (tensor(v) for v in outputs))
    rtol = max(case.rtol, BF16_RTOL) if bf16 else case.rtol
    (folder / "model.mlir").write_text(with_tolerance(imported.text, rtol, case.atol))
    (folder / IREE_FLAGS).write_text("\n".join(lines) + "\n")


def write_cases(out: Path, pattern: str | None = None, everything: bool = False) -> dict[str, Any]:
    """Every node case whose name ``pattern`` (a regular expression) finds, into ``out``;
    the cases no compiler can match only with ``everything``. Returns the summary."""
    found = re.compile(pattern) if pattern else None
    summary: dict[str, Any] = {"written": [], "not_written": {}, "unmatchable": {}}
    for case in sorted(node_cases(), key=lambda c: c.name):
        if found is not None and not found.search(case.name):
            continue
        why = unmatchable(case.name, case.model)
        if why and not everything:
            summary["unmatchable"][case.name] = why
            continue
        try:
            write_case(case, out / case.name)
        except (ImportFailure, NotWritable) as error:
            summary["not_written"][case.name] = str(error)
            continue
        summary["written"].append(case.name)
    out.mkdir(parents=True, exist_ok=True)
    (out / SUMMARY).write_text(json.dumps(summary, indent=1) + "\n")
    return summary
