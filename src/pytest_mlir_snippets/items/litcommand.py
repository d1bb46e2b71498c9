"""Upstream MLIR's integration tests as items: one ``FILE::ENTRY[compile]`` /
``FILE::ENTRY[execute]`` pair per RUN command the plugin runs (``ENTRY-runN`` where
the file has several), judged by FileCheck on the file's CHECK lines.

File-level ``REQUIRES``/``UNSUPPORTED`` skip the file's items and ``XFAIL`` makes them
strict xfails (lit's boolean expressions over this machine's features); a lit line
above the entry function (SPEC's expectations) takes precedence for it, and an
expectations file over both.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_mlir_snippets.items.base import MlirItem
from pytest_mlir_snippets.items.expectations import lit_lines
from pytest_mlir_snippets.items.failures import (
    ItemFailure,
    MlirFailureRepr,
    diagnostic_lines,
    format_failure,
)
from pytest_mlir_snippets.mlirtext.litscript import LitCommand, LitScript, directive_verdict
from pytest_mlir_snippets.model.record import ItemRecord
from pytest_mlir_snippets.protocol import Kind, LitCompile, LitExecute, LitRequest, Response, Stage, SubjectKind
from pytest_mlir_snippets.registry import NAMES
from pytest_mlir_snippets.session import run_state

# RUN lines say how a file runs, whatever --mlir-target: in a cpu worker (upstream's bindings
# and tools; an IREE worker cannot load them)
RUNS_ON = "cpu"
TARGETS = frozenset({*NAMES, "*"})  # what a per-function // XFAIL: line may name


def _names_targets(comment: str) -> bool:
    """Whether ``comment`` is SPEC's per-function ``// XFAIL: cpu, cuda`` line (plugin
    targets), rather than a file-level lit directive that happens to sit above it."""
    keyword, _, value = comment.strip().lstrip("/").strip().partition(":")
    if keyword.strip() not in ("XFAIL", "UNSUPPORTED"):
        return False
    return all(t.strip() in TARGETS for t in value.split(",") if t.strip())


class LitCommandItem(MlirItem):
    """One RUN command at one stage."""

    subject_kind = SubjectKind.LIT

    def __init__(self, *, command: LitCommand, script: LitScript, text: str, entry_line: int,
                 entry_comments: list[str], subject: str, stage: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.command = command
        self.text = text
        self.stage = stage
        self.subject = subject
        self.entry_line = entry_line  # the entry function's line, else the RUN line's
        self.extra_keyword_matches.update((stage, subject, command.entry))
        self._expectation(script, entry_comments)

    def _expectation(self, script: LitScript, comments: list[str]) -> None:
        state = run_state(self.config)
        target = RUNS_ON  # where the item runs, whatever --mlir-target
        comments = [c for c in comments if _names_targets(c)]  # not a file-level lit expression
        own_xfail, own_unsupported = lit_lines(comments, target)
        skipped, file_xfail = directive_verdict(script)
        has_own = bool(comments)
        if own_unsupported:
            self.kind = Kind.UNSUPPORTED
            self.add_marker(pytest.mark.skip(reason=f"UNSUPPORTED: {target} (a line above the function)"))
        elif skipped and not has_own:
            self.add_marker(pytest.mark.skip(reason=skipped))
        xfail = own_xfail if has_own else file_xfail
        expectations = state.expectations
        listed = expectations.status_of(self.path, self.name, Stage(self.stage)) if expectations else None
        last = self.stage == ("compile" if state.settings.skip_exec else "execute")
        self.expect(listed, any_failure=xfail and listed is None, last_stage=last,
                    reason=expectations.reason(self.stage) if expectations else "expected to fail (XFAIL)")

    # what failure formatting needs (failures.Located)
    @property
    def function_name(self) -> str:
        return self.command.entry

    @property
    def function_line(self) -> int:
        return self.entry_line

    def original_line(self, line: int) -> int | None:
        return line  # the file is parsed whole, under its own name

    @property
    def runs_on(self) -> str:
        return RUNS_ON

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.entry_line - 1, self.name

    def request(self, stage: type[LitRequest]) -> LitRequest:
        options = run_state(self.config).device_manager(RUNS_ON).options()
        return stage(self.text, self.command.entry, command=self.command, options=options)

    def run_stage(self) -> None:
        state = run_state(self.config)
        if self.stage == "execute":
            self.compile_first(lambda: self.request(LitCompile))
            response = state.device_manager(RUNS_ON).call(self.request(LitExecute), self.timeout())
        else:
            response = state.compile(self.compiled_subject, lambda: self.request(LitCompile), self.timeout())
        self.response = response
        self.show_output(response)
        if response.ir and run_state(self.config).settings.print_ir:
            self.add_report_section("call", "compiled IR", response.ir)
        legacy, stdout = response.facts.legacy if response.facts else [], self._stdout(response)
        if legacy:
            self.add_report_section("call", "replaced or added by the plugin", "\n".join(legacy))
        if response.ok and stdout:
            self.add_report_section("call", "stdout of the entry (what FileCheck saw)", stdout)
        self.kind = response.kind
        if not response.ok:
            self.fail(response)
        self.hold_to_golden(response)

    @staticmethod
    def _stdout(response: Response) -> str:
        return response.verdict.stdout if response.verdict else ""

    def describe(self, record: ItemRecord, response: Response) -> None:
        super().describe(record, response)
        record.line = self.entry_line
        record.stdout = self._stdout(response)
        record.reference = response.reference
        record.info.command = self.command.text
        if response.facts is not None and response.facts.legacy:  # what of another LLVM version was replaced
            record.info.legacy = "; ".join(response.facts.legacy)  # (worker/lowering/legacy.py)
        if response.kind is not Kind.PASS:
            record.failure_stage = response.stage or self.stage
            record.diagnostics = diagnostic_lines(response, self)

    def source_text(self) -> tuple[str, str]:
        return self.text, "file"

    def skeleton(self) -> ItemRecord:
        record = super().skeleton()
        record.line = self.entry_line
        record.target = RUNS_ON
        return record

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ItemFailure):
            return MlirFailureRepr(format_failure(excinfo.value.response, self, self.expected)
                                   + f"\nRUN: {self.command.text}")
        return super().repr_failure(excinfo)


def lit_items(parent: pytest.File, text: str) -> list[pytest.Item] | None:
    """The items of a file whose RUN commands the plugin runs, else None (the file is a
    plain snippet file: today's behaviour, its functions each an item)."""
    import re

    from pytest_mlir_snippets.items.base import item_kwargs
    from pytest_mlir_snippets.mlirtext.litscript import item_names, read_script
    from pytest_mlir_snippets.mlirtext.splitter import SnippetSource, SplitError

    if "RUN:" not in text or not any(word in text for word in ("runner", "%lli", "%{")):
        return None  # no runner named, nor a substitution that may name one: lit's parsing spared
    script = read_script(parent.path)  # LitScriptError: the caller's <file> item says why
    if script is None or not script.commands:
        return None
    try:
        functions = {fn.name: fn for fn in SnippetSource(text).functions}
    except SplitError:
        functions = {}
    stages = ("compile",) if run_state(parent.config).settings.skip_exec else ("compile", "execute")
    items: list[pytest.Item] = []
    for command, name in zip(script.commands, item_names(script), strict=True):
        fn = functions.get(command.entry)
        line = fn.line if fn else command.line
        if fn is None:  # an llvm.func entry
            found = re.search(rf'^\s*(?:llvm\.func|func\.func)\s+(?:\w+\s+)*@"?{re.escape(command.entry)}"?\s*\(',
                              text, re.M)
            line = text[: found.start()].count("\n") + 1 if found else command.line
        for stage in stages:
            items.append(LitCommandItem.from_parent(parent, command=command, script=script, text=text,
                                                    entry_line=line, entry_comments=fn.comments if fn else [],
                                                    subject=name, stage=stage, **item_kwargs(parent, name, stage)))
    return items
