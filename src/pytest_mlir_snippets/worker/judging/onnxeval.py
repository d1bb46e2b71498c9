"""ONNX's reference implementation as the golden of ONNX imports, op by op.

torch-mlir's ONNX importer writes each node as ``torch.operator "onnx.<Op>"``, its
attributes as ``torch.onnx.<name>`` and its opset on the function
(``torch.onnx_meta.opset_version``). Each such op becomes a one-node ONNX model, run by
``onnx.reference.ReferenceEvaluator`` on the operands' values: ONNX's own definition of
the op, independent of torch-mlir's ONNX-to-torch conversion and of every lowering.
Attribute types come from the op's ONNX schema. ``If`` and ``Loop`` run their regions
through the host evaluator (``torcheval``). An op it cannot evaluate raises
``NotEvaluable`` naming it.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from pytest_mlir_snippets.worker.judging.torchvalues import (
    NotEvaluable,
    element_of,
    literal,
    numpy_dtype,
    to_numpy,
    to_tensor,
)
from pytest_mlir_snippets.worker.lowering.onnx.build import named_attributes

WHO = "ONNX's reference implementation"
_PREFIX = "torch.onnx."
_RANDOM = frozenset({"Bernoulli", "Multinomial", "RandomNormal", "RandomNormalLike", "RandomUniform",
                     "RandomUniformLike"})


class Host(Protocol):
    """What evaluates the module around an ONNX op (``torcheval.Evaluator``)."""

    ir: Any
    text: str

    def run_region(self, region: Any, args: list[Any]) -> list[Any]: ...


def evaluate(op: Any, args: list[Any], host: Host) -> list[Any]:
    """The results of ``torch.operator`` ``op`` on ``args`` (tensors; None for an absent input)."""
    full = str(op.attributes["name"]).strip('"')
    op_type = full.removeprefix("onnx.")
    if not full.startswith("onnx.") or "." in op_type:
        raise NotEvaluable(f'torch.operator "{full}" cannot be evaluated by {WHO}: not an op of the ONNX domain')
    if op_type == "If":
        return host.run_region(op.regions[1 if _flag(args[0]) else 0], [])  # regions by name: else, then
    if op_type == "Loop":
        return _loop(op, args, host, full)
    if op_type in _RANDOM or (op_type == "Dropout" and len(args) > 2 and args[2] is not None and _flag(args[2])):
        raise NotEvaluable(f"{full} cannot be evaluated by {WHO} as a golden: it draws random numbers")
    if len(op.regions):  # Scan's body, a graph attribute the one-node model would need as a graph
        raise NotEvaluable(f"{full} cannot be evaluated by {WHO} here: its body is a region (a graph attribute)")
    if any(isinstance(a, (list, tuple)) for a in args):
        raise NotEvaluable(f"{full} cannot be evaluated by {WHO} here: sequence operands")
    # an absent optional output (GRU's, LSTM's) is !torch.none: no output of the node
    elements = [None if str(r.type) == "!torch.none" else element_of(str(r.type), full)[1] for r in op.results]
    inputs = [None if a is None else to_numpy(a) for a in args]
    outputs = run_node(op_type, _attributes(op, host, full), inputs, elements, _opset(op, full), full)
    for index, (value, element) in enumerate(zip(outputs, elements)):
        if element is not None and value.dtype != numpy_dtype(element):
            raise NotEvaluable(f"{full} gives result {index} of dtype {value.dtype} in {WHO}, the snippet "
                               f"declares {element}")
    return [None if element is None else to_tensor(value, element, full) for value, element in zip(outputs, elements)]


def run_node(op_type: str, attrs: dict[str, Any], inputs: list[np.ndarray | None], elements: list[str | None],
             opset: int, full: str) -> list[np.ndarray]:
    """One ONNX node of ``op_type`` run by the reference evaluator on ``inputs`` (None: an
    absent optional input); its outputs of element types ``elements`` (None: left out)."""
    import onnx
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    try:
        schema = onnx.defs.get_schema(op_type, opset, "")
    except onnx.defs.SchemaError:
        raise NotEvaluable(f"{full} cannot be evaluated by {WHO}: ONNX has no {op_type} in opset {opset}") from None
    names = ["" if value is None else f"in{i}" for i, value in enumerate(inputs)]
    while names and not names[-1]:
        names.pop()
    outs = ["" if e is None else f"out{i}" for i, e in enumerate(elements)]
    node = helper.make_node(op_type, names, outs)
    for key, value in attrs.items():
        spec = schema.attributes.get(key)
        if spec is None:
            raise NotEvaluable(f"{full} cannot be evaluated by {WHO}: torch.onnx.{key} is no attribute of "
                               f"{op_type} in opset {opset}")
        kind: Any = spec.type  # onnx's stubs type it AttrType, make_attribute's int: the same enum
        node.attribute.append(helper.make_attribute(key, _typed(value, kind, key, full), attr_type=kind))
    feeds = {n: v for n, v in zip(names, inputs) if n and v is not None}
    graph = helper.make_graph(
        [node], "golden", [helper.make_tensor_value_info(n, _code(v.dtype, full), None) for n, v in feeds.items()],
        [helper.make_tensor_value_info(o, _code(numpy_dtype(e), full), None) for o, e in zip(outs, elements)
         if e is not None])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    try:
        results = ReferenceEvaluator(model).run(None, feeds)
    except Exception as error:
        why = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise NotEvaluable(f"{full} cannot be evaluated by {WHO}: {why}") from None
    found = iter(np.asarray(r) for r in results)
    return [np.empty(0) if e is None else next(found) for e in elements]


def _code(dtype: np.dtype, full: str) -> int:
    from onnx import helper

    try:
        return int(helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))
    except (KeyError, TypeError, ValueError):
        raise NotEvaluable(f"{full} cannot be evaluated by {WHO}: element type {dtype}") from None


def _typed(value: Any, kind: Any, key: str, full: str) -> Any:
    """An attribute's value as its schema's type says (an integer written as a float, ...)."""
    from onnx import AttributeProto, numpy_helper

    scalar = {AttributeProto.FLOAT: float, AttributeProto.INT: int, AttributeProto.STRING: str}
    many = {AttributeProto.FLOATS: float, AttributeProto.INTS: int, AttributeProto.STRINGS: str}
    if kind in scalar:
        return scalar[kind](value)
    if kind in many:
        return [many[kind](v) for v in (value if isinstance(value, list) else [value])]
    if kind == AttributeProto.TENSOR and isinstance(value, np.ndarray):
        return numpy_helper.from_array(value)
    raise NotEvaluable(f"{full} cannot be evaluated by {WHO} here: attribute {key} of type {kind}")


def _attributes(op: Any, host: Host, full: str) -> dict[str, Any]:
    return {a.name.removeprefix(_PREFIX): _value(a.attr, host, full) for a in named_attributes(op)
            if a.name.startswith(_PREFIX)}


def _value(attr: Any, host: Host, full: str) -> Any:
    ir = host.ir
    if isinstance(attr, ir.ArrayAttr):
        return [_value(a, host, full) for a in attr]
    for kind in (ir.IntegerAttr, ir.FloatAttr, ir.StringAttr):
        if isinstance(attr, kind):
            return {ir.IntegerAttr: int, ir.FloatAttr: float, ir.StringAttr: str}[kind](attr.value)
    if isinstance(attr, ir.DenseElementsAttr) or str(attr).startswith("dense_resource<"):
        return literal(attr, ir, host.text, full)
    raise NotEvaluable(f"{full} cannot be evaluated by {WHO} here: attribute {attr}")


def _opset(op: Any, full: str) -> int:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        parent = parent.parent
    if parent is None or "torch.onnx_meta.opset_version" not in parent.attributes:
        raise NotEvaluable(f"{full} cannot be evaluated by {WHO}: its function names no "
                           "torch.onnx_meta.opset_version")
    return int(parent.attributes["torch.onnx_meta.opset_version"].value)


def _flag(value: Any) -> bool:
    return bool(to_numpy(value).reshape(-1)[0])


def _loop(op: Any, args: list[Any], host: Host, full: str) -> list[Any]:
    """ONNX's Loop: the body runs while its condition holds and under the trip count;
    the carried values' last and each scan output's values stacked."""
    import torch

    count = None if args[0] is None else int(to_numpy(args[0]).reshape(-1)[0])
    going = True if args[1] is None else _flag(args[1])
    carried = list(args[2:])
    scans: list[list[Any]] = []
    step = 0
    while going and (count is None or step < count):
        if count is None and step >= 1_000_000:
            raise NotEvaluable(f"{full}: no trip count, and still going after {step} iterations")
        out = host.run_region(op.regions[0], [torch.tensor(step), torch.tensor(going), *carried])
        going, carried = _flag(out[0]), out[1:1 + len(carried)]
        scans.append(out[1 + len(carried):])
        step += 1
    stacked = []
    for k, result in enumerate(op.results[len(carried):]):
        if scans:
            stacked.append(torch.stack([s[k] for s in scans]))
            continue
        dims, element = element_of(str(result.type))
        if dims is None or None in dims:
            raise NotEvaluable(f"{full}: an empty scan output of unknown shape ({result.type})")
        stacked.append(to_tensor(np.zeros([int(d or 0) for d in dims]), element, full))
    return [*carried, *stacked]
