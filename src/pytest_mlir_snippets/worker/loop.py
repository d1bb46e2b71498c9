"""The sandbox worker: a subprocess that compiles and executes snippets.

Started by ``client.Sandbox`` as ``python -m pytest_mlir_snippets.worker TARGET``.
Requests arrive on stdin, responses leave on a private copy of stdout; the real
file descriptors 1 and 2 both go to the sandbox's capture file, so whatever MLIR,
LLVM or a device runtime prints ends up in the item's report.
"""

from __future__ import annotations

import faulthandler
import os
import sys
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from pytest_mlir_snippets.compilekey import EXPECTED_DIGEST, CompileKey, request_key
from pytest_mlir_snippets.golden.recorded import specializable
from pytest_mlir_snippets.protocol import (
    ENVIRONMENT,
    GOLDEN,
    Kind,
    Op,
    Request,
    Response,
    Stage,
    read_message,
    write_message,
)
from pytest_mlir_snippets.worker import native_io
from pytest_mlir_snippets.worker.given import given
from pytest_mlir_snippets.worker.lowering.shlo.refine import dynamic_dim
from pytest_mlir_snippets.worker.optrun.schedule import check_schedule
from pytest_mlir_snippets.worker.targets import Backend, Compiled, SnippetFailure, load_backend

CACHE_SIZE = 64
# what every response about an iteration carries of its compile (Backend.compile_iteration)
ITERATION_KEYS = ("compiled_digest", "compiles")


