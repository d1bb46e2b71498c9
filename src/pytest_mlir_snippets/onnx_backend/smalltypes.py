"""A model's small-typed tensors (f8, e8m0, f4, 4-bit and 2-bit integers) carried as bytes
(``smallcodes``), before torch-mlir's importer sees the model.

``carry`` retypes every such graph input, output, initializer and intermediate value to its
carrier, and replaces each Cast, CastLike, QuantizeLinear and DequantizeLinear touching one
by ONNX ops on the bytes (``smallcasts``). The caller converts at the boundary: inputs to
their carriers (``to_carrier``), outputs back to the model's declared types
(``from_carrier``), so ONNX's harness compares the types it expects. A model without small
types is returned as it is.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_mlir_snippets.onnx_backend import smallcasts
from pytest_mlir_snippets.onnx_backend.smallcodes import Small, from_carrier, small, to_carrier

CONVERTED = ("Cast", "CastLike", "QuantizeLinear", "DequantizeLinear")


@dataclass
class Carried:
    """The rewritten model, and per graph input (initializers left out) and output its small
    type, None where it is not one."""

    model: Any
    inputs: list[Small | None] = field(default_factory=list)
    outputs: list[Small | None] = field(default_factory=list)


def _typed(value: Any) -> smallcasts.Typed | None:
    if not value.type.HasField("tensor_type"):
        return None
    tensor = value.type.tensor_type
    return tensor.elem_type, [d.dim_value if d.HasField("dim_value") else -1 for d in tensor.shape.dim]


def value_types(model: Any) -> dict[str, smallcasts.Typed]:
    """Every typed value of the main graph (ONNX's shape inference where it takes the model)."""
    import onnx

    try:
        model = onnx.shape_inference.infer_shapes(model)
    except (ValueError, onnx.shape_inference.InferenceError):
        pass
    graph = model.graph
    types = {v.name: t for v in (*graph.input, *graph.output, *graph.value_info) if (t := _typed(v))}
    types.update({i.name: (i.data_type, list(i.dims)) for i in graph.initializer})
    return types


def _rewrite(node: Any, types: dict[str, smallcasts.Typed]) -> list[Any] | None:
    """The nodes that replace ``node`` on carried bytes, or None: it touches no small type,
    or a form not foreseen (left to the importer, which says what it lacks)."""
    from onnx import helper

    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    first = types.get(node.input[0]) if node.input else None
    out = types.get(node.output[0]) if node.output else None
    n = smallcasts.Nodes(node.output[0] if node.output else node.name)
    if node.op_type in ("Cast", "CastLike") and first is not None:
        to = attrs.get("to") if node.op_type == "Cast" else (types.get(node.input[1]) or (None,))[0]
        if to is None or (small(first[0]) is None and small(to) is None):
            return None
        done = smallcasts.cast(n, node, first[0], to, {k: v for k, v in attrs.items() if k != "to"})
    elif node.op_type == "QuantizeLinear" and out is not None and (kind := small(out[0])) is not None:
        done = smallcasts.quantize(n, node, types, kind, attrs)
    elif node.op_type == "DequantizeLinear" and first is not None and out is not None and \
            (kind := small(first[0])) is not None:
        done = smallcasts.dequantize(n, node, types, kind, out[0], attrs)
    else:
        return None
    return n.nodes if done else None


def _retype(value: Any) -> Small | None:
    if not value.type.HasField("tensor_type"):
        return None
    kind = small(value.type.tensor_type.elem_type)
    if kind is not None:
        value.type.tensor_type.elem_type = kind.carrier
    return kind


def carry(model: Any) -> Carried:
    """``model`` with its small-typed values carried as bytes (a copy; ``model`` as it is
    when it has none)."""
    from onnx import ModelProto, numpy_helper

    graph = model.graph
    values = (*graph.input, *graph.output, *graph.value_info)
    if not any(small(t[0]) for v in values if (t := _typed(v))) and \
            not any(small(i.data_type) for i in graph.initializer) and \
            not any(n.op_type in CONVERTED for n in graph.node):
        return Carried(model)
    types = value_types(model)
    copy = ModelProto()
    copy.CopyFrom(model)
    graph = copy.graph
    nodes = []
    for node in graph.node:
        try:
            replaced = _rewrite(node, types) if node.op_type in CONVERTED else None
        except (ValueError, KeyError, TypeError, IndexError):  # an attribute out of its range (round_mode):
            replaced = None  # the node as it is, for the importer and the compile to say what they lack
        nodes.extend([node] if replaced is None else replaced)
    del graph.node[:]
    graph.node.extend(nodes)
    initialized = {i.name for i in graph.initializer}
    inputs = [_retype(v) for v in graph.input]
    outputs = [_retype(v) for v in graph.output]
    for v in graph.value_info:
        _retype(v)
    for index, init in enumerate(graph.initializer):
        kind = small(init.data_type)
        if kind is not None:
            graph.initializer[index].CopyFrom(numpy_helper.from_array(
                to_carrier(numpy_helper.to_array(init), kind), init.name))
    fed = [k for k, v in zip(inputs, graph.input, strict=True) if v.name not in initialized]
    return Carried(copy, fed, outputs)


def carried_inputs(values: list[Any], kinds: list[Small | None]) -> list[Any]:
    """A model's inputs as its carried form takes them (the small-typed ones as bytes)."""
    return [to_carrier(v, k) if k is not None else v for v, k in zip(values, [*kinds, *[None] * len(values)],
                                                                      strict=False)]


def declared_outputs(values: list[Any], kinds: list[Small | None]) -> list[Any]:
    """The carried form's outputs in the model's declared types."""
    return [from_carrier(v, k) if k is not None else v for v, k in zip(values, [*kinds, *[None] * len(values)],
                                                                       strict=False)]
