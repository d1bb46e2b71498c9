"""MLIR text read without MLIR: scanning, splitting, symbols, RUN lines, IREE ops.

PYTEST_DONT_REWRITE"""
