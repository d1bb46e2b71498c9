"""One record per item: the single source of every report (text, JSON, HTML, junit).

Records are built on the controller from test reports, so they are the same
with and without xdist, and from the JSON written by ``--mlir-json``, so that
reports of several CI shards can be rebuilt together.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

import pytest

from pytest_mlir_snippets.protocol import Kind

FAILURE_KINDS = tuple(k.value for k in Kind if k not in (Kind.PASS, Kind.UNSUPPORTED))
METRICS = ("max_abs_err", "max_rel_err", "pcc")
_XDIST_HEADER = re.compile(r"^\[[\w-]+\] \S+ -- Python [^\n]*\n")  # what xdist puts above a failure
_LOST = re.compile(r"worker '([^']+)' crashed while running")
_PATH = re.compile(r"(?<![\w.])(?:/[\w.\-~]+)+")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def shape_and_dtype(type_text: str) -> tuple[str, str]:
    """``tensor<4x?xf32>`` -> (``4x?``, ``f32``); a scalar ``i32`` -> (``scalar``, ``i32``)."""
    if "<" not in type_text:
        return "scalar", type_text
    body = type_text.split("<", 1)[1].rsplit(">", 1)[0].split(",")[0]
    dims, _, element = body.rpartition("x") if "x" in body else ("", "", body)
    while dims and not (dims[-1].isdigit() or dims[-1] == "?"):  # an element type with an x in it
        dims, _, more = dims.rpartition("x")
        element = f"{more}x{element}"
    return dims or "0-d", element


def failure_signature(diagnostics: list[str], message: str) -> str:
    """The first diagnostic (else the message) with paths, hex and numbers masked,
    so that failures with one root cause group together."""
    first = next((d for d in diagnostics if "error" in d.lower()), diagnostics[0] if diagnostics else message)
    first = first.splitlines()[0] if first else ""
    masked = _PATH.sub("<path>", first)
    masked = _HEX.sub("0x?", masked)
    return _NUMBER.sub("N", masked).strip()


@dataclass
class ItemRecord:
    nodeid: str
    file: str  # as in the node id: relative to the rootdir
    function: str  # the unique id within the file
    stage: str  # compile, execute, or file (a file that could not be split)
    kind: str  # an outcome kind, or skip, error, not-run
    outcome: str = ""  # pytest's: passed, failed, skipped, xfailed
    target: str = ""
    line: int = 0
    duration: float = 0.0
    message: str = ""
    diagnostics: list[str] = field(default_factory=list)
    details: str = ""  # the whole failure text
    metrics: dict[str, float] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    reference: str = ""
    baked: str = ""  # recorded inputs compiled in as constants (see Backend.compile)
    golden_report: str = ""  # tt-mlir's golden report (JSON), ttmetal/ttnn
    expected: str = ""  # the expectation this item was held to, if any
    worker: str = ""
    signature: str = ""

    @property
    def failed(self) -> bool:
        """Counts against its snippet: a failure, or a skip because the compile failed,
        unless an expectation covered it."""
        if self.outcome == "failed":
            return True
        return self.outcome == "skipped" and not self.expected and self.message.startswith("compile failed")

    @property
    def label(self) -> str:
        """The kind as reports show it: ``compile-error (expected)`` for an xfail."""
        if self.kind == "not-run":
            return f"{self.expected} (expected, not run)"
        return f"{self.kind} (expected)" if self.outcome == "xfailed" else self.kind

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ItemRecord:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})

    @classmethod
    def from_report(cls, report: pytest.TestReport, target: str) -> ItemRecord:
        props = dict(report.user_properties)
        file, _, rest = report.nodeid.partition("::")
        function, _, stage = rest.rpartition("[") if rest.endswith("]") else (rest, "", "file]")
        lost = _LOST.search(report.longreprtext or "")
        kind = str(props.get("mlir_kind", Kind.CRASH.value if lost else _plain_kind(report)))
        outcome: str = report.outcome
        if getattr(report, "wasxfail", None) is not None and report.skipped:
            outcome = "xfailed"
            if report.when == "setup":
                kind = "not-run"  # expected to crash: not run unless asked
        diagnostics = [d for d in str(props.get("mlir_diagnostics", "")).splitlines() if d]
        message = str(props.get("mlir_message", ""))
        if report.skipped and not message:
            message = str(getattr(report, "wasxfail", "") or "") or (
                str(report.longrepr[2]).removeprefix("Skipped: ") if isinstance(report.longrepr, tuple) else "")
        if lost and not message:
            message = lost.group(0)
        record = cls(
            nodeid=report.nodeid, file=file, function=function, stage=stage[:-1], kind=kind, outcome=outcome,
            target=str(props.get("mlir_target", target)), line=int(str(props.get("mlir_line", 0) or 0)),
            duration=round(report.duration, 6), message=message, diagnostics=diagnostics,
            details=_XDIST_HEADER.sub("", report.longreprtext) if report.failed else "",
            metrics={m: float(str(props[f"mlir_{m}"])) for m in METRICS if f"mlir_{m}" in props},
            inputs=_as_list(props.get("mlir_inputs")), outputs=_as_list(props.get("mlir_outputs")),
            reference=str(props.get("mlir_reference", "")), baked=str(props.get("mlir_baked", "")),
            golden_report=str(props.get("mlir_golden_report", "")),
            expected=str(props.get("mlir_expected", "")),
            worker=lost.group(1) if lost else str(props.get("mlir_worker", "")),
        )
        if record.failed:
            record.signature = failure_signature(record.diagnostics, record.message or record.details)
        return record


def _plain_kind(report: pytest.TestReport) -> str:
    if report.passed:
        return Kind.PASS.value
    return "skip" if report.skipped else "error"


def _as_list(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    text = str(value).strip("[]")
    return [part.strip().strip("'\"") for part in text.split(",") if part.strip()]


def snippet_tally(records: list[ItemRecord]) -> tuple[int, int, int, int]:
    """(snippets, succeeded, failed, unsupported): a snippet is its items together."""
    by_snippet: dict[str, list[ItemRecord]] = {}
    for r in records:
        by_snippet.setdefault(f"{r.file}::{r.function}", []).append(r)
    failed = sum(any(r.failed for r in rs) for rs in by_snippet.values())
    unsupported = sum(not any(r.failed for r in rs) and any(r.kind == Kind.UNSUPPORTED.value for r in rs)
                      for rs in by_snippet.values())
    return len(by_snippet), len(by_snippet) - failed - unsupported, failed, unsupported
