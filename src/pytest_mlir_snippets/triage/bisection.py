"""``--mlir-bisect`` on the pytest side: a golden-mismatch asks its worker which pass of its
pipeline the results diverge after (``worker/triage/bisect.py``); the answer goes on the
response (``diverged_after``, shown in the failure and kept on the record) and the cuts
tried into the report's ``bisection`` section.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from typing import Protocol

import pytest

from pytest_mlir_snippets.client import Client
from pytest_mlir_snippets.protocol import Execute, Response, Triage
from pytest_mlir_snippets.session import run_state


class Bisected(Protocol):
    """The item whose golden-mismatch is bisected (an ``items.base.MlirItem``; triage stands
    below the items, so it names only what it uses)."""

    @property
    def config(self) -> pytest.Config: ...

    def timeout(self) -> float: ...

    def add_report_section(self, when: str, key: str, content: str) -> None: ...


def bisect(item: Bisected, client: Client, request: Execute, response: Response) -> None:
    """Bisect ``item``'s golden-mismatch ``response`` to ``request`` within ``--mlir-bisect-timeout`` (else
    the item's timeout); a bisection that fails says why in the section, the item's
    verdict stays the mismatch."""
    limit = run_state(item.config).settings.bisect_timeout or item.timeout()
    found = client.bisect(request.module, request.function, request.options, request.recorded, limit)
    if found.ok:
        cuts = found.triage or Triage()
        lines = list(cuts.bisect_cuts)
        if cuts.diverged_after:
            response.triaged().diverged_after = cuts.diverged_after
            lines.insert(0, f"diverged after: {cuts.diverged_after}")
    else:
        lines = [f"no answer: {found.kind.value}: {found.message.splitlines()[0] if found.message else ''}"]
    item.add_report_section("call", "bisection", "\n".join(lines))
