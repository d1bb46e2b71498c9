"""Optimization runs (SPEC 6): a folder with ``model_linalg.mlir`` and ``v0/``, ``v1/``, ...

Each iteration is a set of items on the run's ``model_linalg.mlir`` node, so that
``-k v3`` selects one iteration: ``run/model_linalg.mlir::v3[contract]``, ``[compile]``,
(cuda: ``[host_ops]``, ``[launch]``), ``[correctness]``, ``[benchmark]``; a run with a
``reference.py`` also gets ``pytorch[benchmark]`` (PyTorch eager and ``torch.compile``).
The run's target is ``--mlir-target`` (or ini ``mlir_target``) when given, else a
``target: NAME`` line in its ``env_check.md``, else cpu. Every item ends with a record;
``reporting.benchmark`` writes the tables from the records when the session ends.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_mlir_snippets.compilekey import request_key
from pytest_mlir_snippets.items import gpustages
from pytest_mlir_snippets.items.base import MlirItem, item_kwargs, relative
from pytest_mlir_snippets.items.facts import iteration_facts
from pytest_mlir_snippets.items.failures import STDERR_MARKER, ItemFailure, MlirFailureRepr, expectation_line
from pytest_mlir_snippets.items.iterationfiles import IterationFiles
from pytest_mlir_snippets.mlirtext.splitter import SnippetSource
from pytest_mlir_snippets.model import history
from pytest_mlir_snippets.model.layout import (
    MODEL,
    REFERENCE,
    STAGES,
    compiled_ir,
    declared_target,
    is_iteration,
    iterations,
    missing_files,
)
from pytest_mlir_snippets.model.record import ItemRecord
from pytest_mlir_snippets.protocol import (
    Diagnostic,
    Golden,
    IterationBenchmark,
    IterationCompile,
    IterationExecute,
    IterationFacts,
    IterationRequest,
    Kind,
    Response,
    Stage,
    SubjectKind,
)
from pytest_mlir_snippets.session import run_state
from pytest_mlir_snippets.settings import RUN_TIMEOUT


class OptimizationRun(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        settings = run_state(self.config).settings
        run = self.path.parent
        target = settings.target if settings.target_given else declared_target(run)
        if target not in STAGES:
            yield IterationItem.from_parent(self, folder=run, stage="contract", target=target,
                                            **item_kwargs(self, "run", "contract"))
            return
        if (run / REFERENCE).is_file():  # torch.compile in its own item: the benchmark times, nothing else
            yield IterationItem.from_parent(self, folder=run, stage="pytorch_compile", target=target,
                                            **item_kwargs(self, "pytorch", "compile"))
            yield IterationItem.from_parent(self, folder=run, stage="pytorch", target=target,
                                            **item_kwargs(self, "pytorch", "benchmark"))
        functions = SnippetSource(self.path.read_text(errors="replace")).functions
        line = functions[0].line if functions else 0  # the model's entry: what each iteration compiles
        for folder in iterations(run):
            for stage in STAGES[target]:
                yield IterationItem.from_parent(self, folder=folder, stage=stage, target=target, line=line,
                                                **item_kwargs(self, folder.name, stage))


class IterationItem(MlirItem):
    output_in_signature = False  # its record's diagnostics are MLIR's alone
    unsupported_with_compile = False  # a stage after an unsupported compile skips for it, as for a failure

    def __init__(self, *, folder: Path, stage: str, target: str, line: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.line = line  # the record's: the model's entry function, in the run report's line column
        self.reproducer = ""  # a failed [compile]'s reproduce.sh, relative to the output root
        self.folder = folder
        self.stage = stage
        self.target = target
        self.run_dir = folder.parent if is_iteration(folder.name) else folder
        self.subject_kind = SubjectKind.ITERATION if folder != self.run_dir else (
            SubjectKind.PYTORCH if stage.startswith("pytorch") else SubjectKind.RUN)
        self.subject = folder.name if self.subject_kind is SubjectKind.ITERATION else self.subject_kind.value
        expectations = run_state(self.config).expectations
        self.expect(expectations.status_of(self.path, self.name, Stage(self.stage)) if expectations else None)

    def reportinfo(self) -> tuple[Path, int, str]:
        schedule = self.folder / "transform.mlir"
        return (schedule if schedule.is_file() else self.path), 0, self.name

    def run_stage(self) -> None:
        if self.target not in STAGES:
            self.fail(Response(Kind.UNSUPPORTED, f"optimization runs are not run on target {self.target} "
                               f"(known: {', '.join(STAGES)})"))
        getattr(self, f"_{self.stage}")()

    def _end(self, response: Response) -> None:
        self.response = response
        self.kind = response.kind
        self.show_output(response)
        if not response.ok:
            self.fail(response)
        self.hold_to_golden(response)

    # ------------------------------------------------------------------ requests
    def _request(self, stage: type[IterationRequest]) -> IterationRequest:
        missing = missing_files(self.folder)
        if missing:
            self.skip(f"contract not met: {', '.join(f'{self.folder.name}/{name}' for name in missing)} missing")
        manager = run_state(self.config).device_manager(self.target)
        model = self.path.read_text()
        functions = SnippetSource(model).functions
        return stage(model, functions[0].name if functions else "", options=manager.options(),
                     schedule=(self.folder / "transform.mlir").read_text(),
                     pipeline=(self.folder / "pass_pipeline.txt").read_text())

    def call_limit(self) -> float:
        """A whole model compiled and benchmarked takes longer than a snippet: RUN_TIMEOUT
        unless --mlir-timeout (or ini mlir_timeout) says otherwise."""
        settings = run_state(self.config).settings
        return settings.timeout if settings.timeout_given else max(settings.timeout, RUN_TIMEOUT)

    def _call(self, request: IterationRequest) -> Response:
        return run_state(self.config).device_manager(self.target).call(request, self.timeout())

    @property
    def runs_on(self) -> str:  # the run's target
        return self.target

    def _prior_compile(self) -> Response:
        """The compile (schedule + pipeline, once per process, not from the compile cache) this
        stage builds on; the stage skips when it failed."""
        return self.compile_first(lambda: self._request(IterationCompile), cache=False)

    def compile_failure(self, prior: Response) -> str:  # the worker's words, whole
        return prior.message

    # ------------------------------------------------------------------ stages
    def _contract(self) -> None:
        problems = [f"{self.folder.name}/{name} is missing" for name in missing_files(self.folder)]
        hypothesis = self.folder / "hypothesis.txt"
        if hypothesis.is_file() and not hypothesis.read_text().strip():
            problems.append(f"{self.folder.name}/hypothesis.txt is empty")
        checked = Response(Kind.PASS)
        schedule = self.folder / "transform.mlir"
        if schedule.is_file():
            manager = run_state(self.config).device_manager(self.target)
            checked = manager.check_schedule(schedule.read_text(), manager.options(), self.timeout())
            if not checked.ok:
                problems.append(f"{self.folder.name}/transform.mlir: {checked.message}")
                _in_schedule(checked.diagnostics)
        kind = Kind.PASS if not problems else (
            checked.kind if checked.kind in (Kind.CRASH, Kind.TIMEOUT) else Kind.CONTRACT_ERROR)
        self._end(Response(kind, "contract: " + "; ".join(problems), checked.diagnostics, stderr=checked.stderr)
                     if problems else Response(Kind.PASS))

    def _files(self) -> IterationFiles:
        return IterationFiles(self.folder, self.path, self.target)

    def _compile(self) -> None:
        """Model + schedule (transform interpreter) + pass_pipeline.txt give the files of
        ``IterationFiles``; a failure also its reproducer."""
        response = run_state(self.config).compiled_first(self.compiled_subject, lambda: self._request(IterationCompile),
                                                         self.timeout(), cache=False)
        files = self._files()
        files.write(response)
        settings = run_state(self.config).settings
        script = files.reproducer(response, settings.output_root, self.config.rootpath, self.nodeid)
        if script is not None:
            self.reproducer = str(script.relative_to(settings.output_root))
            self.add_report_section("call", "reproducer", f"sh {script}")
        self._end(response)

    def _host_ops(self) -> None:
        self._end(gpustages.host_ops(self.path, self._prior_compile()))

    def _launch(self) -> None:
        self._end(gpustages.launch(self._prior_compile()))

    def _stage_request(self, stage: type[IterationRequest]) -> IterationRequest:
        """[correctness]'s or [benchmark]'s: the recorded golden data, and the digest of the
        module its [compile] made (the worker fails the stage when it would run another)."""
        request = self._request(stage)
        request.expected_digest = (self._prior_compile().iteration or IterationFacts()).compiled_digest
        if not request.function:
            self.fail(Response(Kind.COMPILE_ERROR, f"{MODEL} has no public function"))
        from pytest_mlir_snippets.golden.recorded import RecordedDataError, load_recorded

        try:
            request.recorded = load_recorded(self.path, request.function, 1)
            if request.recorded is not None and (self.run_dir / REFERENCE).is_file():
                request.recorded.basis = Golden.TORCH  # what import-torch recorded: PyTorch's outputs
        except RecordedDataError as error:  # as a snippet's execute item says it
            self._end(Response(Kind.EXECUTE_ERROR, f"recorded golden data: {error}"))
        return request

    def _correctness(self) -> None:
        """Against the run's recorded outputs (``import-torch``), else the model on the cpu target."""
        self._end(self._call(self._stage_request(IterationExecute)))

    def _benchmark(self) -> None:
        """Timed as ``benchstats`` says; when this compile was measured before on this host, a
        run slower than then keeps timing to see that speed again (a noisy neighbour)."""
        request = self._stage_request(IterationBenchmark)
        digest = history.code_digest(request_key(request))
        request.options.bench_previous_ms = history.reference_ms(self.run_dir, self.target, self.folder.name,
                                                                   digest)
        response = self._call(request)
        response.iteration = replace(response.iteration or IterationFacts(), digest=digest,
                                     reference_ms=request.options.bench_previous_ms,
                                     measured=time.strftime("%Y-%m-%d %H:%M:%S"))
        self._end(response)

    def _pytorch_compile(self) -> None:
        manager = run_state(self.config).device_manager(self.target)
        self._end(manager.pytorch_compile(str(self.folder / REFERENCE), manager.options(), self.timeout()))

    def _pytorch(self) -> None:
        manager = run_state(self.config).device_manager(self.target)
        self._end(manager.pytorch_benchmark(str(self.folder / REFERENCE), manager.options(), self.timeout()))

    # ------------------------------------------------------------------ records
    def source_text(self) -> tuple[str, str]:
        schedule = self.folder / "transform.mlir"
        return (schedule.read_text(errors="replace"), "transform.mlir") if schedule.is_file() else ("", "")

    def skeleton(self) -> ItemRecord:
        record = super().skeleton()
        record.target = self.target
        record.run = relative(self.config, self.run_dir)
        record.line = self.line
        record.reproducer = self.reproducer
        return record

    def describe(self, record: ItemRecord, response: Response) -> None:
        super().describe(record, response)
        record.diagnostics = [line for d in response.diagnostics for line in self._located(d)]
        if response.kind is not Kind.PASS:
            record.failure_stage = self.stage  # a compile it builds on: MlirItem._complete says so
        if self.stage in ("benchmark", "pytorch") and response.ok:
            record.benchmark, record.metrics = record.metrics, {}
        iteration_facts(record, response)

    def _located(self, d: Diagnostic, indent: str = "") -> list[str]:
        """``d`` at its file and line: the schedule, the final IR (a translation's at the
        first run), else the model."""
        source = (self.folder / "transform.mlir" if d.file == "transform.mlir" else
                  self._files().ir_file if d.file == compiled_ir(self.target) else self.path)
        lines = [f"{indent}{gpustages.at(source, d.line, d.column)}: {d.severity}: {d.message}"]
        for note in d.notes:
            lines += self._located(note, indent + "  ")
        return lines

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ItemFailure):
            response = excinfo.value.response
            lines = [*expectation_line(response.kind, self.expected),
                     f"{response.kind.value}: {self.folder} [{self.stage}]", response.message]
            lines += [line for d in response.diagnostics for line in self._located(d)]
            if response.stderr.strip():
                lines += [STDERR_MARKER, response.stderr.rstrip()]
            return MlirFailureRepr("\n".join(lines))
        return super().repr_failure(excinfo)


def _in_schedule(diagnostics: list[Diagnostic]) -> None:
    """Diagnostics of the schedule check (it parses transform.mlir alone) are in transform.mlir."""
    for d in diagnostics:
        d.file = d.file or "transform.mlir"
        _in_schedule(d.notes)
