"""Collection: snippet files become ``FILE::NAME[compile]`` and ``FILE::NAME[execute]``."""

from __future__ import annotations

import fnmatch
import gc
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_mlir_snippets.items.base import MlirItem, item_kwargs
from pytest_mlir_snippets.items.expectations import lit_lines
from pytest_mlir_snippets.items.failures import (
    ItemFailure,
    MlirFailureRepr,
    diagnostic_lines,
    first_error,
    format_failure,
)
from pytest_mlir_snippets.items.layout import in_optimization_run
from pytest_mlir_snippets.mlirtext.splitter import Function, SnippetSource, Split, SplitError
from pytest_mlir_snippets.paths import artifact_dir
from pytest_mlir_snippets.protocol import Kind, Options, Request, Response
from pytest_mlir_snippets.reporting.record import ItemRecord
from pytest_mlir_snippets.session import run_state

STAGES = ("compile", "execute")


def is_snippet_file(file_path: Path, parent: pytest.Collector) -> bool:
    if file_path.suffix != ".mlir":
        return False
    if parent.session.isinitpath(file_path):
        return True
    settings = run_state(parent.config).settings
    if file_path.name in settings.ignore_files or in_optimization_run(file_path):
        return False
    return any(fnmatch.fnmatch(file_path.name, pattern) for pattern in settings.snippet_files)


class SnippetFile(pytest.File):
    """One .mlir file; bad files give one failing ``<file>`` item, never a crash."""

    _beside: frozenset[str] | None = None

    def may_have_recorded(self, function: str) -> bool:
        """Whether recorded data for ``function`` may lie beside the file (one directory
        listing per file, not two stats per item)."""
        from pytest_mlir_snippets.golden.recorded import IREE_FLAGS, sidecar_name

        if self._beside is None:
            try:
                self._beside = frozenset(os.listdir(self.path.parent))
            except OSError:
                self._beside = frozenset()
        return sidecar_name(self.path, function) in self._beside or IREE_FLAGS in self._beside

    def collect(self) -> list[pytest.Item]:
        """All the file's items at once, with the cyclic garbage collector paused: a file
        of 10,000 functions makes ~20 objects per item, and the collector's passes over
        them cost a quarter of the collection."""
        enabled = gc.isenabled()
        gc.disable()
        try:
            return list(self._items())
        finally:
            if enabled:
                gc.enable()

    def _items(self) -> Iterator[pytest.Item]:
        problem, source = self._read()
        if source is None:
            yield FileErrorItem.from_parent(self, name="<file>", message=problem)
            return
        stages = ("compile",) if run_state(self.config).settings.skip_exec else STAGES
        for fn in source.functions:
            for stage in stages:
                yield SnippetItem.from_parent(self, source=source, function=fn, stage=stage,
                                              **item_kwargs(self, fn.uid, stage))

    def _read(self) -> tuple[str, SnippetSource | None]:
        data = self.path.read_bytes()
        if not data.strip():
            return "the file is empty", None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            line = data[: error.start].count(b"\n") + 1
            return f"line {line}: the file is not UTF-8 text ({error.reason} at byte {error.start})", None
        if "\x00" in text:
            return "the file is binary, not MLIR text (it contains NUL bytes)", None
        try:
            source = SnippetSource(text)
        except SplitError as error:
            return f"the file is not structured as MLIR: {error}", None
        if not source.functions:
            return "no public func.func definition found (private declarations are not test subjects)", None
        return "", source


