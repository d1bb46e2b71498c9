"""The StableHLO reference interpreter (``eval_module`` in torch-mlir's stablehlo module).

It is independent of every lowering: the golden reference for StableHLO snippets.
The batch norm ops, which it does not evaluate (it aborts the process), are given
to it as the specification defines them (``shlo/batch_norm.py``); ``stablehlo.rng``, which it
aborts on too, makes it unavailable. A dynamic program
(it aborts on dynamic result types) is refined to the shapes and dimension sizes of
the inputs it is given first, as the compile refines it (``shlo/refine.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.golden.inputs import DTYPES
from pytest_mlir_snippets.worker.core import SnippetFailure
from pytest_mlir_snippets.worker.lowering import frontend, mlirtools
from pytest_mlir_snippets.worker.lowering.fedvalues import wide_element
from pytest_mlir_snippets.worker.lowering.shlo import batch_norm, fft, refine, triangular_solve


class InterpreterUnavailable(Exception):
    """The interpreter cannot evaluate this snippet; the caller falls back."""


def _to_attr(ir: Any, value: np.ndarray, mlir_type: Any) -> Any:
    shaped = ir.RankedTensorType(mlir_type)
    element = shaped.element_type
    if not value.shape:  # 0-d: a splat of one scalar attribute
        scalar = value.item()
        if isinstance(scalar, float):
            return ir.DenseElementsAttr.get_splat(shaped, ir.FloatAttr.get(element, scalar))
        return ir.DenseElementsAttr.get_splat(shaped, ir.IntegerAttr.get(element, int(scalar)))
    data = np.ascontiguousarray(value)
    if str(element) in ("bf16", "f16"):
        data = data.view(np.uint16)
    elif str(element).startswith("ui"):
        data = data.view(DTYPES[str(element)])
    return ir.DenseElementsAttr.get(data, type=element, shape=list(value.shape))


def _to_numpy(ir: Any, attr: Any) -> np.ndarray:
    shaped = ir.ShapedType(attr.type)
    element = str(shaped.element_type)
    shape = tuple(shaped.shape)
    dtype = DTYPES.get(element)
    if dtype is None:
        raise InterpreterUnavailable(f"result element type {element}")
    array = np.array(attr)
    if array.size == 1 and int(np.prod(shape) if shape else 1) != 1:
        array = np.full(shape, array.reshape(()).item())  # a splat
    return array.reshape(shape).astype(dtype)


_WIDEN = {"bf16": "f32", "f16": "f32"}
_PART = {"complex<f32>": "f32", "complex<f64>": "f64"}


def _retyped(t: Any, element: str) -> str:
    dims = "".join("?x" if t.is_dynamic_dim(i) else f"{d}x" for i, d in enumerate(t.shape))
    return f"tensor<{dims}{element}>"


def _with_entry(ir: Any, module: Any, function: str) -> tuple[Any, list[bool], list[bool]]:
    """The module plus ``@main`` calling ``function``, bf16/f16 results widened to f32 and
    complex arguments and results given as their real and imaginary parts (the bindings
    can read back neither); which arguments and which results are complex."""
    entry = mlirtools.find_function(module, function)
    callee = function
    if function == "main":
        callee = "__snippet_entry"
        entry.attributes["sym_name"] = ir.StringAttr.get(callee)
    elif any(op.operation.name == "func.func" and op.attributes["sym_name"].value == "main"
             for op in module.body.operations):
        raise InterpreterUnavailable("another function is already named main")
    if any(not str(t).startswith("tensor<") for t in entry.type.inputs):
        raise InterpreterUnavailable("non-tensor arguments")
    inputs = [ir.RankedTensorType(t) for t in entry.type.inputs]
    results = [ir.RankedTensorType(t) for t in entry.type.results]
    args, lines, returned, types = [], [], [], []
    split_in = [str(t.element_type) in _PART for t in inputs]
    for i, (t, split) in enumerate(zip(inputs, split_in)):
        narrow = wide_element(str(t.element_type))
        if narrow is not None:  # fed in its wide type (the compiled entry's too), converted exactly
            args.append(f"%in{i}: {_retyped(t, narrow)}")
            lines.append(f"  %a{i} = stablehlo.convert %in{i} : ({_retyped(t, narrow)}) -> {t}")
        elif split:
            part = _retyped(t, _PART[str(t.element_type)])
            args += [f"%re{i}: {part}", f"%im{i}: {part}"]
            lines.append(f"  %a{i} = stablehlo.complex %re{i}, %im{i} : {t}")
        else:
            args.append(f"%a{i}: {t}")
    call = f"%r:{len(results)}" if len(results) > 1 else "%r"
    lines.append(f"  {call} = func.call @{callee}({', '.join(f'%a{i}' for i in range(len(inputs)))}) : "
                 f"({', '.join(str(t) for t in inputs)}) -> ({', '.join(str(t) for t in results)})")
    split_out = []
    for i, t in enumerate(results):
        value = f"%r#{i}" if len(results) > 1 else "%r"
        element = str(t.element_type)
        split_out.append(element in _PART)
        if element in _PART:
            part = _retyped(t, _PART[element])
            lines += [f"  %x{i} = stablehlo.real {value} : ({t}) -> {part}",
                      f"  %y{i} = stablehlo.imag {value} : ({t}) -> {part}"]
            returned += [f"%x{i}", f"%y{i}"]
            types += [part, part]
        elif element in _WIDEN or wide_element(element):
            wide = _retyped(t, _WIDEN.get(element) or wide_element(element) or "")
            lines.append(f"  %w{i} = stablehlo.convert {value} : ({t}) -> {wide}")
            returned.append(f"%w{i}")
            types.append(wide)
        else:
            returned.append(value)
            types.append(str(t))
    body = "\n".join(lines)
    wrapper = (f"func.func @main({', '.join(args)}) -> ({', '.join(types)}) {{\n{body}\n"
               f"  return {', '.join(returned)} : {', '.join(types)}\n}}\n")
    text = str(module).rstrip()
    return ir.Module.parse(text[:-1] + wrapper + "}"), split_in, split_out


def _refine(module: Any, ir: Any, function: str, inputs: list[np.ndarray], diags: mlirtools.Collector) -> None:
    """A dynamic ``function`` refined to the shapes of ``inputs``, its dimension arguments
    replaced by their values."""
    from torch_mlir.passmanager import PassManager

    func = mlirtools.find_function(module, function)
    if not refine.needs_refinement(module, func, ir):
        return
    sizes = {i: int(inputs[i]) for i in refine.dimension_arguments(func, ir)}
    try:
        left = refine.refine(module, ir, function, sizes, [value.shape for value in inputs], PassManager.parse, diags)
    except (SnippetFailure, ValueError) as error:
        raise InterpreterUnavailable(f"the dynamic program was not refined: {error}") from None
    if left:
        raise InterpreterUnavailable(f"shape refinement left {len(left)} op(s) with dynamic shapes")


def interpret(module_text: str, function: str, inputs: list[np.ndarray], target: str) -> list[np.ndarray]:
    """Evaluate ``function`` of a StableHLO module on ``inputs``."""
    import torch_mlir._mlir_libs._stablehlo as stablehlo

    ctx = frontend._torch_mlir_context()
    ir = frontend._torch_mlir["ir"]
    with ctx, ir.Location.unknown(), mlirtools.collecting(ctx, target) as diags:
        parsed = ir.Module.parse(module_text)
        if mlirtools.ops_where(parsed, ir, lambda op: op.name == "stablehlo.rng"):
            raise InterpreterUnavailable("stablehlo.rng: the interpreter does not evaluate it (it aborts the process)")
        batch_norm.lower_all(parsed, ir)  # the interpreter aborts on them: their definitions instead
        triangular_solve.lower_all(parsed, ir)  # it has no support for these two: their expansions instead
        fft.lower_all(parsed, ir)
        _refine(parsed, ir, function, inputs, diags)
        module, split_in, split_out = _with_entry(ir, parsed, function)
        main = mlirtools.find_function(module, "main")
        values = []
        for value, split in zip(inputs, split_in):
            values += [np.ascontiguousarray(value.real), np.ascontiguousarray(value.imag)] if split else [value]
        args = [_to_attr(ir, value, t) for value, t in zip(values, main.type.inputs)]
        try:
            results = stablehlo.eval_module(module, args)
        except Exception as error:
            detail = "; ".join(d.message for d in diags.diagnostics) or str(error)
            raise InterpreterUnavailable(detail) from None
        read = iter([_to_numpy(ir, r) for r in results])  # widened results compare as floats
        return [next(read) + 1j * next(read) if split else next(read) for split in split_out]
