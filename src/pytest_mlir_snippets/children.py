"""Child processes the plugin starts (sandbox workers, a worker's second-compiler worker,
the runners of RUN lines): how they die with their parent, how their memory layout is
fixed, and how their end reads.
Standard library only: the pytest process and the workers both use it.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import ctypes
import os
import signal
from collections.abc import Callable

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
ADDR_NO_RANDOMIZE = 0x0040000  # personality(2): the process's memory layout is not randomized


def exit_status(returncode: int) -> str:
    """``killed by SIGSEGV`` or ``exited with code 3``."""
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with code {returncode}"


# what a process that could not get memory says before it dies (LLVM's report_bad_alloc_error,
# C++'s std::bad_alloc, Python's MemoryError, mmap's ENOMEM, the dynamic loader's mapping)
_NO_MEMORY = ("out of memory", "std::bad_alloc", "MemoryError", "Cannot allocate memory",
              "failed to map segment")
NEAR_LIMIT = 0.9  # of the address-space limit: a peak this close, then a crash, is out of memory


def address_space(pid: int) -> int | None:
    """The address space (``VmSize``) of process ``pid`` now, in bytes; None when it is gone
    or the system does not say. (Not ``VmPeak``: that keeps what an earlier request took.)"""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def out_of_memory(stderr: str, peak: int | None, limit: int | None) -> str:
    """Why a process that died under an address-space ``limit`` (RLIMIT_AS) ran out of
    memory, in words: what it said (``stderr``), or its ``peak`` near the limit (a failed
    allocation often ends in SIGSEGV, saying nothing); "" when neither shows it."""
    if not limit:
        return ""
    said = next((line.strip() for line in stderr.splitlines() if any(m in line for m in _NO_MEMORY)), "")
    if said:
        return f"ran out of memory under --mlir-memory-limit {_size(limit)} ({said[:200]})"
    if peak is not None and peak >= NEAR_LIMIT * limit:
        return f"ran out of memory under --mlir-memory-limit {_size(limit)} (its address space reached {_size(peak)})"
    return ""


def _size(size: int) -> str:
    return f"{size / 2**30:.3g} GiB" if size >= 2**30 else f"{size / 2**20:.3g} MiB"


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


def fixed_layout_hook() -> Callable[[], None]:
    """What turns address-space randomization off for the process it runs in before
    ``exec`` (``setarch -R``; LLVM's benchmarking tips advise it): where code, stack and
    buffers sit moves a kernel's time by up to ~10% from one process to the next, and
    stays for the process's life. Nothing where the C library has no ``personality`` or
    the kernel refuses it (containers whose seccomp profile forbids it): ``benchstats``
    then says the layout was not fixed."""
    try:
        personality = ctypes.CDLL(None, use_errno=True).personality
    except (OSError, AttributeError):
        return lambda: None
    personality.argtypes, personality.restype = [ctypes.c_ulong], ctypes.c_int

    def fix() -> None:
        current = personality(0xFFFFFFFF)  # asks, changes nothing
        if current != -1:
            personality(current | ADDR_NO_RANDOMIZE)

    return fix
