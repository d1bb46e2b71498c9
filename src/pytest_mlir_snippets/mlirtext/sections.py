"""The ``// -----`` sections of a file read with ``-split-input-file``: each is its own
module, as ``mlir-opt``, ``stablehlo-translate`` and ``iree-opt`` read it.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import re

# mlir-opt's ``-split-input-file``: a line that is the marker ``// -----`` ends a section
_SPLIT_MARKER = re.compile(r"^[ \t]*// -----[^\n]*$", re.M)
# a RUN line (lit's syntax) that passes the flag to the tool reading the file
_SPLIT_FLAG = re.compile(r"^[ \t]*//[ \t]*RUN:[^\n]*(?<![\w-])--?split-input-file(?![\w-])", re.M)


def splits_input(text: str) -> bool:
    """Whether a RUN line of ``text`` reads it with ``-split-input-file``: then each
    ``// -----`` section is its own module, as mlir-opt and stablehlo-translate read it."""
    return "split-input-file" in text and _SPLIT_FLAG.search(text) is not None


def sections(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of the ``// -----`` sections of ``text``, in order."""
    bounds = [0]
    for m in _SPLIT_MARKER.finditer(text):
        bounds += [m.start(), m.end()]
    bounds.append(len(text))
    return list(zip(bounds[::2], bounds[1::2]))
