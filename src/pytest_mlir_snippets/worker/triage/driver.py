"""A driver for a compiled function, in upstream dialects: ``@main`` calls it on given
inputs and compares its results with expected values, printing ``PASS`` or ``FAIL`` with
the first differing index and both values (``vector.print``: upstream's
``libmlir_c_runner_utils``).

The inputs and the expected values are mutable ``memref.global``\\ s, loaded at run time,
so that no pass folds the call or the comparison away. Floats pass as the plugin's
comparison passes them (``golden.compare``): equal, both NaN,
``|actual - expected| <= atol + rtol * |expected|`` in f64 with the item's atol and rtol, or
both finite and at most the item's ULP allowance apart; integers and i1 must be equal
(the PCC gate is not checked). The text is written for a module at the memref level (the
function bufferized), which the rest of the target's pipeline lowers with the function.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import numpy as np

from pytest_mlir_snippets.worker.triage.drivercompare import Bound, equal_parts

NONE = "%none"  # index -1: no element differs


class DriverUnsupported(ValueError):
    """A type the driver cannot hold or compare (complex, a dynamic input without a value)."""


@dataclass(frozen=True)
class Slot:
    """An argument or result as the compiled function takes or gives it."""

    text: str  # the type as MLIR prints it: memref<4x?xf32>, f32, index
    shape: tuple[int | None, ...] | None  # None: a scalar
    element: str

    @property
    def is_float(self) -> bool:
        return self.element.startswith(("f", "bf", "tf"))

    def storage(self, shape: tuple[int, ...]) -> str:
        """A static memref holding a value of this slot of ``shape``."""
        return "memref<" + "".join(f"{d}x" for d in shape) + f"{self.element}>"


def slot_of(text: str) -> Slot:
    """``text`` (an argument or result type of the bufferized function) as a slot."""
    if not text.startswith("memref<"):
        if text.startswith(("tensor<", "vector<", "!")):
            raise DriverUnsupported(f"type {text} cannot be given by the driver")
        return Slot(text, None, text)
    body = text[len("memref<"):-1]
    found = re.match(r"((?:(?:\d+|\?)x)*)([^,]+)", body)  # a layout, if any, after the element's comma
    assert found is not None
    dims = found.group(1).split("x")[:-1]
    return Slot(text, tuple(None if d == "?" else int(d) for d in dims), found.group(2))


def _literal(value: np.ndarray, slot: Slot) -> str:
    """The initial value of a global holding ``value``: floats as raw bits (every NaN and
    infinity kept), integers and i1 as nested lists."""
    if value.size == 0:
        return "uninitialized"
    if slot.is_float or slot.element.startswith("complex<"):
        return f'dense<"0x{np.ascontiguousarray(value).tobytes().hex().upper()}">'
    return f"dense<{json.dumps(np.asarray(value).astype(object if value.dtype.kind == 'b' else np.int64).tolist())}>"


class _Writer:
    def __init__(self) -> None:
        self.globals: list[str] = []
        self.body: list[str] = []

    def add(self, *lines: str) -> None:
        self.body.extend("    " + line for line in lines)

    def hold(self, name: str, slot: Slot, value: np.ndarray) -> str:
        """``value`` in a mutable global ``@name``; its storage type."""
        storage = slot.storage(tuple(value.shape))
        self.globals.append(f'  memref.global "private" @{name} : {storage} = {_literal(value, slot)}')
        return storage


Pair = tuple[int, int, int, Bound | None]  # a check: its number, its actual and expected results, its bound


def main_text(function: str, args: list[Slot], results: list[Slot], inputs: list[np.ndarray],
              expected: list[np.ndarray] | None, tolerances: list[Bound | None],
              entry: str = "main", pairs: list[Pair] | None = None) -> str:
    """The driver's globals and ``@entry``: ``@function`` called on ``inputs``; its results
    (a function without results: its memref arguments, after the call) compared with
    ``expected`` (each float result within its (atol, rtol, ulp) of ``tolerances``); without
    ``expected``, ``PASS`` once the call returned. ``pairs``: a function judged by its check
    ops (their operands its results), each check's actual result compared with its expected one."""
    out = _Writer()
    out.add("%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index", f"{NONE} = arith.constant -1 : index")
    operands = []
    for i, (slot, value) in enumerate(zip(args, inputs)):
        storage = out.hold(f"driver_input{i}", slot, np.asarray(value))
        out.add(f"%g{i} = memref.get_global @driver_input{i} : {storage}")
        if slot.shape is None:
            out.add(f"%a{i} = memref.load %g{i}[] : {storage}")
        elif storage != slot.text:  # a dynamic dimension
            out.add(f"%a{i} = memref.cast %g{i} : {storage} to {slot.text}")
        operands.append(f"%a{i}" if slot.shape is None or storage != slot.text else f"%g{i}")
    signature = f"({', '.join(s.text for s in args)}) -> ({', '.join(s.text for s in results)})"
    names = [f"%r{k}" for k in range(len(results))]
    out.add((f"{', '.join(names)} = " if names else "") + f"func.call @{function}({', '.join(operands)}) : {signature}")
    compared = list(zip(names, results)) or [(operands[i], s) for i, s in enumerate(args) if s.shape is not None]
    failed = "%false"
    out.add(f"{failed} = arith.constant false")
    for index, actual, wanted, bound in pairs or []:
        if any(d is None for d in results[actual].shape or ()):
            raise DriverUnsupported(f"check #{index} compares values of a dynamic shape ({results[actual].text})")
        failed = _compare(out, index, names[actual], results[actual], names[wanted], bound, failed, "check")
    if expected is not None:
        if len(expected) != len(compared):
            raise DriverUnsupported(f"{len(expected)} expected value(s) for {len(compared)} result(s)")
        for k, ((name, slot), value, tolerance) in enumerate(zip(compared, expected, tolerances)):
            failed = _compare(out, k, name, slot, np.asarray(value), tolerance, failed)
    out.add(f"scf.if {failed} {{", "} else {", '  vector.print str "PASS\\n"', "}", "return")
    return "\n".join([*out.globals, f"  func.func @{entry}() {{", *out.body, "  }"])


