"""One record per item: the single source of every report (text, JSON, HTML, junit,
benchmark tables, expectations).

An item builds its record where it runs and puts it on its test report as plain
data (``report.mlir_record``), which xdist carries to the controller (as one JSON
text, ``wire_text``, when that gives the same data back); the controller keeps the
final one per node id. ``--mlir-json`` writes the records, and
``mlir-snippets report`` reads them back, so the reports of several CI shards can be
rebuilt together. Nothing here imports pytest.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pytest_mlir_snippets.model.recordinfo import RecordInfo
from pytest_mlir_snippets.protocol import Computed, Golden, Kind, Outcome, Stage, Status, SubjectKind

FAILURE_KINDS = tuple(k.value for k in Kind if k not in (Kind.PASS, Kind.UNSUPPORTED))
METRICS = ("max_abs_err", "max_rel_err", "pcc")
_PLAIN = frozenset({str, int, float, bool, list, dict, type(None)})  # most fields: taken as they are, checked once
RUN_KINDS = frozenset({SubjectKind.ITERATION, SubjectKind.PYTORCH, SubjectKind.RUN})  # an optimization run's items


def shape_and_dtype(type_text: str) -> tuple[str, str]:
    """``tensor<4x?xf32>`` -> (``4x?``, ``f32``); a scalar ``i32`` -> (``scalar``, ``i32``): for
    a record without input specs (JSON written before them, a compile of a target that sends
    none)."""
    if "<" not in type_text:
        return "scalar", type_text
    body = type_text.split("<", 1)[1].rsplit(">", 1)[0].split(",")[0]
    dims, _, element = body.rpartition("x") if "x" in body else ("", "", body)
    while dims and not (dims[-1].isdigit() or dims[-1] == "?"):  # an element type with an x in it
        dims, _, more = dims.rpartition("x")
        element = f"{more}x{element}"
    return dims or "0-d", element


@dataclass
class ItemRecord:
    nodeid: str
    name: str  # the item's name in its file: add_0[compile], v3[benchmark], <file>
    file: str  # the input file's node id: a snippet file, or an optimization run's model_linalg.mlir
    function: str  # the subject's name: a function's unique id, "<file>", v3, "pytorch", "run", a RUN item, a test
    stage: Stage
    kind: Kind | Status = Kind.PASS  # an outcome kind, or skip, not-run, error
    outcome: Outcome = Outcome.NONE  # pytest's
    target: str = ""
    line: int = 0
    duration: float = 0.0  # pytest's, of the phase that decided the outcome
    seconds: float = 0.0  # the sandbox worker's time on the request
    message: str = ""
    diagnostics: list[str] = field(default_factory=list)  # MLIR's, at file locations
    output: str = ""  # what the sandbox worker printed (its stderr, native code's included)
    details: str = ""  # the failure as the terminal shows it
    failure_stage: str = ""  # where a failure happened (a compile run for an execute item)
    compile_failed: bool = False  # skipped because the compile it builds on failed: a failure of its subject
    metrics: dict[str, float] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)
    input_shapes: list[str] = field(default_factory=list)  # of each input: 4x?, 0-d, scalar
    input_dtypes: list[str] = field(default_factory=list)  # of each input: its element type
    outputs: list[str] = field(default_factory=list)
    golden: Golden | None = None  # what an execute (or correctness) verdict compared with; None: no verdict
    reference: str = ""  # the golden in words (which check ops, which interpreter, why not another)
    computed: Computed | None = None  # an execute's: were its results computed at run time; None: not judged
    compiled_digest: str = ""  # an iteration's stages: sha256 of the final IR (vN/llvm.mlir) they read or ran
    stdout: str = ""  # what the entry printed, as FileCheck saw it (golden filecheck)
    baked: str = ""  # recorded inputs compiled in as constants (see Backend.compile)
    golden_report: str = ""  # tt-mlir's golden report (JSON), ttmetal/ttnn
    benchmark: dict[str, Any] = field(default_factory=dict)  # figures of a benchmark item (benchstats)
    info: RecordInfo = field(default_factory=RecordInfo)  # host ops, kernels, compile cache, ...
    expected: str = ""  # the expectation this item was held to, if any
    worker: str = ""  # the xdist worker that lost it, for an item lost with its worker
    signature: str = ""  # what groups failures of one root cause: the first error, masked (items.failures)
    run: str = ""  # an optimization run's folder, relative to the rootdir
    subject_kind: SubjectKind = SubjectKind.SNIPPET  # what ``function`` names
    failing_pass: str = ""  # a failed compile's pass, as written in its pipeline (or import, translation)
    reproducer: str = ""  # its reproduce.sh, relative to the output root
    diverged_after: str = ""  # --mlir-bisect: the pass after which results stop matching (or front-end, translation)

    @property
    def failed(self) -> bool:
        """Counts against its subject: a failure, or a skip because the compile failed,
        unless an expectation covered it."""
        if self.outcome == Outcome.FAILED:
            return True
        return self.outcome == Outcome.SKIPPED and not self.expected and self.compile_failed

    @property
    def label(self) -> str:
        """The kind as reports show it: ``compile-error (expected)`` for an xfail."""
        if self.kind == "not-run":
            return f"{self.expected} (expected, not run)" if self.expected else "not run"
        if self.outcome == "failed" and self.kind == Kind.PASS.value:
            return "pass (failure expected)"  # XPASS(strict)
        return f"{self.kind} (expected)" if self.outcome == "xfailed" else self.kind

    @property
    def is_snippet(self) -> bool:
        """Not an optimization run's: a snippet, a RUN command or a Python test."""
        return self.subject_kind not in RUN_KINDS

    @property
    def subject(self) -> str:
        """What the item is a part of: a snippet (file and function) or an iteration."""
        return f"{self.file}::{self.function}"

    def to_json(self) -> dict[str, Any]:
        """Plain data (enums as their strings): xdist's serializer takes basic types only."""
        return {k: v if type(v) in _PLAIN else v.value if isinstance(v, enum.Enum) else
                v.to_json() if isinstance(v, RecordInfo) else v for k, v in vars(self).items()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ItemRecord:
        known = cls.__dataclass_fields__
        record = cls(**{k: v for k, v in data.items() if k in known})
        record.stage = Stage(record.stage)
        record.subject_kind = SubjectKind(data["subject_kind"]) if "subject_kind" in data else _subject_kind(data)
        record.kind = _kind(str(record.kind))
        record.outcome = Outcome(record.outcome)
        record.golden = Golden(record.golden) if record.golden else None
        record.computed = Computed(record.computed) if record.computed else None
        record.info = RecordInfo.from_json(data.get("info") or {})
        return record


def wire_text(data: dict[str, Any]) -> str | None:
    """A record's data (``to_json``) as one JSON text, for an xdist worker to send: its
    serializer (execnet's, in Python) walks a dict field by field, and reads it back the
    same way. None when the text would not give back equal data (a tuple, a non-str key,
    a NaN), so that the record travels as it is and reads the same with and without xdist."""
    import json

    try:
        text = json.dumps(data, separators=(",", ":"))
    except (TypeError, ValueError):
        return None
    return text if json.loads(text) == data else None


def _subject_kind(data: dict[str, Any]) -> SubjectKind:
    """The subject kind of a record written before records had one (the JSON of an earlier
    version, read by ``mlir-snippets report``), from its stage, run and function."""
    if data.get("stage") == Stage.CALL:
        return SubjectKind.PYTHON
    if data.get("run"):
        if data.get("stage") in (Stage.PYTORCH, Stage.PYTORCH_COMPILE):
            return SubjectKind.PYTORCH
        return SubjectKind.RUN if data.get("function") == "run" else SubjectKind.ITERATION
    info = data.get("info")
    return SubjectKind.LIT if isinstance(info, dict) and RecordInfo.from_json(info).command is not None \
        else SubjectKind.SNIPPET


def _kind(value: str) -> Kind | Status:
    return Status(value) if value in Status.__members__.values() else Kind(value)


_FIELD_TYPES: dict[str, Any] = {"golden": (str, type(None)), "computed": (str, type(None)), "compile_failed": bool,
                                "line": int, "duration": (int, float), "seconds": (int, float),
                                "diagnostics": list, "inputs": list, "input_shapes": list, "input_dtypes": list,
                                "outputs": list,
                                "metrics": dict, "benchmark": dict, "info": dict}  # the others: str


def check_json(data: dict[str, Any]) -> None:
    """``TypeError`` for a record read back (``mlir-snippets report``) whose fields are not
    of the types ``to_json`` writes: reports must not fail halfway through a document
    that is not ours."""
    for name in ItemRecord.__dataclass_fields__.keys() & data.keys():
        value, expected = data[name], _FIELD_TYPES.get(name, str)
        if not isinstance(value, expected) or (isinstance(value, bool) and expected is not bool) or (
                expected is list and not all(isinstance(v, str) for v in value)) or (
                name == "metrics" and not all(isinstance(v, int | float) for v in value.values())):
            raise TypeError(f"field {name!r} of {str(data.get('nodeid', 'a record'))!r}: "
                            f"unexpected {type(value).__name__} {str(value)[:40]}")
    try:
        ItemRecord.from_json({"nodeid": "", "name": "", "file": "", "function": "", "stage": Stage.COMPILE, **{
            k: data[k] for k in ("stage", "kind", "outcome", "golden", "computed", "subject_kind") if k in data}})
    except ValueError as error:
        raise TypeError(f"{str(data.get('nodeid', 'a record'))!r}: {error}") from None


@dataclass
class Tally:
    """Subjects (a snippet, an iteration: its items together) by how they ended."""

    subjects: int = 0
    succeeded: int = 0  # every item that ran passed, and none was skipped
    failed: int = 0
    unsupported: int = 0
    skipped: int = 0  # nothing failed, but an item was skipped (nothing to compare, no device)
    not_run: int = 0  # none of its items ran (a CI shard that did not report)


def tally(records: list[ItemRecord]) -> Tally:
    """How the subjects of ``records`` ended; a subject is counted once, by its worst item."""
    by_subject: dict[str, list[ItemRecord]] = {}
    for r in records:
        by_subject.setdefault(r.subject, []).append(r)
    result = Tally(subjects=len(by_subject))
    for rs in by_subject.values():
        if all(r.kind == Kind.PASS and r.outcome == Outcome.PASSED for r in rs):  # the common case, in one pass
            result.succeeded += 1
        elif any(r.failed for r in rs):
            result.failed += 1
        elif any(r.kind == Kind.UNSUPPORTED for r in rs):
            result.unsupported += 1
        elif all(r.kind == Status.NOT_RUN and not r.expected for r in rs):
            result.not_run += 1
        elif any(r.kind == Status.SKIP and r.outcome == Outcome.SKIPPED and not r.expected for r in rs):
            result.skipped += 1
        else:
            result.succeeded += 1
    return result


ZERO_COMPARED = "0 elements compared"  # a pass whose results have no element: shapes and types only
ZERO_COMPARED_WHY = f"{ZERO_COMPARED}: the results have no element (their shapes and element types were compared)"


def golden_counts(records: list[ItemRecord]) -> str:
    """The passing verdicts by what they compared (``recorded (baked inputs)`` apart), and
    the verdicts that compared nothing: ``5 pass(es): interpreter 3, recorded 2; nothing
    compared: 1``, the passes among them that compared no element (``0 elements compared:
    1``); empty when no item judged results."""
    passed = Counter(f"{r.golden} (baked inputs)" if r.baked and r.golden == Golden.RECORDED else str(r.golden)
                     for r in records if r.golden not in (None, Golden.NONE) and r.kind == Kind.PASS
                     and r.outcome == Outcome.PASSED)
    nothing = sum(r.golden == Golden.NONE for r in records)
    folded = sum(r.computed == Computed.COMPILE_TIME for r in records)
    vacuous = sum(r.computed == Computed.NOTHING for r in records)
    own = sum(r.golden == Golden.SELF and r.kind == Status.SKIP for r in records)
    empty = sum(r.info.compared == 0 and r.kind == Kind.PASS and r.outcome == Outcome.PASSED for r in records)
    text = f"{sum(passed.values())} pass(es): " + ", ".join(f"{g} {n}" for g, n in sorted(passed.items())) \
        if passed else ""
    for label, count in (("nothing compared", nothing), ("only the plugin's own lowering", own),
                         ("computed at compile time", folded), ("nothing computed", vacuous),
                         (ZERO_COMPARED, empty)):
        if count:
            text += ("; " if text else "") + f"{label}: {count}"
    return text


def counts(records: list[ItemRecord]) -> str:
    found = Counter(r.label for r in records)
    return ", ".join(f"{kind} {n}" for kind, n in sorted(found.items())) or "none"


def junit_properties(record: ItemRecord) -> list[tuple[str, object]]:
    """The record as junit properties (what tt-mlir's infra and CI dashboards read)."""
    props: list[tuple[str, object]] = [("mlir_kind", record.kind), ("mlir_target", record.target),
                                       ("mlir_stage", record.stage)]
    if record.golden is not None:
        props.append(("mlir_golden", record.golden))
    if record.computed is not None:
        props.append(("mlir_computed", record.computed))
    if record.is_snippet and record.stage != "file":
        props += [("mlir_op", record.function), ("mlir_line", record.line)]
    if record.run:
        props += [("mlir_run", record.run), ("mlir_iteration", record.function)]
    if record.expected:
        props.append(("mlir_expected", record.expected))
    if record.kind not in (Kind.PASS.value, "skip") or record.failure_stage:
        props += [("mlir_failure_stage", record.failure_stage or record.stage), ("mlir_message", record.message),
                  ("mlir_diagnostics", "\n".join(record.diagnostics))]
    props += [(f"mlir_{name}", value) for name, value in {**record.metrics, **record.benchmark}.items()]
    if record.inputs:
        shapes, dtypes = (record.input_shapes, record.input_dtypes) if record.input_shapes else \
            zip(*(shape_and_dtype(t) for t in record.inputs))
        props += [("mlir_inputs", record.inputs), ("mlir_input_shapes", "; ".join(shapes)),
                  ("mlir_input_dtypes", "; ".join(dtypes))]
    props += [(f"mlir_{name}", getattr(record, name)) for name in ("outputs", "reference", "baked", "golden_report")
              if getattr(record, name)]
    props += [(f"mlir_{name}", value) for name, value in record.info.scalars()]
    if record.worker:
        props.append(("mlir_worker", record.worker))
    return [(name, value.value if isinstance(value, enum.Enum) else value) for name, value in props]
