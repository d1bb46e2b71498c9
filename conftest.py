"""Fixtures for the project's own tests (``tests/``)."""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path

import pytest

# The MLIR bindings the worker's code imports, loaded once here, upstream's JIT before any
# torch_mlir module (with torch_mlir's LLVM loaded first the JIT cannot resolve symbols:
# tests/test_splitter.py). Tests call that code in process, and pytester's in-process runs
# unload every module imported meanwhile; imported again, bindings abort (nanobind's
# "duplicate key") or refuse their attribute builders ("already registered"), and numpy
# cannot be loaded twice either.
BINDINGS = ["numpy", "mlir.execution_engine", "mlir.ir", "mlir.passmanager", "mlir.runtime",
            *(f"mlir.dialects.{d}" for d in ("arith", "func", "gpu", "linalg", "memref", "vector")),
            "torch_mlir.ir", "torch_mlir.passmanager", "torch_mlir._mlir_libs._stablehlo",
            *(f"torch_mlir.dialects.{d}" for d in ("arith", "func", "scf", "tensor", "torch"))]
for _name in BINDINGS:
    try:
        importlib.import_module(_name)
    except ImportError:  # torch_mlir without the frontends extra: the tests that need it skip
        pass

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent
CORPUS = Path(os.environ.get("MLIR_SNIPPETS_CORPUS", ROOT.parent / "shared" / "corpus"))
EXAMPLES = ROOT / "examples"


NO_CORPUS = (f"the corpus is not at {CORPUS}: `python scripts/get_corpus.py` fetches it there (or set "
             "MLIR_SNIPPETS_CORPUS to a copy)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without the corpus, the tests that need it (the ``corpus`` fixture) skip at collection,
    all with one reason that says how to get it; the others run."""
    if CORPUS.is_dir():
        return
    missing = pytest.mark.skip(reason=NO_CORPUS)
    for item in items:
        if "corpus" in getattr(item, "fixturenames", ()):
            item.add_marker(missing)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line, without ``-rs``, saying how many tests skipped for want of the corpus and
    how to get it (under xdist the controller has every worker's skip reports)."""
    missing = sum(isinstance(report.longrepr, tuple) and NO_CORPUS in str(report.longrepr[2])
                  for report in terminalreporter.stats.get("skipped", []))
    if missing:
        terminalreporter.write_line(f"{missing} test(s) skipped for want of the corpus: {NO_CORPUS}", yellow=True)


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The shared corpus of real snippet files (read-only: copy before running)."""
    if not CORPUS.is_dir():
        pytest.skip(NO_CORPUS)
    return CORPUS


@pytest.fixture
def copy_into(pytester: pytest.Pytester):
    """Copy files or folders into the pytester directory; returns the new path."""

    def copy(source: Path, name: str | None = None) -> Path:
        target = pytester.path / (name or source.name)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy(source, target)
        return target

    return copy


def item_properties(xml_path: Path) -> dict[str, dict[str, str]]:
    """junit properties per test case, keyed ``file::name[stage]``."""
    import xml.etree.ElementTree as ET

    cases: dict[str, dict[str, str]] = {}
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        props = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        outcome = "passed"
        for tag in ("failure", "error", "skipped"):
            if case.find(tag) is not None:
                outcome = tag
        props["outcome"] = outcome
        file = case.get("classname", "").replace(".", "/").removesuffix("/mlir") + ".mlir"
        cases[f"{Path(file).name}::{case.get('name')}"] = props
    return cases


@pytest.fixture
def run_items(pytester: pytest.Pytester):
    """Run pytest on the pytester folder; return the result and each item's junit properties."""

    def run(*args: str, subprocess: bool = False) -> tuple[pytest.RunResult, dict[str, dict[str, str]]]:
        xml = pytester.path / "junit.xml"
        if xml.exists():
            xml.unlink()
        runner = pytester.runpytest_subprocess if subprocess else pytester.runpytest
        result = runner(f"--junitxml={xml}", "-p", "no:cacheprovider", *args)
        return result, item_properties(xml) if xml.exists() else {}

    return run


def has_cuda_device() -> bool:
    """Whether the CUDA driver reports a device (the cuda target's GPU tests need one)."""
    from pytest_mlir_snippets.worker.targets.cuda import cuda_devices

    return cuda_devices()[0] > 0
