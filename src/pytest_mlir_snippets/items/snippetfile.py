"""Collection: snippet files become ``FILE::NAME[compile]`` and ``FILE::NAME[execute]``;
a file that cannot be split becomes one failing ``FILE::<file>`` item.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import fnmatch
import gc
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_mlir_snippets.items.base import MlirItem, item_kwargs
from pytest_mlir_snippets.items.failures import MlirFailureRepr
from pytest_mlir_snippets.items.snippet import STAGES, SnippetItem
from pytest_mlir_snippets.mlirtext.splitter import SnippetSource, SplitError
from pytest_mlir_snippets.model.layout import in_optimization_run
from pytest_mlir_snippets.paths import IREE_FLAGS, sidecar_name
from pytest_mlir_snippets.protocol import Kind, Response, Stage
from pytest_mlir_snippets.session import run_state


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
        listing per file, not two stats per item); no numpy import for files without any."""
        if self._beside is None:
            try:  # the sidecars of this file's functions, and IREE's flags file
                prefix = self.path.stem + "."
                self._beside = frozenset(name for name in os.listdir(self.path.parent)
                                         if (name.startswith(prefix) and name.endswith(".npz")) or name == IREE_FLAGS)
            except OSError:
                self._beside = frozenset()
        return bool(self._beside) and (IREE_FLAGS in self._beside or sidecar_name(self.path, function) in self._beside)

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
        lit = self._lit_items()  # upstream MLIR's integration tests: RUN commands as items
        if lit is not None:
            yield from lit
            return
        problem, source = self._read()
        if source is None:
            yield FileErrorItem.from_parent(self, name="<file>", message=problem)
            return
        stages = ("compile",) if run_state(self.config).settings.skip_exec else STAGES
        for fn in source.functions:
            for stage in stages:
                yield SnippetItem.from_parent(self, source=source, function=fn, stage=stage,
                                              **item_kwargs(self, fn.uid, stage))

    def _lit_items(self) -> list[pytest.Item] | None:
        from pytest_mlir_snippets.items.litcommand import lit_items
        from pytest_mlir_snippets.mlirtext.litscript import LitScriptError

        try:
            text = self.path.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            return None  # _read says why
        try:
            return lit_items(self, text)
        except LitScriptError as error:  # lit rejects the RUN lines: an error where they meant to run MLIR
            if not any(runner in text for runner in ("mlir-runner", "mlir-cpu-runner", "%lli")):
                return None
            return [FileErrorItem.from_parent(self, name="<file>", message=f"lit: {error}")]

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


class FileErrorItem(MlirItem):
    """Stands for a file that cannot be split into snippets."""

    def __init__(self, *, message: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.message = message
        self.stage = "file"
        self.subject = "<file>"
        expectations = run_state(self.config).expectations
        self.expect(expectations.status_of(self.path, self.name, Stage(self.stage)) if expectations else None)

    def reportinfo(self) -> tuple[Path, int, str]:
        """The failure's header names the file and says what went wrong with it (the item's
        name, ``<file>``, would say neither)."""
        return self.path, 0, f"{self.path.name}: file error (not split into snippets)"

    def run_stage(self) -> None:
        self.response = Response(Kind.COMPILE_ERROR, self.message)
        self.fail(self.response)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        return MlirFailureRepr(f"{Kind.COMPILE_ERROR.value}: {self.path}: {self.message}")
