"""pytest hooks: thin wrappers around collection, items, records and state.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import atexit
import gc
import json
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_mlir_snippets import settings, termination
from pytest_mlir_snippets.api.device import DEVICE, MlirDevice, marked_target
from pytest_mlir_snippets.items.base import MlirItem
from pytest_mlir_snippets.items.snippet import SnippetItem
from pytest_mlir_snippets.items.snippetfile import SnippetFile, is_snippet_file
from pytest_mlir_snippets.model.layout import is_run_model
from pytest_mlir_snippets.model.record import wire_text
from pytest_mlir_snippets.paths import ARTIFACTS
from pytest_mlir_snippets.reporting.recorder import Recorder
from pytest_mlir_snippets.session import DEADLINE, STATE, RunState, check_pipeline, is_xdist_worker, run_state

WIRE = "mlir_record_json"  # a report's record as JSON text, between an xdist worker and the controller


def pytest_addoption(parser: pytest.Parser) -> None:
    settings.add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_mlir_snippets import hooks

    pluginmanager.add_hookspecs(hooks)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    state = RunState(settings.Settings.from_config(config), config)
    if state.settings.expectations is not None:
        from pytest_mlir_snippets.items.expectfile import ExpectationsError, load_expectations  # IREE's config too

        try:
            state.expectations = load_expectations(state.settings.expectations,
                                                   create=state.settings.update_expectations)
        except ExpectationsError as error:
            raise pytest.UsageError(str(error)) from None
        # an IREE config's flags go to the IREE targets' compiler and runtime
        state.settings.iree_compile_flags = state.expectations.compile_flags
        state.settings.iree_run_flags = state.expectations.run_flags
    elif state.settings.update_expectations:
        raise pytest.UsageError("--mlir-update-expectations needs --mlir-expectations FILE")
    config.stash[STATE] = state
    config.add_cleanup(gc.unfreeze)  # tryfirst: registered before unraisableexception's, so it runs after
    gc.freeze()  # what pytest and its plugins loaded lives as long: the collector's passes skip it
    # When the process exits, Python's last full collections would walk everything the run
    # made (docs/speed.md): frozen, it is freed by reference counts all the same, and
    # cycles go with the process (Python never promises their finalizers at exit).
    # Registered once, however many sessions run in the process (pytester's, in process).
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    config.addinivalue_line("markers", "mlir_target(name): the target of this test's mlir_device and mlir_target "
                            "fixtures (default: --mlir-target)")
    termination.install(config)  # SIGTERM (a cancelled CI job) as Ctrl-C: reports written, workers killed
    config.pluginmanager.register(Recorder(state, config), "mlir-snippets-recorder")
    if config.pluginmanager.hasplugin("html") and config.getoption("htmlpath", None):  # an HTML report is written
        from pytest_mlir_snippets.reporting.html import HtmlColumns

        config.pluginmanager.register(HtmlColumns(), "mlir-snippets-html")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(XdistNodes(), "mlir-snippets-xdist")


def pytest_unconfigure(config: pytest.Config) -> None:
    try:
        if STATE in config.stash:
            run_state(config).close()
    finally:
        termination.restore(config)


def pytest_sessionstart(session: pytest.Session) -> None:
    if not is_xdist_worker(session.config):  # the controller checks, once (xdist's workers were told)
        check_pipeline(run_state(session.config))


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The items' artifacts (snippets, compiled IR, reproducers) are outputs, not tests."""
    if collection_path.name != ARTIFACTS:
        return None
    return collection_path.parent == run_state(config).settings.output_root or None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.File | None:
    if is_run_model(file_path):
        from pytest_mlir_snippets.items.iteration import OptimizationRun

        return OptimizationRun.from_parent(parent, path=file_path)
    if is_snippet_file(file_path, parent):
        return SnippetFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Collected items live until the end: keep them out of the cyclic garbage
    collector's work (with 10,000 snippet items its passes cost ~10% of a warm run),
    pytest's own full collections at its end included (unraisableexception's, in
    pytest_unconfigure and a cleanup registered after ours); unfrozen at our cleanup,
    so that several sessions in one process (pytester) let their items go."""
    if any(isinstance(item, SnippetItem) for item in session.items):
        gc.freeze()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """A process where no test ran (a session of plugin items only, or pytest-xdist's
    controller: its workers run the items; conftest hooks aside) has no garbage whose
    finalizer pytest would report: what the run made is frozen too, and pytest's two
    full collections at its end walk none of it."""
    items = session.items
    if session.config.pluginmanager.has_plugin("dsession") or (
            items and all(isinstance(item, MlirItem) for item in items)):
        gc.freeze()


@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable(config: pytest.Config, report: pytest.TestReport | pytest.CollectReport) -> Generator[
        None, dict[str, Any] | None, dict[str, Any] | None]:
    """On an xdist worker, a report's record travels as one JSON text (``WIRE``)."""
    data = yield
    if data is not None and is_xdist_worker(config) and isinstance(data.get("mlir_record"), dict):
        text = wire_text(data["mlir_record"])
        if text is not None:
            del data["mlir_record"]
            data[WIRE] = text
    return data


