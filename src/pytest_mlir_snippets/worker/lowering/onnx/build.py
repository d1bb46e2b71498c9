"""The view of an ONNX op an expander reads, and the emitter it builds ONNX ops with."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np

_VTENSOR = re.compile(r"^!torch\.vtensor<\[([\d,]*)\],(\w+)>$")
# torch element types and their numpy types
NUMPY = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i1": np.bool_, "si8": np.int8,
         "ui8": np.uint8, "si16": np.int16, "ui16": np.uint16, "si32": np.int32, "ui32": np.uint32,
         "si64": np.int64, "ui64": np.uint64}
# ONNX TensorProto data types (Cast's ``to``)
ONNX_TYPE = {"f32": 1, "ui8": 2, "si8": 3, "ui16": 4, "si16": 5, "si32": 6, "si64": 7, "i1": 9, "f16": 10,
             "f64": 11, "ui32": 12, "ui64": 13, "bf16": 16}


@dataclasses.dataclass
class Tensor:
    """An operand or result: its value, static shape and torch element type; ``const``
    holds its value where it is a literal or an ``onnx.Constant``."""

    value: Any
    shape: list[int]
    dtype: str
    const: np.ndarray | None = None

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclasses.dataclass
class OnnxOp:
    name: str
    inputs: list[Tensor | None]  # None: an absent optional input (``torch.constant.none``)
    attrs: dict[str, Any]
    results: list[tuple[list[int], str]]  # (shape, element type); shape [] for unknown rank too
    opset: int
    operation: Any = None  # the torch.operator itself, for expanders that rewrite it in place (Loop, If)

    def input(self, index: int) -> Tensor | None:
        return self.inputs[index] if index < len(self.inputs) else None

    def known(self, index: int) -> bool:
        """Whether input ``index`` is absent or a constant (an expander needs its value)."""
        x = self.input(index)
        return x is None or x.const is not None

    def ints(self, index: int, default: list[int] | None = None) -> list[int] | None:
        """A constant integer input as a list (a scalar as one item); ``default`` where absent."""
        x = self.input(index)
        if x is None or x.const is None:
            return default
        return [int(v) for v in np.asarray(x.const).reshape(-1)]


def parse_type(text: str) -> tuple[list[int], str] | None:
    m = _VTENSOR.match(text)
    if m is None:
        return None
    return [int(d) for d in m.group(1).split(",") if d], m.group(2)


def vtensor(shape: list[int] | tuple[int, ...], dtype: str) -> str:
    return f"!torch.vtensor<[{','.join(str(int(d)) for d in shape)}],{dtype}>"


def _attribute(attr: Any, tir: Any) -> Any:
    if isinstance(attr, tir.ArrayAttr):
        return [_attribute(a, tir) for a in attr]
    if isinstance(attr, tir.IntegerAttr):
        return int(attr.value)
    if isinstance(attr, tir.FloatAttr):
        return float(attr.value)
    if isinstance(attr, tir.StringAttr):
        return str(attr.value)
    if isinstance(attr, tir.DenseElementsAttr):
        return dense_value(attr, tir)
    return attr


def dense_value(attr: Any, tir: Any) -> np.ndarray | None:
    """The value of a dense elements attribute (splats included), None for one numpy cannot hold."""
    try:
        return np.array(tir.DenseElementsAttr(attr))
    except (TypeError, ValueError, RuntimeError):
        return None


def defining_op(value: Any) -> Any:
    """The op defining ``value`` as a generic ``Operation`` (an ``OpView`` of ``torch.operator``
    reads ``name`` as the ONNX name), None for a block argument."""
    owner = value.owner
    owner = getattr(owner, "operation", owner)
    return owner if hasattr(owner, "results") else None


def onnx_attributes(op: Any, tir: Any) -> dict[str, Any]:
    """An ONNX op's attributes as Python values (integers, floats, strings, lists, arrays)."""
    return {a.name.removeprefix("torch.onnx."): _attribute(a.attr, tir) for a in named_attributes(op)
            if a.name.startswith("torch.onnx.")}


def constant_value(attrs: dict[str, Any]) -> np.ndarray | None:
    """The value of an ``onnx.Constant`` with these attributes (None for a sparse or string one)."""
    if isinstance(attrs.get("value"), np.ndarray):
        return np.asarray(attrs["value"])
    for key, dtype in (("value_int", np.int64), ("value_ints", np.int64), ("value_float", np.float32),
                       ("value_floats", np.float32)):
        if key in attrs:
            return np.array(attrs[key], dtype=dtype)
    return None


