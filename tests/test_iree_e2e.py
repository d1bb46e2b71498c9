"""IREE's tests/e2e conventions: ``util.unfoldable_constant`` inputs and ``check`` ops, on the
cpu target (rewritten to generic form, fed at run time, captured as results) and on
iree-cpu (IREE's check module in Python), with IREE's CMakeLists.txt as expectations."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import copy_inputs

from pytest_mlir_snippets.items import ireecmake
from pytest_mlir_snippets.mlirtext import ireeops

DATA = Path(__file__).resolve().parent / "data" / "iree_e2e"

try:
    from test_iree import needs_iree
except ImportError:  # run from elsewhere
    needs_iree = pytest.mark.skip(reason="tests/test_iree.py not importable")

# each function's expected value, and a wrong one (the sabotage)
SABOTAGE = {
    "dense<[1.0, 0.5, 0.0, 1.0]>": "dense<[1.0, 0.5, 0.0, 1.5]>",  # tosa_abs, index 3
    "dense<[[2, 4], [6, 8]]>": "dense<[[2, 4], [7, 8]]>",  # linalg_barrier, index [1, 0]
    "dense<[5.0, 3.0, 2.333333, 2.0]>": "dense<[5.0, 3.0, 2.4, 2.0]>",  # stablehlo_divide, index 2
    "%c7 = arith.constant 7 : i32": "%c7 = arith.constant 8 : i32",  # truths: expect_true
    "dense<[1.05, 2.05]>": "dense<[1.05, 2.5]>",  # tolerance: beyond atol 0.1
}


def test_util_and_check_ops_become_generic_on_the_same_lines() -> None:
    from mlir import ir

    text = (DATA / "checks.mlir").read_text()
    generic, sites = ireeops.rewrite(text)
    assert generic.count("\n") == text.count("\n")
    assert '"util.unfoldable_constant"() {value = dense<[-1.0, -0.5, 0.0, 1.0]> : tensor<4xf32>}' in generic
    assert '"check.expect_almost_eq"(%0, %1) <{atol = 1.0e-01 : f32}> : (tensor<2xf32>, tensor<2xf32>)' in generic
    assert [(s.name, s.line) for s in sites][:2] == [("check.expect_almost_eq_const", 6), ("check.expect_eq", 15)]
    assert len(sites) == 7
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    with ctx:
        ir.Module.parse(generic)  # the custom syntax would not parse in upstream's bindings


def test_iree_only_dialects_are_all_named() -> None:
    text = (DATA / "ireeonly.mlir").read_text()
    assert ireeops.iree_only_dialects(text) == ["flow", "iree_linalg_ext"]
    assert ireeops.iree_only_dialects((DATA / "checks.mlir").read_text()) == []  # util/check: rewritten


def test_cmake_suites_choose_the_non_hostonly_llvm_cpu_suite_and_skip_unlisted_files() -> None:
    suites = ireecmake.parse((DATA / "CMakeLists.txt").read_text())
    assert [s.name for s in suites] == ["check_llvm-cpu_local-task_host", "check_llvm-cpu_local-task", "check_gpu"]
    assert suites[1].srcs == ("checks.mlir",)  # a commented-out source is not listed
    assert suites[1].compiler_flags[1] == "--iree-preprocessing-pass-pipeline=builtin.module(func.func(canonicalize))"
    assert suites[2].backends == ("cuda", "vulkan-spirv") and suites[2].drivers == ("cuda", "vulkan")
    suite, why = ireecmake.choose(DATA / "checks.mlir", "iree-cpu")
    assert suite is not None and suite.name == "check_llvm-cpu_local-task" and why is None
    suite, why = ireecmake.choose(DATA / "ireeonly.mlir", "iree-cpu")
    assert suite is None and why is not None and "no llvm-cpu check suite" in why
    assert ireecmake.choose(DATA / "ireeonly.mlir", "iree-cuda")[0] is not None
    assert ireecmake.choose(DATA / "checks.mlir", "cpu") == (None, None)  # the cpu target runs what it can


def _run(pytester: pytest.Pytester, target: str) -> dict[tuple[str, str], dict[str, object]]:
    """The data files, a sabotaged copy of checks.mlir and one without its checks, run on
    ``target``; the execute records by (file, function)."""
    copy_inputs(DATA, pytester.path)
    text = (DATA / "checks.mlir").read_text()
    bad = text
    for good, wrong in SABOTAGE.items():
        assert good in bad
        bad = bad.replace(good, wrong)
    (pytester.path / "bad.mlir").write_text(bad)
    unchecked = "\n".join(line for line in text.splitlines() if "check.expect_almost_eq_const" not in line)
    (pytester.path / "unchecked.mlir").write_text(unchecked.split("func.func @linalg_barrier")[0])
    cmake = (DATA / "CMakeLists.txt").read_text().replace('"checks.mlir"', '"checks.mlir"\n    "bad.mlir"\n'
                                                         '    "unchecked.mlir"\n    "newer.mlir"')
    (pytester.path / "CMakeLists.txt").write_text(cmake)
    pytester.runpytest("-p", "no:cacheprovider", f"--mlir-target={target}", "--mlir-json=out.json")
    records = json.loads((pytester.path / "out.json").read_text())["items"]
    return {(r["file"], r["function"]): r for r in records if r["stage"] == "execute"}


def _assert_checks_judged(records: dict[tuple[str, str], dict[str, object]]) -> None:
    for name in ("tosa_abs", "linalg_barrier", "stablehlo_divide", "truths", "tolerance"):
        good, bad = records[("checks.mlir", name)], records[("bad.mlir", name)]
        if name == "tolerance":  # a check's rule on two constants: judged, but nothing computed
            assert (good["kind"], good["computed"]) == ("skip", "nothing"), good["message"]
        else:
            assert good["kind"] == "pass" and "check(s)" in str(good["reference"]), (name, good["message"])
        assert bad["kind"] == "golden-mismatch", (name, bad["message"])
    assert "first at index [3]: 1.0 (actual) vs 1.5 (expected)" in str(records[("bad.mlir", "tosa_abs")]["message"])
    assert "index [1, 0]: 6 (actual) vs 7 (expected)" in str(records[("bad.mlir", "linalg_barrier")]["message"])
    assert "check.expect_true failed" in str(records[("bad.mlir", "truths")]["message"])
    assert any(":15:3: error: check.expect_eq failed" in line
               for line in records[("bad.mlir", "linalg_barrier")]["diagnostics"])  # type: ignore[attr-defined]
    # without its check a function compares nothing: never a pass on its checks (nor an error)
    unchecked = records[("unchecked.mlir", "tosa_abs")]  # its check deleted: nothing compared, never a pass
    assert (unchecked["golden"], unchecked["kind"], unchecked["outcome"]) == ("none", "skip", "skipped"), unchecked
    for name in ("tosa_abs", "linalg_barrier", "stablehlo_divide", "truths", "tolerance"):
        assert records[("checks.mlir", name)]["golden"] == records[("bad.mlir", name)]["golden"] == "checks"


@pytest.mark.slow
def test_cpu_target_judges_irees_checks_with_inputs_fed_at_run_time(pytester: pytest.Pytester) -> None:
    records = _run(pytester, "cpu")
    _assert_checks_judged(records)
    assert records[("checks.mlir", "tosa_abs")]["inputs"] == ["tensor<4xf32> = util.unfoldable_constant #1"]
    flow = records[("ireeonly.mlir", "uses_flow")]
    assert flow["kind"] == "unsupported"
    assert "dialects 'flow', 'iree_linalg_ext' are IREE's own" in str(flow["message"])
    assert "--mlir-target iree-cpu" in str(flow["message"])


@needs_iree
@pytest.mark.slow
def test_iree_cpu_runs_checks_through_a_python_check_module(pytester: pytest.Pytester) -> None:
    (pytester.path / "newer.mlir").write_text(
        "func.func @reduce() {\n  %0 = util.unfoldable_constant dense<[[2.0], [3.0]]> : tensor<2x1xf32>\n"
        "  %1 = tosa.reduce_max %0 {axis = 0 : i32} : (tensor<2x1xf32>) -> tensor<1x1xf32>\n"
        "  check.expect_almost_eq_const(%1, dense<[[3.0]]> : tensor<1x1xf32>) : tensor<1x1xf32>\n  return\n}\n")
    records = _run(pytester, "iree-cpu")
    _assert_checks_judged(records)
    assert "no llvm-cpu check suite" in str(records[("ireeonly.mlir", "uses_flow")]["message"])
    compiled = json.loads((pytester.path / "out.json").read_text())["items"]
    newer = next(r for r in compiled if r["function"] == "reduce" and r["stage"] == "compile")
    assert newer["kind"] == "compile-error" and "written for a newer IREE than" in newer["message"]
    assert newer["info"]["iree_cannot_parse"]
    summary = pytester.run(str(Path(sys.executable).with_name("mlir-snippets")), "report", "out.json")
    summary.stdout.fnmatch_lines(["*compile-error(s) in files IREE * cannot parse (written for a newer IREE)"])


@pytest.mark.slow
def test_openxla_testdata_inputs_are_fed_and_a_changed_expectation_fails(pytester: pytest.Pytester,
                                                                          corpus: Path) -> None:
    source = (corpus / "stablehlo-testdata" / "abs_float16_20_20.mlir").read_text()
    (pytester.path / "good.mlir").write_text(source)
    head, _, tail = source.partition("func.func private @expected()")
    at = tail.index('"0x') + 3  # the expected value's first f16, raw hex: made 2.0 (0x4000), else 3.0
    first = "0040" if tail[at:at + 4] != "0040" else "0042"
    (pytester.path / "bad.mlir").write_text(f"{head}func.func private @expected(){tail[:at]}{first}{tail[at + 4:]}")
    pytester.runpytest("-p", "no:cacheprovider", "--mlir-json=out.json")
    records = {r["file"]: r for r in json.loads((pytester.path / "out.json").read_text())["items"]
               if r["stage"] == "execute"}
    assert records["good.mlir"]["kind"] == "pass"
    assert records["good.mlir"]["inputs"] == ["tensor<20x20xf16> = result #0 of @inputs()"]
    assert records["bad.mlir"]["kind"] == "golden-mismatch"


def test_check_calls_are_judged_at_their_lines_and_an_unknown_import_is_an_error() -> None:
    import numpy as np

    from pytest_mlir_snippets.protocol import Kind
    from pytest_mlir_snippets.worker.targets.base import Compiled, Kept, SnippetFailure
    from pytest_mlir_snippets.worker.targets.iree import IreeBackend
    from pytest_mlir_snippets.worker.targets.iree_check import Call, as_checks

    sites = [ireeops.CheckSite("check.expect_almost_eq_const", 4, 3), ireeops.CheckSite("check.expect_true", 6, 3)]
    calls = [Call("expect_almost_eq", np.array([1.0, 2.0]), np.array([1.0, 2.5]), 1e-4, 0.0),
             Call("expect_true", np.array(0, np.int32), np.array(0, np.int32))]
    checks, results = as_checks(calls, sites)
    assert [(c.name, c.line, c.rule, c.first) for c in checks] == [
        ("check.expect_almost_eq_const", 4, "almost_eq", 0), ("check.expect_true", 6, "nonzero", 2)]
    assert len(results) == 4
    assert as_checks(calls, sites[:1])[0][0].line is None  # not the snippet's checks one to one: no lines

    class NoCalls:
        check = None

    for kept, words in ((Kept(check_imports=["expect_close"]), "check.expect_close, which"),
                        (Kept(check_sites=[("check.expect_eq", 3, 3)]), "made no call to the check module")):
        with pytest.raises(SnippetFailure) as failure:
            IreeBackend._checked(Compiled("", "f", None, kept=kept), NoCalls())  # type: ignore[arg-type]
        assert failure.value.kind is Kind.EXECUTE_ERROR and words in failure.value.message


def test_irees_expect_eq_compares_bits() -> None:
    import numpy as np

    from pytest_mlir_snippets.golden.checks import Check, evaluate

    bits = Check(0, "check.expect_eq", "bits", "f32")
    nan = np.array([np.nan, 1.0], np.float32)
    assert evaluate(bits, nan, nan.copy()).passed  # the same NaN bits: equal bytes
    assert not evaluate(bits, np.array([-0.0], np.float32), np.array([0.0], np.float32)).passed
    assert evaluate(bits, np.array([3, 4], np.int8), np.array([3, 4], np.int8)).passed
    generic, _ = ireeops.rewrite("  check.expect_eq_const(%0, dense<1> : tensor<i8>) : tensor<i8>\n")
    assert "<{value = dense<1> : tensor<i8>, bitwise}>" in generic


def test_unfoldable_values_are_read_in_every_feedable_type() -> None:
    import numpy as np
    from mlir import ir

    from pytest_mlir_snippets.worker.lowering.fedvalues import value_of

    cases = {"dense<[true, false]> : tensor<2xi1>": [True, False], "7 : index": 7,
             "dense<2.5> : tensor<2xf32>": [2.5] * 2,
             "dense<[1.5, 0xFC00]> : tensor<2xf16>": [1.5, -np.inf], "dense<[1.5, -2.0]> : tensor<2xbf16>": [1.5, -2.0],
             'dense<"0x0000803F">: tensor<1xf32>': [1.0], "dense<[[1, -2]]> : tensor<1x2xi8>": [[1, -2]]}
    with ir.Context():
        for text, expected in cases.items():
            assert value_of(ir.Attribute.parse(text), ir).tolist() == expected, text
        wide = value_of(ir.Attribute.parse("dense<[1, -2]> : tensor<2xi4>"), ir)  # fed as i8, converted back
        assert wide.dtype == np.int8 and wide.tolist() == [1, -2]
        assert value_of(ir.Attribute.parse("dense<1.5> : tensor<f16>"), ir).tolist() == 1.5  # 0-d
        with pytest.raises(ValueError):
            value_of(ir.Attribute.parse("dense<[1, 2]> : tensor<2xi128>"), ir)  # kept as a constant


@needs_iree
def test_plain_constants_are_kept_from_irees_folder(pytester: pytest.Pytester) -> None:
    """IREE's _large convention (sizes of a generated input as plain ``arith.constant``s) and a
    table gathered from a plain constant: IREE would fold each function whole; barriers keep the
    constants from the folder, so the checks see what IREE's code computed, as on cpu."""
    text = (Path(__file__).resolve().parent / "data" / "iree_large" / "unpack_large.mlir").read_text()
    (pytester.path / "large.mlir").write_text(text)
    (pytester.path / "bad.mlir").write_text(text.replace("permutation = [0, 2, 1, 3]", "permutation = [0, 2, 3, 1]")
                                            .replace("[[5.0, 6.0], [1.0, 2.0]]", "[[5.0, 6.0], [1.0, 2.5]]"))
    pytester.runpytest("-p", "no:cacheprovider", "--mlir-target=iree-cpu", "--mlir-json=out.json")
    records = {(r["file"], r["function"]): r for r in json.loads((pytester.path / "out.json").read_text())["items"]
               if r["stage"] == "execute"}
    for name in ("unpack_large", "unpack_slice_large", "gather_table"):
        good, bad = records[("large.mlir", name)], records[("bad.mlir", name)]
        assert (good["kind"], good["golden"], good["computed"]) == ("pass", "checks", "runtime"), (name, good)
        assert all("behind util.optimization_barrier" in f for f in good["info"]["fed_inputs"]), good["info"]
        assert bad["kind"] == "golden-mismatch", (name, bad["message"])
    assert len(records[("large.mlir", "unpack_large")]["info"]["fed_inputs"]) == 4  # the four sizes


