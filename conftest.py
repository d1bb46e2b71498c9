"""Fixtures for the project's own tests (``tests/``)."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
from fnmatch import fnmatch
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


# Where a user keeps the ttnn target's plugin (jax-tt-plugin's libtt.so, unpacked from a 400 MB wheel) and
# tt-metal keeps the kernels it compiles: under HOME, which pytester moves into each test's own folder, where
# every tt test would fetch and unpack the plugin and compile the same kernels again. The plugin's cache is
# the user's (``tt_pjrt.cache_dir``, read before any test moved HOME; ``mlir-snippets fetch-tt`` fills it,
# a fetch replaces it whole); tt-metal's is one per test process (its compiles are not written for two
# processes at once). A test about fetching sets its own.
@pytest.fixture(scope="session")
def _tt_caches(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    from pytest_mlir_snippets.worker.targets.tt_pjrt import cache_dir

    return {"MLIR_SNIPPETS_TT_CACHE": str(cache_dir()),
            "TT_METAL_CACHE": os.environ.get("TT_METAL_CACHE") or str(tmp_path_factory.mktemp("tt-metal"))}


@pytest.fixture(autouse=True)
def _shared_tt_caches(monkeypatch: pytest.MonkeyPatch, _tt_caches: dict[str, str]) -> None:
    for name, value in _tt_caches.items():
        monkeypatch.setenv(name, value)


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The shared corpus of real snippet files (read-only: copy before running)."""
    if not CORPUS.is_dir():
        pytest.skip(NO_CORPUS)
    return CORPUS


def _ignored(path: Path, patterns: list[str]) -> bool:
    """Whether one of .gitignore's ``patterns`` names ``path`` (a file under ROOT), read as git
    reads the patterns used here: one without a slash matches any component of the path, one
    with a slash the path from ROOT or a folder above the file."""
    parts = path.relative_to(ROOT).parts
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return any(fnmatch(candidate, pattern) for pattern in patterns
               for candidate in (prefixes if "/" in pattern else parts))


def input_files(folder: Path) -> list[Path]:
    """The input files of a folder of this repository, without what running it leaves behind
    (run reports, an optimization run's benchmark tables and vN/ artifacts, caches): the files
    git tracks or would track (``--exclude-standard``: not ignored), or without git every file
    .gitignore does not name. A folder outside this repository (the corpus) is all input."""
    if not folder.resolve().is_relative_to(ROOT):
        return sorted(path for path in folder.rglob("*") if path.is_file())
    if (ROOT / ".git").exists():
        try:
            listed = subprocess.run(["git", "-C", str(folder), "ls-files", "-z", "--cached", "--others",
                                     "--exclude-standard", "--", "."], capture_output=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            pass
        else:
            return sorted({folder / name for name in listed.decode().split("\0") if name and (folder / name).is_file()})
    gitignore = ROOT / ".gitignore"
    lines = gitignore.read_text().splitlines() if gitignore.is_file() else []
    patterns = [line.strip().strip("/") for line in lines if line.strip() and not line.startswith(("#", "!"))]
    return sorted(path for path in folder.rglob("*") if path.is_file() and not _ignored(path, patterns))


def copy_inputs(source: Path, target: Path) -> Path:
    """Copy the input files of the repository's folder ``source`` (``input_files``) to ``target``."""
    for path in input_files(source):
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, destination)
    return target


@pytest.fixture
def copy_into(pytester: pytest.Pytester):
    """Copy a repository file, or a folder's input files (``copy_inputs``), into the pytester
    directory; returns the new path."""

    def copy(source: Path, name: str | None = None) -> Path:
        target = pytester.path / (name or source.name)
        if source.is_dir():
            copy_inputs(source, target)
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
