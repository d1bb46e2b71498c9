"""The sandbox worker's requests, each answered by the handler of its type (``HANDLERS``), with
the compiles it keeps for the requests after them (``worker/__main__.py`` reads and answers them).
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from pytest_mlir_snippets.compilekey import request_key
from pytest_mlir_snippets.golden.recorded import specializable
from pytest_mlir_snippets.protocol import (
    Bisect,
    CheckPipeline,
    CheckSchedule,
    CloseDevice,
    Compile,
    Driver,
    Execute,
    FunctionRequest,
    Inputs,
    IterationBenchmark,
    IterationCompile,
    IterationExecute,
    IterationFacts,
    IterationRequest,
    Kind,
    LitCompile,
    LitExecute,
    LitRequest,
    OpenDevice,
    Ping,
    Probe,
    PytorchBenchmark,
    PytorchCompile,
    Reference,
    Request,
    Response,
    Run,
    Stage,
    Verdict,
)
from pytest_mlir_snippets.worker.given import given, seeded
from pytest_mlir_snippets.worker.judging.judge import computed
from pytest_mlir_snippets.worker.lowering.shlo.refine import dynamic_dim, recorded
from pytest_mlir_snippets.worker.memo import Memo
from pytest_mlir_snippets.worker.optrun.schedule import check_schedule
from pytest_mlir_snippets.worker.targets import Backend, Compiled, SnippetFailure, load_backend
from pytest_mlir_snippets.worker.triage.failingpass import on_failure_located


class Worker:
    def __init__(self, target: str) -> None:
        self.target = target
        self._backend: Backend | None = None
        self._missing: str | None = None  # why the backend cannot work here (its missing())
        self._compiled = Memo()  # the compiles made, failed ones too, for the requests after them
        self.iteration_compiles = 0  # optimization-run iterations compiled by this worker

    @property
    def backend(self) -> Backend:
        """The target's backend. While what it needs is missing (tt-mlir's modules), every
        request that uses it fails with that reason, the first and all those after it."""
        if self._backend is None:
            self._backend = load_backend(self.target)
            self._missing = self._backend.missing()
        if self._missing:
            raise SnippetFailure(Kind.UNSUPPORTED, self._missing, environment=True)
        return self._backend

    def handle(self, request: Request) -> Response:
        function = request.function if isinstance(request, FunctionRequest) else ""
        try:
            with dynamic_dim(request.options.dynamic_dim):  # what dynamic programs are refined to
                return HANDLERS[type(request)](self, request)
        except SnippetFailure as failure:
            return Response(failure.kind, failure.message, failure.diagnostics, failure.metrics,
                            stage=failure.stage or request.op.value, environment=failure.environment,
                            skip=failure.skip, verdict=failure.verdict, triage=failure.triage, facts=failure.facts,
                            files=failure.files)
        except MemoryError as error:  # inputs or results larger than this machine (or --mlir-memory-limit)
            return Response(Kind.UNSUPPORTED, f"{request.op.value} of @{function}: {error}", stage=request.op.value)
        except Exception as error:  # one line naming the stage and the error; the traceback below it
            kind = Kind.COMPILE_ERROR if isinstance(request, Compile) else Kind.EXECUTE_ERROR
            return Response(kind, f"internal error in the {self.target} backend, {request.op.value} of "
                            f"@{function}: {type(error).__name__}: {error}\n{traceback.format_exc()}",
                            stage=request.op.value, internal=True)

    # ------------------------------------------------------------------ handlers (HANDLERS)
    def _ping(self, request: Ping) -> Response:
        return Response(Kind.PASS, pid=os.getpid())

    def _open(self, request: OpenDevice) -> Response:
        self.backend.configure(request.options)
        device = self.backend.open_device(request.options.device_id)
        self.backend.probe()
        return Response(Kind.PASS, device=device)

    def _probe(self, request: Probe) -> Response:
        self.backend.probe()
        return Response(Kind.PASS)

    def _close(self, request: CloseDevice) -> Response:
        self.backend.close_device()
        return Response(Kind.PASS)

    def _check_pipeline(self, request: CheckPipeline) -> Response:
        from pytest_mlir_snippets.worker.lowering.passnames import check_pipeline

        why = check_pipeline(request.pipeline)
        return Response(Kind.COMPILE_ERROR, why) if why else Response(Kind.PASS)

    def _check_schedule(self, request: CheckSchedule) -> Response:
        return check_schedule(request.schedule)

    def _reference(self, request: Reference) -> Response:
        ref = self.backend.reference_for(request.module, request.function, request.options,
                                         request.recorded.inputs if request.recorded else [])
        return Response(Kind.PASS, values=ref.outputs, verdict=Verdict(ref.golden, ref.name))

    def _inputs(self, request: Inputs) -> Response:
        return seeded(self._compile(request), request)

    def _compile_only(self, request: Compile) -> Response:
        compiled = self._compile(request)
        return _answer(compiled, ir=compiled.ir or None)

    def _execute_request(self, request: Execute) -> Response:
        return self._execute(self._compile(request), request)

    def _bisect(self, request: Bisect) -> Response:
        constants = specializable(request.recorded.inputs) if request.recorded else {}
        with self._reset_after_failure(stage=request.op.value):
            from pytest_mlir_snippets.worker.triage import dispatch

            found = dispatch.bisect(self.target, self.backend, request, constants)
        return Response(Kind.PASS, triage=found)

    def _run(self, request: Run) -> Response:
        """mlir_device.run: the caller's inputs, the results back (and whether they were computed
        at run time: ``verdict.computed``). With ``specialize`` (the ONNX backend), small integer
        inputs are baked in where the function does not compile with them as arguments."""
        compiled = self._compile(request if request.specialize else replace(request, recorded=None))
        inputs = given(request.recorded.inputs if request.recorded else [], compiled.signature[0])
        with self._reset_after_failure(stage=request.op.value):  # inputs that do not fit leave the device alone
            values = self.backend.run(compiled, inputs, request.options)
        return Response(Kind.PASS, values=values, verdict=Verdict(computed=computed(compiled, range(len(values)),
                                                                                 values)))

    def _lit(self, request: LitRequest) -> Response:
        """A RUN command of MLIR's integration tests (``worker/litrun.py``)."""
        from pytest_mlir_snippets.worker import litrun

        return litrun.handle(request)

    def _iteration(self, request: IterationCompile) -> Response:
        """An iteration's [compile]; [host_ops], [launch] read the response, the runs the same compile."""
        compiled = self._compile_iteration(request)
        return _answer(compiled, ir=compiled.ir)

    def _iteration_execute(self, request: IterationExecute) -> Response:
        response = self._execute(self._compile_iteration(request), request)  # what the compile's responses said, less
        if response.facts is not None:
            response.facts.ptx = ""
        if response.iteration is not None:
            response.iteration = replace(response.iteration, host_ops=None, kernels=None)
        return response

    def _iteration_benchmark(self, request: IterationBenchmark) -> Response:
        iteration = self._compile_iteration(request)
        with self._reset_after_failure():
            metrics = self.backend.benchmark(iteration, request.options, request.recorded)
        return Response(Kind.PASS, metrics=metrics, iteration=_counted(iteration))

    def _pytorch_compile(self, request: PytorchCompile) -> Response:
        from pytest_mlir_snippets.worker.optrun import pytorch_ref

        return pytorch_ref.compile_reference(request.reference, request.options)

    def _pytorch_benchmark(self, request: PytorchBenchmark) -> Response:
        from pytest_mlir_snippets.worker.optrun import pytorch_ref

        return pytorch_ref.benchmark_reference(request.reference, request.options)

    def _driver(self, request: Driver) -> Response:
        """A failed execute's reproducer (``worker/triage/dispatch.py``)."""
        from pytest_mlir_snippets.worker.triage import dispatch

        return dispatch.driver(self.target, self.backend, self._compile(request), request)

    # ------------------------------------------------------------------ compiles and runs
    def _execute(self, compiled: Compiled, request: FunctionRequest) -> Response:
        with self._reset_after_failure(stage=Stage.EXECUTE.value):
            executed = self.backend.execute(compiled, request.options, request.recorded)
        response = _answer(compiled, metrics=executed.metrics, verdict=executed.verdict)
        response.files = executed.files or response.files
        return response

    @contextmanager
    def _reset_after_failure(self, stage: str | None = None) -> Iterator[None]:
        """A run on the device that went wrong (not just its numbers) resets the device,
        so the next item finds it in a known state; ``stage``: the failure's, unless it says."""
        try:
            yield
        except SnippetFailure as failure:
            if stage is not None and not failure.stage:
                failure.stage = stage
            if failure.kind is not Kind.GOLDEN_MISMATCH:
                self.backend.reset()
                if self.backend.forgets_compiled:
                    self._compiled.clear()
            raise

    def _compile_iteration(self, request: IterationRequest) -> Compiled:
        """An optimization-run iteration, compiled once per worker: its [compile] makes it,
        [correctness] and [benchmark] run that same compile (``compiles``: how many this
        worker made, on every response that uses one); a stage whose [compile] made another
        module than the one it would run (``expected_digest``) fails."""

        def compile_() -> Compiled:
            self.iteration_compiles += 1
            compiled = self.backend.compile_iteration(request.module, request.schedule, request.pipeline,
                                                      request.function)
            compiled.iteration = replace(compiled.iteration or IterationFacts(), compiles=self.iteration_compiles)
            return compiled

        compiled = self._compiled.get(request_key(request), compile_)
        expected, made = request.expected_digest, (compiled.iteration or IterationFacts()).compiled_digest
        if expected and made != expected:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"the compiled module this stage runs (sha256 {made[:12]}) "
                                 f"is not the one its [compile] made (sha256 {expected[:12]}): the model, "
                                 "transform.mlir or pass_pipeline.txt changed since, or the compile is not "
                                 "deterministic")
        return compiled

    def _compile(self, request: FunctionRequest) -> Compiled:
        constants = specializable(request.recorded.inputs) if request.recorded else {}
        with recorded(request.recorded.inputs if request.recorded else ()):  # the shapes dynamic entries take
            return self._compiled.get(request_key(request, constants), lambda: on_failure_located(
                lambda: self.backend.compile(request.module, request.function, request.options, constants)))



