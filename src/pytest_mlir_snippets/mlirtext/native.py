"""Installed tools by the path of their executable itself.

torch-mlir's and IREE's wheels put a Python script on PATH (``torch-mlir-opt``,
``iree-compile``, ``iree-opt``) that runs the executable in a child process and exits with
a code: a crash of the executable then reads as ``exit 248``, not as SIGFPE. A reproducer
runs the executable, so that its shell sees the same signal as the compile that crashed.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from pytest_mlir_snippets.mlirtext.litscript import tool

# the tool -> (the package that ships it, the folder of its executables in that package)
_SHIPPED = {"torch-mlir-opt": ("torch_mlir", "_mlir_libs"), "iree-compile": ("iree.compiler", "_mlir_libs"),
            "iree-opt": ("iree.compiler", "_mlir_libs"), "iree-run-module": ("iree._runtime_libs", "")}


def native_tool(name: str) -> str:
    """``name``'s executable by its absolute path: the package's own for the tools in
    ``_SHIPPED``, else (or when it is not there) the installed tool (``litscript.tool``)."""
    package, folder = _SHIPPED.get(name, ("", ""))
    try:
        spec = importlib.util.find_spec(package) if package else None
    except ModuleNotFoundError:  # iree.compiler without iree
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        binary = Path(location) / folder / name
        if binary.is_file():
            return str(binary)
    return tool(name)