class Worker:
    def __init__(self, target: str) -> None:
        self.target = target
        self._backend: Backend | None = None
        self._missing: str | None = None  # why the backend cannot work here (its missing())
        self._compiled: dict[str, OrderedDict[CompileKey, Compiled | SnippetFailure]] = {}  # _cached's memos
        self.iteration_compiles = 0  # optimization-run iterations compiled by this worker

    @property
    def backend(self) -> Backend:
        """The target's backend. While what it needs is missing (tt-mlir's modules), every
        request that uses it fails with that reason, the first and all those after it."""
        if self._backend is None:
            self._backend = load_backend(self.target)
            self._missing = self._backend.missing()
        if self._missing:
            raise SnippetFailure(Kind.UNSUPPORTED, self._missing, info={ENVIRONMENT: True})
        return self._backend

    def handle(self, request: Request) -> Response:
        try:
            with dynamic_dim(request.options.dynamic_dim):  # what dynamic programs are refined to
                return self._dispatch(request)
        except SnippetFailure as failure:
            return Response(failure.kind, failure.message, failure.diagnostics, failure.metrics,
                            dict(failure.info, stage=failure.info.get("stage", request.op.value)))
        except MemoryError as error:  # inputs or results larger than this machine (or --mlir-memory-limit)
            return Response(Kind.UNSUPPORTED, f"{request.op.value} of @{request.function}: {error}",
                            info={"stage": request.op.value})
        except Exception as error:  # one line naming the stage and the error; the traceback below it
            kind = Kind.COMPILE_ERROR if request.op is Op.COMPILE else Kind.EXECUTE_ERROR
            return Response(kind, f"internal error in the {self.target} backend, {request.op.value} of "
                            f"@{request.function}: {type(error).__name__}: {error}\n{traceback.format_exc()}",
                            info={"stage": request.op.value, "internal": True})

    def _dispatch(self, request: Request) -> Response:
        if "lit" in request.attachments:  # a RUN command of MLIR's integration tests (worker/litrun.py)
            from pytest_mlir_snippets.worker import litrun

            return litrun.handle(request)
        return HANDLERS[request.op](self, request)

    # ------------------------------------------------------------------ handlers (HANDLERS)
    def _ping(self, request: Request) -> Response:
        return Response(Kind.PASS, info={"pid": os.getpid()})

    def _open(self, request: Request) -> Response:
        self.backend.configure(request.options)
        info = self.backend.open_device(request.options.device_id)
        self.backend.probe()
        return Response(Kind.PASS, info=info)

    def _probe(self, request: Request) -> Response:
        self.backend.probe()
        return Response(Kind.PASS)

    def _close(self, request: Request) -> Response:
        self.backend.close_device()
        return Response(Kind.PASS)

    def _check_pipeline(self, request: Request) -> Response:
        from pytest_mlir_snippets.worker.lowering.passnames import check_pipeline

        why = check_pipeline(request.module)
        return Response(Kind.COMPILE_ERROR, why) if why else Response(Kind.PASS)

    def _check_schedule(self, request: Request) -> Response:
        return check_schedule(request.module)

    def _reference(self, request: Request) -> Response:
        ref = self.backend.reference_for(request.module, request.function, request.options,
                                         request.golden["inputs"] if request.golden else [])
        return Response(Kind.PASS, info={"values": ref.outputs, "reference": ref.name, GOLDEN: ref.golden.value})

    def _compile_only(self, request: Request) -> Response:
        compiled = self._compile(request)
        return Response(Kind.PASS, info=_public(compiled.info), ir=compiled.ir or None)

    def _execute_request(self, request: Request) -> Response:
        return self._execute(self._compile(request), request)

    def _bisect(self, request: Request) -> Response:
        constants = specializable(request.golden["inputs"]) if request.golden else {}
        with self._reset_after_failure(stage=Op.BISECT.value):
            from pytest_mlir_snippets.worker import triage

            info = triage.bisect(self.target, self.backend, request, constants)
        return Response(Kind.PASS, info=info)

    def _run(self, request: Request) -> Response:
        """mlir_device.run: the caller's inputs, the results back. With ``specialize`` (the
        ONNX backend), small integer inputs are baked in where the function does not compile
        with them as arguments, as for recorded inputs."""
        specialize = bool(request.golden and request.golden.get("specialize"))
        compiled = self._compile(request if specialize else replace(request, golden=None))
        inputs = given(request.golden["inputs"] if request.golden else [], compiled.signature[0])
        with self._reset_after_failure(stage="run"):  # inputs that do not fit leave the device alone
            values = self.backend.run(compiled, inputs, request.options)
        return Response(Kind.PASS, info={"values": values})

    def _iteration(self, request: Request) -> Response:
        """An iteration's [compile]; [host_ops], [launch] read the response, the runs the same compile."""
        compiled = self._compile_iteration(request)
        return Response(Kind.PASS, info=_public(compiled.info), ir=compiled.ir)

    def _iteration_execute(self, request: Request) -> Response:
        response = self._execute(self._compile_iteration(request), request)  # what the compile's responses said, less
        response.info = {k: v for k, v in response.info.items() if k not in ("ptx", "host_ops", "kernels")}
        return response

    def _iteration_benchmark(self, request: Request) -> Response:
        iteration = self._compile_iteration(request)
        with self._reset_after_failure():
            metrics = self.backend.benchmark(iteration, request.options, request.golden)
        return Response(Kind.PASS, metrics=metrics, info={k: iteration.info[k] for k in ITERATION_KEYS
                                                          if k in iteration.info})

    def _pytorch_compile(self, request: Request) -> Response:
        from pytest_mlir_snippets.worker.optrun import pytorch_ref

        return pytorch_ref.compile_reference(request.attachments["reference"], request.options)

    def _pytorch_benchmark(self, request: Request) -> Response:
        from pytest_mlir_snippets.worker.optrun import pytorch_ref

        return pytorch_ref.benchmark_reference(request.attachments["reference"], request.options)

    def _driver(self, request: Request) -> Response:
        """A failed execute's reproducer (``worker/triage.py``)."""
        from pytest_mlir_snippets.worker import triage

        return triage.driver(self.target, self.backend, self._compile(request), request)

    # ------------------------------------------------------------------ compiles and runs
    def _execute(self, compiled: Compiled, request: Request) -> Response:
        with self._reset_after_failure(stage="execute"):
            metrics, info = self.backend.execute(compiled, request.options, request.golden)
        return Response(Kind.PASS, metrics=metrics, info=dict(_public(compiled.info), **info))

    @contextmanager
    def _reset_after_failure(self, stage: str | None = None) -> Iterator[None]:
        """A run on the device that went wrong (not just its numbers) resets the device,
        so the next item finds it in a known state; ``stage``: the failure's, unless it says."""
        try:
            yield
        except SnippetFailure as failure:
            if stage is not None:
                failure.info.setdefault("stage", stage)
            if failure.kind is not Kind.GOLDEN_MISMATCH:
                self.backend.reset()
                if self.backend.forgets_compiled:
                    self._compiled.clear()
            raise

    def _compile_iteration(self, request: Request) -> Compiled:
        """An optimization-run iteration, compiled once per worker: its [compile] makes it,
        [correctness] and [benchmark] run that same compile (``compiles``: how many this
        worker made, on every response that uses one); a stage whose [compile] made another
        module than the one it would run (``EXPECTED_DIGEST``) fails."""
        attached = request.attachments

        def compile_() -> Compiled:
            self.iteration_compiles += 1
            compiled = self.backend.compile_iteration(request.module, attached["schedule"], attached["pipeline"],
                                                      request.function)
            compiled.info["compiles"] = self.iteration_compiles
            return compiled

        compiled = self._cached(request_key(request), compile_)
        expected, made = attached.get(EXPECTED_DIGEST), compiled.info.get("compiled_digest")
        if expected and made != expected:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"the compiled module this stage runs (sha256 {str(made)[:12]}) "
                                 f"is not the one its [compile] made (sha256 {expected[:12]}): the model, "
                                 "transform.mlir or pass_pipeline.txt changed since, or the compile is not "
                                 "deterministic", info={"compiled_digest": made})
        return compiled

    def _compile(self, request: Request) -> Compiled:
        constants = specializable(request.golden["inputs"]) if request.golden else {}
        return self._cached(request_key(request, constants),
                            lambda: self.backend.compile(request.module, request.function, request.options, constants))

    def _cached(self, key: CompileKey, compile_: Callable[[], Compiled]) -> Compiled:
        """``key``'s compile, made once; a memo per kind: snippets never push a run's out."""
        memo = self._compiled.setdefault(key.kind, OrderedDict())
        cached = memo.get(key)
        if cached is None:
            try:
                cached = compile_()
            except SnippetFailure as failure:
                failure.info["stage"] = Stage.COMPILE.value
                cached = failure
            memo[key] = cached
            while len(memo) > CACHE_SIZE:
                memo.popitem(last=False)
        else:
            memo.move_to_end(key)
        if isinstance(cached, SnippetFailure):
            raise cached
        return cached


