"""A constant's value as numpy, and the entry argument that stands for it at run time.

The plugin feeds the constants a self-checking test computes from as arguments of the
entry (``worker/lowering/ireeops.py``); this module reads their values from the
attributes (dense, splat, raw hex bytes, complex, f16/bf16 through their text) and
makes the arguments. A type no caller can hand over as it is (sub-byte integers, f8,
f6, f4) is fed in a wide type (``wide_element``) and converted back inside the entry.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from pytest_mlir_snippets.golden.inputs import DTYPES

_HEX = re.compile(r'^dense<"0x([0-9A-Fa-f]+)">')
_NUMBER = re.compile(r"0x[0-9A-Fa-f]+|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan")


def value_of(attr: Any, ir: Any) -> np.ndarray:
    """A dense or scalar attribute's value as numpy; ValueError when it cannot be read."""
    kind = str(attr.type)
    if kind.startswith("tensor<"):
        shaped = ir.ShapedType(attr.type)
        element = str(shaped.element_type)
        dtype = DTYPES.get(element)
        shape = tuple(shaped.shape)
        # raw bytes, and the types the bindings give no buffer of: from the printed form
        if dtype is None or _HEX.match(str(attr)) or (dtype.kind == "f" and dtype.itemsize < 4) or \
                element == "bf16" or dtype.kind == "c":
            return _from_printed(str(attr), element, shape)
        if dtype.kind not in "biuf":
            raise ValueError(f"element type {element} written out")
        dense = ir.DenseElementsAttr(attr)
        typed = ir.DenseIntElementsAttr if dtype.kind in "biu" else ir.DenseFPElementsAttr
        if dense.is_splat:
            return np.full(shape, _scalar(dense.get_splat_value(), ir), dtype=dtype)
        if dtype.kind == "b" or dtype.itemsize < 4:
            values = typed(attr)
            return np.array([values[i] for i in range(len(values))], dtype=dtype).reshape(shape)
        return np.array(typed(attr), copy=True).astype(dtype).reshape(shape)
    dtype = DTYPES.get(kind)
    if dtype is None:
        raise ValueError(f"type {kind}")
    return np.array(_scalar(attr, ir), dtype=dtype)


_SUB_BYTE = re.compile(r"^(u?)i([2-7])$")
_SMALL_FLOAT = re.compile(r"^f(8|6|4)E")


def wide_element(element: str) -> str | None:
    """The type a value of ``element`` is fed in when no caller can hand it over as it is:
    sub-byte integers as 8-bit ones, f8/f6/f4 floats as f32 (both exact); None: as it is."""
    m = _SUB_BYTE.match(element)
    if m:
        return f"{m.group(1)}i8"
    return "f32" if _SMALL_FLOAT.match(element) else None


def _narrow_value(text: str, element: str, shape: tuple[int, ...]) -> np.ndarray:
    """A constant of a type numpy lacks, in its wide type (``wide_element``)."""
    wide = wide_element(element)
    if wide is None:
        raise ValueError(f"element type {element}")
    hexed = _HEX.match(text)
    if wide == "f32":
        import ml_dtypes  # not at import: see golden/inputs.py

        own = getattr(ml_dtypes, element.replace("f8", "float8_").replace("f6", "float6_")
                      .replace("f4", "float4_").lower(), None)
        if own is None:
            raise ValueError(f"element type {element}")
        if hexed:
            return _shaped(np.frombuffer(bytes.fromhex(hexed.group(1)), dtype=own).astype(np.float32), shape)
        return _from_text(text, np.dtype(own), shape).astype(np.float32)  # hex elements: the type's own bits
    if hexed:
        raise ValueError(f"element type {element} written as raw bytes")
    return _from_text(text, np.dtype(np.uint8 if wide.startswith("u") else np.int8), shape)


def constant_value(op: Any, ir: Any) -> np.ndarray:
    """The value of a constant op (its ``value`` attribute) as numpy; ValueError when it
    cannot be read. The bindings cannot hand over a complex dense attribute (reading it
    raises), so one is read from the op's printed form, whose type is its result's."""
    try:
        return value_of(op.attributes["value"], ir)
    except TypeError:
        pass
    text = str(op.operation if hasattr(op, "operation") else op)
    start = text.find("dense<")
    if start < 0 or not len(op.results):
        raise ValueError("a value the bindings cannot read")
    depth, end = 0, -1
    for i in range(start + 5, len(text)):
        depth += (text[i] == "<") - (text[i] == ">")
        if depth == 0:
            end = i
            break
    if end < 0:
        raise ValueError("a value the bindings cannot read")
    kind = op.results[0].type
    shaped = ir.ShapedType(kind)
    return _from_printed(f"dense<{text[start + 6:end]}> : {kind}", str(shaped.element_type), tuple(shaped.shape))


def _from_printed(text: str, element: str, shape: tuple[int, ...]) -> np.ndarray:
    """A dense attribute's values from its printed form, ``dense<...> : type``: raw
    little-endian bytes (openxla's testdata) read as they are, any element width, else the
    values written out; a type numpy lacks in its wide type (``wide_element``)."""
    dtype = DTYPES.get(element)
    if dtype is None:
        return _narrow_value(text, element, shape)
    hexed = _HEX.match(text)
    if hexed:
        return _shaped(np.frombuffer(bytes.fromhex(hexed.group(1)), dtype=dtype), shape)
    return _from_text(text, dtype, shape)


