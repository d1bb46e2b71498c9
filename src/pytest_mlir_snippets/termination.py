"""SIGTERM ends a run the way Ctrl-C does.

CI systems cancel a job with SIGTERM, whose default action ends the process on
the spot: no run report, and a sandbox worker busy in native code is left behind.
As a ``KeyboardInterrupt`` instead, pytest's interrupted-session path runs: the
busy worker is killed (``Sandbox._answer``), the session finishes with the items
that ran, and the reports are written.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any

import pytest

_PREVIOUS = pytest.StashKey[Any]()


def _interrupt(signum: int, frame: FrameType | None) -> None:
    # A second SIGTERM (a CI runner that gives up waiting) ends the process at once;
    # the sandbox workers die with it (PR_SET_PDEATHSIG, children.py).
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise KeyboardInterrupt(f"{signal.Signals(signum).name} received")


def install(config: pytest.Config) -> None:
    """Raise ``KeyboardInterrupt`` on SIGTERM while ``config`` lives. Only in the main
    thread (the only one Python lets set handlers), and only where SIGTERM still has
    its default action: a handler someone else set (a wrapper, another plugin, an
    outer pytest running this one in-process) is theirs to keep."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return
    config.stash[_PREVIOUS] = signal.signal(signal.SIGTERM, _interrupt)


def restore(config: pytest.Config) -> None:
    """Put back the handler ``install`` replaced (a pytest run inside a longer-lived process)."""
    previous = config.stash.get(_PREVIOUS, None)
    if previous is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, previous)
        del config.stash[_PREVIOUS]
