"""A test double of cuda-python's ``cuda.bindings`` (only ``driver``), put first on the
path by tests/test_cuda.py: see ``driver``."""