def _compare(out: _Writer, k: int, name: str, slot: Slot, value: np.ndarray | str, tolerance: Bound | None,
             failed_before: str, what: str = "result") -> str:
    """Result ``k`` (``name``) against ``value`` (a golden, or another result of the same type:
    a check's expected operand); the i1 that says whether this or an earlier one failed."""
    shape = tuple(value.shape) if isinstance(value, np.ndarray) else tuple(d or 0 for d in slot.shape or ())
    shape = shape if slot.shape is not None else ()
    size = int(np.prod(shape, dtype=np.int64))
    flat = slot.storage((size,))
    p = f"%k{k}_" if what == "result" else f"%x{k}_"
    if slot.shape is None:  # a scalar result, in a buffer of one element
        out.add(f"{p}held = memref.alloca() : {flat}", f"memref.store {name}, {p}held[%c0] : {flat}")
        name, source = f"{p}held", flat
    else:
        source = slot.text
        if len(slot.shape) != len(shape) or any(d not in (None, n) for d, n in zip(slot.shape, shape)):
            out.add(f'vector.print str "FAIL: {what} #{k} is {slot.text}, the golden has shape {list(shape)}\\n"',
                    f"{p}failed = arith.constant true")
            return f"{p}failed"
    out.add(f"{p}actual = memref.reinterpret_cast {name} to offset: [0], sizes: [{size}], strides: [1] : "
            f"{source} to {flat}")
    if isinstance(value, np.ndarray):
        out.hold(f"driver_expected{k}", slot, value.reshape(size))
        out.add(f"{p}expected = memref.get_global @driver_expected{k} : {flat}")
    elif slot.shape is None:
        out.add(f"{p}wanted = memref.alloca() : {flat}", f"memref.store {value}, {p}wanted[%c0] : {flat}",
                f"{p}expected = memref.reinterpret_cast {p}wanted to offset: [0], sizes: [1], strides: [1] : "
                f"{flat} to {flat}")
    else:
        out.add(f"{p}expected = memref.reinterpret_cast {value} to offset: [0], sizes: [{size}], strides: [1] : "
                f"{source} to {flat}")
    out.add(f"{p}size = arith.constant {size} : index")
    failed_before = _dimensions(out, p, k, name, slot, shape, failed_before)
    out.add(f"{p}bad = scf.for %i{k} = %c0 to {p}n step %c1 iter_args({p}first = {NONE}) -> (index) {{",
            f"  {p}seen = arith.cmpi ne, {p}first, {NONE} : index",
            f"  {p}next = scf.if {p}seen -> (index) {{", f"    scf.yield {p}first : index", "  } else {",
            f"    {p}x = memref.load {p}actual[%i{k}] : {flat}", f"    {p}y = memref.load {p}expected[%i{k}] : {flat}")
    out.add(*("    " + line for line in equal_parts(p, slot.element, tolerance)))
    out.add(f"    {p}pick = arith.select {p}ok, {NONE}, %i{k} : index", f"    scf.yield {p}pick : index", "  }",
            f"  scf.yield {p}next : index", "}", f"{p}differs = arith.cmpi ne, {p}bad, {NONE} : index",
            f"scf.if {p}differs {{", f'  vector.print str "FAIL: {what} #{k} at index ["')
    stride = size
    for j, dim in enumerate(shape):  # the flat index as one index per dimension
        stride //= max(dim, 1)
        out.add(f"  {p}s{j} = arith.constant {max(stride, 1)} : index",
                f"  {p}d{j} = arith.constant {max(dim, 1)} : index", f"  {p}q{j} = arith.divui {p}bad, {p}s{j} : index",
                f"  {p}m{j} = arith.remui {p}q{j}, {p}d{j} : index",
                f"  {p}i{j} = arith.index_cast {p}m{j} : index to i64",
                f"  vector.print {p}i{j} : i64 punctuation <no_punctuation>")
        if j + 1 < len(shape):
            out.add('  vector.print str ", "')
    out.add('  vector.print str "]: actual "', f"  {p}fx = memref.load {p}actual[{p}bad] : {flat}",
            f"  {p}fy = memref.load {p}expected[{p}bad] : {flat}")
    shown = []
    for side, label in (("fx", ""), ("fy", "expected ")):
        if label:
            out.add(f'  vector.print str ", {label}"')
        shown.append(_show(out, f"{p}{side}", slot.element))
    if slot.is_float:  # six digits may print both alike: their difference says by how much
        out.add(f"  {p}by = arith.subf {shown[0]}, {shown[1]} : f64", '  vector.print str " (difference "',
                f"  vector.print {p}by : f64 punctuation <no_punctuation>", '  vector.print str ")"')
    out.add('  vector.print str "\\n"', "}", f"{p}failed = arith.ori {failed_before}, {p}differs : i1")
    return f"{p}failed"


