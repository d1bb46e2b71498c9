"""One-node ONNX models as the ONNX import tests have them: imported by torch-mlir's
ONNX importer, every input a function argument, the outputs recorded from ONNX's own
reference implementation (``onnx.reference``) in a sidecar beside the snippet."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import numpy as np


@dataclasses.dataclass
class Case:
    """``op_type`` applied to ``inputs`` (None: an absent optional input) with ``attrs``."""

    name: str
    op_type: str
    inputs: list[np.ndarray | None]
    attrs: dict[str, Any] = dataclasses.field(default_factory=dict)
    outputs: int = 1
    opset: int = 21
    tolerance: str = ""  # a ``// mlir-snippets:`` line's settings for the function, e.g. "rtol=1e-2"


def reference_outputs(case: Case) -> list[np.ndarray]:
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    names = [f"x{i}" if x is not None else "" for i, x in enumerate(case.inputs)]
    node = helper.make_node(case.op_type, names, [f"y{i}" for i in range(case.outputs)], **case.attrs)
    feeds = {n: x for n, x in zip(names, case.inputs, strict=True) if x is not None}
    evaluator = ReferenceEvaluator(_model(case, node, None))
    return [np.asarray(y) for y in evaluator.run(None, feeds)]


def _model(case: Case, node: Any, outputs: list[np.ndarray] | None) -> Any:
    from onnx import helper
    from onnx.helper import np_dtype_to_tensor_dtype

    inputs = [helper.make_tensor_value_info(f"x{i}", np_dtype_to_tensor_dtype(x.dtype), x.shape)
              for i, x in enumerate(case.inputs) if x is not None]
    if outputs is None:
        results = [helper.make_empty_tensor_value_info(f"y{i}") for i in range(case.outputs)]
    else:
        results = [helper.make_tensor_value_info(f"y{i}", np_dtype_to_tensor_dtype(y.dtype), y.shape)
                   for i, y in enumerate(outputs)]
    graph = helper.make_graph([node], case.name, inputs, results)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", case.opset)])


def write_case(folder: Path, case: Case) -> Path:
    """``<name>.mlir`` (the import) and ``<name>.<name>.npz`` (inputs and reference outputs)."""
    from onnx import helper
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_dialect
    from torch_mlir.extras import onnx_importer

    outputs = reference_outputs(case)
    names = [f"x{i}" if x is not None else "" for i, x in enumerate(case.inputs)]
    node = helper.make_node(case.op_type, names, [f"y{i}" for i in range(case.outputs)], **case.attrs)
    model = _model(case, node, outputs)
    model.ir_version = 9
    info = onnx_importer.ModelInfo(model)
    context = ir.Context()
    torch_dialect.register_dialect(context)
    module = info.create_module(context=context).operation
    onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
    path = folder / f"{case.name}.mlir"
    text = str(module)
    if case.tolerance:  # the line right above the function
        text = re.sub(r"(?m)^(\s*)(func\.func)", rf"\1// mlir-snippets: {case.tolerance}\n\1\2", text, count=1)
    path.write_text(text)
    given = [x for x in case.inputs if x is not None]
    np.savez(folder / f"{case.name}.{case.name}.npz", **{f"input_{i}": x for i, x in enumerate(given)},
             **{f"output_{i}": y for i, y in enumerate(outputs)})
    return path
