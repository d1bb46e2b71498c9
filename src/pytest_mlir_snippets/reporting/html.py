"""pytest-html: target, stage and kind columns; snippet, diagnostics and metrics extras.

Registered only when pytest-html is active. Rows of items lost with a crashed
xdist worker are completed by ``recorder.Recorder``, which sends the teardown
report that pytest-html waits for.
"""

from __future__ import annotations

import html
from typing import Any

import pytest

COLUMNS = (("target", "mlir_target"), ("stage", "mlir_stage"), ("kind", "mlir_kind"))


def extras_for(snippet: str, props: dict[str, Any]) -> list[dict[str, Any]]:
    """pytest-html extras (plain dicts: they travel from xdist workers)."""
    from pytest_html import extras

    found = [extras.text(snippet, name="snippet")]
    if props.get("mlir_diagnostics"):
        found.append(extras.text(str(props["mlir_diagnostics"]), name="diagnostics"))
    metrics = {k[5:]: v for k, v in props.items() if k in ("mlir_max_abs_err", "mlir_max_rel_err", "mlir_pcc")}
    if metrics:
        metrics["reference"] = props.get("mlir_reference", "")
        found.append(extras.json(metrics, name="golden metrics"))
    return found


class HtmlColumns:
    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        cells[2:2] = [f'<th class="sortable" data-column-type="{name}">{name.title()}</th>'
                      for name, _ in COLUMNS]

    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list[str]) -> None:
        props = dict(report.user_properties)
        cells[2:2] = [f'<td class="col-{name}">{html.escape(str(props.get(key, "")))}</td>'
                      for name, key in COLUMNS]


def add_extras(report: pytest.TestReport, snippet: str) -> None:
    props = dict(report.user_properties)
    report.extras = [*getattr(report, "extras", []), *extras_for(snippet, props)]  # type: ignore[attr-defined]
