"""The mlir-snippets command line tools.

PYTEST_DONT_REWRITE"""