class SnippetItem(MlirItem):
    _split: Split | None = None
    next_item: pytest.Item | None = None  # what this process runs next (pytest_runtest_protocol)
    prefetched: Request | None = None  # this item's compile, sent ahead by the item before
    cached: Response | None = None  # or its compile verdict, found in the cache then

    def __init__(self, *, source: SnippetSource, function: Function, stage: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.source = source
        self.function = function
        self.stage = stage
        self.subject = function.uid
        self._memo: dict[str, Any] = {}  # options and recorded data, read once, dropped after the run
        self.extra_keyword_matches.update((stage, function.uid))
        self._expectation()

    def _expectation(self) -> None:
        """What this item is expected to do: the expectations file, else lit lines."""
        state = run_state(self.config)
        if not self.function.comments and state.expectations is None:
            return  # the common case, cheaply: no lit lines, no expectations file
        target = state.settings.target
        xfail, unsupported = lit_lines(self.function.comments, target)
        if unsupported:
            self.kind = Kind.UNSUPPORTED
            self.add_marker(pytest.mark.skip(reason=f"UNSUPPORTED: {target} (a line above the function)"))
        listed = state.expectations.status_of(self.path, self.name) if state.expectations else None
        last = self.stage == (STAGES[0] if state.settings.skip_exec else STAGES[-1])
        self.expect(listed, any_failure=xfail and listed is None, last_stage=last)

    @property
    def split(self) -> Split:
        if self._split is None:
            self._split = self.source.split(self.function)
        return self._split

    @property
    def function_name(self) -> str:
        return self.function.name

    @property
    def function_line(self) -> int:
        return self.function.line

    def original_line(self, line: int) -> int | None:
        return self.split.original_line(line)

    @property
    def snippet_id(self) -> str:
        return f"{self.path}::{self.function.uid}"

    def reportinfo(self) -> tuple[Path, int, str]:
        # pytest -v turns dots before the "[" of the domain into "::" (Class.method); a
        # domain that does not end the node id keeps the node id as it is, pasteable
        domain = self.name if "." not in self.function.uid else f"{self.function.uid} [{self.stage}]"
        return self.path, self.function.line - 1, domain

    def run_stage(self) -> None:
        try:
            self._runtest()
        finally:
            self._memo.clear()

    def _runtest(self) -> None:
        state = run_state(self.config)
        fn = self.function
        if fn.duplicate_of is not None:  # MLIR would reject the whole file; we fail only this one
            self.response = Response(Kind.COMPILE_ERROR, f"redefinition of symbol named '{fn.name}' "
                                     f"(first defined at line {fn.duplicate_of})")
            if self.stage == "execute":
                self.skip("compile failed (compile-error)")
            self.fail(self.response)
        manager = state.device_manager()
        options = self._options()
        golden, unreadable = self._recorded()
        if self.stage == "execute":
            # Alone (--lf, or xdist put the compile item elsewhere): compile first, so
            # a compile failure is the compile's, whatever the order of items.
            if self.snippet_id not in state.compiled:
                state.compiled[self.snippet_id] = state.compile(self._compile_request(), self.timeout())
            prior = state.compiled[self.snippet_id]
            if not prior.ok:
                self.response = prior
                if prior.kind is Kind.UNSUPPORTED:
                    self.fail(prior)
                self.skip(f"compile failed ({prior.kind.value}): {first_error(prior)}")
            if unreadable is not None:
                self.fail(Response(Kind.EXECUTE_ERROR, f"recorded golden data: {unreadable}"))
            response = manager.call(Request("execute", self.split.text, fn.name, options, golden), self.timeout())
        else:
            response = self.cached or state.compile(self.prefetched or self._compile_request(), self.timeout())
        self.response = response
        if self.stage == "compile":
            state.compiled[self.snippet_id] = response
            self._send_next_ahead()
        self._show_output(response)
        self.kind = response.kind
        if not response.ok:
            self.fail(response)

    def _options(self) -> Options:
        """This item's request options (its artifact folder with --mlir-save-artifacts)."""
        if "options" not in self._memo:
            state = run_state(self.config)
            options = state.device_manager().options()
            if state.settings.save_artifacts:
                options.artifact_dir = str(artifact_dir(state.settings.output_root, self.path, self.function.uid,
                                                        state.settings.target, self.config.rootpath))
            self._memo["options"] = options
        return self._memo["options"]  # type: ignore[no-any-return]

    def _compile_request(self) -> Request:
        """This function's compile, with its recorded inputs (a compile may bake small
        integer inputs in)."""
        golden = self._recorded()[0]
        return Request("compile", self.split.text, self.function.name, self._options(),
                       {"inputs": golden["inputs"]} if golden else None)

    def _recorded(self) -> tuple[dict[str, Any] | None, Exception | None]:
        """(recorded golden data or None, why it cannot be read)."""
        if "recorded" not in self._memo:
            self._memo["recorded"] = self._read_recorded()
        return self._memo["recorded"]  # type: ignore[no-any-return]

    def _read_recorded(self) -> tuple[dict[str, Any] | None, Exception | None]:
        if isinstance(self.parent, SnippetFile) and not self.parent.may_have_recorded(self.function.name):
            return None, None
        from pytest_mlir_snippets.golden.recorded import RecordedDataError, load_recorded  # numpy: not at collection

        try:
            return load_recorded(self.path, self.function.name, len(self.source.functions)), None
        except RecordedDataError as error:
            return None, error

    def _send_next_ahead(self) -> None:
        """When the next item this process runs is a compile, send it now: the worker
        compiles while pytest reports this item."""
        nxt = self.next_item
        if not isinstance(nxt, SnippetItem) or nxt.stage != "compile" or nxt.function.duplicate_of is not None \
                or nxt.path != self.path or nxt.get_closest_marker("skip") or nxt.get_closest_marker("xfail"):
            return
        state = run_state(self.config)
        if nxt._recorded()[1] is not None:  # unreadable recorded data: the item says so itself
            return
        request = nxt._compile_request()
        cached = state.compile_cache.get(request) if state.compile_cache is not None else None
        if cached is not None:
            nxt.cached = cached  # read once: the item takes it from here
            return
        if state.device_manager().submit(request):
            nxt.prefetched = request

    def _show_output(self, response: Response) -> None:
        settings = run_state(self.config).settings
        if response.ir and settings.print_ir:
            self.add_report_section("call", "compiled IR", response.ir)
        if response.ir and settings.save_artifacts:
            folder = artifact_dir(settings.output_root, self.path, self.function.uid, settings.target,
                                  self.config.rootpath)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "snippet.mlir").write_text(self.split.text)
            (folder / "compiled.mlir").write_text(response.ir)
            if response.info.get("ptx"):
                (folder / "kernels.ptx").write_text(response.info["ptx"])

    def describe(self, record: ItemRecord, response: Response) -> None:
        super().describe(record, response)
        record.line = self.function.line
        if response.kind is not Kind.PASS:
            record.failure_stage = str(response.info.get("stage", self.stage))
            record.diagnostics = diagnostic_lines(response, self)
        record.inputs = list(response.info.get("inputs", []))
        record.outputs = [str(o) for o in response.info.get("outputs", [])]
        record.reference = str(response.info.get("reference", ""))
        record.baked = str(response.info.get("baked", ""))
        if "golden_report" in response.info:  # tt-mlir's, kept whole
            record.golden_report = json.dumps(response.info["golden_report"], sort_keys=True)
        if "cache" in response.info:
            record.info["cache"] = response.info["cache"]

    def source_text(self) -> tuple[str, str]:
        return self.split.text, "snippet"

    def skeleton(self) -> ItemRecord:
        record = super().skeleton()
        record.line = self.function.line
        return record

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ItemFailure):
            return MlirFailureRepr(format_failure(excinfo.value.response, self, self.expected))
        return super().repr_failure(excinfo)


class FileErrorItem(MlirItem):
    """Stands for a file that cannot be split into snippets."""

    def __init__(self, *, message: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.message = message
        self.stage = "file"
        self.subject = "<file>"
        expectations = run_state(self.config).expectations
        self.expect(expectations.status_of(self.path, self.name) if expectations else None)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, "<file>"

    def run_stage(self) -> None:
        self.response = Response(Kind.COMPILE_ERROR, self.message)
        self.fail(self.response)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        return MlirFailureRepr(f"{Kind.COMPILE_ERROR.value}: {self.path}: {self.message}")
