"""IREE's own test configuration, read from the ``CMakeLists.txt`` beside a snippet file.

IREE's ``tests/e2e`` folders say in CMake which backend runs which file with which
flags: ``iree_check_single_backend_test_suite`` (``SRCS``, ``TARGET_BACKEND``,
``DRIVER``, ``COMPILER_FLAGS``, ``RUNNER_ARGS``, ``LABELS``, ``TIMEOUT``) and
``iree_check_test_suite`` (``TARGET_BACKENDS`` and ``DRIVERS``, paired). On the iree
targets these are expectations, as an iree-test-suites config is: a file that no
suite of the target's backend (``llvm-cpu`` for iree-cpu, ``cuda`` for iree-cuda)
lists is skipped with that reason, and the chosen suite's ``COMPILER_FLAGS`` reach
iree-compile. A file in several suites of the backend runs once, with the first
suite not labelled ``hostonly`` (IREE's host-CPU variants). Other targets ignore it.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from pytest_mlir_snippets.registry import TARGETS

CMAKE = "CMakeLists.txt"
_SUITE = re.compile(r"^\s*(iree_check_single_backend_test_suite|iree_check_test_suite)\s*\(", re.M)
_TOKEN = re.compile(r'"((?:\\.|[^"\\])*)"|#[^\n]*|([^\s()"#]+)|(\))')
_KEYWORDS = frozenset({"NAME", "SRCS", "TARGET_BACKEND", "TARGET_BACKENDS", "DRIVER", "DRIVERS", "COMPILER_FLAGS",
                       "RUNNER_ARGS", "LABELS", "TIMEOUT", "DEPS", "INPUT_TYPE", "TARGET_CPU_FEATURES_VARIANTS"})


@dataclass(frozen=True)
class Suite:
    """One check test suite of a ``CMakeLists.txt``."""

    name: str
    backends: tuple[str, ...]
    srcs: tuple[str, ...] = ()
    drivers: tuple[str, ...] = ()
    compiler_flags: tuple[str, ...] = ()
    runner_args: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    timeout: str = ""
    values: dict[str, list[str]] = field(default_factory=dict, compare=False, repr=False)


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def parse(text: str) -> list[Suite]:
    """The check suites of a ``CMakeLists.txt``'s text, in order."""
    suites = []
    for m in _SUITE.finditer(text):
        values: dict[str, list[str]] = {}
        key = ""
        for token in _TOKEN.finditer(text, m.end()):
            quoted, bare, close = token.groups()
            if close:
                break
            if quoted is None and bare is None:
                continue  # a comment
            if bare is not None and bare in _KEYWORDS:
                key = bare
                values.setdefault(key, [])
            elif key:
                values[key].append(_unescape(quoted) if quoted is not None else bare or "")
        backends = values.get("TARGET_BACKEND", []) + values.get("TARGET_BACKENDS", [])
        suites.append(Suite((values.get("NAME") or [m.group(1)])[0], tuple(backends), tuple(values.get("SRCS", [])),
                            tuple(values.get("DRIVER", []) + values.get("DRIVERS", [])),
                            tuple(values.get("COMPILER_FLAGS", [])), tuple(values.get("RUNNER_ARGS", [])),
                            tuple(values.get("LABELS", [])), (values.get("TIMEOUT") or [""])[0], values))
    return suites


@lru_cache(maxsize=256)
def _suites(folder: str, mtime: float) -> tuple[Suite, ...]:
    try:
        return tuple(parse((Path(folder) / CMAKE).read_text(errors="replace")))
    except OSError:
        return ()


def suites_beside(file: Path) -> tuple[Suite, ...]:
    """The check suites of the ``CMakeLists.txt`` in ``file``'s folder (none without one)."""
    cmake = file.parent / CMAKE
    try:
        mtime = cmake.stat().st_mtime
    except OSError:
        return ()
    return _suites(str(file.parent), mtime)


def choose(file: Path, target: str) -> tuple[Suite | None, str | None]:
    """The suite ``file`` runs with on ``target``, or why it does not run: (suite, None),
    (None, reason), or (None, None) when IREE's CMake says nothing about it here."""
    backend = TARGETS[target].iree_backend if target in TARGETS else ""  # as the target declares it
    suites = suites_beside(file) if backend else ()
    if not suites:
        return None, None
    listing = [s for s in suites if backend in s.backends and file.name in s.srcs]
    if not listing:
        return None, (f"no {backend} check suite of {file.parent.name}/{CMAKE} lists {file.name} "
                      f"(IREE does not run it on {backend})")
    return next((s for s in listing if "hostonly" not in s.labels), listing[0]), None
