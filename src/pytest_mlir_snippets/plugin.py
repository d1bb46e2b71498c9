"""pytest hooks: thin wrappers around collection, items and state."""

from __future__ import annotations

import gc
from collections.abc import Generator
from pathlib import Path

import pytest

from pytest_mlir_snippets import settings as options
from pytest_mlir_snippets import termination
from pytest_mlir_snippets.items.expectations import Expectations, ExpectationsError, judge
from pytest_mlir_snippets.items.iteration import OptimizationRun, is_run_model
from pytest_mlir_snippets.items.snippet import FileErrorItem, SnippetFile, SnippetItem, is_snippet_file, properties
from pytest_mlir_snippets.reporting.benchmark import RunReports
from pytest_mlir_snippets.reporting.recorder import Recorder
from pytest_mlir_snippets.session import STATE, RunState, run_state


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_mlir_snippets import hooks

    pluginmanager.add_hookspecs(hooks)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    state = RunState(options.Settings.from_config(config), config)
    if state.settings.expectations is not None:
        try:
            state.expectations = Expectations.load(state.settings.expectations)
        except ExpectationsError as error:
            raise pytest.UsageError(str(error)) from None
    elif state.settings.update_expectations:
        raise pytest.UsageError("--mlir-update-expectations needs --mlir-expectations FILE")
    config.stash[STATE] = state
    termination.install(config)  # SIGTERM (a cancelled CI job) as Ctrl-C: reports written, workers killed
    config.pluginmanager.register(Recorder(state, config), "mlir-snippets-recorder")
    config.pluginmanager.register(RunReports(config), "mlir-snippets-run-reports")
    if config.pluginmanager.hasplugin("html"):
        from pytest_mlir_snippets.reporting.html import HtmlColumns

        config.pluginmanager.register(HtmlColumns(), "mlir-snippets-html")


def pytest_unconfigure(config: pytest.Config) -> None:
    try:
        if STATE in config.stash:
            run_state(config).close()
    finally:
        termination.restore(config)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.File | None:
    if is_run_model(file_path):
        return OptimizationRun.from_parent(parent, path=file_path)
    if is_snippet_file(file_path, parent):
        return SnippetFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Collected items live until the end: keep them out of the cyclic garbage
    collector's work (with 10,000 snippet items its passes cost ~10% of a warm run)."""
    if any(isinstance(item, SnippetItem) for item in session.items):
        gc.freeze()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    gc.unfreeze()  # the items may go now (several sessions in one process: pytester)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Remember what this process runs next (with xdist too): a compile can be sent ahead."""
    if isinstance(item, SnippetItem):
        item.next_item = nextitem


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[
        None, pytest.TestReport, pytest.TestReport]:
    """Record kind, stage and metrics on the item, so every report (and junit) carries them."""
    kind = ""
    if isinstance(item, SnippetItem | FileErrorItem) and call.when == "call":
        props = properties(item, skipped=call.excinfo is not None and
                           call.excinfo.errisinstance(pytest.skip.Exception))
        item.user_properties.extend(props)
        kind = str(props[0][1])
    report: pytest.TestReport = yield
    expected = getattr(item, "expected", None)
    if kind and expected:
        judge(report, kind, expected)
    if isinstance(item, SnippetItem) and call.when == "call" and item.config.pluginmanager.hasplugin("html"):
        from pytest_mlir_snippets.reporting.html import add_extras

        add_extras(report, item.split.text)
    return report
