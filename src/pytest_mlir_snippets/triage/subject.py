"""The function a command names as ``FILE::FUNC`` (FUNC as in the node id; a ``[stage]``
after it, as pytest prints node ids, is ignored): ``export-lit`` and ``reduce`` read it
with one pattern. What the user typed, not a node id taken apart: no item or record
exists to ask.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import re
from pathlib import Path

from pytest_mlir_snippets.mlirtext.splitter import Function, SnippetSource, SplitError

_SPEC = re.compile(r"(.+?)::([^\[\]]+)(?:\[[^\]]*\])?")  # FILE::FUNC, a [stage] after it


class SubjectError(Exception):
    """Why ``FILE::FUNC`` names no function, in one line."""


def find(spec: str) -> tuple[Path, SnippetSource, Function]:
    """The file, its functions and the function ``spec`` names (by its node id's name or its symbol)."""
    given = _SPEC.fullmatch(spec)
    if given is None:
        raise SubjectError(f"give FILE::FUNC (as in the node id), not {spec!r}")
    file, name = given.group(1), given.group(2)
    path = Path(file)
    try:
        source = SnippetSource(path.read_text())
    except (OSError, UnicodeDecodeError, SplitError) as error:
        raise SubjectError(f"cannot read {file}: {error}") from None
    function = next((f for f in source.functions if name in (f.uid, f.name)), None)
    if function is None:
        raise SubjectError(f"{file} has no public function {name} (it has: "
                           f"{', '.join(f.uid for f in source.functions) or 'none'})")
    return path, source, function
