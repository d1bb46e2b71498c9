"""PyTorch's ATen as the golden of torch-dialect functions, op by op.

A torch-dialect function (``torch.aten.*``, ``torch.prim.*``, ``torch.constant.*`` on
``!torch.vtensor``) is parsed with torch-mlir's bindings and evaluated one op at a time,
as StableHLO's interpreter evaluates StableHLO: each ``torch.aten.<name>.<overload>`` is
``torch.ops.aten.<name>.<overload>`` on CPU tensors, eagerly, so results have PyTorch's
own dtype semantics and numerics, independent of torch-mlir's lowering. The operands are
the schema's arguments in order (torch-mlir generates its ops from ATen's schemas);
keyword-only ones are given by name; dtypes stay ScalarType codes, which ATen takes.
ONNX imports (``torch.operator "onnx.*"``) go to ONNX's reference implementation
(``onnxeval``). An op neither can evaluate raises ``NotEvaluable`` naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.judging import onnxeval
from pytest_mlir_snippets.worker.judging.torchvalues import (
    NotEvaluable,
    dtype_code,
    element_of,
    literal,
    numpy_dtype,
    to_numpy,
    to_tensor,
    torch_dtype,
)
from pytest_mlir_snippets.worker.lowering import frontend, mlirtools

ATEN = "PyTorch's ATen, op by op"
ONNX = "ONNX's reference implementation, op by op"
_TERMINATORS = frozenset({"func.return", "torch.prim.If.yield", "torch.prim.Loop.condition",
                          "torch.operator_terminator"})
_SCALARS = {"!torch.int": int, "!torch.float": float, "!torch.bool": bool}


def name_for(module_text: str) -> str:
    """The golden's name for a module: ONNX's reference for an ONNX import, else ATen."""
    return ONNX if '"onnx.' in module_text else ATEN


def evaluate(module_text: str, function: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The outputs of ``function`` of a torch-dialect module on ``inputs``, computed by
    PyTorch's ATen (and ONNX's reference for ONNX ops); ``NotEvaluable`` where it cannot."""
    import torch

    ctx = frontend._torch_mlir_context()
    ir = frontend._torch_mlir["ir"]
    ctx.allow_unregistered_dialects = True
    with ctx, ir.Location.unknown(), torch.no_grad():
        try:
            module = ir.Module.parse(module_text)
        except Exception as error:
            raise NotEvaluable(f"the module does not parse in torch-mlir: {str(error).splitlines()[0]}") from None
        evaluator = Evaluator(module, ir, module_text)
        func = mlirtools.find_function(module, function)
        types = [str(t) for t in func.type.inputs]
        if len(types) != len(inputs):
            raise NotEvaluable(f"@{function} takes {len(types)} arguments, {len(inputs)} were given")
        args = [_argument(value, t) for value, t in zip(inputs, types)]
        results = evaluator.call(func, args)
        return [_output(value, str(t)) for value, t in zip(results, func.type.results)]


def _argument(value: np.ndarray, type_text: str) -> Any:
    if type_text == "!torch.none":
        return None
    if type_text in _SCALARS:
        return _SCALARS[type_text](np.asarray(value).item())
    return to_tensor(value, element_of(type_text)[1], "the function's argument")


def _output(value: Any, type_text: str) -> np.ndarray:
    if type_text in _SCALARS:
        return np.asarray(value, dtype={"!torch.int": np.int64, "!torch.float": np.float64,
                                        "!torch.bool": np.bool_}[type_text])
    return to_numpy(value).astype(numpy_dtype(element_of(type_text)[1]), copy=False)


class Evaluator:
    """The values of one module's functions, op by op."""

    def __init__(self, module: Any, ir: Any, module_text: str) -> None:
        self.module, self.ir, self.text = module, ir, module_text
        self.values: dict[Any, Any] = {}

    def call(self, func: Any, args: list[Any]) -> list[Any]:
        return self.run_block(func.regions[0].blocks[0], args)

    def run_region(self, region: Any, args: list[Any]) -> list[Any]:
        return self.run_block(region.blocks[0], args)

    def run_block(self, block: Any, args: list[Any]) -> list[Any]:
        """Evaluate ``block`` with ``args`` for its arguments; its terminator's operands."""
        for argument, value in zip(block.arguments, args, strict=True):
            self.values[argument] = value
        for op in block.operations:
            operation = op.operation
            operands = [self.values[v] for v in operation.operands]
            if operation.name in _TERMINATORS:
                return operands
            results = self.evaluate(operation, operands)
            for result, value in zip(operation.results, results, strict=True):
                self.values[result] = value
        raise NotEvaluable("a block without a terminator")

    def evaluate(self, op: Any, args: list[Any]) -> list[Any]:
        name = op.name
        own = _OWN.get(name)
        if own is not None:
            return own(self, op, args)
        if name == "torch.operator":
            results = onnxeval.evaluate(op, args, self)
        elif name.startswith(("torch.aten.", "torch.prim.", "torch.prims.")):
            results = aten(name, args)
        else:
            raise NotEvaluable(f"{name} cannot be evaluated by PyTorch's ATen: not an ATen op")
        _check_results(str(op.attributes["name"]).strip('"') if name == "torch.operator" else name, op, results)
        return results


