"""An ONNX model as the MLIR the plugin compiles: torch-mlir's ONNX importer, as IREE's
ONNX tests were made (``iree-import-onnx``), one ``func.func`` named after the graph.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pytest_mlir_snippets.onnx_backend.fold import folded
from pytest_mlir_snippets.onnx_backend.functions import expand_functions
from pytest_mlir_snippets.onnx_backend.inline import inlined
from pytest_mlir_snippets.onnx_backend.prepare import prepared, typed_unused
from pytest_mlir_snippets.onnx_backend.smallcodes import Small
from pytest_mlir_snippets.onnx_backend.smalltypes import carry
from pytest_mlir_snippets.onnx_backend.unroll import unrolled

# ONNX ops defined by an ONNX function that torch-mlir's conversion does not take: the
# importer expands them into their function bodies (``onnx.defs``' own definitions, for the
# node's attributes and input types), whose ops it converts
FUNCTION_EXPANSIONS = {"Attention", "RMSNormalization", "Swish", "SwiGLU", "LinearAttention", "CausalConvWithState"}
# the IR version torch-mlir's importer reads (it checks each model's against the onnx it was built with)
IMPORT_IR_VERSION = 9


class ImportFailure(RuntimeError):
    """torch-mlir's importer does not take the model (a type it lacks, a sequence input...)."""


@dataclass
class Imported:
    """The model's MLIR, its entry, and the numpy types of its inputs and outputs (the
    compiled code's integers are signless: results are read back in the model's types).
    ``small_inputs``/``small_outputs``: per input and output, the small type (f8, f4, 4-bit...)
    its carrier stands for (``smalltypes``), None for the others."""

    text: str
    function: str
    inputs: list[np.dtype | None]
    outputs: list[np.dtype | None]
    small_inputs: list[Small | None] = field(default_factory=list)
    small_outputs: list[Small | None] = field(default_factory=list)


def element_type(value_info: Any) -> np.dtype | None:
    """A tensor's numpy type, None for a sequence, an optional, or a type numpy lacks."""
    from onnx import helper

    if not value_info.type.HasField("tensor_type"):
        return None
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(value_info.type.tensor_type.elem_type))
    except (KeyError, TypeError, ValueError):
        return None


def inferred(model: Any) -> Any:
    """``model`` with ONNX's shape inference (data propagation on) typing its intermediate
    values, as torch-mlir's ``import_onnx`` tool does first: an ``_expanded`` case's values
    are untyped otherwise, and the conversions need their types. The model as it is where
    the checker or the inference rejects it."""
    import onnx

    try:
        onnx.checker.check_model(model)
        return onnx.shape_inference.infer_shapes(model, data_prop=True)
    except (ValueError, onnx.checker.ValidationError, onnx.shape_inference.InferenceError):
        return model


def import_model(model: Any) -> Imported:
    """``model`` (a ``ModelProto``) imported; ImportFailure says why not, in one line."""
    from onnx import ModelProto
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_dialect
    from torch_mlir.extras import onnx_importer

    carried = carry(expand_functions(model))
    model = carried.model
    copy = ModelProto()
    copy.CopyFrom(model)
    prepared(copy, FUNCTION_EXPANSIONS)  # before the inference, which types what it names
    copy = folded(copy, inferred)
    for step in (inlined, unrolled):  # each makes more values static for the next
        changed = step(copy)
        if changed is not None:
            copy = folded(changed, inferred)
    typed_unused(copy)
    copy.ir_version = min(copy.ir_version, IMPORT_IR_VERSION)
    context = ir.Context()
    torch_dialect.register_dialect(context)
    try:
        config = onnx_importer.Config()
        allowed = config.function_expansion_allowlists_by_domain or {}
        allowed[""] = allowed.get("", set()) | FUNCTION_EXPANSIONS
        config.function_expansion_allowlists_by_domain = allowed
        info = onnx_importer.ModelInfo(copy, config=config)
        module = info.create_module(context=context).operation
        with warnings.catch_warnings():  # a value without a type: the compile says what it breaks
            warnings.simplefilter("ignore", UserWarning)
            onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
    except Exception as error:  # the importer raises what its helpers raise (OnnxImportError, KeyError, ...)
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise ImportFailure(f"torch-mlir's ONNX importer: {type(error).__name__}: {first[:300]}") from None
    graph = model.graph
    initialized = {i.name for i in graph.initializer}
    inputs = [element_type(v) for v in graph.input if v.name not in initialized]
    return Imported(str(module), graph.name, inputs, [element_type(v) for v in graph.output],
                    carried.inputs, carried.outputs)