def _constant(value: Any, tir: Any) -> np.ndarray | None:
    op = defining_op(value)
    if op is not None and op.name == "torch.vtensor.literal":
        return dense_value(op.attributes["value"], tir)
    if onnx_name(op) != "Constant":
        return None
    return constant_value(onnx_attributes(op, tir))


def onnx_name(op: Any) -> str | None:
    """The ONNX op a ``torch.operator`` is ("Resize" for ``onnx.Resize``); None for another op."""
    op = getattr(op, "operation", op)
    if op is None or op.name != "torch.operator":
        return None
    return str(op.attributes["name"]).strip('"').removeprefix("onnx.")


def onnx_ops(module: Any, tir: Any, names: Any) -> list[Any]:
    """The ``torch.operator`` ops of ``module`` whose ONNX op is in ``names``, in order."""
    found: list[Any] = []

    def visit(op: Any) -> Any:
        if onnx_name(op) in names:
            found.append(op)
        return tir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def named_attributes(op: Any) -> list[Any]:
    return [op.attributes[i] for i in range(len(op.attributes))]


def tensor(value: Any, tir: Any) -> Tensor | None:
    if str(value.type) == "!torch.none":
        return None
    parsed = parse_type(str(value.type))
    shape, dtype = parsed if parsed else ([], str(value.type))
    return Tensor(value, shape, dtype, _constant(value, tir))


def view(op: Any, tir: Any) -> OnnxOp:
    attrs = onnx_attributes(op, tir)
    func = op.parent
    while func is not None and func.name != "func.func":
        func = func.parent
    opset = 0
    if func is not None and "torch.onnx_meta.opset_version" in func.attributes:
        opset = int(func.attributes["torch.onnx_meta.opset_version"].value)
    results = [parse_type(str(r.type)) or ([], str(r.type)) for r in op.results]
    return OnnxOp(onnx_name(op) or "", [tensor(v, tir) for v in op.operands], attrs, results, opset,
                  getattr(op, "operation", op))


OPSET = 21  # the opset expansions are written in


class Body:
    """A private function at opset ``OPSET`` taking ``op``'s operands (an absent input is
    none there too) and returning its results, for an expansion of ``op``."""

    def __init__(self, tir: Any, module: Any, op: Any, name: str) -> None:
        self.tir, self.op, self.name = tir, op, name
        operand_types = [v.type for v in op.operands]
        result_types = [r.type for r in op.results]
        si64 = tir.IntegerType.get_signed(64)
        with tir.InsertionPoint(module.body), op.location:
            self.func = tir.Operation.create("func.func", regions=1, attributes={
                "sym_name": tir.StringAttr.get(name), "sym_visibility": tir.StringAttr.get("private"),
                "function_type": tir.TypeAttr.get(tir.FunctionType.get(operand_types, result_types)),
                "torch.onnx_meta.opset_version": tir.IntegerAttr.get(si64, OPSET)})
        self.block = self.func.regions[0].blocks.append(*operand_types)
        self.arguments = list(self.block.arguments)

    def replace(self, results: list[Any]) -> list[Any]:
        """Return ``results`` and call the function in place of the op; the call's results."""
        tir, op = self.tir, self.op
        with tir.InsertionPoint(self.block), op.location:
            tir.Operation.create("func.return", operands=results)
        with tir.InsertionPoint(op), op.location:
            call = tir.Operation.create("func.call", results=[r.type for r in op.results],
                                        operands=list(op.operands),
                                        attributes={"callee": tir.FlatSymbolRefAttr.get(self.name)})
        for old, new in zip(op.results, call.results, strict=True):
            old.replace_all_uses_with(new)
        op.erase()
        return list(call.results)

    def erase(self) -> None:
        self.func.erase()


