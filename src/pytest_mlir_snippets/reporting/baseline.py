"""Partial runs update the last full run's report instead of replacing it.

A run that leaves some of a snippet file's items out (``-k``, ``--lf``, a CI shard, ``-x``)
would otherwise write that file's ``<stem>-run-report.txt`` from its own items alone.
The last full run of each file is kept (its records, in pytest's cache, per target and
mode), a partial run's records replace theirs there, each marked with the start time of
the run that made it (``info.updated``), and the report shows the whole file. A full
run starts afresh.
Without pytest's cache (``-p no:cacheprovider``) a partial run's report is its own, as
before. ``--mlir-json`` always holds this run's records only.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_mlir_snippets.model.record import ItemRecord
from pytest_mlir_snippets.paths import write_atomic
from pytest_mlir_snippets.reporting.runreport import RunInfo

CACHE_KEY = "mlir-snippets/last-full-run"  # a folder of pytest's cache (``mlir-snippets-last-full-run``)
LEGACY = "last-full-run.json"  # every file's run in one document, in that folder: what earlier versions wrote


class _Runs:
    """The stored runs: one file per input file, target and mode (``<digest of the key>.json``,
    holding ``key``, ``started`` and ``records``), so that a full run writes its files' runs
    without reading or rewriting the others' (one document of them all, read and written by
    every run, was ~50 ms of CPU of a 2,000-item warm rerun). A key without its own file is
    looked up in what earlier versions wrote (``LEGACY``, else ``cache.set``), read when needed."""

    def __init__(self, cache: Any) -> None:
        self.cache = cache
        self.folder = Path(cache.mkdir(CACHE_KEY.replace("/", "-")))
        self._legacy: dict[str, Any] | None = None

    def path(self, key: str) -> Path:
        return self.folder / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"

    def get(self, key: str) -> Any:
        """The stored run of ``key`` as read (checked by ``_records``), or None."""
        try:
            entry = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return self.legacy().get(key)
        return entry if isinstance(entry, dict) and entry.get("key") == key else None

    def put(self, key: str, started: Any, records: list[dict[str, Any]]) -> None:
        # compact, by json's C encoder: ``cache.set`` indents, through the pure-Python encoder
        # (0.7 ms a record: 1.4 s of a 2,000-function warm run)
        entry = {"key": key, "started": started, "records": records}
        write_atomic(self.path(key), json.dumps(entry, separators=(",", ":")))

    def legacy(self) -> dict[str, Any]:
        if self._legacy is None:
            try:
                stored = json.loads((self.folder / LEGACY).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                stored = self.cache.get(CACHE_KEY, {})  # where a version before kept them (``cache.set``)
            self._legacy = stored if isinstance(stored, dict) else {}
        return self._legacy


def merged(cache: Any, records: list[ItemRecord], functions: dict[str, list[tuple[str, int]]], run: RunInfo,
           started: str, published: Mapping[str, dict[str, Any]] | None = None) -> tuple[
               list[ItemRecord], dict[str, str]]:
    """The records the reports show, and for each input file shown as its last full run
    updated, when that full run started. ``published``: by node id, the data (``to_json``)
    of records unchanged since it was made, kept as it is."""
    if cache is None:
        return records, {}
    runs = _Runs(cache)
    by_file: dict[str, list[ItemRecord]] = {}
    for record in records:
        by_file.setdefault(record.file, []).append(record)
    shown = [r for r in records if not r.is_snippet]  # optimization runs keep their own history
    full_of: dict[str, str] = {}
    known = published or {}
    for file, found in by_file.items():
        found = [r for r in found if r.is_snippet]
        key = f"{run.target} | {run.mode} | {file}"
        if not run.not_run_in(file) and not run.interrupted:  # a full run of the file: the new baseline
            runs.put(key, started, [known.get(r.nodeid) or r.to_json() for r in found])
            shown += found
            continue
        entry = runs.get(key)
        base = _records(entry, {uid for uid, _ in functions.get(file, [])})
        if base is None:
            shown += found
            continue
        base.update({r.nodeid: replace(r, info=replace(r.info, updated=started)) for r in found})
        runs.put(key, entry["started"], [r.to_json() for r in base.values()])
        shown += base.values()
        full_of[file] = str(entry["started"])
    return shown, full_of


def _records(entry: Any, uids: set[str]) -> dict[str, ItemRecord] | None:
    """A stored full run's records of functions the file still has; None when there is none
    (or it is not what this module wrote)."""
    try:
        found = [ItemRecord.from_json(data) for data in entry["records"]]
        str(entry["started"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return {r.nodeid: r for r in found if r.function in uids or r.stage == "file"}


__all__ = ["CACHE_KEY", "merged"]