# each request's handler (a request the table lacks is a KeyError: an internal error)
HANDLERS: dict[Op, Callable[[Worker, Request], Response]] = {
    Op.PING: Worker._ping,
    Op.OPEN: Worker._open,
    Op.PROBE: Worker._probe,
    Op.CLOSE: Worker._close,
    Op.CHECK_PIPELINE: Worker._check_pipeline,
    Op.COMPILE: Worker._compile_only,
    Op.EXECUTE: Worker._execute_request,
    Op.BISECT: Worker._bisect,
    Op.RUN: Worker._run,
    Op.REFERENCE: Worker._reference,
    Op.SCHEDULE: Worker._check_schedule,
    Op.ITERATION: Worker._iteration,
    Op.ITERATION_EXECUTE: Worker._iteration_execute,
    Op.ITERATION_BENCHMARK: Worker._iteration_benchmark,
    Op.PYTORCH_COMPILE: Worker._pytorch_compile,
    Op.PYTORCH_BENCHMARK: Worker._pytorch_benchmark,
    Op.DRIVER: Worker._driver,
}


def _public(info: dict[str, Any]) -> dict[str, Any]:
    kept_here = ("source", "constants", "linked", "checks", "fed", "check_calls", "parallel", "parallel_runs")
    return {k: v for k, v in info.items() if k not in kept_here}


def main() -> int:
    target = sys.argv[1]
    requests = os.fdopen(0, "rb", buffering=0)
    responses = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints from native code go to the capture file
    faulthandler.enable()  # a crash in native code says where in Python it was (the stage, the pass)
    sys.stdout = sys.stderr
    native_io.line_buffered_stdout()
    worker = Worker(target)
    while True:
        request = read_message(requests)
        if request is None:  # end of input: the device was closed by a request before it
            native_io.flush()
            os._exit(0)  # no interpreter teardown of MLIR and torch: a third of a second saved
        start = time.perf_counter()
        response = worker.handle(request)
        response.seconds = time.perf_counter() - start
        native_io.flush()  # what the snippet printed is in the capture file before the answer
        write_message(responses, response)

