"""The worker's native output: what C and C++ code (MLIR's runner libraries, the
CUDA runtime wrappers, LLVM) writes to file descriptors 1 and 2.

In the worker both descriptors go to the sandbox's capture file (``worker/__main__.py``), so
that everything printed ends up in the item's report. Helpers here flush C's stdio,
keep a reference run's prints out of it, and read back what a call wrote to stderr
(upstream's ``mgpu*`` wrappers report CUDA errors only there).
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_LIBC = ctypes.CDLL(None)
_LIBC.fflush.argtypes = [ctypes.c_void_p]
_LIBC.setvbuf.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_size_t]
_IOLBF = 1


def flush() -> None:
    """Flush what Python and C's stdio hold (``printf`` of a snippet's ``printF32``,
    ``std::cout`` of ``printMemrefF32``), so that it is in the capture file."""
    sys.stderr.flush()
    _LIBC.fflush(None)


def line_buffered_stdout() -> None:
    """C's stdout line by line: what a snippet printed before it crashed still reaches
    the capture file (fully buffered, as for a file, it would die with the process)."""
    _LIBC.setvbuf(ctypes.c_void_p.in_dll(_LIBC, "stdout"), None, _IOLBF, 0)


@contextmanager
def quiet_stdout() -> Iterator[None]:
    """File descriptor 1 to /dev/null for the block: a reference run of a snippet that
    prints would print everything twice. Errors (fd 2) still reach the capture file."""
    flush()
    saved = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        yield
    finally:
        flush()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


class StderrWatch:
    """What file descriptor 2 received since ``start()``, read back without moving the
    file's offset (``pread``); empty where fd 2 is not a file (a terminal, a pipe)."""

    def __init__(self) -> None:
        self._start: int | None = None

    def start(self) -> None:
        flush()
        try:
            self._start = os.lseek(2, 0, os.SEEK_CUR)
        except OSError:
            self._start = None

    def lines(self) -> list[str]:
        if self._start is None:
            return []
        flush()
        try:
            end = os.lseek(2, 0, os.SEEK_CUR)
            data = os.pread(2, max(0, end - self._start), self._start)
        except OSError:
            return []
        return data.decode("utf-8", errors="replace").splitlines()
