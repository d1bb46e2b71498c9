"""Run reports rendered from item records: ``<stem>-run-report.txt`` beside each
input file (a snippet file, or an optimization run's ``model_linalg.mlir``), and a
combined report at the common parent of several inputs.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path

from pytest_mlir_snippets.model.record import ItemRecord, counts, golden_counts, tally
from pytest_mlir_snippets.paths import write_atomic
from pytest_mlir_snippets.protocol import Stage

COMBINED_NAME = "mlir-snippets-combined-report.txt"  # never "<stem>-run-report.txt"
NOT_RUN = "-"


@dataclass
class RunInfo:
    target: str
    mode: str  # "compile and execute" or "compile only"
    notes: tuple[str, ...] = ()  # what a merge of CI shards has to say (a shard that did not report)
    # items (node ids) and whole input files (their node ids) of the inputs this run did not run:
    # deselected (-k, -m, a CI shard), left out by --lf, or not reached (-x, an interruption)
    not_run: tuple[str, ...] = ()
    interrupted: str = ""  # why the run stopped early (KeyboardInterrupt), if it did
    # input files whose report is their last full run updated by partial runs: when that run started
    updated_from: dict[str, str] = field(default_factory=dict)
    file_of: dict[str, str] = field(default_factory=dict)  # the items of not_run: their input files

    def not_run_in(self, file: str | None) -> list[str]:
        """What this run did not run, of one input file (None: of all of them)."""
        return [n for n in self.not_run if file is None or n == file or self.file_of.get(n) == file]

    @property
    def files_not_run(self) -> list[str]:
        """Input files none of whose items ran (``--lf`` collects only the files that failed)."""
        return [n for n in self.not_run if n not in self.file_of]


def report_path(input_file: Path) -> Path:
    return input_file.with_name(f"{input_file.stem}-run-report.txt")


def combined_path(inputs: list[Path]) -> Path | None:
    """Where the combined report goes, or None for a single input file."""
    if len(inputs) < 2:
        return None
    return Path(os.path.commonpath([p.parent for p in inputs])) / COMBINED_NAME


RUN_STAGES = ("contract", "compile", "host_ops", "launch", "correctness", "benchmark", "pytorch_compile", "pytorch")
STAGE_ORDER = ("file", "contract", "compile", "execute", "host_ops", "launch", "correctness", "benchmark",
               "pytorch_compile", "pytorch")


MAX_LISTED = 50  # items not run named in a report; the rest counted


def _status_lines(run: RunInfo, file: str | None) -> list[str]:
    """What a report must say of a run that was not a whole one: it was interrupted, or
    partial, with what it did not run (their results in earlier reports are not this run's)."""
    lines = []
    if run.interrupted:
        lines.append(f"status:   interrupted ({run.interrupted}): the items it did not reach are missing here")
    not_run = run.not_run_in(file)
    if file is not None and file in run.updated_from:
        lines.append(f"run:      the full run of {run.updated_from[file]}, with what partial runs since ran "
                     f"updated (each such item marked with its run's start; {len(not_run)} not run this time)")
    elif not_run:
        lines.append(f"run:      partial: {len(not_run)} of the inputs' items or files not run in this run "
                     "(-k, -m, --lf, -x, a CI shard); earlier results of them are not this run's")
        lines += [f"not run:  {n}" + ("" if "::" in n else " (the whole file)") for n in not_run[:MAX_LISTED]]
        if len(not_run) > MAX_LISTED:
            lines.append(f"not run:  ... and {len(not_run) - MAX_LISTED} more")
    return lines


def _subjects_line(records: list[ItemRecord]) -> str:
    """How the subjects ended; a file that cannot be split (its ``<file>`` item) is a file
    error, no subject."""
    t = tally([r for r in records if r.stage != Stage.FILE])
    file_errors = sum(r.stage == Stage.FILE and r.failed for r in records)
    return f"{t.subjects} ({t.succeeded} succeeded, {t.failed} failed, {t.unsupported} unsupported" + (
        f", {t.skipped} skipped" if t.skipped else "") + (f", {t.not_run} not run)" if t.not_run else ")") + (
        f"; {file_errors} file error(s)" if file_errors else "")


def _golden_lines(records: list[ItemRecord]) -> list[str]:
    text = golden_counts(records)
    return [f"goldens:  {text}"] if text else []


def _natural(name: str) -> tuple[object, ...]:
    """v2 before v10: text and numbers in turn, text first (``("v", 10, "")``)."""
    parts: list[object] = [""]
    for digits, chars in groupby(name, str.isdecimal):
        text = "".join(chars)
        if digits:
            parts += [int(text), ""]
        else:
            parts[-1] = text
    return tuple(parts)


def _targets(records: list[ItemRecord], run: RunInfo) -> str:
    """The targets the records ran on (a RUN command runs on cpu whatever the run's
    target); the run's own for a report without records."""
    return ", ".join(sorted({r.target for r in records if r.target})) or run.target


def _metric(record: ItemRecord | None, name: str) -> str:
    if record is None or name not in record.metrics:
        return NOT_RUN
    return f"{record.metrics[name]:.4g}"


def _failure_lines(number: int, record: ItemRecord) -> list[str]:
    expected = f" (expected {record.expected})" if record.expected else ""
    lines = [f"{number}. {record.nodeid}: {record.kind}{expected}"]
    if record.message:
        lines += [f"   {line}" for line in record.message.splitlines()]
    lines += [f"   {line}" for line in record.diagnostics]
    if record.baked:
        lines.append(f"   baked: {record.baked}")
    if record.diverged_after:
        lines.append(f"   diverged after: {record.diverged_after}")
    if record.metrics:
        lines.append("   metrics: " + ", ".join(f"{k}={v:.6g}" for k, v in sorted(record.metrics.items())))
    if record.worker:
        lines.append(f"   lost with xdist worker {record.worker}")
    if record.info.updated:
        lines.append(f"   from the partial run of {record.info.updated}")
    if record.signature:
        lines.append(f"   signature: {record.signature}")
    if record.details and not record.message:
        lines += [f"   {line}" for line in record.details.splitlines()]
    output = record.output.strip("\n")
    if output:
        lines.append("   captured output:")
        lines += [f"     {line}" for line in output.splitlines()]
    return lines


def render_file_report(path: Path, functions: list[tuple[str, int]], records: list[ItemRecord],
                       run: RunInfo) -> str:
    """Summary, per-op (or per-iteration) table and numbered failure details for one input file."""
    known = {uid for uid, _ in functions}
    extra = sorted({r.function for r in records if r.function not in known}, key=_natural)  # "<file>", "v3"
    # Python tests: the test's line; iterations: the line of the model's entry function
    lines_of = {r.function: r.line for r in records if r.line}
    rows = [(uid, line) for uid, line in functions] + [(uid, lines_of.get(uid, 0)) for uid in extra]
    snippets = all(r.is_snippet for r in records)
    lines = [
        "MLIR snippet run report" if snippets else "MLIR optimization run report",
        f"target:   {_targets(records, run)}",
        f"input:    {path}",
        f"mode:     {run.mode}",
        *(f"note:     {note}" for note in run.notes),
        *_status_lines(run, records[0].file if records else None),
        f"items:    {len(records)} ({counts(records)})",
        f"{'snippets' if snippets else 'subjects'}: {_subjects_line(records)}",
        *_golden_lines(records),
        "",
    ]
    lines += _table(records, rows, snippets)
    ordered = _ordered(records, rows)
    baked = {r.function: r.baked for r in ordered if r.baked}
    if baked:
        lines += ["", "compiled with recorded inputs baked in as constants (the function does not lower with "
                  "them as inputs):"]
        lines += [f"  {uid}: baked: {values}" for uid, values in baked.items()]
    reports = [(r.function, r.golden_report) for r in ordered if r.golden_report]
    if reports:
        lines += ["", "golden reports (tt-mlir):"]
        lines += [f"  {uid}: {report}" for uid, report in reports]
    failures = _failures(ordered)
    lines += ["", f"failures: {len(failures)}"]
    for number, record in enumerate(failures, 1):
        lines += _failure_lines(number, record)
    return "\n".join(lines) + "\n"


def _table(records: list[ItemRecord], rows: list[tuple[str, int]], snippets: bool) -> list[str]:
    """A row per function (iteration), a column per stage, then the golden metrics."""
    by_key = {(r.function, "compile" if r.stage == "file" else r.stage): r for r in records}
    stages = [s for s in RUN_STAGES if any(r.stage == s for r in records)]
    if snippets:  # snippet files' items, and Python tests that used mlir_device (stage call)
        calls = any(r.stage == "call" for r in records)
        stages = ["compile", "execute"] * any(r.stage != "call" for r in records) + ["call"] * calls
    checked = "execute" if snippets else "correctness"
    width = max([len("function"), *(len(uid) for uid, _ in rows)])
    updated: dict[str, str] = {}
    for r in records:
        if r.info.updated:
            updated[r.function] = max(updated.get(r.function, ""), r.info.updated)
    wide = 26 if snippets else max(12, *(len(r.label) for r in records))
    lines = [f"{'function' if snippets else 'iteration':{width}}  {'line':>5}  "
             + "  ".join(f"{stage:{wide}}" for stage in stages) + f"  {'golden':21}  {'max_abs_err':>11}  {'pcc':>8}"
             + ("  updated" if updated else "")]
    for uid, line in rows:
        cells = [(by_key[(uid, stage)].label if (uid, stage) in by_key else NOT_RUN) for stage in stages]
        result = by_key.get((uid, checked)) or by_key.get((uid, "call"))
        golden = str(result.golden) if result is not None and result.golden is not None else NOT_RUN
        lines.append(f"{uid:{width}}  {line or '':>5}  " + "  ".join(f"{cell:{wide}}" for cell in cells)
                     + f"  {golden:21}  {_metric(result, 'max_abs_err'):>11}  {_metric(result, 'pcc'):>8}"
                     + (f"  {updated.get(uid, '')}" if updated else ""))
    return lines


def render_combined(per_file: dict[Path, list[ItemRecord]], functions: dict[Path, list[tuple[str, int]]],
                    run: RunInfo) -> str:
    """A summary line per input file, then every failure."""
    everything = [r for records in per_file.values() for r in records]
    lines = [
        "MLIR snippet run report (combined)",
        f"target:   {_targets(everything, run)}",
        f"mode:     {run.mode}",
        f"inputs:   {len(per_file)} file(s)",
        *(f"note:     {note}" for note in run.notes),
        *_status_lines(run, None),
        f"items:    {len(everything)} ({counts(everything)})",
        f"{'snippets' if all(r.is_snippet for r in everything) else 'subjects'}: {_subjects_line(everything)}",
        *_golden_lines(everything),
        "",
    ]
    for path, records in sorted(per_file.items()):
        lines.append(f"{path}: {len(records)} item(s), {counts(records)}")
    failures = [r for path in sorted(per_file) for r in _failures(_ordered(per_file[path], functions.get(path, [])))]
    lines += ["", f"failures: {len(failures)}"]
    for number, record in enumerate(failures, 1):
        lines += _failure_lines(number, record)
    return "\n".join(lines) + "\n"


def _failures(records: list[ItemRecord]) -> list[ItemRecord]:
    """The failed items; an execute skipped for its failed compile only when that compile
    is not in the run (``-k execute``, ``--lf``), else it is the same failure twice."""
    failed = {r.subject for r in records if r.outcome == "failed"}
    return [r for r in records if r.outcome == "failed" or (r.failed and r.subject not in failed)]


def _ordered(records: list[ItemRecord], rows: list[tuple[str, int]]) -> list[ItemRecord]:
    """File order (functions as collected), compile before execute; the same whatever
    order the reports arrived in (xdist)."""
    position = {uid: i for i, (uid, _) in enumerate(rows)} if rows else {
        uid: i for i, uid in enumerate(sorted({r.function for r in records}, key=_natural))}
    stage_order = {stage: i for i, stage in enumerate(STAGE_ORDER)}
    return sorted(records, key=lambda r: (position.get(r.function, len(position)),
                                          stage_order.get(r.stage, len(STAGE_ORDER)), r.nodeid))


def write_reports(records: list[ItemRecord], functions: dict[str, list[tuple[str, int]]], root: Path,
                  run: RunInfo, rootdir: Path) -> list[str]:
    """Every run report of a run (one per input file, and the combined one), under
    ``root``, naming the inputs where they are (under ``rootdir``); returns the
    problems (an input folder that cannot be written to)."""
    grouped: dict[str, list[ItemRecord]] = {file: [] for file in functions}
    for record in records:
        grouped.setdefault(record.file, []).append(record)
    outputs = {report_path(root / file): render_file_report(rootdir / file, functions.get(file, []), recs, run)
               for file, recs in grouped.items()}
    combined = combined_path([root / file for file in [*grouped, *run.files_not_run]])
    if combined is not None:
        outputs[combined] = render_combined({rootdir / f: r for f, r in grouped.items()},
                                            {rootdir / f: fns for f, fns in functions.items()}, run)
    problems = []
    for path, text in outputs.items():
        try:
            write_atomic(path, text)
        except OSError as error:  # a read-only input folder must not cost the run
            problems.append(f"could not write {path}: {error.strerror or error}")
    return problems