def _answer(compiled: Compiled, ir: str | None = None, metrics: dict[str, float] | None = None,
            verdict: Verdict | None = None) -> Response:
    """A response about ``compiled``: its public facts (copies: the memo keeps the compile)."""
    return Response(Kind.PASS, metrics=metrics or {}, ir=ir, facts=replace(compiled.facts), verdict=verdict,
                    files=dict(compiled.files), iteration=replace(compiled.iteration) if compiled.iteration else None)


def _counted(compiled: Compiled) -> IterationFacts | None:
    """What every response about an iteration carries of its compile: its digest and count."""
    facts = compiled.iteration
    return IterationFacts(facts.compiled_digest, facts.compiles) if facts else None


# each request's handler, by the request's type (a type the table lacks is a KeyError: an internal error)
HANDLERS: dict[type[Request], Callable[[Worker, Any], Response]] = {
    Ping: Worker._ping,
    OpenDevice: Worker._open,
    Probe: Worker._probe,
    CloseDevice: Worker._close,
    CheckPipeline: Worker._check_pipeline,
    CheckSchedule: Worker._check_schedule,
    Compile: Worker._compile_only,
    Execute: Worker._execute_request,
    Bisect: Worker._bisect,
    Run: Worker._run,
    Reference: Worker._reference,
    Inputs: Worker._inputs,  # mlir-snippets record-goldens
    Driver: Worker._driver,
    LitCompile: Worker._lit,
    LitExecute: Worker._lit,
    IterationCompile: Worker._iteration,
    IterationExecute: Worker._iteration_execute,
    IterationBenchmark: Worker._iteration_benchmark,
    PytorchCompile: Worker._pytorch_compile,
    PytorchBenchmark: Worker._pytorch_benchmark,
}