def _from_text(text: str, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """A float or complex attribute's values from its printed form: decimals, and hex bit
    patterns (how MLIR prints NaN and infinities of the element type); a complex value is
    its two parts, ``(re,im)``."""
    body = text[text.index("<") + 1: text.rindex(">", 0, text.rindex(":"))]
    part = np.dtype(f"float{dtype.itemsize * 4}") if dtype.kind == "c" else dtype
    bits = np.dtype(f"uint{part.itemsize * 8}")
    values = [np.array(int(t, 16), bits).view(part) if t.lower().startswith("0x")
              else np.array(int(t) if part.kind in "iu" else float(t), part) for t in _NUMBER.findall(body)]
    flat = np.array(values, dtype=part)
    if dtype.kind == "c":
        flat = flat.reshape(-1, 2)
        flat = (flat[:, 0] + 1j * flat[:, 1]).astype(dtype)
    return _shaped(flat, shape)


def _shaped(flat: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``flat`` as ``shape``: all its values, or one splat value repeated."""
    count = int(np.prod(shape)) if shape else 1
    if flat.size == count:
        return np.array(flat.reshape(shape))
    if flat.size == 1:
        return np.array(np.broadcast_to(flat.reshape(()), shape))
    raise ValueError(f"{flat.size} value(s) for a tensor of {count}")


def _scalar(attr: Any, ir: Any) -> Any:
    text = str(attr.type)
    if text.startswith(("f", "bf")):
        return ir.FloatAttr(attr).value
    value = ir.IntegerAttr(attr).value
    return bool(value) if text == "i1" else value


_CONVERT = {"stablehlo": ("stablehlo.convert", "stablehlo.convert"), "arith": ("arith.trunci", "arith.truncf")}


def new_argument(block: Any, kind: Any, location: Any, ir: Any, dialect: str) -> Any:
    """A new argument of the entry standing for a value of type ``kind``: of that type, or of
    its wide type (``wide_element``) converted back right at the entry's start."""
    if not str(kind).startswith("tensor<"):
        return block.add_argument(kind, location)  # a scalar (an unfoldable i32): as it is
    shaped = ir.ShapedType(kind)
    wide = wide_element(str(shaped.element_type))
    if wide is None:
        return block.add_argument(kind, location)
    dims = "".join(f"{d}x" for d in shaped.shape)
    wide_type = ir.Type.parse(f"tensor<{dims}{wide if dialect == 'stablehlo' else wide.lstrip('u')}>")
    argument = block.add_argument(wide_type, location)
    convert = _CONVERT[dialect][1 if wide == "f32" else 0]
    with ir.InsertionPoint.at_block_begin(block), location:  # marked: the value as fed, not computed
        return ir.Operation.create(convert, results=[kind], operands=[argument],
                                   attributes={FED: ir.UnitAttr.get()}).result


FED = "mlir_snippets.fed"  # the plugin's conversion of a fed value (``worker/lowering/checks.py``)


# per dialect: (narrow to wide float, int), (wide to narrow float, int)
_WIDEN = {"stablehlo": (("stablehlo.convert",) * 2, ("stablehlo.convert",) * 2),
          "arith": (("arith.extf", "arith.extsi"), ("arith.truncf", "arith.trunci"))}


def _wide_type(kind: Any, ir: Any, dialect: str) -> tuple[Any, int] | None:
    """The wide tensor type of a tensor of a type no caller hands over, and whether it is a
    float (1) or an integer (0); None: as it is."""
    if not str(kind).startswith("tensor<"):
        return None
    shaped = ir.RankedTensorType(kind)
    wide = wide_element(str(shaped.element_type))
    if wide is None:
        return None
    dims = "".join("?x" if shaped.is_dynamic_dim(i) else f"{d}x" for i, d in enumerate(shaped.shape))
    element = wide if dialect == "stablehlo" else wide.lstrip("u")
    return ir.Type.parse(f"tensor<{dims}{element}>"), int(wide == "f32")


def widen_entry(func: Any, ir: Any, dialect: str) -> list[str]:
    """The entry's arguments and results of types no caller can hand over or read (f8, f6,
    f4, sub-byte integers; ``wide_element``) in their wide types, converted (exactly, for
    values of the narrow type) at the entry's start and before its returns; what changed."""
    block = func.regions[0].blocks[0]
    notes: list[str] = []
    widen, narrow = _WIDEN[dialect]
    for i, argument in enumerate(list(block.arguments)):
        found = _wide_type(argument.type, ir, dialect)
        if found is None:
            continue
        own = argument.type
        with ir.InsertionPoint.at_block_begin(block), func.location:
            convert = ir.Operation.create(narrow[1 - found[1]], results=[own], operands=[argument])
        argument.replace_all_uses_except(convert.result, convert)
        argument.set_type(found[0])
        notes.append(f"argument #{i} {own} fed as {found[0]}")
    results = list(ir.FunctionType(func.attributes["function_type"].value).results)
    for region_block in func.regions[0].blocks:
        ret = list(region_block.operations)[-1]
        if ret.operation.name != "func.return":
            continue
        for i, value in enumerate(list(ret.operands)):
            found = _wide_type(value.type, ir, dialect)
            if found is None:
                continue
            with ir.InsertionPoint(ret), ret.location:
                ret.operands[i] = ir.Operation.create(widen[1 - found[1]], results=[found[0]], operands=[value]).result
            results[i] = found[0]
            note = f"result #{i} {value.type} read as {found[0]}"
            notes += [note] if note not in notes else []
    if notes:
        func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([a.type for a in block.arguments],
                                                                               results))
    return notes


__all__ = ["constant_value", "new_argument", "value_of", "wide_element", "widen_entry"]
