"""ONNX ops defined by a function, replaced by their function bodies before the import,
with ONNX's own definitions (``onnx.defs``: the body of the model's opset, a
context-dependent one built for the node's attributes and input types) and ONNX's
inliner, so that the folding, the unrolling and the inference see the body's values
(torch-mlir's importer expands a function in a module of its own, where they stay
untyped). ``INLINED``: the ops for which that is needed.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from typing import Any

INLINED = {"LinearAttention"}
DOMAIN = "pytest_mlir_snippets.inlined"  # the local functions' domain until they are inlined


def _body(node: Any, opset: int, types: dict[str, Any]) -> Any:
    """The node's function body (a ``FunctionProto``), None where ONNX has none."""
    import onnx

    try:
        schema: Any = onnx.defs.get_schema(node.op_type, opset, node.domain)  # its stubs lack the function API
    except onnx.defs.SchemaError:
        return None
    if schema.has_context_dependent_function:
        inputs = [types[name].SerializeToString() if name in types else onnx.TypeProto().SerializeToString()
                  for name in node.input]
        raw = schema.get_context_dependent_function_with_opset_version(opset, node.SerializeToString(), inputs)
    elif schema.has_function:
        raw = schema.get_function_with_opset_version(opset).SerializeToString()
    else:
        return None
    body = onnx.FunctionProto()
    body.ParseFromString(raw)
    return body


def inlined(model: Any) -> Any:
    """``model`` (inferred) with its ``INLINED`` ops' function bodies in their place; None
    where it has none."""
    import onnx
    import onnx.inliner

    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    graph = model.graph
    types = {v.name: v.type for v in [*graph.input, *graph.value_info, *graph.output]}
    count = 0
    for index, node in enumerate(graph.node):
        if node.op_type not in INLINED or node.domain not in ("", "ai.onnx"):
            continue
        body = _body(node, opset, types)
        if body is None:
            continue
        body.domain, body.name = DOMAIN, f"{node.op_type}_{index}"
        graph.node[index].domain, graph.node[index].op_type = DOMAIN, body.name
        model.functions.append(body)
        count += 1
    if not count:
        return None
    model.opset_import.add(domain=DOMAIN, version=1)
    flat = onnx.inliner.inline_local_functions(model)
    kept = [o for o in flat.opset_import if o.domain != DOMAIN]
    del flat.opset_import[:]
    flat.opset_import.extend(kept)
    return flat
