"""RUN lines whose mlir-opt reads the file with ``-split-input-file`` (issue 42): each
``// -----`` section lowered alone, the outputs joined as mlir-opt prints them, and the
runner on that, so an item gives what lit gives with the same wheels. One pytester run."""

from __future__ import annotations

import json
import subprocess

import pytest

from pytest_mlir_snippets.mlirtext.litscript import tool

PASSES = "-convert-func-to-llvm -convert-arith-to-llvm -reconcile-unrealized-casts"
RUN = (f"// RUN: mlir-opt %s -split-input-file {PASSES} | "
       "mlir-runner -e entry -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s\n")

SECTION = """
func.func private @printI64(i64)
func.func private @printNewline()

func.func @entry() {{
  %c = arith.constant {value} : i64
  call @printI64(%c) : (i64) -> ()
  call @printNewline() : () -> ()
  return
}}
// CHECK: {value}
"""

TWO = RUN + SECTION.format(value=1) + "\n// -----\n" + SECTION.format(value=2)  # @entry in each section
ONE = RUN + SECTION.format(value=7)
WRONG = RUN + SECTION.format(value=7).replace("// CHECK: 7", "// CHECK: 8")
BROKEN = RUN + SECTION.format(value=1) + "\n// -----\n" + SECTION.format(value=2).replace("arith.constant 2",
                                                                                           "arith.constant %x")


def _records(pytester: pytest.Pytester) -> dict[tuple[str, str], dict]:
    for name, text in {"two": TWO, "one": ONE, "wrong": WRONG, "broken": BROKEN}.items():
        (pytester.path / f"{name}.mlir").write_text(text)
    out = pytester.path / "records.json"
    pytester.runpytest("-p", "no:cacheprovider", "-n", "0", f"--mlir-json={out}")
    return {(r["file"].removesuffix(".mlir"), r["stage"]): r for r in json.loads(out.read_text())["items"]}


def test_split_input_file_runs_each_section_as_mlir_opt_does(pytester: pytest.Pytester) -> None:
    records = _records(pytester)
    # each section is its own module: the symbols both define are no redefinition
    assert records[("two", "compile")]["kind"] == "pass", records[("two", "compile")]["message"]
    # the wheels' own pipe, as lit runs the line: mlir-runner meets two modules and fails
    opt = subprocess.run([tool("mlir-opt"), "-", "-split-input-file", *PASSES.split()], input=TWO,
                         capture_output=True, text=True, check=True)
    runner = subprocess.run([tool("mlir-runner"), "-e", "entry", "-entry-point-result=void"], input=opt.stdout,
                            capture_output=True, text=True, check=False)
    assert runner.returncode == 1 and "entry point not found" in runner.stderr
    execute = records[("two", "execute")]
    assert execute["kind"] == "execute-error" and "exited with code 1" in execute["message"]
    assert "2 modules" in execute["message"] and "entry point not found" in execute["details"] + execute["output"]
    # one section: the runner's output on FileCheck, and a wrong CHECK line fails it
    assert records[("one", "execute")]["kind"] == "pass" and records[("one", "execute")]["golden"] == "filecheck"
    assert records[("wrong", "execute")]["kind"] == "golden-mismatch"
    # an error in the second section is at its line of the file
    broken = records[("broken", "compile")]
    assert broken["kind"] == "compile-error"
    line = BROKEN.splitlines().index("  %c = arith.constant %x : i64") + 1
    assert any(f"broken.mlir:{line}:" in d for d in broken["diagnostics"]), broken["diagnostics"]