def overload(name: str) -> Any:
    """``torch.ops.aten.add.Tensor`` for ``torch.aten.add.Tensor`` (``.default`` where the
    name has no overload); ``NotEvaluable`` naming the op where ATen has none."""
    import torch

    namespace, rest = name.removeprefix("torch.").split(".", 1)
    base, _, which = rest.rpartition(".") if "." in rest else (rest, "", "default")
    try:
        return getattr(getattr(getattr(torch.ops, namespace), base), which)
    except (AttributeError, RuntimeError):
        raise NotEvaluable(f"{name} cannot be evaluated by PyTorch's ATen: torch.ops.{namespace} has no "
                           f"{base}.{which}") from None


def aten(name: str, args: list[Any]) -> list[Any]:
    """``name``'s ATen overload called on ``args`` in its schema's order; its results as a list."""
    import torch

    found = overload(name)
    schema = found._schema
    if len(schema.arguments) != len(args):
        raise NotEvaluable(f"{name} cannot be evaluated by PyTorch's ATen: {len(args)} operands where its "
                           f"schema has {len(schema.arguments)} ({schema})")
    if torch.Tag.nondeterministic_seeded in found.tags and not _not_training(schema, args):
        raise NotEvaluable(f"{name} cannot be evaluated by PyTorch's ATen as a golden: it draws random numbers")
    positional, keywords = [], {}
    for argument, value in zip(schema.arguments, args):
        if isinstance(value, str) and str(argument.type) in ("Device", "Optional[Device]"):
            value = "cpu"  # the golden runs on the CPU, wherever the snippet puts its tensors
        if argument.kwarg_only:
            keywords[argument.name] = value
        else:
            positional.append(value)
    try:
        out = found(*positional, **keywords)
    except Exception as error:
        why = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise NotEvaluable(f"{name} cannot be evaluated by PyTorch's ATen: {why}") from None
    if len(schema.returns) == 1 and not isinstance(out, torch.Tensor) and isinstance(out, tuple):
        return [out]
    return list(out) if len(schema.returns) > 1 else ([] if not schema.returns else [out])


def _not_training(schema: Any, args: list[Any]) -> bool:
    """A dropout given ``train=False``: the identity, whatever its tag says."""
    return any(a.name == "train" and v is False for a, v in zip(schema.arguments, args))


def _check_results(name: str, op: Any, results: list[Any]) -> None:
    """The golden's results have the shapes and element types the snippet declares (else
    the snippet's types are not PyTorch's or ONNX's, and neither can stand for it)."""
    import torch

    for index, (result, value) in enumerate(zip(op.results, results)):
        if not isinstance(value, torch.Tensor) or not str(result.type).startswith("!torch.vtensor<"):
            continue
        dims, element = element_of(str(result.type))
        shaped = dims is not None and op.name != "torch.operator"  # ONNX's importer writes [] for unknown shapes
        if shaped and dims is not None and (len(dims) != value.dim() or any(
                d is not None and d != s for d, s in zip(dims, value.shape))):
            raise NotEvaluable(f"{name} gives result {index} of shape {list(value.shape)}, the snippet declares "
                               f"{result.type}")
        if element and torch_dtype(element, name) != value.dtype:
            raise NotEvaluable(f"{name} gives result {index} of dtype {value.dtype}, the snippet declares "
                               f"{result.type}")


def _constant(ev: Evaluator, op: Any, args: list[Any]) -> list[Any]:
    if "value" not in op.attributes:
        return [None]  # torch.constant.none
    attr = op.attributes["value"]
    if isinstance(attr, ev.ir.IntegerAttr):
        value = int(attr.value)
        return [bool(value) if op.name == "torch.constant.bool" else value]
    if isinstance(attr, ev.ir.FloatAttr):
        return [float(attr.value)]
    if isinstance(attr, ev.ir.StringAttr):
        return [str(attr.value)]
    if isinstance(attr, ev.ir.BoolAttr):
        return [bool(attr.value)]
    raise NotEvaluable(f"{op.name} cannot be evaluated by PyTorch's ATen: value {attr}")


