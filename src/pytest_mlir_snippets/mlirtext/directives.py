"""The plugin's own comment line above a function: ``// mlir-snippets: rtol=1e-4 atol=0 ulp=2``.

It sets the tolerance of that function's comparison (``golden.compare.Tolerance``) in
place of the element type's default, for a function whose golden needs more (or less)
than the defaults; the record names the line as the tolerance's source.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import re
from dataclasses import dataclass

PREFIX = re.compile(r"^\s*//\s*mlir-snippets:(.*)$")
KEYS = ("atol", "rtol", "ulp")


class DirectiveError(ValueError):
    """A ``// mlir-snippets:`` line that cannot be read."""


@dataclass(frozen=True)
class Directive:
    atol: float | None = None
    rtol: float | None = None
    ulp: int | None = None
    text: str = ""  # the line as written

    @property
    def empty(self) -> bool:
        return self.atol is None and self.rtol is None and self.ulp is None


def directive(comments: list[str]) -> Directive:
    """The ``// mlir-snippets:`` settings among ``comments`` (the lines right above a function)."""
    values: dict[str, float | int] = {}
    lines = []
    for comment in comments:
        m = PREFIX.match(comment)
        if not m:
            continue
        lines.append(comment.strip())
        for word in m.group(1).replace(",", " ").split():
            key, sep, value = word.partition("=")
            if not sep or key not in KEYS:
                raise DirectiveError(f"{comment.strip()!r}: {word!r} is not one of {', '.join(k + '=N' for k in KEYS)}")
            try:
                number = int(value) if key == "ulp" else float(value)
            except ValueError:
                raise DirectiveError(f"{comment.strip()!r}: {key} needs a number, not {value!r}") from None
            if number < 0:
                raise DirectiveError(f"{comment.strip()!r}: {key} cannot be negative")
            values[key] = number
    atol, rtol, ulp = values.get("atol"), values.get("rtol"), values.get("ulp")
    return Directive(None if atol is None else float(atol), None if rtol is None else float(rtol),
                     None if ulp is None else int(ulp), "; ".join(lines))


__all__ = ["Directive", "DirectiveError", "directive"]