def _dimensions(out: _Writer, p: str, k: int, name: str, slot: Slot, shape: tuple[int, ...],
                failed_before: str) -> str:
    """``{p}n``: how many elements of result ``k`` to compare: all, or none when a dynamic
    dimension of it differs from the golden's (said by a FAIL line); the i1 that says
    whether this or an earlier check failed."""
    dynamic = [j for j, d in enumerate(slot.shape or ()) if d is None]
    if not dynamic:
        out.add(f"{p}n = arith.addi {p}size, %c0 : index")
        return failed_before
    out.add(f"{p}true = arith.constant true")
    same = f"{p}true"
    for j in dynamic:
        out.add(f"{p}dim{j} = arith.constant {j} : index", f"{p}has{j} = memref.dim {name}, {p}dim{j} : {slot.text}",
                f"{p}want{j} = arith.constant {shape[j]} : index",
                f"{p}same{j} = arith.cmpi eq, {p}has{j}, {p}want{j} : index",
                f"{p}all{j} = arith.andi {same}, {p}same{j} : i1")
        same = f"{p}all{j}"
    out.add(f"{p}n = arith.select {same}, {p}size, %c0 : index", f"{p}wrong = arith.xori {same}, {p}true : i1",
            f"scf.if {p}wrong {{", f'  vector.print str "FAIL: result #{k} is not of shape {list(shape)}\\n"', "}",
            f"{p}shape_failed = arith.ori {failed_before}, {p}wrong : i1")
    return f"{p}shape_failed"


def _show(out: _Writer, value: str, element: str) -> str:
    """Print ``value`` (a complex one as ``(re, im)``); what was printed (its real part)."""
    if element.startswith("complex<"):
        part = element[len("complex<"):-1]
        out.add(f"  {value}_re = complex.re {value} : {element}", f"  {value}_im = complex.im {value} : {element}",
                '  vector.print str "("')
        real = _show(out, f"{value}_re", part)
        out.add('  vector.print str ", "')
        _show(out, f"{value}_im", part)
        out.add('  vector.print str ")"')
        return real
    printed, kind = _printable(out, value, element)
    out.add(f"  vector.print {printed} : {kind} punctuation <no_punctuation>")
    return printed


def _printable(out: _Writer, value: str, element: str) -> tuple[str, str]:
    """``value`` widened for ``vector.print``: floats to f64, integers to i64."""
    if element == "f64" or element == "i64":
        return value, element
    if element.startswith(("f", "bf", "tf")):
        out.add(f"  {value}_w = arith.extf {value} : {element} to f64")
        return f"{value}_w", "f64"
    if element == "index":
        out.add(f"  {value}_w = arith.index_cast {value} : index to i64")
    elif element.startswith("ui") or element == "i1":
        out.add(f"  {value}_w = arith.extui {value} : {element} to i64")
    else:
        out.add(f"  {value}_w = arith.extsi {value} : {element} to i64")
    return f"{value}_w", "i64"
