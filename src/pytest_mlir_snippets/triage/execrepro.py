"""A failed execute's reproducer, kept beside its artifacts whatever the options. On the cpu
target: ``driver.mlir`` (the worker's driver module as an integration test:
``triage/litexport.py``) and ``reproduce.sh``, which runs its RUN line with the
installed ``mlir-opt``, ``mlir-runner`` and ``FileCheck``. On iree-cpu: ``snippet.mlir``,
the inputs (``.npy``), the golden (``.bin``) and ``reproduce.sh``, which runs ``iree-compile``
then ``iree-run-module --expected_output=...`` (``worker/triage/iree_driver.py``).

A golden-mismatch's driver compares with the item's golden; a crash's or a timeout's says
``PASS`` once the call returns (the item's golden was never computed). The run is bounded by
the item's timeout (coreutils' ``timeout``: status 124 when the time is up). An execute-error gets none: it is
about the item's data (recorded files that do not fit), its golden (no reference takes it)
or the engine's call, none of which a driver that runs the code would reproduce.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import base64
import shlex
from collections.abc import Callable
from pathlib import Path

from pytest_mlir_snippets.protocol import DriverFacts, Kind, Response
from pytest_mlir_snippets.triage import reproducer
from pytest_mlir_snippets.triage.litexport import bounded, lit_test, script

REPRODUCED = (Kind.GOLDEN_MISMATCH, Kind.CRASH, Kind.TIMEOUT)
DRIVER = "driver.mlir"


def update(folder: Path, response: Response, function: str, title: str,
           driver: Callable[[bool], Response], timeout: float) -> tuple[Path | None, str]:
    """After an execute: ``reproduce.sh`` (and ``driver.mlir``) in ``folder`` for a failed
    one, replacing an earlier one; a passing one's removed. ``driver(compare)`` asks the
    worker for the driver module. (the script, "") or, without one, (None, why: "" where
    the item's outcome has none). ``timeout``: the item's, which bounds the script's run."""
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
    path = folder / "reproduce.sh"
    made = answer.driver
    if made is None:
        return None, "the worker sent no driver"
    if made.commands:
        path.write_text(_iree_script(folder, made, answer.files, heading, timeout))
    else:
        test = folder / DRIVER
        test.write_text(lit_test(made, function, heading))
        path.write_text(script(test, made, function, heading, timeout))
    path.chmod(0o755)
    return path, ""


def _iree_script(folder: Path, driver: DriverFacts, files: dict[str, str], heading: str, timeout: float) -> str:
    """The files of IREE's reproducer written in ``folder``, and its script: each command
    but the last must succeed, the last (``iree-run-module``) ends the script as it ends."""
    for name, data in files.items():
        (folder / name).write_bytes(base64.b64decode(data))
    *first, last = [" ".join(shlex.quote(part) for part in command) for command in driver.commands]
    return ("#!/bin/sh\n"
            f"# {heading}\n"
            "# iree-compile compiles snippet.mlir with the item's flags; iree-run-module runs it on the\n"
            "# item's inputs (input_*.npy) and compares its results with the golden (expected_output_*.bin:\n"
            f"# {driver.golden}) at the item's tolerance, within its timeout (status 124 when the time is up).\n"
            "# It fails as the item's execute did.\n"
            'case $0 in */*) cd "${0%/*}" || exit 2 ;; esac\n'
            + "".join(f"{line} || exit $?\n" for line in first) + f"exec {bounded(timeout)}{last}\n")
