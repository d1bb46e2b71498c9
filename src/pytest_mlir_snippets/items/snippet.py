"""A snippet item: one function of a snippet file at one stage, ``FILE::NAME[compile]`` or ``[execute]``.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_mlir_snippets.items import ireecmake
from pytest_mlir_snippets.items.base import MlirItem
from pytest_mlir_snippets.items.expectations import lit_lines
from pytest_mlir_snippets.items.facts import snippet_facts
from pytest_mlir_snippets.items.failures import (
    ItemFailure,
    MlirFailureRepr,
    diagnostic_lines,
    format_failure,
)
from pytest_mlir_snippets.mlirtext.directives import DirectiveError, directive
from pytest_mlir_snippets.mlirtext.splitter import Function, SnippetSource, Split
from pytest_mlir_snippets.model.record import ItemRecord
from pytest_mlir_snippets.paths import artifact_dir, file_artifacts, write_files
from pytest_mlir_snippets.protocol import Compile, Driver, Execute, Kind, Options, Recorded, Response, Stage
from pytest_mlir_snippets.registry import TARGETS
from pytest_mlir_snippets.session import run_state
from pytest_mlir_snippets.triage import reproducer

STAGES = ("compile", "execute")


class SnippetItem(MlirItem):
    _split: Split | None = None
    next_item: pytest.Item | None = None  # what this process runs next (pytest_runtest_protocol)

    def __init__(self, *, source: SnippetSource, function: Function, stage: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.source = source
        # not ``self.function``: pytest's -k matches the names in an item's ``function.__dict__``
        self.func = function
        self.stage = stage
        self.subject = function.uid
        self._memo: dict[str, Any] = {}  # options and recorded data, read once, dropped after the run
        self.reproducer = ""  # a failed compile's or execute's reproduce.sh, relative to the output root
        self.extra_keyword_matches.update((stage, function.uid))
        self._expectation()

    def _expectation(self) -> None:
        """What this item is expected to do: the expectations file, else lit lines."""
        state = run_state(self.config)
        _, not_run = ireecmake.choose(self.path, state.settings.target)  # IREE's CMakeLists.txt, iree targets
        if not_run:
            self.add_marker(pytest.mark.skip(reason=not_run))
        if not self.func.comments and state.expectations is None:
            return  # the common case, cheaply: no lit lines, no expectations file
        target = state.settings.target
        xfail, unsupported = lit_lines(self.func.comments, target)
        if unsupported:
            self.kind = Kind.UNSUPPORTED
            self.add_marker(pytest.mark.skip(reason=f"UNSUPPORTED: {target} (a line above the function)"))
        expectations = state.expectations
        listed = expectations.status_of(self.path, self.name, Stage(self.stage)) if expectations else None
        skipped = expectations.skip_reason(self.path, self.name, Stage(self.stage)) if expectations else None
        if skipped:  # an IREE config's skip_compile_tests / skip_run_tests
            self.add_marker(pytest.mark.skip(reason=skipped))
        last = self.stage == (STAGES[0] if state.settings.skip_exec else STAGES[-1])
        self.expect(listed, any_failure=xfail and listed is None, last_stage=last,
                    reason=expectations.reason(self.stage) if expectations else "expected to fail")

    @property
    def split(self) -> Split:
        if self._split is None:
            self._split = self.source.split(self.func)
        return self._split

    @property
    def function_name(self) -> str:
        return self.func.name

    @property
    def function_line(self) -> int:
        return self.func.line

    def original_line(self, line: int) -> int | None:
        return self.split.original_line(line)

    def reportinfo(self) -> tuple[Path, int, str]:
        # pytest -v turns dots before the "[" of the domain into "::" (Class.method); a
        # domain that does not end the node id keeps the node id as it is, pasteable
        domain = self.name if "." not in self.func.uid else f"{self.func.uid} [{self.stage}]"
        return self.path, self.func.line - 1, domain

    def run_stage(self) -> None:
        try:
            self._runtest()
        finally:
            self._memo.clear()

    def _runtest(self) -> None:
        state = run_state(self.config)
        fn = self.func
        if fn.duplicate_of is not None:  # MLIR would reject the whole file; we fail only this one
            self.response = Response(Kind.COMPILE_ERROR, f"redefinition of symbol named '{fn.name}' "
                                     f"(first defined at line {fn.duplicate_of})")
            if self.stage == "execute":
                self.compile_failed = True
                self.skip("compile failed (compile-error)")
            self.fail(self.response)
        manager = state.device_manager()
        options = self._options()
        golden, unreadable = self._recorded()
        if self.stage == "execute":
            self.compile_first(self._compile_request, self._group)
            if unreadable is not None:  # the record says why, too
                self.response = Response(Kind.EXECUTE_ERROR, f"recorded golden data: {unreadable}")
                self.fail(self.response)
            options = self._with_directive(options)
            request = Execute(self.split.text, fn.name, golden, options=options)
            response = manager.call(request, self.timeout())
            if response.kind is Kind.GOLDEN_MISMATCH and state.settings.bisect:
                from pytest_mlir_snippets.triage import bisection  # the sandbox's client: when asked for

                bisection.bisect(self, manager, request, response)
        else:
            response = state.compile(self.compiled_subject, self._compile_request, self.timeout(), group=self._group)
        self.response = response
        if self.stage == "compile":
            self._send_next_ahead()
        elif TARGETS[state.settings.target].reproducer:  # a failure's reproduce.sh (triage/execrepro.py)
            self._execute_reproducer(response, Driver(self.split.text, fn.name, golden, options=options))
        self._show_output(response)
        self.kind = response.kind
        if not response.ok:
            self.fail(response)
        self.hold_to_golden(response)

    @property
    def _group(self) -> str:
        """The input file, for the compile cache's pack."""
        assert self.parent is not None
        return self.parent.nodeid

    def _options(self) -> Options:
        """This item's request options (its artifact folder with --mlir-save-artifacts)."""
        if "options" not in self._memo:
            state = run_state(self.config)
            options = state.device_manager().base_options  # shared: what differs is replaced
            suite = ireecmake.choose(self.path, state.settings.target)[0]
            if suite is not None:  # IREE's own flags for this file (items/ireecmake.py)
                options = dataclasses.replace(options, iree_compile_flags=[*options.iree_compile_flags,
                                                                           *suite.compiler_flags])
            if state.settings.save_artifacts:
                options = dataclasses.replace(options, artifact_dir=str(self._artifacts()))
            self._memo["options"] = options
        return self._memo["options"]  # type: ignore[no-any-return]

    def _artifacts(self) -> Path:
        """This item's folder of artifacts (``paths.artifact_dir``)."""
        settings = run_state(self.config).settings
        return artifact_dir(settings.output_root, self.path, self.func.uid, settings.target, self.config.rootpath)

    def _with_directive(self, options: Options) -> Options:
        """``options`` with the tolerance, input range and outputs a ``// mlir-snippets:`` line above the
        function sets."""
        try:
            found = directive(self.func.comments)
        except DirectiveError as error:
            self.response = Response(Kind.EXECUTE_ERROR, f"the line above @{self.func.name} cannot be read: {error}")
            self.fail(self.response)
        if found.inputs is not None:
            options = dataclasses.replace(options, input_range=found.inputs)
        if found.outputs is not None:
            options = dataclasses.replace(options, outputs=found.outputs)
        if found.empty:
            return options
        return dataclasses.replace(options, atol=found.atol if found.atol is not None else options.atol,
                                   rtol=found.rtol if found.rtol is not None else options.rtol, ulp=found.ulp,
                                   tolerance_source=f"{found.text} (above line {self.func.line})")

    def _compile_request(self) -> Compile:
        """This function's compile, with its recorded inputs (a compile may bake small
        integer inputs in)."""
        golden = self._recorded()[0]
        return Compile(self.split.text, self.func.name, Recorded(golden.inputs) if golden else None,
                       options=self._options())

    def _recorded(self) -> tuple[Recorded | None, Exception | None]:
        """(recorded golden data or None, why it cannot be read)."""
        if "recorded" not in self._memo:
            self._memo["recorded"] = self._read_recorded()
        return self._memo["recorded"]  # type: ignore[no-any-return]

    def _read_recorded(self) -> tuple[Recorded | None, Exception | None]:
        may_have = getattr(self.parent, "may_have_recorded", None)  # the SnippetFile's directory listing
        if may_have is not None and not may_have(self.func.name):
            return None, None
        from pytest_mlir_snippets.golden.recorded import RecordedDataError, load_recorded  # numpy: not at collection

        try:
            return load_recorded(self.path, self.func.name, len(self.source.functions)), None
        except RecordedDataError as error:
            return None, error

    def _send_next_ahead(self) -> None:
        """When the next item this process runs is a compile, send it now: the worker
        compiles while pytest reports this item."""
        nxt = self.next_item
        if not isinstance(nxt, SnippetItem) or nxt.stage != "compile" or nxt.func.duplicate_of is not None \
                or nxt.path != self.path or any(m.name in ("skip", "xfail") for m in nxt.iter_markers()):
            return
        if nxt._recorded()[1] is not None:  # unreadable recorded data: the item says so itself
            return
        run_state(self.config).prefetch(nxt.compiled_subject, nxt._compile_request(), nxt._group)

    def _execute_reproducer(self, response: Response, request: Driver) -> None:
        from pytest_mlir_snippets.triage import execrepro  # an execute's: a compile-only run needs none

        settings, manager = run_state(self.config).settings, run_state(self.config).device_manager()
        folder = self._artifacts()
        script, why = execrepro.update(folder, response, self.func.name, self.nodeid, lambda compare: manager.call(
            dataclasses.replace(request, compare=compare), self.timeout()), self.call_limit())
        if script is not None:
            self.reproducer = str(script.relative_to(settings.output_root))
        if script is not None or why:
            self.add_report_section("call", "reproducer", f"sh {script}" if script else f"none: {why}")
        if script is not None:
            self._native_stack(response, script)

    def _native_stack(self, response: Response, script: Path) -> None:
        """A crash's native stack, from its reproducer's run: the tool's frames, where the
        worker's own report has only the plugin's Python ones."""
        if response.kind is not Kind.CRASH:
            return
        stack = reproducer.native_stack(script, min(self.timeout(), 30.0), run_state(self.config).settings.memory_limit)
        if stack:
            self.add_report_section("call", "native stack (reproduce.sh)", stack)

    def _show_output(self, response: Response) -> None:
        settings = run_state(self.config).settings
        self.show_output(response)
        if response.ir and settings.print_ir:
            self.add_report_section("call", "compiled IR", response.ir)
        if response.ir and settings.save_artifacts:
            folder = self._artifacts()
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "snippet.mlir").write_text(self.split.text)
            (folder / "compiled.mlir").write_text(response.ir)
            if response.facts is not None and response.facts.ptx:
                (folder / "kernels.ptx").write_text(response.facts.ptx)
        if self.stage == "compile" and response.kind in (Kind.COMPILE_ERROR, Kind.CRASH):
            folder = self._artifacts()  # a failure's reproducer, kept whatever the options
            script = reproducer.write(folder, response, self.nodeid)
            if script is not None:
                (folder / "snippet.mlir").write_text(self.split.text)
                self.reproducer = str(script.relative_to(settings.output_root))
                self.add_report_section("call", "reproducer", f"sh {script}")
                self._native_stack(response, script)
        elif self.stage == "compile" and os.path.isdir(file_artifacts(settings.output_root, self.path,
                                                                      self.config.rootpath)):
            reproducer.remove(self._artifacts())  # gone once it passes (one stat for a file without artifacts)
        if settings.save_artifacts and response.files:
            write_files(self._artifacts(), response.files, self.split.text)

    def describe(self, record: ItemRecord, response: Response) -> None:
        super().describe(record, response)
        record.line = self.func.line
        if response.kind is not Kind.PASS:
            record.failure_stage = response.stage or self.stage
            record.diagnostics = diagnostic_lines(response, self)
        record.reproducer = self.reproducer
        snippet_facts(record, response, self.split.original_line)

    def source_text(self) -> tuple[str, str]:
        return self.split.text, "snippet"

    def skeleton(self) -> ItemRecord:
        record = super().skeleton()
        record.line = self.func.line
        return record

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ItemFailure):
            return MlirFailureRepr(format_failure(excinfo.value.response, self, self.expected))
        return super().repr_failure(excinfo)