@needs_iree
def test_a_vacuous_check_does_not_count_on_iree(pytester: pytest.Pytester) -> None:
    """Sabotage on iree-cpu: the op under test left dead, its input checked against itself."""
    pytester.makefile(".mlir", ops="""
func.func @dead() {
  %a = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %b = arith.addi %a, %a : tensor<4xi32>
  check.expect_eq_const(%a, dense<[1, 2, 3, 4]> : tensor<4xi32>) : tensor<4xi32>
  return
}
func.func @live() {
  %a = util.unfoldable_constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %b = arith.addi %a, %a : tensor<4xi32>
  check.expect_eq_const(%b, dense<[2, 4, 6, 8]> : tensor<4xi32>) : tensor<4xi32>
  check.expect_eq_const(%a, dense<[1, 2, 3, 4]> : tensor<4xi32>) : tensor<4xi32>
  return
}
""")
    pytester.runpytest("-p", "no:cacheprovider", "--mlir-target=iree-cpu", "--mlir-json=out.json")
    records = {r["name"]: r for r in json.loads((pytester.path / "out.json").read_text())["items"]}
    dead, live = records["dead[execute]"], records["live[execute]"]
    assert (dead["kind"], dead["computed"]) == ("skip", "nothing"), dead["message"]
    assert (live["kind"], live["computed"]) == ("pass", "runtime"), live["message"]
    assert [c["computed"] for c in live["info"]["checks"]] == ["runtime", "nothing"]
