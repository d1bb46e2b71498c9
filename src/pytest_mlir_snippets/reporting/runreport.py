"""Run reports rendered from item records: ``<stem>-run-report.txt`` beside each
input file, and a combined report at the common parent of several inputs."""

from __future__ import annotations

import os
import secrets
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pytest_mlir_snippets.items.failures import STDERR_MARKER
from pytest_mlir_snippets.reporting.record import ItemRecord, snippet_tally

COMBINED_NAME = "mlir-snippets-combined-report.txt"  # never "<stem>-run-report.txt"
NOT_RUN = "-"


@dataclass
class RunInfo:
    target: str
    mode: str  # "compile and execute" or "compile only"


def report_path(input_file: Path) -> Path:
    return input_file.with_name(f"{input_file.stem}-run-report.txt")


def combined_path(inputs: list[Path]) -> Path | None:
    """Where the combined report goes, or None for a single input file."""
    if len(inputs) < 2:
        return None
    return Path(os.path.commonpath([p.parent for p in inputs])) / COMBINED_NAME


def _counts(records: list[ItemRecord]) -> str:
    counts = Counter(r.label for r in records)
    return ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items())) or "none"


def _snippet_line(records: list[ItemRecord]) -> str:
    total, succeeded, failed, unsupported = snippet_tally(records)
    return f"{total} ({succeeded} succeeded, {failed} failed, {unsupported} unsupported)"


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
    if record.metrics:
        lines.append("   metrics: " + ", ".join(f"{k}={v:.6g}" for k, v in sorted(record.metrics.items())))
    if record.worker:
        lines.append(f"   lost with xdist worker {record.worker}")
    if record.signature:
        lines.append(f"   signature: {record.signature}")
    output = captured_output(record.details)
    if output:
        lines.append("   captured output:")
        lines += [f"     {line}" for line in output.splitlines()]
    return lines


def captured_output(details: str) -> str:
    """The worker's captured stderr within a failure's text (the rest is shown above it)."""
    _, marker, output = details.partition(STDERR_MARKER)
    return output.strip("\n") if marker else ""


def render_file_report(path: Path, functions: list[tuple[str, int]], records: list[ItemRecord],
                       run: RunInfo) -> str:
    """Summary, per-op table and numbered failure details for one input file."""
    by_key = {(r.function, r.stage): r for r in records}
    known = {uid for uid, _ in functions}
    extra = sorted({r.function for r in records if r.function not in known})  # e.g. "<file>"
    rows = [(uid, line) for uid, line in functions] + [(uid, 0) for uid in extra]
    lines = [
        "MLIR snippet run report",
        f"target:   {run.target}",
        f"input:    {path}",
        f"mode:     {run.mode}",
        f"items:    {len(records)} ({_counts(records)})",
        f"snippets: {_snippet_line(records)}",
        "",
    ]
    width = max([len("function"), *(len(uid) for uid, _ in rows)])
    lines.append(f"{'function':{width}}  {'line':>5}  {'compile':26}  {'execute':26}  {'max_abs_err':>11}  {'pcc':>8}")
    for uid, line in rows:
        compile_ = by_key.get((uid, "compile")) or by_key.get((uid, "file"))
        execute = by_key.get((uid, "execute"))
        lines.append(f"{uid:{width}}  {line or '':>5}  {compile_.label if compile_ else NOT_RUN:26}  "
                     f"{execute.label if execute else NOT_RUN:26}  {_metric(execute, 'max_abs_err'):>11}  "
                     f"{_metric(execute, 'pcc'):>8}")
    baked = {r.function: r.baked for r in _ordered(records, rows) if r.baked}
    if baked:
        lines += ["", "compiled with recorded inputs baked in as constants (the function does not lower with "
                  "them as inputs):"]
        lines += [f"  {uid}: baked: {values}" for uid, values in baked.items()]
    reports = [(r.function, r.golden_report) for r in _ordered(records, rows) if r.golden_report]
    if reports:
        lines += ["", "golden reports (tt-mlir):"]
        lines += [f"  {uid}: {report}" for uid, report in reports]
    failures = [r for r in _ordered(records, rows) if r.failed]
    lines += ["", f"failures: {len(failures)}"]
    for number, record in enumerate(failures, 1):
        lines += _failure_lines(number, record)
    return "\n".join(lines) + "\n"


def render_combined(per_file: dict[Path, list[ItemRecord]], functions: dict[Path, list[tuple[str, int]]],
                    run: RunInfo) -> str:
    """A summary line per input file, then every failure."""
    everything = [r for records in per_file.values() for r in records]
    lines = [
        "MLIR snippet run report (combined)",
        f"target:   {run.target}",
        f"mode:     {run.mode}",
        f"inputs:   {len(per_file)} file(s)",
        f"items:    {len(everything)} ({_counts(everything)})",
        f"snippets: {_snippet_line(everything)}",
        "",
    ]
    for path, records in sorted(per_file.items()):
        lines.append(f"{path}: {len(records)} item(s), {_counts(records)}")
    failures = [r for path in sorted(per_file) for r in _ordered(per_file[path], functions.get(path, []))
                if r.failed]
    lines += ["", f"failures: {len(failures)}"]
    for number, record in enumerate(failures, 1):
        lines += _failure_lines(number, record)
    return "\n".join(lines) + "\n"


def _ordered(records: list[ItemRecord], rows: list[tuple[str, int]]) -> list[ItemRecord]:
    """File order (functions as collected), compile before execute; the same whatever
    order the reports arrived in (xdist)."""
    position = {uid: i for i, (uid, _) in enumerate(rows)}
    stage_order = {"file": 0, "compile": 1, "execute": 2}
    return sorted(records, key=lambda r: (position.get(r.function, len(position)), stage_order.get(r.stage, 3),
                                          r.nodeid))


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder and a rename. The temporary file
    is created with mode 0666 for the kernel to apply the umask (and the folder's
    default ACL), as for any file written in place: ``mkstemp``'s 0600 would stay on
    the report, unreadable to the group that reads CI artifacts."""
    for _ in range(100):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"no free temporary name beside {path}")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_reports(records: list[ItemRecord], functions: dict[str, list[tuple[str, int]]], root: Path,
                  run: RunInfo) -> list[str]:
    """Every run report of a run (one per input file, and the combined one);
    returns the problems (an input folder that cannot be written to)."""
    grouped: dict[str, list[ItemRecord]] = {file: [] for file in functions}
    for record in records:
        grouped.setdefault(record.file, []).append(record)
    outputs = {report_path(root / file): render_file_report(root / file, functions.get(file, []), recs, run)
               for file, recs in grouped.items()}
    combined = combined_path([root / file for file in grouped])
    if combined is not None:
        outputs[combined] = render_combined({root / f: r for f, r in grouped.items()},
                                            {root / f: fns for f, fns in functions.items()}, run)
    problems = []
    for path, text in outputs.items():
        try:
            write_atomic(path, text)
        except OSError as error:  # a read-only input folder must not cost the run
            problems.append(f"could not write {path}: {error.strerror or error}")
    return problems
