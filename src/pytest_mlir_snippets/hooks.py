"""Hooks this plugin adds to pytest (registered through ``pytest_addhooks``).

Implement them in a ``conftest.py`` or a plugin, as any pytest hook.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from typing import Any

import pytest


def pytest_mlir_device_opened(config: pytest.Config, target: str, device_id: int | None,
                              info: dict[str, Any]) -> None:
    """A sandbox worker opened (and probed) its device for ``target``.

    Called in the process that owns the worker: the pytest process, or each
    xdist worker. ``info`` is what the backend's ``open_device`` returned. It fires at the
    first execute item or ``mlir_device.run``, and again after a crash or a timeout
    replaced the worker.
    """
