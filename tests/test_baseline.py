"""The last full run of each input file (reporting/baseline.py): a file per input file, target
and mode; what earlier versions kept in one document is still read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_mlir_snippets.model.record import ItemRecord
from pytest_mlir_snippets.protocol import Kind, Outcome, Stage
from pytest_mlir_snippets.reporting.baseline import CACHE_KEY, LEGACY, merged
from pytest_mlir_snippets.reporting.runreport import RunInfo

FILE = "ops.mlir"
FUNCTIONS = {FILE: [("a", 1), ("b", 5)]}


class Cache:
    """What ``merged`` uses of pytest's cache."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def mkdir(self, name: str) -> Path:
        (self.root / name).mkdir(parents=True, exist_ok=True)
        return self.root / name

    def get(self, key: str, default: Any) -> Any:
        return default


def record(function: str, kind: Kind = Kind.PASS) -> ItemRecord:
    return ItemRecord(f"{FILE}::{function}[compile]", f"{function}[compile]", FILE, function, Stage.COMPILE,
                      kind=kind, outcome=Outcome.PASSED if kind is Kind.PASS else Outcome.FAILED)


def partial() -> RunInfo:
    return RunInfo("cpu", "compile only", not_run=(f"{FILE}::a[compile]",), file_of={f"{FILE}::a[compile]": FILE})


def test_a_partial_run_updates_the_full_run_kept_in_its_own_file(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    a, b = record("a"), record("b", Kind.COMPILE_ERROR)
    shown, full_of = merged(cache, [a, b], FUNCTIONS, RunInfo("cpu", "compile only"), "t0", {a.nodeid: a.to_json()})
    assert shown == [a, b] and full_of == {}
    folder = tmp_path / CACHE_KEY.replace("/", "-")
    files = list(folder.iterdir())
    assert len(files) == 1 and files[0].name != LEGACY
    fixed = record("b")
    shown, full_of = merged(cache, [fixed], FUNCTIONS, partial(), "t1")
    assert full_of == {FILE: "t0"}
    assert [(r.function, r.kind, r.info.updated) for r in shown] == [("a", Kind.PASS, None), ("b", Kind.PASS, "t1")]


def test_a_run_kept_by_an_earlier_version_in_one_document_is_still_updated(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    key = f"cpu | compile only | {FILE}"
    legacy = {key: {"started": "t0", "records": [record("a").to_json(), record("b", Kind.COMPILE_ERROR).to_json()]}}
    (cache.mkdir(CACHE_KEY.replace("/", "-")) / LEGACY).write_text(json.dumps(legacy))
    shown, full_of = merged(cache, [record("b")], FUNCTIONS, partial(), "t1")
    assert full_of == {FILE: "t0"}
    assert [(r.function, r.kind) for r in shown] == [("a", Kind.PASS), ("b", Kind.PASS)]
    shown, full_of = merged(cache, [record("a")], FUNCTIONS, RunInfo("cpu", "compile only", not_run=(
        f"{FILE}::b[compile]",), file_of={f"{FILE}::b[compile]": FILE}), "t2")
    assert [(r.function, r.kind, r.info.updated) for r in shown] == [("a", Kind.PASS, "t2"), ("b", Kind.PASS, "t1")]
