"""Everything written from a run's records, in one place: at the end of a session on
the controller, and by ``mlir-snippets report`` from the JSON of one or several runs.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from pytest_mlir_snippets.model.record import ItemRecord, check_json, counts, golden_counts, tally
from pytest_mlir_snippets.paths import write_atomic
from pytest_mlir_snippets.protocol import Kind, Outcome, Stage, Status, SubjectKind
from pytest_mlir_snippets.reporting.runreport import RunInfo, write_reports
from pytest_mlir_snippets.reporting.shards import lost_items

JSON_VERSION = 2
Functions = dict[str, list[tuple[str, int]]]  # input file (node id) -> its functions and lines


class RecordsError(ValueError):
    """A JSON document that is not what ``--mlir-json`` writes."""


def publish(records: list[ItemRecord], functions: Functions, root: Path, run: RunInfo,
            json_path: Path | None = None, rootdir: Path | None = None, shown: list[ItemRecord] | None = None,
            **shard: Any) -> list[str]:
    """Run reports and optimization runs' tables under ``root`` (the inputs being under
    ``rootdir``: the same folder, except for ``mlir-snippets report --out``), the
    combined report and the JSON records; returns the problems (a folder that cannot
    be written to). ``shard``: which CI shard this run is and the plan of all shards,
    for its JSON (see ``shards.py``). ``shown``: what the run reports show where it is not
    ``records`` (a partial run's updates of the last full run, ``baseline.py``)."""
    rootdir = rootdir or root
    problems = write_reports(records if shown is None else shown, functions, root, run, rootdir)
    if any(record.run for record in records):  # optimization runs' tables (their module, only then)
        from pytest_mlir_snippets.reporting import benchmark

        problems += benchmark.write_runs(records, rootdir, root)
    if json_path is not None:
        try:
            text = json.dumps(records_json(records, functions, run, rootdir) | shard, indent=1)
            write_atomic(json_path, text + "\n")
        except OSError as error:
            problems.append(f"could not write {json_path}: {error.strerror or error}")
    return problems


def records_json(records: list[ItemRecord], functions: Functions, run: RunInfo, rootdir: Path) -> dict[str, Any]:
    """What ``--mlir-json`` writes and ``mlir-snippets report`` reads."""
    return {
        "version": JSON_VERSION, "target": run.target, "mode": run.mode, "rootdir": str(rootdir),
        "files": {file: [list(f) for f in fns] for file, fns in sorted(functions.items())},
        "items": [r.to_json() for r in sorted(records, key=lambda r: r.nodeid)],
        "not_run": list(run.not_run), "not_run_files": run.file_of, "interrupted": run.interrupted,
    }


def read_records(documents: list[tuple[str, Any]]) -> tuple[list[ItemRecord], Functions, RunInfo, Path]:
    """Items of all runs (a later document wins for the same node id) and their input
    files; raises ``RecordsError`` naming the document that is not one of ours."""
    records: dict[str, ItemRecord] = {}
    functions: Functions = {}
    for name, doc in documents:
        try:
            if not isinstance(doc, dict) or doc.get("version") != JSON_VERSION:
                raise TypeError(f"not a version {JSON_VERSION} --mlir-json document")
            for item in doc["items"]:
                check_json(item)
                record = ItemRecord.from_json(item)
                records[record.nodeid] = record
            for file, fns in doc["files"].items():
                if fns or file not in functions:
                    functions[file] = [(str(uid), int(line)) for uid, line in fns]
            str(doc["target"]), str(doc["mode"]), str(doc["rootdir"])
            for entry in doc.get("planned") or []:
                check_json(entry)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            detail = f"missing {error}" if isinstance(error, KeyError) else str(error)
            raise RecordsError(f"{name}: not records written by --mlir-json ({detail})") from None
    docs = [doc for _, doc in documents]
    lost, note = lost_items(docs, records)
    for record in lost:
        records[record.nodeid] = record
        functions.setdefault(record.file, [])
    modes = {doc["mode"] for doc in docs}
    ran = set(records) | {r.file for r in records.values()}  # what one run left out, another may have run
    not_run = sorted({str(n) for doc in docs for n in doc.get("not_run") or []} - ran)
    file_of = {n: file for doc in docs for n, file in _files_of_not_run(doc).items() if n in not_run}
    run = RunInfo(", ".join(sorted({doc["target"] for doc in docs})),
                  docs[0]["mode"] if len(modes) == 1 else "mixed: " + ", ".join(sorted(modes)),
                  (note,) if note else (), tuple(not_run),
                  "; ".join(sorted({str(doc["interrupted"]) for doc in docs if doc.get("interrupted")})),
                  file_of=file_of)
    return list(records.values()), functions, run, Path(docs[0]["rootdir"])


def _files_of_not_run(doc: dict[str, Any]) -> dict[str, str]:
    """The input file of each item a document says was not run; a document written before
    ``not_run_files`` gives each the input file its node id starts with."""
    given = doc.get("not_run_files")
    if isinstance(given, dict):
        return {str(n): str(file) for n, file in given.items()}
    return {str(n): file for n in doc.get("not_run") or [] for file in doc["files"] if str(n).startswith(f"{file}::")}


def summary_lines(records: list[ItemRecord], files: int, interrupted: str = "",
                  notes: tuple[str, ...] = ()) -> list[tuple[str, bool]]:
    """The closing lines: counts per outcome kind, passes per golden, then the verdict
    (text, is it bad). "succeeded" is said of subjects whose items all ran and passed:
    one with a skipped item (nothing to compare, no device) is counted as skipped, and
    where nothing failed the verdict says what those passed and why the rest skipped.
    A file that cannot be split into snippets (its ``<file>`` item) is a file error, no snippet."""
    unsplit = [r for r in records if r.stage == Stage.FILE]
    snippets = tally([r for r in records if r.is_snippet and r.stage != Stage.FILE])
    iterations = tally([r for r in records if r.subject_kind == SubjectKind.ITERATION])
    # a run's own items (its folder's contract, the PyTorch benchmark) are no iteration
    run_items = tally([r for r in records if r.subject_kind in (SubjectKind.PYTORCH, SubjectKind.RUN)])
    file_errors = tally(unsplit).failed
    has = (snippets.subjects > 0, iterations.subjects > 0)

    def subjects(n_snippets: int, n_iterations: int, everything: bool = False) -> str:
        """What there is of each part; ``everything``: each part that has subjects, even at 0."""
        parts = [f"{n_snippets} snippet(s)"] if has[0] and (n_snippets or everything) else []
        parts += [f"{n_iterations} iteration(s)"] if has[1] and (n_iterations or everything) else []
        return " and ".join(parts) or ("0 iteration(s)" if has[1] and not has[0] else "0 snippet(s)")

    unsupported = snippets.unsupported + iterations.unsupported
    skipped = snippets.skipped + iterations.skipped
    unsupported_note = [f"{subjects(snippets.unsupported, iterations.unsupported)} unsupported on this target"] \
        if unsupported else []
    skipped_note = [f"{subjects(snippets.skipped, iterations.skipped)} skipped: not every item ran"] if skipped else []
    failed = snippets.failed + iterations.failed + run_items.failed + file_errors
    succeeded = snippets.succeeded + iterations.succeeded
    if failed:
        note = ", ".join(unsupported_note + skipped_note)
        what = [subjects(snippets.failed, iterations.failed)] if snippets.failed + iterations.failed else []
        what += [f"{run_items.failed} run item(s)"] if run_items.failed else []
        clauses = [f"{' and '.join(what)} failed"] if what else []
        clauses += [f"{file_errors} file error(s) (file(s) that cannot be split into snippets)"] if file_errors else []
        verdict = f"{'; '.join(clauses)} across {files} file(s)" + (f" ({note})" if note else "")
    elif all(r.outcome == "skipped" for r in records):
        note = ", ".join(unsupported_note + skipped_note)
        verdict = f"nothing ran to an outcome: {len(records)} item(s) skipped across {files} file(s)" \
                  + (f" ({note})" if note else "")
    else:
        every = "all " if succeeded and not skipped and not unsupported else ""
        clauses = [f"{every}{subjects(snippets.succeeded, iterations.succeeded, True)} succeeded"] \
            if succeeded or not skipped else []
        if skipped:  # which subjects ran in part: looked for only then (a pass over every record)
            subjects_of = [r for r in records
                           if r.stage != Stage.FILE and (r.is_snippet or r.subject_kind == SubjectKind.ITERATION)]
            clauses.append(_partly_run(subjects_of, subjects(snippets.skipped, iterations.skipped)))
        note = ", ".join(unsupported_note)
        verdict = f"{'; '.join(clauses)} across {files} file(s)" + (f" ({note})" if note else "")
    lines = [("items per outcome: " + counts(records), False)]
    goldens = golden_counts(records)
    if goldens:
        lines.append(("verdicts by golden: " + goldens, False))
    lines.append((verdict, bool(failed)))
    newer = Counter(r.info.iree_cannot_parse for r in records if r.info.iree_cannot_parse)
    lines += [(f"{n} compile-error(s) in files IREE {release} cannot parse (written for a newer IREE)", False)
              for release, n in sorted(newer.items())]
    lines += [(note, True) for note in notes]
    if interrupted:
        lines.append((f"the run was interrupted ({interrupted}): items not run are missing from the reports", True))
    return lines


def _partly_run(records: list[ItemRecord], what: str) -> str:
    """The subjects that passed every item that ran, with the stages skipped and why (a
    skip message's head, before its first colon): ``5 snippet(s) passed every item that ran, 5
    item(s) skipped ([execute]: no CUDA device)``."""
    unsupported = {r.subject for r in records if r.kind == Kind.UNSUPPORTED}
    partial = {r.subject for r in records if r.outcome == Outcome.SKIPPED and r.kind == Status.SKIP
               and not r.expected and r.subject not in unsupported}
    skips = [r for r in records if r.subject in partial and r.outcome == Outcome.SKIPPED]
    stages = ", ".join(f"[{stage}]" for stage in dict.fromkeys(str(r.stage) for r in skips))
    reasons = "; ".join(dict.fromkeys(r.message.split(":", 1)[0].strip() or "skipped" for r in skips))
    return f"{what} passed every item that ran, {len(skips)} item(s) skipped ({stages}: {reasons})"
