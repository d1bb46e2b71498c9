"""An ONNX model's shape computations folded into constants before the import.

A function body (an ``_expanded`` case, or LinearAttention's, SoftmaxCrossEntropyLoss's)
computes shapes at run time: ``Shape`` of an input, then ``Div``, ``Concat``, ``Gather``...
ONNX's shape inference propagates a few of those ops' values (``data_prop``), not all
(``Div`` not), so the values shaped by them (a ``ConstantOfShape``, a ``Reshape``, a
``Scan``'s outputs) import without a type, which torch-mlir's conversions need.
Here every integer or boolean value computable from the graph's static shapes and its
constants is computed (``Shape`` and ``Size`` from the inferred shapes, any other op of
the default domain by ``onnx.reference`` from its constant inputs) and its node replaced by
a ``Constant``; inference then runs again, until nothing more folds. Float values are not
folded (the compiled code computes them, as the reference does not), nor a graph output,
nor a node with a subgraph.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from typing import Any

import numpy as np

MAX_ELEMENTS = 4096  # a folded value larger than this stays computed (shape values are small)
ROUNDS = 8  # inference and folding alternate at most this often


def static(value_info: Any) -> list[int] | None:
    t = value_info.type.tensor_type if value_info.type.HasField("tensor_type") else None
    if t is None or not t.HasField("shape") or not all(d.HasField("dim_value") for d in t.shape.dim):
        return None
    return [d.dim_value for d in t.shape.dim]


def _shape_value(node: Any, shape: list[int]) -> np.ndarray:
    """What ``Shape`` (with its ``start``/``end``) or ``Size`` gives for an input of ``shape``."""
    if node.op_type == "Size":
        return np.array(int(np.prod(shape)), dtype=np.int64)
    attrs = {a.name: a.i for a in node.attribute}
    rank = len(shape)
    start, end = attrs.get("start", 0), attrs.get("end", rank)
    start, end = (min(max(v + rank if v < 0 else v, 0), rank) for v in (start, end))
    return np.array(shape[start:end], dtype=np.int64)


def _evaluate(node: Any, values: list[np.ndarray | None], opsets: list[Any]) -> list[np.ndarray]:
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    names = [name for name in node.input if name]
    feeds = {name: v for name, v in zip(node.input, values, strict=True) if name and v is not None}
    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(feeds[n].dtype), feeds[n].shape)
              for n in dict.fromkeys(names)]
    graph = helper.make_graph([node], "fold", inputs, [helper.make_empty_tensor_value_info(n) for n in node.output])
    model = helper.make_model(graph, opset_imports=opsets)
    return [np.asarray(v) for v in ReferenceEvaluator(model).run(None, feeds)]


# a Constant's value attributes other than a tensor, and their numpy types
CONSTANT_TYPES = {"value_int": np.int64, "value_ints": np.int64, "value_float": np.float32,
                  "value_floats": np.float32}


def _constant(node: Any) -> np.ndarray | None:
    """A Constant node's value; None for a sparse tensor or strings."""
    from onnx import helper, numpy_helper

    if len(node.attribute) != 1:
        return None
    attr = node.attribute[0]
    if attr.name == "value":
        return numpy_helper.to_array(attr.t)
    if attr.name in CONSTANT_TYPES:
        return np.array(helper.get_attribute_value(attr), dtype=CONSTANT_TYPES[attr.name])
    return None


def _foldable(node: Any, outputs: set[str]) -> bool:
    return (node.domain in ("", "ai.onnx") and node.op_type != "Constant"
            and not any(a.HasField("g") or a.graphs for a in node.attribute)
            and not outputs.intersection(node.output))


def _fold_once(model: Any) -> bool:
    """One pass over ``model`` (inferred), its foldable nodes made Constants; whether any was."""
    from onnx import helper, numpy_helper

    graph = model.graph
    infos = {v.name: v for v in [*graph.input, *graph.value_info, *graph.output]}
    known: dict[str, np.ndarray] = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    outputs = {v.name for v in graph.output}
    changed = False
    for index, node in enumerate(graph.node):
        if node.op_type == "Constant":
            value = _constant(node)
            if value is not None:
                known[node.output[0]] = value
            continue
        if not _foldable(node, outputs):
            continue
        shape = static(infos[node.input[0]]) if node.input and node.input[0] in infos else None
        if node.op_type in ("Shape", "Size") and shape is not None:
            results = [_shape_value(node, shape)]
        elif node.input and all(not name or name in known for name in node.input):
            try:
                results = _evaluate(node, [known.get(n) for n in node.input], list(model.opset_import))
            except Exception:  # an op the reference lacks, or inputs it rejects: left computed
                continue
        else:
            continue
        if not all(r.dtype.kind in "iub" and r.size <= MAX_ELEMENTS for r in results):
            continue
        known.update(zip(node.output, results, strict=False))
        constants = [helper.make_node("Constant", [], [name], value=numpy_helper.from_array(r, name))
                     for name, r in zip(node.output, results, strict=False) if name]
        if len(constants) != 1:
            continue  # several outputs: left as it is (one Constant per node keeps the order simple)
        graph.node[index].CopyFrom(constants[0])
        changed = True
    return changed


def folded(model: Any, infer: Any) -> Any:
    """``model`` with its shape computations folded; ``infer``: the shape inference to run
    (``importer.inferred``), which returns the model as it is where it cannot."""
    for _ in range(ROUNDS):
        model = infer(model)
        if not _fold_once(model):
            break
    return model
