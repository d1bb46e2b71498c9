"""Child processes the plugin starts (sandbox workers, a worker's second-compiler worker,
the runners of RUN lines): how they die with their parent, and how their end reads.
Standard library only: the pytest process and the workers both use it.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import ctypes
import os
import signal
from collections.abc import Callable

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def exit_status(returncode: int) -> str:
    """``killed by SIGSEGV`` or ``exited with code 3``."""
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with code {returncode}"


def die_with_parent() -> Callable[[], None]:
    """What makes the process it runs in before ``exec`` (``preexec_fn``) get SIGKILL when
    the process that started it dies, however it dies (SIGKILL included): a child busy in
    native code never reads the end of its input, so without this it would go on running,
    at full CPU, for good. The kernel sends the signal when the *thread* that started the
    child ends; the plugin starts children from threads that live as long as their work.
    Nothing where there is no ``prctl`` (not Linux)."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return lambda: None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    parent = os.getpid()

    def arm() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died between fork and prctl: no signal will come
            os.kill(os.getpid(), signal.SIGKILL)

    return arm
