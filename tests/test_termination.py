"""A pytest process that is cancelled leaves no sandbox worker behind.

Real processes: pytest runs a snippet that never ends, and is sent SIGTERM (how CI
cancels a job) or SIGKILL while its worker spins in JIT-compiled code.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

SPIN = """func.func @spin_forever(%n: i64) -> i64 {
  %r = scf.while (%i = %n) : (i64) -> i64 {
    %true = arith.constant true
    scf.condition(%true) %i : i64
  } do {
  ^bb0(%i: i64):
    %one = arith.constant 1 : i64
    %next = arith.addi %i, %one : i64
    scf.yield %next : i64
  }
  return %r : i64
}
"""


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def alive(pid: int) -> bool:
    """Running (a zombie no one reaps yet counts as gone: it runs nothing)."""
    try:
        stat = (Path("/proc") / str(pid) / "stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until(condition: Callable[[], object], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def sandbox_worker(parent: int) -> int | None:
    return next((p for p in children(parent) if "pytest_mlir_snippets.worker" in cmdline(p)), None)


@pytest.fixture
def spinning(pytester: pytest.Pytester) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """pytest on a snippet that spins forever, once its worker runs the spin: (pytest, worker pid)."""
    pytester.makefile(".mlir", spin=SPIN)
    pytest_proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "spin.mlir", "--mlir-timeout=600", "-p", "no:cacheprovider"],
        cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    worker = None
    try:
        assert wait_until(lambda: sandbox_worker(pytest_proc.pid), 120), "no sandbox worker started"
        worker = sandbox_worker(pytest_proc.pid)
        assert worker is not None
        time.sleep(1.0)  # compiled, and spinning in the execute item
        assert alive(worker) and pytest_proc.poll() is None
        yield pytest_proc, worker
    finally:
        for pid in (pytest_proc.pid, worker):
            if pid is not None and alive(pid):
                os.kill(pid, signal.SIGKILL)
        pytest_proc.wait()


def test_sigterm_ends_the_run_like_ctrl_c(pytester: pytest.Pytester,
                                          spinning: tuple[subprocess.Popen[bytes], int]) -> None:
    pytest_proc, worker = spinning
    pytest_proc.send_signal(signal.SIGTERM)
    out = pytest_proc.communicate(timeout=30)[0].decode()
    assert pytest_proc.returncode == pytest.ExitCode.INTERRUPTED, out
    assert "KeyboardInterrupt" in out and "SIGTERM received" in out
    assert wait_until(lambda: not alive(worker), 5), f"worker {worker} outlived pytest"
    report = (pytester.path / "spin-run-report.txt").read_text()
    assert "spin_forever  " in report  # the compile item that ran is in it


def test_a_killed_pytest_takes_its_worker_along(spinning: tuple[subprocess.Popen[bytes], int]) -> None:
    pytest_proc, worker = spinning
    pytest_proc.kill()  # no handler runs: the kernel's parent-death signal must end the worker
    pytest_proc.wait(timeout=30)
    assert wait_until(lambda: not alive(worker), 5), f"worker {worker} outlived pytest"
