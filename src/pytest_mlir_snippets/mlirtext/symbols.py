"""MLIR string literals and symbol names as text, and the error of text that is not MLIR.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import re


class SplitError(ValueError):
    """The text is not structured as MLIR (unbalanced brackets, stray text)."""


_ESCAPE = re.compile(r"\\([0-9a-fA-F]{2}|.)")
_ESCAPED = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def unescape(text: str) -> str:
    """The value of an MLIR string literal's body: ``\\n``, ``\\"``, ``\\\\`` and ``\\XX`` hex."""
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)) if len(m.group(1)) == 2 else
                       _ESCAPED.get(m.group(1), m.group(1)), text)


def symbol_name(token: str) -> str:
    """``@foo`` -> ``foo``; ``@"a.b"`` -> ``a.b``."""
    name = token[1:] if token.startswith("@") else token
    if name.startswith('"') and name.endswith('"') and len(name) >= 2:
        name = unescape(name[1:-1])
    return name
