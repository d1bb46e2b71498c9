"""A failed execute's reproducer on the cpu target, kept beside its artifacts whatever the
options: ``driver.mlir`` (the worker's driver module as an integration test:
``mlirtext/litexport.py``) and ``reproduce.sh``, which runs its RUN line with the
installed ``mlir-opt``, ``mlir-runner`` and ``FileCheck``.

A golden-mismatch's driver compares with the item's golden; a crash's or a run-time
error's says ``PASS`` once the call returns (the item's golden was never computed).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pytest_mlir_snippets.items import reproducer
from pytest_mlir_snippets.mlirtext.litexport import lit_test, script
from pytest_mlir_snippets.protocol import Kind, Response

REPRODUCED = (Kind.GOLDEN_MISMATCH, Kind.CRASH, Kind.EXECUTE_ERROR)
DRIVER = "driver.mlir"


def update(folder: Path, response: Response, function: str, title: str,
           driver: Callable[[bool], Response]) -> tuple[Path | None, str]:
    """After an execute: ``reproduce.sh`` (and ``driver.mlir``) in ``folder`` for a failed
    one, replacing an earlier one; a passing one's removed. ``driver(compare)`` asks the
    worker for the driver module. (the script, "") or, without one, (None, why: "" where
    the item's outcome has none)."""
    if response.kind is Kind.PASS:
        reproducer.remove(folder)
        return None, ""
    if response.kind not in REPRODUCED:
        return None, ""
    answer = driver(response.kind is Kind.GOLDEN_MISMATCH)
    if not answer.ok:
        return None, answer.message.splitlines()[0] if answer.message else answer.kind.value
    reproducer.remove(folder)
    folder.mkdir(parents=True, exist_ok=True)
    first = response.message.splitlines()[0] if response.message else response.kind.value
    heading = f"{title}: {response.kind.value}: {first}"
    test = folder / DRIVER
    test.write_text(lit_test(answer.info, function, heading))
    path = folder / "reproduce.sh"
    path.write_text(script(test, answer.info, function, heading))
    path.chmod(0o755)
    return path, ""
