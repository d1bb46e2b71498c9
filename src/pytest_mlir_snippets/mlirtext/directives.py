"""The plugin's own comment line above a function: ``// mlir-snippets: rtol=1e-4 atol=0 ulp=2``.

It sets the tolerance of that function's comparison (``golden.compare.Tolerance``) in
place of the element type's default, for a function whose golden needs more (or less)
than the defaults; the record names the line as the tolerance's source. ``inputs=`` sets
the range its seeded inputs are drawn from (``golden.inputs.make_inputs``): ``normal`` (the
default), ``positive`` (uniform in [0.1, 4), for log, sqrt, rsqrt, pow) or ``uniform(LO,HI)``.
``outputs=2`` (or ``outputs=1,2``: argument numbers from 0, as a sidecar's ``input_N``) says
which memref arguments a function without results writes, the ones compared; without it,
every memref argument is an output (a read-only input too, compared with itself).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import re
from dataclasses import dataclass

PREFIX = re.compile(r"^\s*//\s*mlir-snippets:(.*)$")
KEYS = ("atol", "rtol", "ulp", "inputs", "outputs")
WORD = re.compile(r"[^\s,(]+(?:\([^)]*\))?")  # key=value, a value with its (arguments)
UNIFORM = re.compile(r"^uniform\(\s*([^,\s]+)\s*,\s*([^,\s)]+)\s*\)$")
POSITIVE = (0.1, 4.0)  # inputs=positive: away from 0, where log and rsqrt grow fast
INPUTS = "inputs=normal, inputs=positive or inputs=uniform(LO,HI)"


class DirectiveError(ValueError):
    """A ``// mlir-snippets:`` line that cannot be read."""


@dataclass(frozen=True)
class Directive:
    atol: float | None = None
    rtol: float | None = None
    ulp: int | None = None
    text: str = ""  # the line as written
    inputs: tuple[float, float] | None = None  # [low, high) of the seeded inputs; None: the default draw
    outputs: tuple[int, ...] | None = None  # the memref arguments written (None: all of them)

    @property
    def empty(self) -> bool:
        """No tolerance set (an ``inputs=`` line sets none)."""
        return self.atol is None and self.rtol is None and self.ulp is None

    @property
    def tolerance_text(self) -> str:
        """The line(s) as the tolerance's source: those that set atol, rtol or ulp."""
        return self.text if not self.empty else ""


def directive(comments: list[str]) -> Directive:
    """The ``// mlir-snippets:`` settings among ``comments`` (the lines right above a function)."""
    values: dict[str, float | int] = {}
    inputs: tuple[float, float] | None = None
    lines: list[str] = []
    outputs: list[int] = []
    for comment in comments:
        m = PREFIX.match(comment)
        if not m:
            continue
        line = comment.strip()
        lines.append(line)
        key = ""
        for word in WORD.findall(m.group(1)):
            if "=" not in word and key == "outputs":  # outputs=1,2: the numbers after the first
                outputs.append(_argument(comment, word))
                continue
            key, sep, value = word.partition("=")
            if key == "outputs" and sep:
                outputs.append(_argument(comment, value))
                continue
            if not sep or key not in KEYS:
                raise DirectiveError(f"{line!r}: {word!r} is not one of "
                                     f"{', '.join(k + '=N' for k in KEYS if k != 'inputs')} or {INPUTS}")
            if key == "inputs":
                inputs = input_range(line, value)
                continue
            try:
                number = int(value) if key == "ulp" else float(value)
            except ValueError:
                raise DirectiveError(f"{line!r}: {key} needs a number, not {value!r}") from None
            if number < 0:
                raise DirectiveError(f"{line!r}: {key} cannot be negative")
            values[key] = number
    atol, rtol, ulp = values.get("atol"), values.get("rtol"), values.get("ulp")
    return Directive(None if atol is None else float(atol), None if rtol is None else float(rtol),
                     None if ulp is None else int(ulp), "; ".join(lines), inputs,
                     tuple(outputs) if outputs else None)


def input_range(line: str, value: str) -> tuple[float, float] | None:
    """``inputs=``'s value as [low, high) (None: ``normal``, the default draw)."""
    if value == "normal":
        return None
    if value == "positive":
        return POSITIVE
    m = UNIFORM.match(value)
    try:
        low, high = (float(m.group(1)), float(m.group(2))) if m else (0.0, -1.0)
    except ValueError:
        m = None
    if m is None:
        raise DirectiveError(f"{line!r}: inputs={value} is not one of {INPUTS}")
    if not low < high:
        raise DirectiveError(f"{line!r}: inputs={value}: LO must be below HI")
    return low, high


def _argument(comment: str, word: str) -> int:
    """An argument number of ``outputs=``."""
    if not word.isdigit():
        raise DirectiveError(f"{comment.strip()!r}: outputs needs argument numbers from 0 (outputs=1,2), "
                             f"not {word!r}")
    return int(word)


__all__ = ["Directive", "DirectiveError", "directive"]
