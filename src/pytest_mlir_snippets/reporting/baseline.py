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

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_mlir_snippets.model.record import ItemRecord
from pytest_mlir_snippets.paths import write_atomic
from pytest_mlir_snippets.reporting.runreport import RunInfo

CACHE_KEY = "mlir-snippets/last-full-run"  # a folder of pytest's cache, the file ``last-full-run.json`` in it


def _load(cache: Any) -> tuple[Path, dict[str, Any]]:
    """The stored runs' file and what it holds (nothing when it is absent or unreadable)."""
    path = Path(cache.mkdir(CACHE_KEY.replace("/", "-"))) / "last-full-run.json"
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stored = cache.get(CACHE_KEY, {})  # where a version before kept them (``cache.set``)
    return path, stored if isinstance(stored, dict) else {}


def merged(cache: Any, records: list[ItemRecord], functions: dict[str, list[tuple[str, int]]], run: RunInfo,
           started: str, published: Mapping[str, dict[str, Any]] | None = None) -> tuple[
               list[ItemRecord], dict[str, str]]:
    """The records the reports show, and for each input file shown as its last full run
    updated, when that full run started. ``published``: by node id, the data (``to_json``)
    of records unchanged since it was made, kept as it is."""
    if cache is None:
        return records, {}
    path, stored = _load(cache)
    by_file: dict[str, list[ItemRecord]] = {}
    for record in records:
        by_file.setdefault(record.file, []).append(record)
    shown = [r for r in records if not r.is_snippet]  # optimization runs keep their own history
    full_of: dict[str, str] = {}
    for file, found in by_file.items():
        found = [r for r in found if r.is_snippet]
        key = f"{run.target} | {run.mode} | {file}"
        if not run.not_run_in(file) and not run.interrupted:  # a full run of the file: the new baseline
            known = published or {}
            stored[key] = {"started": started, "records": [known.get(r.nodeid) or r.to_json() for r in found]}
            shown += found
            continue
        base = _records(stored.get(key), {uid for uid, _ in functions.get(file, [])})
        if base is None:
            shown += found
            continue
        base.update({r.nodeid: replace(r, info=replace(r.info, updated=started)) for r in found})
        stored[key] = {"started": stored[key]["started"], "records": [r.to_json() for r in base.values()]}
        shown += base.values()
        full_of[file] = str(stored[key]["started"])
    # compact, by json's C encoder: ``cache.set`` indents, through the pure-Python encoder
    # (0.7 ms a record: 1.4 s of a 2,000-function warm run)
    write_atomic(path, json.dumps(stored, separators=(",", ":")))
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
