"""A driver module (the worker's answer to ``Op.DRIVER``) as an upstream-style integration
test, and as a shell script that runs it with the installed tools.

The test is one ``.mlir`` file: ``// RUN:`` lines (``mlir-opt %s`` with the rest of the
target's pipeline, ``mlir-runner`` with upstream's runtime libraries as lit's
substitutions name them, ``FileCheck %s``) and ``// CHECK: PASS``, over the driver.
``reproduce.sh`` runs the same commands with absolute paths; a signal that killed
``mlir-runner`` kills the script too, so that a crash reads as a crash.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path
from typing import Protocol

from pytest_mlir_snippets.mlirtext.litscript import substitutions, tool


class Driver(Protocol):
    """The worker's driver answer (``protocol.DriverFacts``): what the test is made of."""

    module: str  # the function as compiled, with the driver entry
    pipeline: str  # the rest of the lowering after ``step``
    step: str  # the plugin step the module was saved after
    entry: str  # the driver's entry function
    golden: str  # what it compares with, in words
    libraries: list[str]  # mlir-runner's shared libraries

CHECK = "// CHECK: {{^}}PASS"


def _commands(driver: Driver) -> list[list[str]]:
    """The RUN line's three commands, in lit's words (``%s``, ``%mlir_c_runner_utils``)."""
    libraries = ",".join(f"%{name}" for name in driver.libraries)
    return [["mlir-opt", "%s", f'--pass-pipeline="{driver.pipeline}"'],
            ["mlir-runner", "-e", driver.entry, "-entry-point-result=void", f"-shared-libs={libraries}"],
            ["FileCheck", "%s"]]


def explanation(driver: Driver, function: str) -> list[str]:
    """What the file holds, as comment lines (without their ``//``)."""
    return [f"@{function} as the plugin compiled it, saved right after its last Python step ({driver.step});",
            f"@{driver.entry} calls it on the item's inputs (mutable globals) and compares its results with",
            f"the golden ({driver.golden}), printing PASS, or FAIL with the first differing index."]


def lit_test(driver: Driver, function: str, title: str) -> str:
    """The driver as an integration test that lit (or the plugin's RUN-line items) runs."""
    first, runner, check = (" ".join(c) for c in _commands(driver))
    lines = [f"// {title}", *(f"// {line}" for line in explanation(driver, function)),
             f"// RUN: {first} \\", f"// RUN: | {runner} \\", f"// RUN: | {check}", CHECK, ""]
    return "\n".join(lines) + driver.module


def bounded(seconds: float) -> str:
    """What bounds a command of a ``reproduce.sh`` by the item's timeout: coreutils' ``timeout``
    (its absolute path: the script runs with an empty PATH), which ends with status 124 when the
    time is up and with the command's own status (or signal) otherwise; "" without one."""
    found = shutil.which("timeout")
    return f"{shlex.quote(found)} -k 5 {seconds:g} " if found else ""


def script(test: Path, driver: Driver, function: str, title: str, timeout: float) -> str:
    """``reproduce.sh`` for ``test`` (the file ``lit_test`` wrote), run from its folder; shell
    builtins and the tools' absolute paths only (it runs with an empty PATH); ``mlir-runner``
    bounded by ``timeout`` seconds, as the item's call was."""
    subs = [(k, v) for k, v in substitutions(Path(test.name), "") if k != "%s" and k.startswith("%mlir")]

    def line(command: list[str]) -> str:
        words = []
        for word in command[1:]:
            word = word.replace("%s", test.name).replace('"', "")
            for key, value in subs:
                word = word.replace(key, value)
            words.append(shlex.quote(word))
        return " ".join([shlex.quote(tool(command[0])), *words])

    first, runner, check = (line(c) for c in _commands(driver))
    runner = bounded(timeout) + runner
    return "\n".join([
        "#!/bin/sh", f"# {title}", *(f"# {text}" for text in explanation(driver, function)),
        f"# This runs the RUN line of {test.name} with the installed tools and fails as the item did:",
        "# FileCheck fails on a wrong result, a signal that ends mlir-runner ends this script;",
        "# a run longer than the item's timeout ends with status 124.",
        'case $0 in */*) cd "${0%/*}" || exit 2 ;; esac', "ulimit -c 0",
        f"out=$({first} | {runner})", "status=$?", "printf '%s\\n' \"$out\"",
        'if [ "$status" -gt 128 ]; then kill -s "$(kill -l "$status")" $$; fi',
        '[ "$status" -eq 0 ] || exit "$status"', f"printf '%s\\n' \"$out\" | {check}", ""])
