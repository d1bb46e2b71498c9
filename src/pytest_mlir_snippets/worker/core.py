"""The worker's core types, below lowering, targets and optrun (which all use them): a
snippet-level failure (``SnippetFailure``), a compiled snippet (``Compiled``) and a
reference's outputs (``Reference``). ``targets/base.py`` re-exports them for backends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pytest_mlir_snippets.protocol import Diagnostic, Golden, Kind


class SnippetFailure(Exception):
    """A snippet-level outcome other than pass, with MLIR's own words."""

    def __init__(self, kind: Kind, message: str, diagnostics: list[Diagnostic] | None = None,
                 metrics: dict[str, float] | None = None, info: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.diagnostics = diagnostics or []
        self.metrics = metrics or {}
        self.info = info or {}

    def with_info(self, info: dict[str, Any]) -> SnippetFailure:
        """This failure, ``info`` added to its own."""
        self.info.update(info)
        return self


@dataclass
class Compiled:
    """A compiled snippet: what execute needs, plus what reports show."""

    ir: str  # the final IR (LLVM dialect on cpu), as text
    function: str
    signature: Any  # backend-specific description of arguments and results
    handle: Any = None  # backend-specific object (e.g. an ExecutionEngine)
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class Reference:
    """A reference's outputs for the inputs a run had, what it is in words, and its golden basis."""

    outputs: list[np.ndarray]
    name: str
    golden: Golden
