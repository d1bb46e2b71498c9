"""The element comparisons of a driver (``worker/triage/driver.py``), as MLIR lines: floats as
the plugin's comparison passes them (equal, both NaN, within ``atol + rtol * |expected|`` in
f64, or within a ULP allowance), integers and i1 equal, complex values part by part.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import struct

Bound = tuple[float, float, int]  # a float result's atol, rtol and ULP allowance


def f64_literal(value: float) -> str:
    return "0x" + struct.pack(">d", value).hex().upper()


def equal_parts(p: str, element: str, tolerance: Bound | None) -> list[str]:
    """``_equal``; for complex values, on the real and the imaginary parts, both to pass."""
    if not element.startswith("complex<"):
        return _equal(p, element, tolerance)
    lines = [f"{p}{n}_{s} = complex.{n} {p}{s} : {element}" for n in ("re", "im") for s in ("x", "y")]
    for n in ("re", "im"):
        lines += _equal(f"{p}{n}_", element[len("complex<"):-1], tolerance)
    return [*lines, f"{p}ok = arith.andi {p}re_ok, {p}im_ok : i1"]


def _equal(p: str, element: str, tolerance: Bound | None) -> list[str]:
    """Lines that set ``{p}ok``: ``{p}x`` (actual) passes against ``{p}y`` (expected)."""
    if not (element.startswith(("f", "bf", "tf"))):
        return [f"{p}ok = arith.cmpi eq, {p}x, {p}y : {element}"]
    atol, rtol, ulp = tolerance or (0.0, 0.0, 0)
    lines = [] if element == "f64" else [f"{p}x64 = arith.extf {p}x : {element} to f64",
                                         f"{p}y64 = arith.extf {p}y : {element} to f64"]
    x, y = (f"{p}x", f"{p}y") if element == "f64" else (f"{p}x64", f"{p}y64")
    lines += [f"{p}eq = arith.cmpf oeq, {x}, {y} : f64", f"{p}xn = arith.cmpf uno, {x}, {x} : f64",
              f"{p}yn = arith.cmpf uno, {y}, {y} : f64", f"{p}nan = arith.andi {p}xn, {p}yn : i1",
              f"{p}diff = arith.subf {x}, {y} : f64", f"{p}ad = math.absf {p}diff : f64",
              f"{p}ay = math.absf {y} : f64", f"{p}atol = arith.constant {f64_literal(atol)} : f64",
              f"{p}rtol = arith.constant {f64_literal(rtol)} : f64", f"{p}scaled = arith.mulf {p}rtol, {p}ay : f64",
              f"{p}bound = arith.addf {p}atol, {p}scaled : f64", f"{p}close = arith.cmpf ole, {p}ad, {p}bound : f64",
              f"{p}either = arith.ori {p}eq, {p}nan : i1"]
    width = _WIDTHS.get(element[:2] if element.startswith("f8") else element)
    if not ulp or width is None:
        return [*lines, f"{p}ok = arith.ori {p}either, {p}close : i1"]
    return [*lines, *_ulps(p, element, width, ulp, x, y), f"{p}near = arith.ori {p}close, {p}ulp_ok : i1",
            f"{p}ok = arith.ori {p}either, {p}near : i1"]


_WIDTHS = {"f64": 64, "f32": 32, "f16": 16, "bf16": 16, "f8": 8}


def _ulps(p: str, element: str, width: int, ulp: int, x: str, y: str) -> list[str]:
    """Lines that set ``{p}ulp_ok``: both finite and at most ``ulp`` values of the type apart
    (``golden.compare.ulp_difference``: the magnitudes' distance, their sum across zero)."""
    bits = f"i{width}"
    lines = [f"{p}inf = arith.constant 0x7FF0000000000000 : f64", f"{p}ax = math.absf {x} : f64",
             f"{p}xf = arith.cmpf one, {p}ax, {p}inf : f64", f"{p}yf = arith.cmpf one, {p}ay, {p}inf : f64",
             f"{p}finite = arith.andi {p}xf, {p}yf : i1",
             f"{p}mask = arith.constant {(1 << (width - 1)) - 1} : i64",
             f"{p}sign = arith.constant {1 << (width - 1)} : i64"]
    for side in ("x", "y"):
        raw = f"{p}{side}"
        lines += [f"{p}{side}b = arith.bitcast {raw} : {element} to {bits}"]
        wide = f"{p}{side}b"
        if width < 64:
            lines.append(f"{p}{side}w = arith.extui {wide} : {bits} to i64")
            wide = f"{p}{side}w"
        lines += [f"{p}{side}m = arith.andi {wide}, {p}mask : i64", f"{p}{side}s = arith.andi {wide}, {p}sign : i64"]
    return [*lines, f"{p}same = arith.cmpi eq, {p}xs, {p}ys : i64", f"{p}hi = arith.maxui {p}xm, {p}ym : i64",
            f"{p}lo = arith.minui {p}xm, {p}ym : i64", f"{p}apart = arith.subi {p}hi, {p}lo : i64",
            f"{p}across = arith.addi {p}xm, {p}ym : i64", f"{p}dist = arith.select {p}same, {p}apart, {p}across : i64",
            f"{p}allowed = arith.constant {ulp} : i64", f"{p}within = arith.cmpi ule, {p}dist, {p}allowed : i64",
            f"{p}ulp_ok = arith.andi {p}finite, {p}within : i1"]
