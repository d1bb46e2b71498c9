"""pytest-mlir-snippets: every func.func of an MLIR snippet file becomes pytest items.

For tests written in Python: the fixtures ``mlir_device`` and ``mlir_target``, the
failure kinds as exceptions, and ``assert_close`` (``docs/python-api.md``). They load
on first use: the sandbox worker imports this package and must not load pytest.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_mlir_snippets.api.assertion import assert_close
    from pytest_mlir_snippets.api.device import Compiled, MlirDevice
    from pytest_mlir_snippets.items.failures import (
        CompileError,
        ContractError,
        Crash,
        ExecuteError,
        GoldenMismatch,
        ItemFailure,
        NoGolden,
        Timeout,
        Unsupported,
    )

__version__ = "0.1.0"

_PUBLIC = {
    "assert_close": "api.assertion",
    "Compiled": "api.device",
    "MlirDevice": "api.device",
    **dict.fromkeys(("ItemFailure", "CompileError", "ExecuteError", "GoldenMismatch", "Crash", "Timeout",
                     "ContractError", "NoGolden", "Unsupported"), "items.failures"),
}
__all__ = ["CompileError", "Compiled", "ContractError", "Crash", "ExecuteError", "GoldenMismatch", "ItemFailure",
           "MlirDevice", "NoGolden", "Timeout", "Unsupported", "assert_close"]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
