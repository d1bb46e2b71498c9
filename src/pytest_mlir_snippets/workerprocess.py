"""A sandbox worker's process (``python -m pytest_mlir_snippets.worker TARGET``): started,
framed, timed and captured here for every client (``client.Sandbox``).

One request at a time. When the worker aborts, segfaults, is killed for memory,
or does not answer within the timeout, the call returns a ``crash`` or
``timeout`` response with what the worker wrote to its stderr, and the next call
starts a fresh worker.

Standard library and ``protocol`` only: the pytest process and the workers both use it.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from typing import IO

from pytest_mlir_snippets import children
from pytest_mlir_snippets.protocol import Kind, Request, Response, read_response, write_message

PEAK_EVERY = 0.1  # seconds between readings of a memory-limited worker's peak address space


class WorkerProcess:
    """Owns one worker process for one target: started on the first request and again after
    one that crashed or timed out (``starts`` counts them)."""

    def __init__(self, target: str, memory_limit: int | None = None, env: dict[str, str] | None = None,
                 fixed_layout: bool = True, module: str = "pytest_mlir_snippets.worker") -> None:
        """``memory_limit``: bytes of address space (RLIMIT_AS) for the worker; ``env``: its
        environment (None: this process's); ``fixed_layout``: no address-space randomization;
        ``module``: what ``python -m`` runs (another that speaks the protocol: a golden's own process)."""
        self.target = target
        self.module = module
        self.memory_limit = memory_limit
        self.env = env
        self.fixed_layout = fixed_layout
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self._log: IO[bytes] | None = None
        self._pending: tuple[Request, int, float] | None = None  # sent ahead: (request, log start, sent at)
        self.peak: int | None = None  # the worker's largest address space seen in the last call (a memory limit's)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _start(self) -> subprocess.Popen[bytes]:
        self._log = tempfile.TemporaryFile(prefix="mlir-worker-")
        limit, fix_layout = self.memory_limit, children.fixed_layout_hook() if self.fixed_layout else (lambda: None)
        die_with_parent = children.die_with_parent()

        def before_exec() -> None:
            die_with_parent()
            fix_layout()
            if limit:
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        self.proc = subprocess.Popen(
            [sys.executable, "-m", self.module, self.target],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
            start_new_session=True, preexec_fn=before_exec, env=self.env,
        )
        self.starts += 1
        return self.proc

    def submit(self, request: Request) -> bool:
        """Send ``request`` now and read its answer later, in ``call(request)``: the worker
        compiles the next item while pytest reports the last one. One at a time."""
        if self._pending is not None:
            return False
        proc = self.proc if self.proc is not None and self.alive else self._start()
        assert proc.stdin is not None and self._log is not None
        log_start = self._log.seek(0, os.SEEK_END)
        try:
            write_message(proc.stdin, request)  # type: ignore[arg-type]  # a pipe is a BinaryIO
        except (BrokenPipeError, OSError):
            return False  # the next call finds the worker gone
        self._pending = (request, log_start, time.perf_counter())
        return True

    def call(self, request: Request, timeout: float | None = None) -> Response:
        """Send ``request`` (unless ``submit`` did) and wait at most ``timeout`` seconds for the answer."""
        if self._pending is not None:
            sent, log_start, started = self._pending
            self._pending = None
            if sent is request:
                return self._answer(log_start, started, timeout)
            self._answer(log_start, started, timeout)  # sent ahead for an item that did not run
        proc = self.proc if self.proc is not None and self.alive else self._start()
        assert proc.stdin is not None and proc.stdout is not None and self._log is not None
        log_start = self._log.seek(0, os.SEEK_END)
        started = time.perf_counter()
        if timeout is not None:  # the worker knows by when the answer is wanted (what a reference may take)
            request = replace(request, options=replace(request.options, deadline=time.monotonic() + timeout))
        try:
            write_message(proc.stdin, request)  # type: ignore[arg-type]  # a pipe is a BinaryIO
        except (BrokenPipeError, OSError):
            return self._lost(Kind.CRASH, log_start, started, timeout)
        return self._answer(log_start, started, timeout)

    def _answer(self, log_start: int, started: float, timeout: float | None) -> Response:
        proc = self.proc
        if proc is None or proc.stdout is None:
            return Response(Kind.CRASH, "the sandbox worker is gone")
        try:
            ready = self._wait(proc, timeout)
            if not ready:
                return self._lost(Kind.TIMEOUT, log_start, started, timeout)
            response = read_response(proc.stdout)  # type: ignore[arg-type]  # a pipe is a BinaryIO
        except BaseException:
            # Ctrl-C, or pytest-timeout's signal, while the worker is busy: its state
            # is unknown, so it must not answer the next request.
            self._kill()
            self.close()
            raise
        if response is None:
            return self._lost(Kind.CRASH, log_start, started, timeout)
        response.stderr = self._read_log(log_start)
        return response

    def _wait(self, proc: subprocess.Popen[bytes], timeout: float | None) -> bool:
        """Whether the worker answered (or died) within ``timeout``; under a memory limit,
        its address space is read meanwhile, the largest kept (``peak``), so that a crash
        can be named out of memory."""
        assert proc.stdout is not None
        self.peak = None
        if not self.memory_limit:
            return bool(select.select([proc.stdout], [], [], timeout)[0])
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            self.peak = max(children.address_space(proc.pid) or 0, self.peak or 0) or None
            left = PEAK_EVERY if end is None else min(PEAK_EVERY, end - time.monotonic())
            if left <= 0:
                return False
            if select.select([proc.stdout], [], [], left)[0]:
                return True

    def _read_log(self, start: int) -> str:
        assert self._log is not None
        self._log.seek(start)
        return self._log.read().decode("utf-8", errors="replace")

    def _lost(self, kind: Kind, log_start: int, started: float, timeout: float | None) -> Response:
        proc = self.proc
        assert proc is not None
        if kind is Kind.TIMEOUT:
            self._kill()
            message = f"no answer within {timeout:g} s: the worker was killed"
        else:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._kill()
            message = f"the sandbox worker {children.exit_status(proc.returncode)}"
        stderr = self._read_log(log_start)
        hungry = children.out_of_memory(stderr, self.peak, self.memory_limit) if kind is Kind.CRASH else ""
        if hungry:  # named first; how it died after
            message = f"the sandbox worker {hungry}; {children.exit_status(proc.returncode)}"
        self.close()
        return Response(kind, message, stderr=stderr, seconds=time.perf_counter() - started,
                        returncode=proc.returncode)

    def _kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()

    def close(self) -> None:
        """Stop the worker (politely: end of input, then a kill)."""
        proc, self.proc = self.proc, None
        self._pending = None
        if proc is not None:
            if proc.stdin is not None:
                try:
                    proc.stdin.close()
                except OSError:
                    pass
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        if self._log is not None:
            self._log.close()
            self._log = None