@pytest.hookimpl(tryfirst=True)
def pytest_report_from_serializable(config: pytest.Config, data: dict[str, Any]) -> None:
    """The controller gives the report its record back as data (pytest builds the report)."""
    text = data.pop(WIRE, None)
    if isinstance(text, str):
        data["mlir_record"] = json.loads(text)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Remember what this process runs next (with xdist too): a compile can be sent ahead."""
    if isinstance(item, SnippetItem):
        item.next_item = nextitem


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[
        None, pytest.TestReport, pytest.TestReport]:
    """The item's record on its report, once pytest (xfail included) has decided the outcome."""
    report: pytest.TestReport = yield
    if DEVICE in item.stash:  # a test that used mlir_device
        from pytest_mlir_snippets.api.record import record_python_test

        record_python_test(item, call, report)
    if isinstance(item, MlirItem):
        item.record_report(report)
        if report.when == "call" and item.config.getoption("htmlpath", None):  # an HTML report is written
            from pytest_mlir_snippets.reporting.html import add_extras

            add_extras(report, *item.source_text())
    return report


@pytest.fixture
def mlir_target(request: pytest.FixtureRequest) -> str:
    """The target this test compiles for: ``@pytest.mark.mlir_target(NAME)``, else
    ``--mlir-target`` (ini ``mlir_target``, default cpu)."""
    return marked_target(request.node, run_state(request.config).settings.target)


@pytest.fixture
def mlir_device(request: pytest.FixtureRequest, mlir_target: str,
                tmp_path_factory: pytest.TempPathFactory) -> MlirDevice:
    """The target's device for this pytest process: ``compile(source)`` and
    ``run(compiled, *inputs)`` in the sandbox worker (``docs/python-api.md``)."""
    node = request.node
    device = MlirDevice(run_state(request.config), mlir_target, lambda: tmp_path_factory.mktemp("compiled"),
                        lambda: node.stash.get(DEADLINE, None))
    request.node.stash[DEVICE] = device
    return device


@pytest.hookimpl(optionalhook=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> bool | None:
    """pytest-timeout's time for one of our items (its CLI, ``PYTEST_TIMEOUT``, ini or
    marker, resolved by pytest-timeout) bounds the item's sandbox calls: a hang is a
    ``timeout`` outcome, and pytest-timeout sets no timer of its own for it. Any other
    test keeps pytest-timeout's timer; its ``mlir_device`` calls end a little before it."""
    if not isinstance(item, MlirItem):
        if settings.timeout:
            item.stash[DEADLINE] = time.monotonic() + float(settings.timeout)
        return None
    item.timeout_budget = float(settings.timeout) if settings.timeout else None
    return True


@pytest.hookimpl(optionalhook=True)
def pytest_timeout_cancel_timer(item: pytest.Item) -> bool | None:
    return True if isinstance(item, MlirItem) else None


class XdistNodes:
    """Hooks that exist only with pytest-xdist (registered when it is active)."""

    def pytest_configure_node(self, node: Any) -> None:
        """Each xdist worker gets its device from ``--mlir-devices`` (gwN: the Nth, cyclically)."""
        devices = run_state(node.config).settings.devices
        node.workerinput[settings.DEVICE_KEY] = settings.device_for_worker(devices, str(node.gateway.id))

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """``--dist load`` (what ``-n`` means alone) keeps an optimization run's items on one
        worker (``scheduling.py``); another ``--dist`` is xdist's own."""
        if config.getvalue("dist") != "load":
            return None
        from pytest_mlir_snippets.scheduling import RunScheduling

        return RunScheduling(config, log)
