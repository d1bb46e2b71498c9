"""Values between torch-mlir's types and PyTorch's: element types, tensors, literals.

``torcheval`` evaluates torch-dialect functions with PyTorch's ATen; this module turns
what the snippet holds (``!torch.vtensor`` types, ``torch.vtensor.literal`` attributes,
numpy inputs) into CPU tensors and back.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from pytest_mlir_snippets.golden.inputs import DTYPES


class NotEvaluable(Exception):
    """PyTorch's ATen (or ONNX's reference) cannot evaluate this function: why, naming the op."""


# torch-mlir's element type -> the MLIR type the numpy tables know it by
_SIGNLESS = {"si8": "i8", "si16": "i16", "si32": "i32", "si64": "i64"}
# torch-mlir's element type -> PyTorch's dtype name
_TORCH_NAMES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64", "i1": "bool",
                "si8": "int8", "si16": "int16", "si32": "int32", "si64": "int64", "ui8": "uint8",
                "ui16": "uint16", "ui32": "uint32", "ui64": "uint64", "complex<f32>": "complex64",
                "complex<f64>": "complex128"}
# PyTorch's ScalarType codes, as torch-mlir writes a dtype (``torch.constant.int 6`` is float32)
SCALAR_TYPES = ("uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "complex32",
                "complex64", "complex128", "bool", "qint8", "quint8", "qint32", "bfloat16")
_VTENSOR = re.compile(r"^!torch\.v?tensor<\[([^\]]*)\],(.+)>$")


def element_of(type_text: str, op: str = "the function") -> tuple[list[int | None] | None, str]:
    """A ``!torch.vtensor`` type's shape (None: unranked; None in it: a dynamic size) and element type."""
    m = _VTENSOR.match(type_text)
    if m is None:
        if type_text.startswith(("!torch.vtensor", "!torch.tensor")):
            return None, ""
        raise NotEvaluable(f"{op}: a value of type {type_text} is not a tensor here")
    dims = [None if d.strip() == "?" else int(d) for d in m.group(1).split(",") if d.strip()]
    return dims, m.group(2)


def torch_dtype(element: str, op: str) -> Any:
    import torch

    name = _TORCH_NAMES.get(element)
    if name is None:
        raise NotEvaluable(f"{op}: element type {element} has no PyTorch dtype here")
    return getattr(torch, name)


def numpy_dtype(element: str) -> np.dtype:
    name = _SIGNLESS.get(element, element)
    if name not in DTYPES:
        raise NotEvaluable(f"element type {element} has no numpy type here")
    return DTYPES[name]


def to_tensor(value: Any, element: str, op: str) -> Any:
    """A numpy array (an input, a literal, an ONNX result) as a CPU tensor of ``element``."""
    import torch

    array = np.array(value, order="C")  # 0-d stays 0-d (np.ascontiguousarray makes it 1-d)
    dtype = torch_dtype(element, op)
    if dtype is torch.bfloat16:
        if array.dtype != DTYPES["bf16"]:
            array = array.astype(DTYPES["bf16"])
        return torch.from_numpy(array.view(np.int16).copy()).view(torch.bfloat16)
    if array.dtype != numpy_dtype(element):
        array = array.astype(numpy_dtype(element))
    return torch.from_numpy(array.copy())


def to_numpy(value: Any) -> np.ndarray:
    """A tensor (or a Python scalar) as numpy; bf16 as ml_dtypes' bfloat16."""
    import torch

    if not isinstance(value, torch.Tensor):
        return np.asarray(value)
    value = value.detach().resolve_conj().cpu().contiguous()
    if value.dtype is torch.bfloat16:
        wide: np.ndarray = value.view(torch.int16).numpy().view(DTYPES["bf16"])
        return wide.copy()
    array: np.ndarray = value.numpy()
    return array.copy()


def dtype_code(dtype: Any) -> int:
    """PyTorch's ScalarType code of ``dtype`` (what ``torch.prim.dtype`` gives)."""
    return SCALAR_TYPES.index(str(dtype).removeprefix("torch."))


def literal(attr: Any, ir: Any, module_text: str, op: str) -> np.ndarray:
    """The value of a ``torch.vtensor.literal``'s elements attribute, ``dense_resource``
    blobs read from the module's ``dialect_resources``."""
    shaped = ir.ShapedType(attr.type)
    element = str(shaped.element_type)
    shape = tuple(shaped.shape)
    dtype = numpy_dtype(element)
    text = str(attr)
    if text.startswith("dense_resource<"):
        key = text[len("dense_resource<"):].split(">", 1)[0]
        return _resource(module_text, key, dtype, shape, op)
    if element == "bf16":  # numpy's buffer protocol has no bf16: read back from the text
        return _from_text(text, dtype, shape, op)
    array = np.array(ir.DenseElementsAttr(attr))
    if array.size == 1 and int(np.prod(shape)) != 1:
        array = np.full(shape, array.reshape(()).item(), dtype=array.dtype)  # a splat
    return array.reshape(shape).astype(dtype, copy=False)


def _resource(module_text: str, key: str, dtype: np.dtype, shape: tuple[int, ...], op: str) -> np.ndarray:
    m = re.search(re.escape(key) + r'"?\s*:\s*"0x([0-9A-Fa-f]*)"', module_text)
    if m is None:
        raise NotEvaluable(f"{op}: dense_resource<{key}> has no blob in the module")
    blob = bytes.fromhex(m.group(1))[4:]  # the first four bytes are the blob's alignment
    count = int(np.prod(shape))
    values = np.frombuffer(blob, dtype=np.uint8 if dtype == np.bool_ else dtype)
    if values.size != count:
        raise NotEvaluable(f"{op}: dense_resource<{key}> holds {values.size} elements, its type {count}")
    return values.astype(dtype).reshape(shape)


_TOKEN = re.compile(r"0x[0-9A-Fa-f]+|[-+]?(?:inf|nan|\d+\.?\d*(?:[eE][-+]?\d+)?)")


def _from_text(text: str, dtype: np.dtype, shape: tuple[int, ...], op: str) -> np.ndarray:
    body = text[text.index("<") + 1:text.rindex("> :")]
    count = int(np.prod(shape))
    if body.startswith('"0x'):  # raw bytes, a splat when one element long
        raw = np.frombuffer(bytes.fromhex(body[3:-1]), dtype=np.uint16).view(dtype)
    else:  # decimal values, a hexadecimal one the element's bits
        bits = [np.array([int(t, 16)], np.uint16).view(dtype)[0] if t.startswith("0x") else
                np.array(float(t), np.float32).astype(dtype) for t in _TOKEN.findall(body)]
        raw = np.array(bits, dtype=dtype)
    if raw.size == 1 and count != 1:
        raw = np.full(shape, raw[0], dtype=dtype)
    if raw.size != count:
        raise NotEvaluable(f"{op}: literal holds {raw.size} elements, its type {count}")
    return raw.reshape(shape)
