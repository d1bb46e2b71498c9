"""Running snippets: outcomes, isolation, pytest options, artifacts."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

ADD = """func.func @add_0(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
BROKEN = """func.func @broken_0(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xi32>
  return %0 : tensor<4xf32>
}
"""


def recorded(folder: Path, stem: str, *functions: str, inputs: int = 2) -> None:
    """Recorded inputs and outputs of ``functions`` of ``<stem>.mlir``, ADD (``inputs=2``: a + b)
    or BROKEN fixed (``inputs=1``: a + a): their golden, so that no second compiler is
    started where what is compared is not what a test is about."""
    a, b = np.arange(4, dtype=np.float32), np.ones(4, dtype=np.float32)
    arrays = {"input_0": a, "input_1": b, "output_0": a + b} if inputs == 2 else {"input_0": a, "output_0": a + a}
    for function in functions:
        np.savez(folder / f"{stem}.{function}.npz", **arrays)


def kinds(props: dict[str, dict[str, str]]) -> dict[str, str]:
    return {node: p.get("mlir_kind", p["outcome"]) for node, p in props.items()}


def test_compile_and_execute_with_metrics(pytester: pytest.Pytester, run_items) -> None:
    pytester.makefile(".mlir", ops=ADD)
    result, props = run_items()
    result.assert_outcomes(passed=2)
    execute = props["ops.mlir::add_0[execute]"]
    assert execute["mlir_kind"] == "pass"
    assert float(execute["mlir_max_abs_err"]) == 0.0 and float(execute["mlir_pcc"]) == pytest.approx(1.0)
    # a second compiler, IREE, where the [iree] extra is installed (the test extras have it)
    assert execute["mlir_golden"] == "differential:iree-cpu" and "iree-cpu" in execute["mlir_reference"]
    assert execute["mlir_inputs"] == "['tensor<4xf32>', 'tensor<4xf32>']"
    result.stdout.fnmatch_lines(["*all 1 snippet(s) succeeded across 1 file(s)*"])


def test_compile_error_shows_mlir_diagnostic_at_the_file_line(pytester: pytest.Pytester, run_items) -> None:
    pytester.makefile(".mlir", ops=ADD + BROKEN)
    recorded(pytester.path, "ops", "add_0")
    result, props = run_items("-rs")
    assert kinds(props) == {"ops.mlir::add_0[compile]": "pass", "ops.mlir::add_0[execute]": "pass",
                            "ops.mlir::broken_0[compile]": "compile-error", "ops.mlir::broken_0[execute]": "skip"}
    out = result.stdout.str()
    assert "compile-error: @broken_0 (ops.mlir:5) [compile]" in out
    assert f"{pytester.path / 'ops.mlir'}:6:19: error: use of value '%a' expects different type" in out
    assert f"{pytester.path / 'ops.mlir'}:5:21: note: prior use here" in out
    assert "Traceback" not in out
    result.stdout.fnmatch_lines(["*1 snippet(s) failed across 1 file(s)*",
                                 "SKIPPED [[]1[]] ops.mlir:5: compile failed (compile-error): use of value '%a'*"])


def test_x_stops_at_the_first_failure(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=BROKEN + ADD)
    result = pytester.runpytest("-x", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)


def test_lf_reruns_the_failed_items_and_execute_runs_alone(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=ADD + BROKEN)
    recorded(pytester.path, "ops", "add_0")
    recorded(pytester.path, "ops", "broken_0", inputs=1)  # once fixed
    pytester.runpytest().assert_outcomes(passed=2, failed=1, skipped=1)
    result = pytester.runpytest("--lf", "-v")
    result.assert_outcomes(failed=1, skipped=1)  # the execute skipped for the compile's failure counts as failed
    result.stdout.fnmatch_lines(["*broken_0[[]compile[]] FAILED*", "*broken_0[[]execute[]] SKIPPED*"])
    (pytester.path / "ops.mlir").write_text(ADD + BROKEN.replace("tensor<4xi32>", "tensor<4xf32>"))
    fixed = pytester.runpytest("--lf", "-v")
    fixed.assert_outcomes(passed=2)  # after the fix --lf reruns the compile and its execute
    fixed.stdout.fnmatch_lines(["*broken_0[[]compile[]] PASSED*", "*broken_0[[]execute[]] PASSED*"])
    alone = pytester.runpytest("ops.mlir::add_0[execute]", "-p", "no:cacheprovider")
    alone.assert_outcomes(passed=1)


CONFTEST = """
import os
def pytest_mlir_device_opened(config, target, device_id, info):
    with open(os.path.join(str(config.rootpath), "opened.txt"), "a") as f:
        f.write(f"{target} {device_id} {getattr(config, 'workerinput', {}).get('workerid', '-')}\\n")
"""


def test_skip_exec_never_opens_a_device(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makefile(".mlir", ops=ADD + ADD.replace("add_0", "add_1"))
    recorded(pytester.path, "ops", "add_0", "add_1")
    pytester.runpytest("--mlir-skip-exec").assert_outcomes(passed=2)
    assert not (pytester.path / "opened.txt").exists()
    pytester.runpytest().assert_outcomes(passed=4)
    assert (pytester.path / "opened.txt").read_text().splitlines() == ["cpu None -"]  # once, then reused


@pytest.mark.slow
def test_xdist_gives_the_same_outcomes_and_devices_per_worker(pytester: pytest.Pytester, run_items) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makefile(".mlir", ops=ADD + BROKEN + ADD.replace("add_0", "add_1"),
                      more=ADD.replace("add_0", "add_2"))
    recorded(pytester.path, "ops", "add_0", "add_1")
    recorded(pytester.path, "more", "add_2")
    _, serial_props = run_items(subprocess=True)
    (pytester.path / "opened.txt").unlink()
    parallel, parallel_props = run_items("-n", "2", "--mlir-devices", "3,5", subprocess=True)
    assert kinds(serial_props) == kinds(parallel_props)
    assert len(kinds(serial_props)) == 8
    opened = sorted((pytester.path / "opened.txt").read_text().splitlines())
    assert opened == ["cpu 3 gw0", "cpu 5 gw1"]
    parallel.stdout.fnmatch_lines(["*1 snippet(s) failed across 2 file(s)*"])


def test_golden_mismatch_against_recorded_outputs(pytester: pytest.Pytester, run_items) -> None:
    pytester.makefile(".mlir", ops=ADD)
    a = np.arange(4, dtype=np.float32)
    b = np.ones(4, dtype=np.float32)
    wrong = a + b
    wrong[2] += 0.5
    np.savez(pytester.path / "ops.add_0.npz", input_0=a, input_1=b, output_0=wrong)
    result, props = run_items()
    execute = props["ops.mlir::add_0[execute]"]
    assert execute["mlir_kind"] == "golden-mismatch"
    assert float(execute["mlir_max_abs_err"]) == pytest.approx(0.5)
    result.stdout.fnmatch_lines(["*results differ from the recorded outputs (ops.add_0.npz): result #0: "
                                 "max abs error 0.5*", "*metrics: max_abs_err=0.5, max_rel_err=*, pcc=*"])
    np.savez(pytester.path / "ops.add_0.npz", input_0=a, input_1=b, output_0=a + b)
    result, props = run_items()
    assert props["ops.mlir::add_0[execute]"]["mlir_kind"] == "pass"


# Every element type the cpu target feeds, 0-d and dynamic shapes included,
# checked against numpy through recorded outputs (independent of our lowering).
TYPES = {
    "f64": ("tensor<3xf64>", np.float64), "f32": ("tensor<2x3xf32>", np.float32),
    "f16": ("tensor<5xf16>", np.float16), "i64": ("tensor<4xi64>", np.int64),
    "i32": ("tensor<2x2xi32>", np.int32), "i16": ("tensor<3xi16>", np.int16),
    "i8": ("tensor<6xi8>", np.int8), "index": ("tensor<3xindex>", np.int64),
    "zero_d": ("tensor<f32>", np.float32), "dynamic": ("tensor<?x3xf32>", np.float32),
}


def test_every_element_type_round_trips(pytester: pytest.Pytester, run_items) -> None:
    import ml_dtypes

    text = []
    for name, (ty, dtype) in TYPES.items():
        op = "arith.addf" if np.dtype(dtype).kind == "f" else "arith.addi"
        text.append(f"func.func @double_{name}(%x: {ty}) -> {ty} {{\n  %0 = {op} %x, %x : {ty}\n"
                    f"  return %0 : {ty}\n}}\n")
        shape = {"zero_d": (), "dynamic": (5, 3)}.get(name, tuple(int(d) for d in re.findall(r"(\d+)x", ty)))
        x = (np.arange(int(np.prod(shape))).reshape(shape) - 2).astype(dtype)
        np.savez(pytester.path / f"types.double_{name}.npz", input_0=x, output_0=x + x)
    text.append("func.func @not_i1(%x: tensor<7xi1>) -> tensor<7xi1> {\n  %t = arith.constant dense<true> : "
                "tensor<7xi1>\n  %0 = arith.xori %x, %t : tensor<7xi1>\n  return %0 : tensor<7xi1>\n}\n")
    flags = np.array([1, 0, 0, 1, 1, 0, 1], dtype=bool)
    np.savez(pytester.path / "types.not_i1.npz", input_0=flags, output_0=~flags)
    text.append("func.func @half_bf16(%x: tensor<4xbf16>) -> tensor<4xbf16> {\n  %h = arith.constant dense<0.5>"
                " : tensor<4xbf16>\n  %0 = arith.mulf %x, %h : tensor<4xbf16>\n  return %0 : tensor<4xbf16>\n}\n")
    xb = np.array([1.0, -2.0, 3.5, 100.0], dtype=ml_dtypes.bfloat16)
    np.savez(pytester.path / "types.half_bf16.npz", input_0=xb.view(np.uint16),
             output_0=(xb.astype(np.float32) * 0.5).astype(ml_dtypes.bfloat16).view(np.uint16))
    text.append("func.func @scalars(%a: i32, %b: f64, %c: i1) -> (i32, f64, i1) {\n"
                "  %t = arith.constant true\n  %0 = arith.addi %a, %a : i32\n  %1 = arith.mulf %b, %b : f64\n"
                "  %2 = arith.xori %c, %t : i1\n  return %0, %1, %2 : i32, f64, i1\n}\n")
    np.savez(pytester.path / "types.scalars.npz", input_0=np.array(21, np.int32), input_1=np.array(1.5),
             input_2=np.array(True), output_0=np.array(42, np.int32), output_1=np.array(2.25),
             output_2=np.array(False))
    pytester.makefile(".mlir", types="".join(text))
    result, props = run_items("--mlir-dynamic-dim", "5")
    executes = {node: p for node, p in props.items() if node.endswith("[execute]")}
    assert len(executes) == len(TYPES) + 3
    failed = {node: p["mlir_kind"] for node, p in executes.items() if p["mlir_kind"] != "pass"}
    assert not failed, result.stdout.str()[-3000:]
    assert all(p["mlir_reference"].startswith("recorded outputs") for p in executes.values())


def test_pipeline_override_and_print_ir(pytester: pytest.Pytester, run_items) -> None:
    pytester.makefile(".mlir", ops=ADD)
    result, props = run_items("--mlir-skip-exec", "--mlir-pipeline", "builtin.module(canonicalize)")
    assert props["ops.mlir::add_0[compile]"]["mlir_kind"] == "compile-error"
    result.stdout.fnmatch_lines(["*translation to LLVM failed*"])
    result = pytester.runpytest("--mlir-skip-exec", "--mlir-pipeline", "builtin.module(no-such-pass)")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # one line before the run, not a failure per item
    result.stderr.fnmatch_lines(["*--mlir-pipeline 'builtin.module(no-such-pass)': 'no-such-pass' is not a "
                                 "registered pass*"])
    result = pytester.runpytest("--mlir-skip-exec", "--mlir-print-ir", "-rA", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*compiled IR*", "*llvm.func @add_0*"])


def test_artifacts_stay_inside_the_output_root(pytester: pytest.Pytester) -> None:
    evil = ADD.replace("@add_0", '@"../../escape/..\\2F..\\2Fx"')
    pytester.makefile(".mlir", ops=ADD, evil=evil)
    root = pytester.path / "out"
    pytester.runpytest("--mlir-skip-exec", "--mlir-save-artifacts", f"--mlir-output-root={root}",
                       "-p", "no:cacheprovider").assert_outcomes(passed=2)
    written = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert "ops_mlir_snippets/ops.mlir/add_0/cpu/compiled.mlir" in written
    assert len(written) == 4 and all(p.startswith("ops_mlir_snippets/") and ".." not in p for p in written)
    outside = [p for p in pytester.path.rglob("*.mlir") if root not in p.parents]
    assert sorted(p.name for p in outside) == ["evil.mlir", "ops.mlir"]


def test_artifacts_of_same_named_files_in_two_folders_stay_apart(pytester: pytest.Pytester) -> None:
    for folder, op in (("a", "arith.addf"), ("b", "arith.mulf")):
        pytester.mkdir(folder)
        (pytester.path / folder / "model.mlir").write_text(ADD.replace("arith.addf", op))
    pytester.runpytest("--mlir-skip-exec", "--mlir-save-artifacts", "-p", "no:cacheprovider").assert_outcomes(
        passed=2)
    artifacts = pytester.path / "ops_mlir_snippets"
    for folder, op in (("a", "arith.addf"), ("b", "arith.mulf")):
        assert op in (artifacts / folder / "model.mlir" / "add_0" / "cpu" / "snippet.mlir").read_text()
    # a file outside the rootdir: its artifacts still land inside the output root
    root = pytester.path / "out"
    pytester.runpytest("--mlir-skip-exec", "--mlir-save-artifacts", f"--mlir-output-root={root}",
                       f"--rootdir={pytester.path / 'a'}", str(pytester.path / "b" / "model.mlir"),
                       "-p", "no:cacheprovider").assert_outcomes(passed=1)
    written = [p.relative_to(root).parts for p in root.rglob("snippet.mlir")]
    assert len(written) == 1 and written[0][0] == "ops_mlir_snippets" and ".." not in written[0]
    assert written[0][2:] == ("b", "model.mlir", "add_0", "cpu", "snippet.mlir"), written


@pytest.mark.slow
def test_examples(pytester: pytest.Pytester, run_items, copy_into) -> None:
    from conftest import EXAMPLES

    copy_into(EXAMPLES, "examples")
    result, props = run_items("examples", "-rfs", "--mlir-bench-time=0.05", "--mlir-bench-settle=0",
                              "--mlir-bench-warmup=1")
    expected_failures = {
        "failing.mlir::matmul_bad_shapes[compile]": "compile-error",
        "failing.mlir::matmul_bad_shapes[execute]": "skip",
        "failing.mlir::cholesky_0[compile]": "compile-error",
        "failing.mlir::cholesky_0[execute]": "skip",
        "failing.mlir::ttir_add[compile]": "unsupported",
        "failing.mlir::ttir_add[execute]": "unsupported",
        # IREE 3.13 cannot take these: only the plugin's own lowering agrees, no independent golden
        "tensor.mlir::extract_scalar_0d[execute]": "skip",
        "tosa.mlir::reduce_max_0[execute]": "skip",
    }
    got = {node: kind for node, kind in kinds(props).items()
           if not node.startswith(("model_linalg.mlir::", "test_python_api.mlir::"))}
    python_tests = {node.split("::")[1]: kind for node, kind in kinds(props).items()
                    if node.startswith("test_python_api.mlir::")}  # junit's classname, read as a file
    assert python_tests == {"test_scale[1]": "pass", "test_scale[8]": "pass", "test_scale[1000]": "pass",
                            "test_module_built_with_the_bindings": "pass", "test_crash": "crash",
                            "test_hang": "timeout", "test_expected_compile_error": "compile-error"}
    assert len(got) >= 60
    assert {k: v for k, v in got.items() if v != "pass"} == expected_failures
    # the two optimization runs: cpu passes throughout, cuda fails v2 and v3 for their reasons
    result.stdout.fnmatch_lines(["*FAILED examples/runs/cuda_matmul/model_linalg.mlir::v2[[]host_ops[]]*",
                                 "*FAILED examples/runs/cuda_matmul/model_linalg.mlir::v3[[]launch[]]*"])
    assert "FAILED examples/runs/cpu_mlp" not in result.stdout.str()
    assert "(best)" in (pytester.path / "examples" / "runs" / "cpu_mlp" / "benchmark.md").read_text()
    out = result.stdout.str()
    assert "failed to legalize operation 'stablehlo.cholesky'" in out
    assert "dialect 'ttir' is not available for target cpu" in out
    result.stdout.fnmatch_lines(
        ["*verdicts by golden: 38 pass(es): differential:iree-cpu 19, interpreter 4, torch 15; only the plugin's "
         "own lowering: 2*",
         "*2 snippet(s) and 2 iteration(s) failed across 13 file(s) (1 snippet(s) unsupported on this target, "
         "2 snippet(s) and 2 iteration(s) skipped: not every item ran)*"])
    stablehlo = [p for node, p in props.items() if node.startswith("stablehlo.mlir") and "execute" in node]
    assert {p["mlir_reference"] for p in stablehlo} == {"StableHLO reference interpreter"}


KNOWN_MISSING: dict[str, str] = {}


@pytest.mark.slow
def test_stablehlo_corpus_against_the_interpreter(pytester: pytest.Pytester, run_items, copy_into,
                                                  corpus: Path) -> None:
    copy_into(corpus / "tt-mlir-snippets" / "stablehlo", "stablehlo")
    result, props = run_items("stablehlo", "-n", "2", subprocess=True)
    got = kinds(props)
    functions = {node.split("::")[1].rsplit("[", 1)[0] for node in got}
    assert len(functions) == 34
    for node, kind in got.items():
        name = node.split("::")[1].rsplit("[", 1)[0]
        if name in KNOWN_MISSING:
            assert kind == ("compile-error" if node.endswith("[compile]") else "skip"), node
        else:
            assert kind == "pass", (node, kind)
            if node.endswith("[execute]"):
                assert props[node]["mlir_reference"] == "StableHLO reference interpreter", node
    out = result.stdout.str()
    for op in set(KNOWN_MISSING.values()):
        assert f"error: failed to legalize operation '{op}'" in out
