"""An ONNX model made ready for torch-mlir's importer, its meaning unchanged.

- A model importing only other domains (ai.onnx.ml, ai.onnx.preview.training) gets a
  default-domain opset: torch-mlir reads the function's opset from it, and the plugin's
  expansions of those domains' ops are written in default-domain ops (of ``DEFAULT_OPSET``).
- An op the importer expands into its function body (``FUNCTION_EXPANSIONS``) whose
  optional output is left out (an empty name) before one that is used gets a name for it:
  the importer's expansion takes the empty name for a type and fails; the named output is
  computed and not used. ONNX's inference leaves some of them untyped (Attention's
  present key and value without a past): ``typed_unused`` gives those the element type
  of the op's first input, their shape unknown.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from typing import Any

DEFAULT_OPSET = 21
UNUSED = "_unused_output_"  # in the names given to outputs left out


def prepared(model: Any, expanded: set[str]) -> None:
    """Prepare ``model`` (a ``ModelProto``, changed in place); ``expanded``: the ops the
    importer expands into their function bodies."""
    if not any(o.domain in ("", "ai.onnx") for o in model.opset_import):
        model.opset_import.add(domain="", version=DEFAULT_OPSET)
    for index, node in enumerate(model.graph.node):
        if node.op_type not in expanded or node.domain not in ("", "ai.onnx"):
            continue
        last = max((i for i, name in enumerate(node.output) if name), default=-1)
        for i in range(last):
            if not node.output[i]:
                node.output[i] = f"{node.name or node.op_type}_{index}{UNUSED}{i}"


def typed_unused(model: Any) -> None:
    """The outputs ``prepared`` named that ONNX's inference left untyped, given a type (in place)."""
    from onnx import helper

    graph = model.graph
    types = {v.name: v.type for v in [*graph.input, *graph.value_info, *graph.output]}
    for node in graph.node:
        first = types.get(node.input[0]) if node.input else None
        if first is None or not first.HasField("tensor_type"):
            continue
        for name in node.output:
            if UNUSED in name and name not in types:
                graph.value_info.append(helper.make_tensor_value_info(name, first.tensor_type.elem_type, None))
