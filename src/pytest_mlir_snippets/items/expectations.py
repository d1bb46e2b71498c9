"""Expected outcomes: an expectations file (``--mlir-expectations``) and lit-style
``// XFAIL: cpu`` / ``// UNSUPPORTED: ttnn`` lines above a function.

An expected failure of the expected kind is an xfail; a pass, or a failure of
another kind, fails (pytest's strict xfail with ``raises=``, see ``items.base``).
Items expected to crash are not run unless ``--mlir-run-crashers``.
``--mlir-update-expectations`` rewrites the file from the run, so that CI adopts a
new baseline with one command. An iree-test-suites config JSON is read and written in
its own format (``items.ireeconfig``): ``load_expectations`` picks by suffix.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from pytest_mlir_snippets.model.record import ItemRecord
from pytest_mlir_snippets.paths import write_atomic
from pytest_mlir_snippets.protocol import Stage

# "fail": any failure of that item (an IREE config's expected compile or run failure)
STATUSES = ("pass", "compile-error", "execute-error", "golden-mismatch", "crash", "timeout", "contract-error", "skip",
            "fail")
ANY_FAILURE = "any failure"  # what a lit XFAIL line expects
_LIT = re.compile(r"^\s*//\s*(XFAIL|UNSUPPORTED)\s*:\s*(.*)$")
HEADER = """# Expected outcome per item: "<file>::<function>[<stage>] <status>", the file relative
# to this file's folder. Items not listed are expected to pass. Statuses: {statuses}.
# Rewrite from a run with: pytest ... --mlir-expectations {name} --mlir-update-expectations
"""


class ExpectationsError(ValueError):
    pass


@dataclass
class Expectations:
    path: Path
    entries: dict[str, str]

    @classmethod
    def load(cls, path: Path) -> Expectations:
        entries: dict[str, str] = {}
        if not path.exists():
            return cls(path, entries)
        for number, line in enumerate(path.read_text().splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, _, status = line.rpartition(" ")
            if not key or status not in STATUSES:
                raise ExpectationsError(f"{path}:{number}: expected '<node> <status>' with a status among "
                                        f"{', '.join(STATUSES)}, got {line!r}")
            entries[key.strip()] = status
        return cls(path, entries)

    @property
    def compile_flags(self) -> list[str]:
        return []  # lines carry no flags

    @property
    def run_flags(self) -> list[str]:
        return []

    def skip_reason(self, file: Path, name: str, stage: Stage) -> str | None:
        return None

    def reason(self, stage: str) -> str:
        return "expected to fail"

    def key(self, file: Path, name: str) -> str:
        return f"{Path(os.path.relpath(file, self.path.parent)).as_posix()}::{name}"

    def status_of(self, file: Path, name: str, stage: Stage) -> str | None:
        return self.entries.get(self.key(file, name))

    def update(self, records: list[ItemRecord], rootpath: Path) -> None:
        """Adopt this run's outcomes; items it did not run keep their entries."""
        self.adopt(records, rootpath)
        lines = [f"{key} {status}" for key, status in sorted(self.entries.items())]
        text = HEADER.format(statuses=", ".join(STATUSES), name=self.path.name) + "\n".join(lines) + "\n"
        write_atomic(self.path, text)

    def adopt(self, records: list[ItemRecord], rootpath: Path) -> None:
        """``entries`` from this run's outcomes (a pass is no entry, unless it overrides a lit line)."""
        for record in records:
            if record.kind == "not-run":
                continue  # expected to crash and not run: its line stays
            key = self.key(rootpath / record.file, record.name)
            status = baseline_status(record.kind)
            if status != "pass":
                self.entries[key] = status
            elif (record.expected == ANY_FAILURE and record.outcome == "failed") or self.entries.get(key) == "pass":
                # a pass that a lit XFAIL line made fail (strict XPASS): "pass" here overrides the line
                self.entries[key] = "pass"
            else:
                self.entries.pop(key, None)


def baseline_status(kind: str) -> str:
    """The expectation that a record's outcome kind becomes."""
    if kind in ("unsupported", "skip", "xfail"):
        return "skip"
    return kind if kind in STATUSES else "pass"


def lit_lines(comments: list[str], target: str) -> tuple[bool, bool]:
    """(XFAIL applies, UNSUPPORTED applies) to ``target`` from the comment lines above a function."""
    xfail = unsupported = False
    for comment in comments:
        m = _LIT.match(comment)
        if not m:
            continue
        targets = {t.strip() for t in m.group(2).split(",") if t.strip()}
        applies = not targets or "*" in targets or target in targets
        if m.group(1) == "XFAIL":
            xfail = xfail or applies
        else:
            unsupported = unsupported or applies
    return xfail, unsupported