def _literal(ev: Evaluator, op: Any, args: list[Any]) -> list[Any]:
    element = element_of(str(op.results[0].type))[1]
    return [to_tensor(literal(op.attributes["value"], ev.ir, ev.text, op.name), element, op.name)]


def _if(ev: Evaluator, op: Any, args: list[Any]) -> list[Any]:
    return ev.run_region(op.regions[0 if args[0] else 1], [])


def _loop(ev: Evaluator, op: Any, args: list[Any]) -> list[Any]:
    count, going, carried = args[0], args[1], list(args[2:])
    step = 0
    while going and step < count:
        going, *carried = ev.run_region(op.regions[0], [step, *carried])
        step += 1
    return carried


def _call(ev: Evaluator, op: Any, args: list[Any]) -> list[Any]:
    return ev.call(mlirtools.find_function(ev.module, str(op.attributes["callee"]).lstrip("@")), args)


def _assert(ev: Evaluator, op: Any, args: list[Any]) -> list[Any]:
    if not args[0]:
        raise NotEvaluable(f"{op.name} fails in PyTorch's ATen: {op.attributes['message']}")
    return []


def _raise(ev: Evaluator, op: Any, args: list[Any]) -> list[Any]:
    raise NotEvaluable(f"{op.name} raises in PyTorch's ATen: {args[0] if args else ''}")


def _overwrite(ev: Evaluator, op: Any, args: list[Any]) -> list[Any]:
    args[1].copy_(args[0])
    return []


def _plain(compute: Callable[..., Any]) -> Callable[[Evaluator, Any, list[Any]], list[Any]]:
    """An op of Python values (lists, tuples, ints) that ATen's generic ``t`` schemas
    cannot take from Python: computed here, one result."""
    return lambda ev, op, args: [compute(*args)]


def _same(ev: Evaluator, op: Any, args: list[Any]) -> list[Any]:
    return [args[0]]


def _clone(ev: Evaluator, op: Any, args: list[Any]) -> list[Any]:
    return [args[0].clone()]


_OWN: dict[str, Callable[[Evaluator, Any, list[Any]], list[Any]]] = {
    **{f"torch.constant.{k}": _constant for k in ("int", "float", "bool", "str", "none", "number", "device")},
    "torch.vtensor.literal": _literal, "torch.tensor.literal": _literal,
    "torch.prim.If": _if, "torch.prim.Loop": _loop, "func.call": _call,
    "torch.runtime.assert": _assert, "torch.prim.RaiseException": _raise,
    "torch.overwrite.tensor.contents": _overwrite,
    "torch.copy.to_vtensor": _clone, "torch.copy.to_tensor": _clone,
    "torch.derefine": _same, "torch.prim.unchecked_cast": _same, "torch.tensor_static_info_cast": _same,
    "torch.prim.ListConstruct": lambda ev, op, args: [list(args)],
    "torch.prim.TupleConstruct": lambda ev, op, args: [tuple(args)],
    "torch.prim.ListUnpack": lambda ev, op, args: list(args[0]),
    "torch.prim.TupleUnpack": lambda ev, op, args: list(args[0]),
    "torch.prim.TupleIndex": _plain(lambda t, i: t[i]),
    "torch.prim.device": _plain(lambda t: "cpu"),
    "torch.prim.dtype": _plain(lambda t: dtype_code(t.dtype)),
    "torch.prim.layout": _plain(lambda t: 0),  # torch.strided
    "torch.prim.Uninitialized": lambda ev, op, args: [None],
    "torch.prim.min.int": _plain(min), "torch.prim.max.int": _plain(max),
    "torch.prim.min.self_int": _plain(min), "torch.prim.max.self_int": _plain(max),
    "torch.aten.len.t": _plain(len), "torch.aten.__getitem__.t": _plain(lambda a, i: a[i]),
    "torch.aten.add.t": _plain(lambda a, b: [*a, *b]),
    "torch.aten.eq.int_list": _plain(lambda a, b: list(a) == list(b)),
    "torch.aten.ne.int_list": _plain(lambda a, b: list(a) != list(b)),
    "torch.aten.__is__": _plain(lambda a, b: a is b), "torch.aten.__isnot__": _plain(lambda a, b: a is not b),
    "torch.aten.__not__": _plain(lambda a: not a),
    "torch.aten.__contains__.int_list": _plain(lambda a, b: b in a),
}
