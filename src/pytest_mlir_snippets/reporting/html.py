"""pytest-html: target, stage, kind, golden and computed columns; extras with the snippet (or the
iteration's schedule), the diagnostics, the golden metrics and benchmark figures.

Registered only when pytest-html is active; reads the records on the reports
(``report.mlir_record``). Rows of items lost with a crashed xdist worker are
completed by ``recorder.Recorder``, which sends the teardown report that
pytest-html waits for.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import html
from typing import Any

import pytest

from pytest_mlir_snippets.model.record import ItemRecord

COLUMNS = ("target", "stage", "kind", "golden", "computed")


def extras_for(source: str, source_name: str, record: ItemRecord) -> list[dict[str, Any]]:
    """pytest-html extras (plain dicts: they travel from xdist workers)."""
    from pytest_html import extras

    found = [extras.text(source, name=source_name)] if source else []
    if record.diagnostics:
        found.append(extras.text("\n".join(record.diagnostics), name="diagnostics"))
    if record.metrics:
        found.append(extras.json({**record.metrics, "golden": str(record.golden or ""), "reference": record.reference,
                                  "computed": str(record.computed or ""),
                                  "tolerance": record.info.tolerance or {}}, name="golden metrics"))
    if record.benchmark:
        found.append(extras.json(record.benchmark, name="benchmark"))
    return found


class HtmlColumns:
    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        cells[2:2] = [f'<th class="sortable" data-column-type="{name}">{name.title()}</th>' for name in COLUMNS]

    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list[str]) -> None:
        data: dict[str, Any] = getattr(report, "mlir_record", None) or {}
        cells[2:2] = [f'<td class="col-{name}">{html.escape(str(data.get(name) or ""))}</td>' for name in COLUMNS]


def add_extras(report: pytest.TestReport, source: str, source_name: str) -> None:
    data = getattr(report, "mlir_record", None)
    if data is not None:
        found = extras_for(source, source_name, ItemRecord.from_json(data))
        report.extras = [*getattr(report, "extras", []), *found]  # type: ignore[attr-defined]
