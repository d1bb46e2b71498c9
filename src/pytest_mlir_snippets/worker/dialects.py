"""Which dialects each target takes, whether or not its compiler is installed here.

A snippet with an op of a dialect this build cannot handle is ``unsupported`` on this
target (a skip) only when another target takes that dialect (a TTIR snippet on cpu);
a dialect no target knows is a typo, a ``compile-error`` with a "did you mean" hint
(``"lianlg.abs"``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from pytest_mlir_snippets.protocol import Diagnostic, Kind
from pytest_mlir_snippets.registry import TARGETS
from pytest_mlir_snippets.worker.core import SnippetFailure

# target -> the dialects it takes, as it declares them (``registry.py``)
TAKES: dict[str, frozenset[str]] = {name: target.dialects for name, target in TARGETS.items()}
KNOWN = frozenset().union(*TAKES.values())


def hint(dialect: str) -> str:
    """`` (did you mean 'linalg'?)`` for a dialect no target knows, else ``""``."""
    close = difflib.get_close_matches(dialect, sorted(KNOWN), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def dialect_failure(dialects: Iterable[str], target: str, diagnostics: list[Diagnostic] | None = None,
                    detail: str = "") -> SnippetFailure:
    """Ops of ``dialects`` that ``target`` cannot handle here: a compile-error when one of
    them is known to no target (a typo), else unsupported, naming the targets that take them."""
    found = sorted(set(dialects))
    unknown = [d for d in found if d not in KNOWN]
    if unknown:
        message = "; ".join(f"dialect '{d}' is known to no target{hint(d)}" for d in unknown)
        return SnippetFailure(Kind.COMPILE_ERROR, message, diagnostics)
    names = ", ".join(f"'{d}'" for d in found)
    takers = sorted(t for t, taken in TAKES.items() if t != target and all(d in taken for d in found))
    where = f"; {', '.join(takers)} take{'s' if len(takers) == 1 else ''} it" if takers else ""
    return SnippetFailure(Kind.UNSUPPORTED, f"dialect {names} is not available for target {target}{detail}{where}",
                          diagnostics)
