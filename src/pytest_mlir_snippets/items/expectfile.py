"""Which expectations an ``--mlir-expectations`` file holds: an iree-test-suites config
for ``.json`` (``items.ireeconfig``), else lines (``items.expectations``).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from pathlib import Path

from pytest_mlir_snippets.items.expectations import Expectations, ExpectationsError
from pytest_mlir_snippets.items.ireeconfig import ConfigError, IreeConfig
from pytest_mlir_snippets.session import ExpectationSource


def load_expectations(path: Path, create: bool = False) -> ExpectationSource:
    """``path`` as expectations: an IREE config for ``.json``, else lines (``Expectations``).
    A missing file is an error, unless ``create`` (an update): then it starts empty, in
    the form its name implies, and the update writes it."""
    if not path.exists() and not create:
        raise ExpectationsError(f"--mlir-expectations: {path} does not exist "
                                "(--mlir-update-expectations creates it from a run)")
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".json":
        if not path.exists():
            return IreeConfig.empty(path)
        try:
            return IreeConfig.load(path)
        except ConfigError as error:
            raise ExpectationsError(str(error)) from None
    return Expectations.load(path)


__all__ = ["ExpectationsError", "load_expectations"]
