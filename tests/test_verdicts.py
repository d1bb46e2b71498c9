"""Every execute verdict names its golden (SPEC 4): what a pass compared, and that a
pass never rests on nothing. Each case runs real MLIR through a real pytest run; the
sabotage cases (a changed recorded value, a changed check constant, an inf) must fail."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from pytest_mlir_snippets.golden.compare import compare
from pytest_mlir_snippets.golden.inputs import TypeSpec
from pytest_mlir_snippets.protocol import Golden, Kind
from pytest_mlir_snippets.worker.judging.judge import recorded
from pytest_mlir_snippets.worker.targets.base import SnippetFailure
from pytest_mlir_snippets.worker.targets.tt import judge as tt_judge

HAS_IREE = all(importlib.util.find_spec(m) is not None for m in ("iree.compiler", "iree.runtime"))

NOTHING = """
func.func @nothing(%a: tensor<4xf32>) {
  return
}
"""
NEG = """
func.func @neg(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.negf %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
NEG_1X4 = NEG  # the same function, for recorded data in another shape
ADD = """
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
# IREE takes tensors, not a function that writes a buffer it is given: no second compiler
FILL = """
func.func @fill(%m: memref<4xf32>) {
  %c = arith.constant 2.0 : f32
  linalg.fill ins(%c : f32) outs(%m : memref<4xf32>)
  return
}
"""
CHECKED = """
func.func @main() {
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = stablehlo.add %a, %a : tensor<2xf32>
  %e = stablehlo.constant dense<[2.0, 4.0]> : tensor<2xf32>
  stablehlo.custom_call @check.expect_eq(%b, %e) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  return
}
"""
SHLO = """
func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.exponential %a : tensor<3xf32>
  return %0 : tensor<3xf32>
}
"""


def _records(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, dict[str, object]]]:
    out = pytester.path / "records.json"
    result = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-json={out}", *args)
    items = json.loads(out.read_text())["items"] if out.exists() else []
    return result, {item["name"]: item for item in items}


# ------------------------------------------------------------------ pure comparisons
def test_an_infinity_is_matched_by_the_same_infinity_only() -> None:
    expected = np.array([-1, -2, np.inf, -np.inf], np.float32)
    wrong = compare(np.array([-1, -2, -3, -4], np.float32), expected, None, None, 0.99)
    assert not wrong.passed and "inf positions differ (first at index [2]: actual -3.0, expected inf)" in wrong.reason
    assert not compare(np.array([-1, -2, -np.inf, np.inf], np.float32), expected, None, None, 0.99).passed
    assert compare(expected.copy(), expected, None, None, 0.99).passed


def test_recorded_shapes_must_match_exactly_unless_lenient() -> None:
    spec = [TypeSpec("tensor", "f32", (4,))]
    one_by_four = [np.zeros((1, 4), np.float32)]
    with pytest.raises(SnippetFailure) as output:
        recorded(one_by_four, spec, "output")
    assert output.value.kind is Kind.GOLDEN_MISMATCH
    assert "recorded output #0 has shape 1x4, the function's is tensor<4xf32>" in output.value.message
    assert "--mlir-lenient-shapes" in output.value.message
    with pytest.raises(SnippetFailure) as given:
        recorded(one_by_four, spec, "input")
    assert given.value.kind is Kind.EXECUTE_ERROR
    assert recorded(one_by_four, spec, "output", lenient=True)[0].shape == (4,)
    with pytest.raises(SnippetFailure, match="has shape 2x2"):  # not a unit-dimension difference
        recorded([np.zeros((2, 2), np.float32)], spec, "output", lenient=True)


def test_tt_judge_fails_a_report_that_judges_no_output() -> None:
    for report in ({}, {"program_0": {}}, {"program_0": "garbage"}):
        _, failures = tt_judge(report, 0.99, None, None)
        assert failures and "judges no output" in failures[0], report
    _, ok = tt_judge({"program_0": {"output_0": {"device_0": {"actual_pcc": 0.999, "result": "pass"}}}}, 0.99,
                     None, None)
    assert ok == []


def test_golden_names_its_basis() -> None:
    assert Golden.differential("iree-cpu") is Golden.DIFFERENTIAL_IREE_CPU
    assert not Golden.SELF.independent and not Golden.NONE.independent and Golden.CHECKS.independent


# ------------------------------------------------------------------ real runs
def test_nothing_compared_is_never_a_pass(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=NOTHING)
    result, records = _records(pytester, "-rs")
    record = records["nothing[execute]"]
    assert record["outcome"] == "skipped" and record["kind"] == "skip"
    assert record["golden"] == "none" and record["metrics"] == {}
    assert "ran without error; nothing to compare" in record["message"]
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*nothing compared: 1*", "1 snippet(s) passed every item that ran, 1 item(s) skipped "
                                 "([[]execute[]]: ran without error; nothing to compare) across 1 file(s)"])
    assert "succeeded" not in result.stdout.str()
    assert "all 1 snippet(s) succeeded" not in result.stdout.str()
    strict, records = _records(pytester, "--mlir-require-golden")
    assert records["nothing[execute]"]["kind"] == "no-golden" and records["nothing[execute]"]["golden"] == "none"
    strict.assert_outcomes(passed=1, failed=1)


def test_a_recorded_infinity_matched_by_a_finite_value_is_a_mismatch(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=NEG)
    given = np.array([1, 2, 3, 4], np.float32)
    np.savez(pytester.path / "ops.neg.npz", input_0=given, output_0=-given)
    _, records = _records(pytester)
    assert records["neg[execute]"]["golden"] == "recorded" and records["neg[execute]"]["kind"] == "pass"
    np.savez(pytester.path / "ops.neg.npz", input_0=given, output_0=np.array([-1, -2, np.inf, -np.inf], np.float32))
    _, records = _records(pytester)
    record = records["neg[execute]"]
    assert record["kind"] == "golden-mismatch" and record["golden"] == "recorded"
    assert "inf positions differ" in record["message"]
    np.savez(pytester.path / "ops.neg.npz", input_0=given, output_0=np.array([-1, -2, -3, -5], np.float32))
    _, records = _records(pytester)  # sabotage: one recorded value changed
    assert records["neg[execute]"]["kind"] == "golden-mismatch"


def test_a_recorded_1x4_against_a_4_element_result_is_a_mismatch(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=NEG_1X4)
    given = np.array([1, 2, 3, 4], np.float32)
    np.savez(pytester.path / "ops.neg.npz", input_0=given, output_0=-given.reshape(1, 4))
    _, records = _records(pytester)
    record = records["neg[execute]"]
    assert record["kind"] == "golden-mismatch" and record["golden"] == "recorded", record["message"]
    assert "has shape 1x4, the function's is tensor<4xf32>" in str(record["message"])
    _, records = _records(pytester, "--mlir-lenient-shapes")
    assert records["neg[execute]"]["kind"] == "pass" and records["neg[execute]"]["golden"] == "recorded"


def test_a_function_with_checks_is_judged_by_them(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=CHECKED)
    _, records = _records(pytester)
    assert records["main[execute]"]["golden"] == "checks" and records["main[execute]"]["kind"] == "pass"
    pytester.makefile(".mlir", ops=CHECKED.replace("[2.0, 4.0]", "[2.0, 5.0]"))  # sabotage: a check constant
    _, records = _records(pytester)
    assert records["main[execute]"]["kind"] == "golden-mismatch" and records["main[execute]"]["golden"] == "checks"
    pytester.makefile(".mlir", ops="\n".join(line for line in CHECKED.splitlines() if "custom_call" not in line))
    _, records = _records(pytester)  # the check deleted: nothing left to compare
    assert records["main[execute]"]["golden"] == "none" and records["main[execute]"]["outcome"] == "skipped"
    assert records["main[execute]"]["computed"] is None  # nothing was to be computed: neither kind


def test_stablehlo_without_data_is_judged_by_the_interpreter(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=SHLO)
    result, records = _records(pytester)
    assert records["main[execute]"]["golden"] == "interpreter", records["main[execute]"]
    result.stdout.fnmatch_lines(["verdicts by golden: 1 pass(es): interpreter 1"])


@pytest.mark.skipif(not HAS_IREE, reason="the [iree] extra is not installed")
def test_a_plain_function_without_data_is_compared_with_a_second_compiler(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=ADD + FILL)
    _, records = _records(pytester, "--junitxml=junit.xml")
    add = records["add[execute]"]
    assert add["golden"] == "differential:iree-cpu" and add["kind"] == "pass" and "iree-cpu" in str(add["reference"])
    fill = records["fill[execute]"]  # no second compiler takes it: the plugin's own lowering, not a pass
    assert fill["golden"] == "self" and fill["kind"] == "skip" and "iree-cpu could not take it" in str(
        fill["reference"])
    assert str(fill["message"]).startswith("no independent golden: agrees with the plain lowering")
    assert 'name="mlir_golden" value="differential:iree-cpu"' in (pytester.path / "junit.xml").read_text()
    report = (pytester.path / "ops-run-report.txt").read_text()
    assert "goldens:  1 pass(es): differential:iree-cpu 1; only the plugin's own lowering: 1" in report
    _, records = _records(pytester, "--mlir-require-golden")
    assert records["fill[execute]"]["kind"] == "no-golden" and records["add[execute]"]["kind"] == "pass"


@pytest.mark.skipif(not HAS_IREE, reason="the [iree] extra is not installed")
def test_an_iree_function_is_compared_with_the_cpu_target(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=ADD)
    _, records = _records(pytester, "--mlir-target=iree-cpu")
    assert records["add[execute]"]["golden"] == "differential:cpu" and records["add[execute]"]["kind"] == "pass"


def test_records_read_back_keep_their_types(tmp_path: Path) -> None:
    from pytest_mlir_snippets.model.record import ItemRecord, check_json

    data = ItemRecord("f.mlir::a[execute]", "a[execute]", "f.mlir", "a", "execute", golden=Golden.RECORDED).to_json()
    assert json.loads(json.dumps(data))["golden"] == "recorded"
    again = ItemRecord.from_json(data)
    assert again.golden is Golden.RECORDED and again.kind is Kind.PASS
    with pytest.raises(TypeError, match="Golden"):
        check_json(dict(data, golden="guess"))


def test_summary_units_count_iterations_and_snippets_not_items() -> None:
    """A run's PyTorch benchmark is not an iteration; unsupported subjects say what they are."""
    from pytest_mlir_snippets.model.record import ItemRecord
    from pytest_mlir_snippets.protocol import Outcome, Status, SubjectKind
    from pytest_mlir_snippets.reporting.publish import summary_lines

    def record(function: str, stage: str, run: str = "", kind: Kind | Status = Kind.PASS,
               outcome: Outcome = Outcome.PASSED) -> ItemRecord:
        file = "run/model_linalg.mlir" if run else "ops.mlir"
        subject = SubjectKind.SNIPPET if not run else SubjectKind.PYTORCH if stage == "pytorch" else \
            SubjectKind.ITERATION  # a record says what it is about
        return ItemRecord(f"{file}::{function}[{stage}]", f"{function}[{stage}]", file, function, stage, kind=kind,
                          outcome=outcome, run=run, subject_kind=subject)

    run = [record(v, s, "run") for v in ("v0", "v1") for s in ("contract", "compile")]
    run.append(record("pytorch", "pytorch", "run"))
    verdict = summary_lines(run, 1)[-1][0]
    assert verdict == "all 2 iteration(s) succeeded across 1 file(s)", verdict
    snippets = [record("tt_0", "compile", kind=Kind.UNSUPPORTED, outcome=Outcome.SKIPPED),
                record("add_0", "compile"), record("add_0", "execute")]
    verdict = summary_lines(snippets, 1)[-1][0]
    assert verdict == "1 snippet(s) succeeded across 1 file(s) (1 snippet(s) unsupported on this target)", verdict
    failed = summary_lines([*run[:-1], record("pytorch", "pytorch", "run", Kind.EXECUTE_ERROR, Outcome.FAILED)], 1)
    assert failed[-1][0] == "1 run item(s) failed across 1 file(s)", failed
    partly = [*snippets[1:], record("add_1", "compile"),
              record("add_1", "execute", kind=Status.SKIP, outcome=Outcome.SKIPPED)]
    partly[-1].message = "no independent golden: agrees with the plain lowering"
    verdict = summary_lines(partly, 1)[-1][0]
    assert verdict == ("1 snippet(s) succeeded; 1 snippet(s) passed every item that ran, 1 item(s) skipped "
                       "([execute]: no independent golden) across 1 file(s)"), verdict


def test_empty_results_compare_shapes_and_report_no_metrics(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops="""
func.func @empty(%a: tensor<0xf32>) -> tensor<0xf32> {
  %0 = arith.negf %a : tensor<0xf32>
  return %0 : tensor<0xf32>
}
""")
    np.savez(pytester.path / "ops.empty.npz", input_0=np.zeros(0, np.float32), output_0=np.zeros(0, np.float32))
    result, records = _records(pytester)
    record = records["empty[execute]"]
    assert (record["kind"], record["golden"], record["metrics"]) == ("pass", "recorded", {}), record
    # a pass that compared no element says so: in the record and the terminal
    assert record["info"]["compared"] == 0 and record["message"].startswith("0 elements compared"), record
    result.stdout.fnmatch_lines(["verdicts by golden: 1 pass(es): recorded 1; 0 elements compared: 1"])
    assert records["empty[compile]"]["info"].get("compared") is None


def test_a_pass_counts_the_elements_it_compared(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=SHLO + CHECKED.replace("@main", "@checked"))
    _, records = _records(pytester)
    assert records["main[execute]"]["info"]["compared"] == 3  # one result of 3 elements
    assert records["checked[execute]"]["info"]["compared"] == 2  # one check of 2 elements
