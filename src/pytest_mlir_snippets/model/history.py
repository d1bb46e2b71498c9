"""Benchmark history of an optimization run: ``<run>/benchmarks.json``.

One entry per target and iteration: the figures of its last measurement
(``benchstats.FIGURES``), the digest of what was measured, when, and a carried
reference median. Benchmark items read it (the same code's last median is the speed
to expect); the controller updates it from the session's records and renders every
table from it. Measuring on one target never touches another target's entries.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import hashlib
import json
import math
import platform
import time
from pathlib import Path
from typing import Any

from pytest_mlir_snippets.compilekey import CompileKey
from pytest_mlir_snippets.paths import write_atomic
from pytest_mlir_snippets.worker.benchstats import FIGURES, METHOD

FILE = "benchmarks.json"
VERSION = 1
Entries = dict[str, dict[str, Any]]  # iteration -> its last measurement


def code_digest(key: CompileKey) -> str:
    """What a measurement was of: the compile (``compilekey.py``), the toolchain, this
    machine and the way figures are measured (``benchstats.METHOD``)."""
    from pytest_mlir_snippets.sandbox.cache import toolchain  # not at import: the cache module brings numpy

    digest = hashlib.sha256()
    for text in (key.digest(), toolchain(), platform.node(), METHOD):
        digest.update(text.encode() + b"\0")
    return digest.hexdigest()[:16]


def load(run: Path) -> dict[str, Entries]:
    """Every target's entries (empty when the file is missing, unreadable or of another
    version). Only what ``update`` writes is kept, of the type it writes: an entry that is
    not an object, a figure that is not a number, stages that are not names of kinds are
    left out (a hand-edited or foreign file makes no table fail)."""
    try:
        data = json.loads((run / FILE).read_text())
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("targets"), dict):
        return {}
    return {target: {name: _entry(entry) for name, entry in entries.items() if isinstance(entry, dict)}
            for target, entries in data["targets"].items() if isinstance(entries, dict)}


def _entry(entry: dict[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {k: v for k, v in entry.items() if k in NUMBERS and _is_number(v)}
    kept |= {k: v for k, v in entry.items() if k in ("digest", "measured") and isinstance(v, str)}
    stages = entry.get("stages")
    if isinstance(stages, dict):
        kept["stages"] = {stage: kind for stage, kind in stages.items() if isinstance(kind, str)}
    return kept


PYTORCH = "pytorch"  # the entry of the PyTorch reference's figures, beside the iterations'
PYTORCH_FIGURES = ("eager_median_ms", "compile_median_ms")
NUMBERS = frozenset((*FIGURES, *PYTORCH_FIGURES, "reference_ms"))


def _is_number(value: object) -> bool:
    return (type(value) is int or type(value) is float) and math.isfinite(value)


def entries(run: Path, target: str) -> Entries:
    return load(run).get(target, {})


def reference_ms(run: Path, target: str, iteration: str, digest: str) -> float:
    """The median a new measurement of the same code should see again: the last settled
    one's, or the one an unsettled measurement carried on (0: none)."""
    last = entries(run, target).get(iteration, {})
    if last.get("digest") != digest:
        return 0.0
    return float(last.get("median_ms" if last.get("settled") == 1 else "reference_ms", 0) or 0)


def update(run: Path, target: str, measured: dict[str, dict[str, Any]],
           verdicts: dict[str, dict[str, str]]) -> Entries:
    """Store this session's measurements of ``target`` (iteration -> figures and digest)
    and the outcome kinds of its checks and correctness (iteration -> stage -> kind);
    returns that target's entries. A measurement that did not settle carries the last
    settled median of the same code on, once."""
    everything = load(run)
    mine = everything.setdefault(target, {})
    for iteration, figures in measured.items():
        before = mine.get(iteration, {})
        when = str(figures.get("measured") or time.strftime("%Y-%m-%d %H:%M:%S"))
        if str(before.get("measured", "")) > when:
            continue  # records older than what is kept (a report rebuilt from an old JSON)
        entry = {k: figures[k] for k in (*FIGURES, *PYTORCH_FIGURES) if k in figures}
        entry.update(digest=figures.get("digest", ""), measured=when, stages=before.get("stages", {}))
        if (entry.get("settled") == 0 and before.get("settled") == 1 and before.get("digest") == entry["digest"]
                and before.get("median_ms")):
            entry["reference_ms"] = before["median_ms"]
        mine[iteration] = entry
    for iteration, stages in verdicts.items():
        entry = mine.setdefault(iteration, {})
        entry["stages"] = {**entry.get("stages", {}), **stages}
    if measured or verdicts:
        write_atomic(run / FILE, json.dumps({"version": VERSION, "targets": everything}, indent=1, sort_keys=True)
                   + "\n")
    return mine
