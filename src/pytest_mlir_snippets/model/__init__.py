"""The shared model of a run, below items and reporting (which do not import each other):
the record of an item (``record``), an optimization run's folder layout (``layout``) and
the benchmark history a run keeps (``history``).

PYTEST_DONT_REWRITE"""
