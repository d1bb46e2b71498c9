"""ONNX ops of other domains whose function body torch-mlir's importer cannot expand,
replaced in the model by that body before the import, as ONNX's own ``_expanded`` test
cases are made (``function_testcase_helper``): FlexAttention (``ai.onnx.preview``) has a
context-dependent body, built from its input types and attributes, its ``score_mod`` and
``prob_mod`` graphs inlined; torch-mlir's importer builds that body without the default
domain's opset and fails on it, and converts the op itself to nothing that lowers.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from typing import Any

# (domain, op) expanded here
EXPANDED = {("ai.onnx.preview", "FlexAttention")}


def _types(model: Any) -> dict[str, Any]:
    """Every typed value of the main graph by name (shape inference's view)."""
    import onnx

    try:
        typed = onnx.shape_inference.infer_shapes(model)
    except (ValueError, onnx.shape_inference.InferenceError):
        typed = model
    graph = typed.graph
    found = {v.name: v.type for v in [*graph.input, *graph.value_info, *graph.output]}
    for init in graph.initializer:
        found.setdefault(init.name, onnx.helper.make_tensor_type_proto(init.data_type, list(init.dims)))
    return found


def _body(node: Any, types: dict[str, Any], index: int, opsets: dict[str, int], model: Any) -> list[Any] | None:
    """The node's function body as nodes of the model's opsets, None where it has none
    or needs an opset the model does not import."""
    from onnx import NodeProto
    from onnx.backend.test.case.node import function_testcase_helper

    if any(name and name not in types for name in node.input):
        return None
    inputs = [types[name] for name in node.input if name]
    own = NodeProto()
    own.CopyFrom(node)  # the helper adds the schema's default attributes to the node it is given
    try:
        expanded, _ = function_testcase_helper(own, inputs, f"{index}", model.opset_import)
    except Exception:  # a form onnx's builder rejects: the node stays, the import says what fails
        return None
    if len(expanded) != 1:
        return None
    nodes, needed = expanded[0]
    if any(opsets.get(o.domain or "", o.version) != o.version for o in needed):
        return None
    return list(nodes)


def expand_functions(model: Any) -> Any:
    """``model`` with every node of ``EXPANDED`` in its main graph replaced by its
    function body; ``model`` itself when there is none."""
    from onnx import ModelProto

    if not any((n.domain, n.op_type) in EXPANDED for n in model.graph.node):
        return model
    types = _types(model)
    opsets = {o.domain or "": o.version for o in model.opset_import}
    nodes = []
    for index, node in enumerate(model.graph.node):
        body = _body(node, types, index, opsets, model) if (node.domain, node.op_type) in EXPANDED else None
        nodes.extend([node] if body is None else body)
    copy = ModelProto()
    copy.CopyFrom(model)
    del copy.graph.node[:]
    copy.graph.node.extend(nodes)
    return copy
