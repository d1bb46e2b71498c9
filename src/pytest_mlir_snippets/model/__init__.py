"""The shared model of a run, below items and reporting (which do not import each other):
the record of an item (``record``), an optimization run's folder layout (``layout``), the
benchmark history a run keeps (``history``) and whole-file writes (``files``).

PYTEST_DONT_REWRITE"""