class Emitter:
    """Builds ONNX ops (``torch.operator``) and literals at the end of ``block``, or before
    the op ``before`` (an in-place rewrite, in the model's own function)."""

    def __init__(self, tir: Any, block: Any, location: Any, before: Any = None) -> None:
        self.tir = tir
        self.block = block
        self.location = location
        self.before = before

    def _create(self, name: str, result_types: list[str], operands: list[Any], attributes: dict[str, Any]) -> Any:
        tir = self.tir
        where = tir.InsertionPoint(self.before) if self.before is not None else tir.InsertionPoint(self.block)
        with where, self.location:
            return tir.Operation.create(name, results=[tir.Type.parse(t) for t in result_types], operands=operands,
                                        attributes=attributes)

    def _attr(self, value: Any) -> Any:
        tir = self.tir
        if isinstance(value, bool | int | np.integer):
            return tir.IntegerAttr.get(tir.IntegerType.get_signed(64), int(value))
        if isinstance(value, float | np.floating):
            return tir.FloatAttr.get(tir.F32Type.get(), float(value))
        if isinstance(value, str):
            return tir.StringAttr.get(value)
        if isinstance(value, list | tuple):
            return tir.ArrayAttr.get([self._attr(v) for v in value])
        raise TypeError(f"no ONNX attribute for {value!r}")

    def op(self, name: str, inputs: list[Any], results: list[tuple[list[int], str]], **attrs: Any) -> list[Any]:
        """``onnx.<name>`` of ``inputs`` (values or Tensors; None for an absent input)."""
        operands = [self.none() if v is None else (v.value if isinstance(v, Tensor) else v) for v in inputs]
        attributes = {"name": self.tir.StringAttr.get(f"onnx.{name}")}
        attributes.update({f"torch.onnx.{k}": self._attr(v) for k, v in attrs.items()})
        op = self._create("torch.operator", [vtensor(s, d) for s, d in results], operands, attributes)
        return list(op.results)

    def op1(self, name: str, inputs: list[Any], shape: list[int], dtype: str, **attrs: Any) -> Any:
        return self.op(name, inputs, [(shape, dtype)], **attrs)[0]

    def reinterpret(self, value: Any, shape: list[int], source: str, dtype: str) -> Any:
        """``value``'s bits as ``dtype``, an integer type of ``source``'s width (si16 as ui16): both
        convert to the same signless builtin tensor, through which torch_c passes it unchanged;
        the way to ui16, which no ONNX Cast in torch-mlir makes or reads."""
        self._load_torch_c()
        width = source.removeprefix("s").removeprefix("u").removeprefix("i")
        builtin = f"tensor<{''.join(f'{d}x' for d in shape)}i{width}>"
        signless = self._create("torch_c.to_builtin_tensor", [builtin], [value], {}).result
        return self._create("torch_c.from_builtin_tensor", [vtensor(shape, dtype)], [signless], {}).result

    def bitcast(self, value: Any, shape: list[int], source: str, dtype: str) -> Any:
        """``value``'s bits as ``dtype`` of the same width, a float on either side:
        ``arith.bitcast`` between the builtin tensors torch_c converts to and from."""
        self._load_torch_c()
        builtin = [f"tensor<{''.join(f'{d}x' for d in shape)}{t if t[0] in 'bf' else 'i' + t.lstrip('sui')}>"
                   for t in (source, dtype)]
        signless = self._create("torch_c.to_builtin_tensor", [builtin[0]], [value], {}).result
        bits = self._create("arith.bitcast", [builtin[1]], [signless], {}).result
        return self._create("torch_c.from_builtin_tensor", [vtensor(shape, dtype)], [bits], {}).result

    def _load_torch_c(self) -> None:
        """Load torch_c into the context (a pass that depends on it, run on an empty module):
        an op of a dialect not loaded yet would be built unregistered and misread once it loads."""
        context = self.location.context
        if context.is_registered_operation("torch_c.to_builtin_tensor"):
            return
        from torch_mlir import passmanager

        with context, self.tir.Location.unknown():
            empty = self.tir.Module.parse("module {}")
            passmanager.PassManager.parse("builtin.module(func.func(convert-torch-to-arith))").run(empty.operation)

    def none(self) -> Any:
        return self._create("torch.constant.none", ["!torch.none"], [], {}).result

    def const(self, array: Any, dtype: str) -> Any:
        """A literal of ``array`` as ``dtype`` (a torch element type)."""
        data: np.ndarray = np.asarray(array).astype(NUMPY[dtype])
        dims = "".join(f"{d}x" for d in data.shape)
        if not data.size:
            body = ""
        elif dtype == "i1":  # spelled out: MLIR versions disagree on the hex layout of booleans
            body = str(data.tolist()).replace("True", "true").replace("False", "false")
        else:
            body = '"0x' + data.tobytes().hex().upper() + '"'
        attr = self.tir.Attribute.parse(f"dense<{body}> : tensor<{dims}{dtype}>")
        return self._create("torch.vtensor.literal", [vtensor(list(data.shape), dtype)], [], {"value": attr}).result
