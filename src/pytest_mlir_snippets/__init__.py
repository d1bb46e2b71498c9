"""pytest-mlir-snippets: every func.func of an MLIR snippet file becomes pytest items."""

__version__ = "0.1.0"
