"""pytest hooks: thin wrappers around collection, items and state."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

import pytest

from . import options
from .collect import FileErrorItem, SnippetFile, SnippetItem, is_snippet_file, properties
from .state import STATE, RunState, run_state
from .summary import Summary


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hooks

    pluginmanager.add_hookspecs(hooks)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    state = RunState(options.Settings.from_config(config), config)
    config.stash[STATE] = state
    config.pluginmanager.register(Summary(state), "mlir-snippets-summary")


def pytest_unconfigure(config: pytest.Config) -> None:
    if STATE in config.stash:
        run_state(config).close()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> SnippetFile | None:
    if is_snippet_file(file_path, parent):
        return SnippetFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, None, None]:
    """Record kind, stage and metrics on the item, so every report (and junit) carries them."""
    if isinstance(item, SnippetItem | FileErrorItem) and call.when == "call":
        item.user_properties.extend(properties(item, skipped=call.excinfo is not None and
                                               call.excinfo.errisinstance(pytest.skip.Exception)))
    yield
