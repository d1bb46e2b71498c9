"""The item model: every item (snippet stages, iteration stages) ends with one record,
and everything the run says (JSON, reports, summary, expectations, --lf, -v, junit)
is built from those records and from structured node ids.

Real pytester runs, real sandbox workers, real MLIR. The cuda example run is used
without a GPU: its compile, host_ops and launch checks run anywhere, v2[host_ops] and
v3[launch] fail as compile-error, correctness and benchmark skip (no CUDA device).
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLES, item_properties

from test_run import recorded

CLI = str(Path(sys.executable).with_name("mlir-snippets"))  # the venv's, PATH or not
CUDA_RUN = EXAMPLES / "runs" / "cuda_matmul"
CUDA_FAILURES = ["run/model_linalg.mlir::v2[host_ops]", "run/model_linalg.mlir::v3[launch]"]

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
# A loop whose condition is always true: compiles, never returns.
SPIN = """func.func @spin(%x: tensor<4xf32>) -> i64 {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %true = arith.constant true
  %r = scf.while (%i = %c0) : (i64) -> i64 {
    scf.condition(%true) %i : i64
  } do {
  ^bb0(%j: i64):
    %n = arith.addi %j, %c1 : i64
    scf.yield %n : i64
  }
  return %r : i64
}
"""
MODEL = """func.func @forward(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<16x16xf32>, tensor<16x16xf32>)
                     outs(%init : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}
"""
SCHEDULE = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %m = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l:2 = transform.structured.tile_using_for %m tile_sizes [8, 8]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
"""
NAIVE = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.yield
  }
}
"""
TO_LLVM = ("one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},"
           " buffer-deallocation-pipeline, convert-bufferization-to-memref, func.func(convert-linalg-to-loops),"
           " convert-scf-to-cf, expand-strided-metadata, lower-affine, finalize-memref-to-llvm,"
           " convert-arith-to-llvm, convert-index-to-llvm, convert-func-to-llvm, convert-cf-to-llvm,"
           " reconcile-unrealized-casts")
BENCH = ("--mlir-bench-time", "0.05", "--mlir-bench-settle", "0", "--mlir-bench-warmup", "1")


# ----------------------------------------------------------------------------- helpers
def cpu_run(root: Path, iterations: dict[str, str | None], model: str = MODEL, name: str = "run") -> Path:
    """An optimization run on the cpu target: ``iterations`` maps vN to its schedule
    (None: no transform.mlir); every iteration lowers to LLVM."""
    run = root / name
    run.mkdir()
    (run / "model_linalg.mlir").write_text(model)
    for folder, schedule in iterations.items():
        (run / folder).mkdir()
        if schedule is not None:
            (run / folder / "transform.mlir").write_text(schedule)
        (run / folder / "pass_pipeline.txt").write_text(TO_LLVM + "\n")
        (run / folder / "hypothesis.txt").write_text("a hypothesis\n")
    return run


def recorded_model(run: Path) -> None:
    """MODEL's recorded inputs and outputs in ``run``: the iterations' golden, so that no second
    compiler is started where what is compared is not what a test is about."""
    a = np.arange(256, dtype=np.float32).reshape(16, 16) / 256
    b = np.eye(16, dtype=np.float32) * 2
    np.savez(run / "model_linalg.forward.npz", input_0=a, input_1=b, output_0=a @ b)


def records_of(path: Path) -> dict[str, dict]:
    """The ``--mlir-json`` records by node id."""
    return {item["nodeid"]: item for item in json.loads(path.read_text())["items"]}


def collected(pytester: pytest.Pytester, *args: str) -> list[str]:
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", *args)
    return [line for line in result.outlines if "::" in line and not line.startswith(("FAILED", "ERROR"))]


def mlir_section(result: pytest.RunResult) -> list[str]:
    """The lines of the terminal's "MLIR snippets" section."""
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if re.fullmatch(r"=+ MLIR snippets =+", line))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("==")), len(lines))
    return [line for line in lines[start + 1:end] if line.strip()]


def verdict_line(result: pytest.RunResult) -> str:
    """The summary's verdict: the line after the counts per outcome and per golden."""
    return next(line for line in mlir_section(result) if not line.startswith(("items per outcome: ",
                                                                             "verdicts by golden: ")))


def per_outcome(result: pytest.RunResult) -> dict[str, int]:
    """``items per outcome: compile-error 2, pass 16`` as a dict."""
    line = next(line for line in mlir_section(result) if line.startswith("items per outcome: "))
    found = {}
    for part in line.removeprefix("items per outcome: ").split(", "):
        label, _, number = part.rpartition(" ")
        found[label] = int(number)
    return found


@pytest.fixture
def tree(pytester: pytest.Pytester, copy_into) -> Path:
    """One snippet file and a copy of the cuda example run."""
    pytester.makefile(".mlir", ops=ADD + BROKEN)
    recorded(pytester.path, "ops", "add_0")
    return copy_into(CUDA_RUN, "run")


# --------------------------------------------------------------- 1. JSON and `report`
def every_item_has_a_json_record(pytester: pytest.Pytester, ids: list[str]) -> None:
    """run.json holds a record for every item collected, iteration items included."""
    assert len(ids) == 4 + 4 * 6 and any("v3[launch]" in i for i in ids)
    records = records_of(pytester.path / "run.json")
    assert len(records) == len(ids)
    assert sorted(records) == sorted(ids)
    launch = records["run/model_linalg.mlir::v3[launch]"]
    assert (launch["kind"], launch["outcome"], launch["run"], launch["target"]) == (
        "compile-error", "failed", "run", "cuda")
    assert records["ops.mlir::broken_0[execute]"]["kind"] == "skip"


def test_report_command_prints_the_runs_summary_and_writes_reports_under_out(pytester: pytest.Pytester,
                                                                               tree: Path) -> None:
    """One run (it costs a cuda run's compiles) for its JSON, then that JSON through `report`."""
    ids = collected(pytester)
    result = pytester.runpytest("-p", "no:cacheprovider", "--mlir-json=run.json")
    every_item_has_a_json_record(pytester, ids)
    printed = mlir_section(result)
    assert printed[0].startswith("items per outcome: ") and printed[1].startswith("verdicts by golden: ")
    assert len(printed) == 3, printed
    out = pytester.path / "rebuilt"
    rebuilt = pytester.run(CLI, "report", str(pytester.path / "run.json"), "--out", str(out))
    assert rebuilt.ret == 1  # failures
    assert [line for line in rebuilt.outlines if line.strip()] == printed
    reports = sorted(p.relative_to(out).as_posix() for p in out.rglob("*report*.txt"))
    assert reports == ["mlir-snippets-combined-report.txt", "ops-run-report.txt", "run/model_linalg-run-report.txt"]
    for report, original in (("ops-run-report.txt", "ops.mlir"),
                             ("run/model_linalg-run-report.txt", "run/model_linalg.mlir")):
        text = (out / report).read_text()
        assert f"input:    {pytester.path / original}\n" in text, text
        assert str(out) not in text
    # the reports rebuilt are the reports the run wrote
    assert (out / "ops-run-report.txt").read_text() == (pytester.path / "ops-run-report.txt").read_text()
    # the merge job's new expectations baseline (docs/shards.md)
    baseline = pytester.path / "expected.txt"
    pytester.run(CLI, "report", str(pytester.path / "run.json"), "--out", str(out), "--update-expectations",
                 str(baseline))
    assert "run/model_linalg.mlir::v3[launch] compile-error" in baseline.read_text().splitlines()


def test_report_from_an_older_json_does_not_roll_back_the_benchmark_history(pytester: pytest.Pytester) -> None:
    """``report old.json --out DIR`` writes its reports under DIR; the optimization run's
    own benchmark history (``benchmarks.json``, the newest measurement) is not replaced
    by the older JSON's figures."""
    run = cpu_run(pytester.path, {"v0": NAIVE})
    pytester.runpytest("-p", "no:cacheprovider", "-k", "benchmark", "--mlir-json=old.json", *BENCH)
    pytester.runpytest("-p", "no:cacheprovider", "-k", "benchmark", "--mlir-json=new.json", *BENCH)
    newest = json.loads((run / "benchmarks.json").read_text())["targets"]["cpu"]["v0"]
    assert newest["median_ms"] == records_of(pytester.path / "new.json")[
        "run/model_linalg.mlir::v0[benchmark]"]["benchmark"]["median_ms"]
    time.sleep(1.1)  # a rewrite would stamp another second
    rebuilt = pytester.run(CLI, "report", str(pytester.path / "old.json"), "--out", str(pytester.path / "rebuilt"))
    assert rebuilt.ret == 0 and (pytester.path / "rebuilt" / "run" / "model_linalg-run-report.txt").is_file()
    assert json.loads((run / "benchmarks.json").read_text())["targets"]["cpu"]["v0"] == newest


# ----------------------------------------------------------- 2. `report` on a wrong JSON
RECORD = {"nodeid": "ops.mlir::f[execute]", "name": "f[execute]", "file": "ops.mlir", "function": "f",
          "stage": "execute", "outcome": "failed", "kind": "execute-error"}


def _document(items: object) -> dict:
    return {"version": 2, "target": "cpu", "mode": "compile and execute", "rootdir": "/nowhere",
            "files": {"ops.mlir": [["f", 1]]}, "items": items}


@pytest.mark.parametrize("document", [
    {"items": 3},
    [1, 2, 3],
    "text",
    _document(3),
    _document([{"nodeid": "ops.mlir::f[execute]"}]),
    _document([{**RECORD, "diagnostics": 5}]),
    _document([{**RECORD, "message": ["not", "text"]}]),
    {**_document([RECORD]), "files": []},
], ids=["items-not-a-list", "a-list", "a-string", "v2-items-an-int", "record-missing-fields",
        "diagnostics-an-int", "message-a-list", "files-a-list"])
def test_report_on_a_document_of_the_wrong_shape_says_so_in_one_line(pytester: pytest.Pytester,
                                                                      document: object) -> None:
    path = pytester.path / "bad.json"
    path.write_text(json.dumps(document))
    result = pytester.run(CLI, "report", str(path), "--out", str(pytester.path / "out"))
    assert result.ret == 2, result.outlines + result.errlines
    assert len(result.errlines) == 1 and "Traceback" not in result.stderr.str(), result.errlines
    assert result.errlines[0].startswith(f"mlir-snippets report: {path}: ")


# -------------------------------------------------------------------- 3. expectations
def test_update_expectations_writes_iteration_items(pytester: pytest.Pytester, copy_into) -> None:
    run = copy_into(CUDA_RUN, "run")
    exp = run / "expected.txt"
    first = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-expectations={exp}", "--mlir-update-expectations")
    first.assert_outcomes(failed=2, passed=14, skipped=8)
    lines = [line for line in exp.read_text().splitlines() if line and not line.startswith("#")]
    assert "model_linalg.mlir::v2[host_ops] compile-error" in lines
    assert "model_linalg.mlir::v3[launch] compile-error" in lines
    assert all(line.startswith("model_linalg.mlir::v") for line in lines), lines  # relative to the file
    rerun = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-expectations={exp}", "-rx",
                               "--mlir-json=again.json")
    rerun.assert_outcomes(passed=14, skipped=8, xfailed=2)
    records = records_of(pytester.path / "again.json")
    for node in CUDA_FAILURES:
        assert (records[node]["outcome"], records[node]["kind"], records[node]["expected"]) == (
            "xfailed", "compile-error", "compile-error")


def test_a_hand_written_iteration_expectation_is_honoured(pytester: pytest.Pytester, copy_into) -> None:
    run = copy_into(CUDA_RUN, "run")
    exp = run / "expected.txt"
    exp.write_text("model_linalg.mlir::v2[host_ops] compile-error\nmodel_linalg.mlir::v3[launch] contract-error\n")
    result = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-expectations={exp}", "-k", "v2 or v3")
    result.assert_outcomes(passed=6, skipped=4, xfailed=1, failed=1)
    result.stdout.fnmatch_lines(["*expected contract-error, got compile-error*"])
    assert "FAILED run/model_linalg.mlir::v3[launch]" in result.stdout.str()


def test_a_run_as_its_expectations_say_has_no_failed_snippet(pytester: pytest.Pytester) -> None:
    """broken_0[compile] expected compile-error, broken_0[execute] expected skip (its
    compile failed): the summary and the run report count no failure."""
    pytester.makefile(".mlir", ops=BROKEN + ADD)
    recorded(pytester.path, "ops", "add_0")
    exp = pytester.path / "expected.txt"
    pytester.runpytest("-p", "no:cacheprovider", f"--mlir-expectations={exp}", "--mlir-update-expectations")
    assert "ops.mlir::broken_0[execute] skip" in exp.read_text()
    result = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-expectations={exp}")
    result.assert_outcomes(passed=2, skipped=1, xfailed=1)
    assert "failed" not in verdict_line(result), mlir_section(result)
    report = (pytester.path / "ops-run-report.txt").read_text()
    assert "snippets: 2 (2 succeeded, 0 failed, 0 unsupported)" in report and "failures: 0\n" in report, report


# ------------------------------------------------------------------------------ 4. --lf
def test_lf_reruns_exactly_the_failed_iteration_items(pytester: pytest.Pytester, copy_into) -> None:
    copy_into(CUDA_RUN, "run")
    pytester.makefile(".mlir", ops=ADD)
    recorded(pytester.path, "ops", "add_0")
    pytester.runpytest().assert_outcomes(failed=2, passed=16, skipped=8)
    lastfailed = json.loads((pytester.path / ".pytest_cache" / "v" / "cache" / "lastfailed").read_text())
    assert sorted(lastfailed) == CUDA_FAILURES
    again = pytester.runpytest("--lf", "-v")
    again.assert_outcomes(failed=2)
    ran = [line.split()[0] for line in again.outlines if re.match(r"\S+::\S+ (PASSED|FAILED|SKIPPED)", line)]
    assert ran == CUDA_FAILURES
    again.stdout.fnmatch_lines(["*rerun previous 2 failures*"])


# --------------------------------------------------------------------------- 5. targets
def test_ini_target_is_honoured_by_a_run_without_env_check(pytester: pytest.Pytester, copy_into) -> None:
    run = copy_into(CUDA_RUN, "run")
    (run / "env_check.md").unlink()
    assert not any(i.endswith("[host_ops]") for i in collected(pytester))  # cpu by default
    pytester.makeini("[pytest]\nmlir_target = cuda\n")
    ids = collected(pytester)
    assert [i for i in ids if i.startswith("run/model_linalg.mlir::v0[")] == [
        f"run/model_linalg.mlir::v0[{s}]" for s in ("contract", "compile", "host_ops", "launch", "correctness",
                                                    "benchmark")]
    pytester.runpytest("-p", "no:cacheprovider", "-k", "v2", "--mlir-json=run.json")
    records = records_of(pytester.path / "run.json")
    assert {r["target"] for r in records.values()} == {"cuda"}
    assert records["run/model_linalg.mlir::v2[host_ops]"]["kind"] == "compile-error"


def test_cpu_target_on_a_cuda_run_keeps_the_cuda_results(pytester: pytest.Pytester, copy_into) -> None:
    run = copy_into(CUDA_RUN, "run")
    pytester.runpytest("-p", "no:cacheprovider", *BENCH).assert_outcomes(failed=2, passed=14, skipped=8)
    cuda = json.loads((run / "benchmarks.json").read_text())["targets"]["cuda"]
    assert cuda["v2"]["stages"]["host_ops"] == "compile-error"
    (run / "best_pipeline.txt").write_text("the cuda run's best\n")
    (run / "best_transform.mlir").write_text("// the cuda run's best\n")
    kept = {name: (run / name).read_bytes() for name in ("benchmark.md", "best_pipeline.txt", "best_transform.mlir")}
    result = pytester.runpytest("-p", "no:cacheprovider", "--mlir-target", "cpu", "-k", "v0 or v1",
                                "--mlir-json=cpu.json", *BENCH)
    records = records_of(pytester.path / "cpu.json")
    assert sorted(records) == [f"run/model_linalg.mlir::v{i}[{s}]" for i in (0, 1)
                               for s in ("benchmark", "compile", "contract", "correctness")], result.stdout.str()
    assert {r["target"] for r in records.values()} == {"cpu"}
    history = json.loads((run / "benchmarks.json").read_text())["targets"]
    assert history["cuda"] == cuda and set(history["cpu"]) == {"v0", "v1"}
    assert {name: (run / name).read_bytes() for name in kept} == kept
    assert (run / "benchmark.cpu.md").read_text().startswith("# Benchmark of run (cpu)")
    assert not (run / "best_pipeline.cpu.txt").exists()  # no correct cpu iteration: no best


def test_cpu_target_on_a_cuda_run_keeps_the_cuda_compile_outputs(pytester: pytest.Pytester, copy_into) -> None:
    """vN/config.json, gpu.mlir and kernels.ptx of the run's own target (cuda) are not
    rewritten by a compile for another target."""
    run = copy_into(CUDA_RUN, "run")
    pytester.runpytest("-p", "no:cacheprovider", "-k", "v0 and compile")
    written = {name: (run / "v0" / name).read_bytes() for name in ("config.json", "gpu.mlir", "kernels.ptx")}
    assert json.loads(written["config.json"])["target"] == "cuda"
    pytester.runpytest("-p", "no:cacheprovider", "--mlir-target", "cpu", "-k", "v0 and compile")
    assert {name: (run / "v0" / name).read_bytes() for name in written} == written
    assert json.loads((run / "v0" / "config.cpu.json").read_text())["target"] == "cpu"


# --------------------------------------------------------------------- 6. bad schedule
def test_a_bad_schedule_is_reported_in_transform_mlir(pytester: pytest.Pytester) -> None:
    bad = SCHEDULE.replace("-> !transform.any_op\n", "-> !!!transform.any_op\n", 1)
    assert bad.splitlines()[2].endswith("!!!transform.any_op")  # line 3
    run = cpu_run(pytester.path, {"v0": NAIVE, "v1": bad})
    recorded_model(run)
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs", "--mlir-json=run.json", *BENCH)
    records = records_of(pytester.path / "run.json")
    schedule = f"{run / 'v1' / 'transform.mlir'}:3:"
    contract, compiled = records["run/model_linalg.mlir::v1[contract]"], records["run/model_linalg.mlir::v1[compile]"]
    assert (contract["kind"], contract["outcome"]) == ("contract-error", "failed")
    assert any(d.startswith(schedule) for d in contract["diagnostics"]), contract
    assert (compiled["kind"], compiled["outcome"]) == ("compile-error", "failed")
    assert any(d.startswith(schedule) for d in compiled["diagnostics"]), compiled
    for stage in ("correctness", "benchmark"):
        record = records[f"run/model_linalg.mlir::v1[{stage}]"]
        assert record["outcome"] == "skipped" and record["message"].startswith("compile failed"), record
    for record in (contract, compiled):
        text = "\n".join([record["message"], record["details"], *record["diagnostics"]])
        assert "model_linalg.mlir:3" not in text and '"-":' not in text and "-:3:" not in text, text
    out = result.stdout.str()
    assert "model_linalg.mlir:3" not in out and '"-":' not in out
    assert f"{schedule}" in out
    assert records["run/model_linalg.mlir::v0[correctness]"]["kind"] == "pass"  # the good iteration ran on


# --------------------------------------------------------------------------- 7. timeouts
# The items meant to pass get a budget no busy machine exhausts (the marker wins over
# PYTEST_TIMEOUT); the environment's bounds the hanging execute alone.
GENEROUS_BUT_THE_HANG = """
import pytest

def pytest_collection_modifyitems(items):
    for item in items:
        if item.name != "spin[execute]":
            item.add_marker(pytest.mark.timeout(300))
"""


def test_pytest_timeout_from_the_environment_bounds_a_hanging_snippet(pytester: pytest.Pytester,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makefile(".mlir", ops=SPIN + ADD)
    recorded(pytester.path, "ops", "add_0")
    pytester.makeconftest(GENEROUS_BUT_THE_HANG)
    monkeypatch.setenv("PYTEST_TIMEOUT", "2")  # the hang's budget: it never answers, however long it is given
    xml = pytester.path / "junit.xml"
    # timeout: a guard, failing the test if the hang went unbounded
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--mlir-json=run.json", f"--junitxml={xml}",
                                           timeout=600)
    result.assert_outcomes(failed=1, passed=3)
    records = records_of(pytester.path / "run.json")
    assert (records["ops.mlir::spin[execute]"]["kind"], records["ops.mlir::spin[execute]"]["outcome"]) == (
        "timeout", "failed")
    assert item_properties(xml)["ops.mlir::spin[execute]"]["mlir_kind"] == "timeout"
    assert records["ops.mlir::add_0[execute]"]["kind"] == "pass"  # the run went on
    assert "+++ Timeout +++" not in result.stdout.str()  # pytest-timeout set no timer of its own


TIMEOUT_MARKERS = """
import pytest

def pytest_collection_modifyitems(items):
    for item in items:
        if item.name == "v0[correctness]":
            item.add_marker(pytest.mark.timeout(1))
        elif item.name in ("v0[contract]", "v0[compile]"):
            item.add_marker(pytest.mark.timeout(300))
"""


def test_a_timeout_marker_bounds_an_iteration_item(pytester: pytest.Pytester,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The model loops forever: its correctness run hangs, and the marker's second ends it."""
    monkeypatch.delenv("PYTEST_TIMEOUT", raising=False)
    model = SPIN.replace("@spin", "@forward")
    cpu_run(pytester.path, {"v0": NAIVE}, model=model)
    pytester.makeconftest(TIMEOUT_MARKERS)
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "not benchmark", "--mlir-json=run.json",
                                  timeout=600)  # a guard: the hang went unbounded
    records = records_of(pytester.path / "run.json")
    assert {n.split("::")[1]: (r["kind"], r["outcome"]) for n, r in records.items()} == {
        "v0[contract]": ("pass", "passed"), "v0[compile]": ("pass", "passed"),
        "v0[correctness]": ("timeout", "failed")}


# ----------------------------------------------------------------------- 8. lit XFAIL
XFAILING = "// XFAIL: cpu\n" + ADD + "// XFAIL: *\n" + ADD.replace("add_0", "add_1")


def xfailing_file(pytester: pytest.Pytester) -> None:
    """add_0 (XFAIL: cpu) executes against wrong recorded outputs: a golden mismatch;
    add_1 (XFAIL: *) passes everywhere (against right ones)."""
    pytester.makefile(".mlir", ops=XFAILING)
    recorded(pytester.path, "ops", "add_1")
    a, b = np.arange(4, dtype=np.float32), np.ones(4, dtype=np.float32)
    np.savez(pytester.path / "ops.add_0.npz", input_0=a, input_1=b, output_0=a + b + 1)


def test_lit_xfail_expects_the_last_stage_to_fail(pytester: pytest.Pytester) -> None:
    xfailing_file(pytester)
    result = pytester.runpytest("-p", "no:cacheprovider", "--mlir-json=run.json", "-rfx")
    result.assert_outcomes(passed=2, xfailed=1, failed=1)
    records = records_of(pytester.path / "run.json")
    outcome = {n.split("::")[1]: (r["outcome"], r["kind"]) for n, r in records.items()}
    assert outcome == {"add_0[compile]": ("passed", "pass"), "add_0[execute]": ("xfailed", "golden-mismatch"),
                       "add_1[compile]": ("passed", "pass"), "add_1[execute]": ("failed", "pass")}
    result.stdout.fnmatch_lines(["FAILED ops.mlir::add_1[[]execute[]] - [[]XPASS(strict)[]]*"])


def test_lit_xfail_with_skip_exec_holds_the_compile(pytester: pytest.Pytester) -> None:
    xfailing_file(pytester)
    result = pytester.runpytest("-p", "no:cacheprovider", "--mlir-skip-exec", "-rf")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["FAILED ops.mlir::add_0[[]compile[]] - [[]XPASS(strict)[]]*",
                                 "FAILED ops.mlir::add_1[[]compile[]] - [[]XPASS(strict)[]]*"])


def test_updated_expectations_turn_lit_xfail_runs_green(pytester: pytest.Pytester) -> None:
    xfailing_file(pytester)
    exp = pytester.path / "exp.txt"
    pytester.runpytest("-p", "no:cacheprovider", f"--mlir-expectations={exp}", "--mlir-update-expectations")
    green = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-expectations={exp}")
    assert green.parseoutcomes().get("failed", 0) == 0, exp.read_text() + green.stdout.str()
    green.assert_outcomes(passed=3, xfailed=1)
    again = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-expectations={exp}", "--mlir-update-expectations")
    again.assert_outcomes(passed=3, xfailed=1)  # stable: updating a green run keeps it green
    pytester.runpytest("-p", "no:cacheprovider", f"--mlir-expectations={exp}").assert_outcomes(passed=3, xfailed=1)


# --------------------------------------------------------------------- 9. node ids, -v
NESTED = """module {
  module @inner {
    func.func @bad(%a: tensor<4xf32>) -> tensor<4xf32> {
      %0 = arith.addf %a, %a : tensor<4xi32>
      return %0 : tensor<4xf32>
    }
  }
  module @outer {
    func.func @bad(%a: tensor<4xf32>) -> tensor<4xf32> {
      %0 = arith.addf %a, %a : tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
}
"""


def test_verbose_lines_show_node_ids_that_can_be_pasted_back(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", nest=NESTED)
    recorded(pytester.path, "nest", "bad", inputs=1)  # outer.bad's golden: a sidecar takes the function's own name
    result = pytester.runpytest("-p", "no:cacheprovider", "-v")
    shown = [line.split()[0] for line in result.outlines if re.match(r"nest\.mlir::\S+ (PASSED|FAILED|SKIPPED)", line)]
    assert shown == ["nest.mlir::inner.bad[compile]", "nest.mlir::inner.bad[execute]",
                     "nest.mlir::outer.bad[compile]", "nest.mlir::outer.bad[execute]"], result.stdout.str()
    for node in shown:
        again = pytester.runpytest("-p", "no:cacheprovider", "-v", node)
        ran = [line.split()[0] for line in again.outlines if re.match(r"\S+::\S+ (PASSED|FAILED|SKIPPED)", line)]
        assert ran == [node], again.stdout.str()


def test_skip_lines_of_iteration_items_name_a_file_and_a_line(pytester: pytest.Pytester) -> None:
    cpu_run(pytester.path, {"v0": "module {", "v10": None})  # v0 does not parse; v10 has no schedule
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs", *BENCH)
    skips = [line for line in result.outlines if line.startswith("SKIPPED")]
    assert skips, result.stdout.str()
    places = set()
    for line in skips:
        m = re.match(r"SKIPPED \[\d+\] (\S+):(\d+): ", line)
        assert m, line
        assert (pytester.path / m.group(1)).is_file() and int(m.group(2)) >= 1, line
        places.add(m.group(1))
    assert places == {"run/v0/transform.mlir", "run/model_linalg.mlir"}


# ------------------------------------------------------------------ 10. terminal summary
def test_summary_counts_every_item_iteration_items_included(pytester: pytest.Pytester, tree: Path) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider")
    counted = per_outcome(result)
    assert sum(counted.values()) == len(collected(pytester)) == 28
    assert counted["compile-error"] == 3  # broken_0, v2[host_ops], v3[launch]
    assert verdict_line(result).startswith("1 snippet(s) and 2 iteration(s) failed across 2 file(s)")


def test_summary_of_a_run_without_failures_says_what_was_unsupported(pytester: pytest.Pytester,
                                                                      copy_into) -> None:
    """Without a GPU, v0 and v1 of the cuda run pass every check and skip correctness and
    benchmark ("no CUDA device": a skip, not unsupported): items passed, so something ran,
    but no iteration "succeeded": half of what makes one was skipped."""
    from conftest import has_cuda_device

    if has_cuda_device():
        pytest.skip("correctness and benchmark run where a CUDA device is")
    copy_into(CUDA_RUN, "run")
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "v0 or v1", "--mlir-json=run.json")
    result.assert_outcomes(passed=8, skipped=4)
    assert per_outcome(result) == {"pass": 8, "skip": 4}
    verdict = verdict_line(result)
    assert verdict == ("2 iteration(s) passed every item that ran, 4 item(s) skipped ([correctness], [benchmark]: "
                       "no CUDA device) across 1 file(s)"), verdict
    skipped = [r for r in json.loads((pytester.path / "run.json").read_text())["items"] if r["kind"] == "skip"]
    assert len(skipped) == 4 and all(r["message"].startswith("no CUDA device") for r in skipped)


def test_compile_only_passes_without_a_gpu_are_said_so(pytester: pytest.Pytester) -> None:
    """``--mlir-target cuda`` without a GPU: the compiles pass and the executes skip; the
    verdict says that (not "0 snippet(s) succeeded" beside "2 passed")."""
    from conftest import has_cuda_device

    if has_cuda_device():
        pytest.skip("the executes run where a CUDA device is")
    pytester.makefile(".mlir", ops=ADD + ADD.replace("add_0", "add_1"))
    result = pytester.runpytest("-p", "no:cacheprovider", "--mlir-target", "cuda")
    result.assert_outcomes(passed=2, skipped=2)
    assert verdict_line(result) == ("2 snippet(s) passed every item that ran, 2 item(s) skipped ([execute]: no CUDA "
                                    "device) across 1 file(s)"), verdict_line(result)


def test_an_all_skipped_run_does_not_claim_success(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops="// UNSUPPORTED: cpu\n" + ADD + "// UNSUPPORTED: cpu, cuda\n"
                      + ADD.replace("add_0", "add_1"))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(skipped=4)
    section = mlir_section(result)
    assert per_outcome(result) == {"unsupported": 4}
    assert "succeeded" not in verdict_line(result) and "all 0" not in section[1], section


def test_summary_after_ctrl_c_says_the_run_was_interrupted(pytester: pytest.Pytester, tree: Path) -> None:
    pytester.makeconftest("""
def pytest_runtest_call(item):
    if item.name == "v1[compile]":
        raise KeyboardInterrupt
""")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == 2
    section = mlir_section(result)
    assert any(line.startswith("the run was interrupted (Ctrl-C)") for line in section), section
    assert sum(per_outcome(result).values()) == 4 + 7  # the snippets, v0 (6 items) and v1[contract]


def test_host_ops_without_a_location_never_say_none(pytester: pytest.Pytester, copy_into) -> None:
    run = copy_into(CUDA_RUN, "run")
    model = run / "model_linalg.mlir"
    model.write_text(model.read_text().replace("-> tensor<256x256xf32>\n  return", '-> tensor<256x256xf32> loc("mm")\n'
                                               "  return"))
    assert 'loc("mm")' in model.read_text()
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "v2 and host_ops", "--mlir-json=run.json")
    result.assert_outcomes(failed=1)
    record = records_of(pytester.path / "run.json")["run/model_linalg.mlir::v2[host_ops]"]
    assert record["message"].startswith("host_ops: 1 loop(s) or copies left in host code"), record
    assert record["message"].endswith(f"scf.for at {model}"), record["message"]
    for text in (result.stdout.str(), record["message"], (run / "model_linalg-run-report.txt").read_text()):
        assert ":None" not in text and "at None" not in text, text


# ------------------------------------------------------------------------------ 11. xdist
CRASHING = """
import os

def pytest_runtest_call(item):
    if item.name in ("add_0[execute]", "v0[compile]") and hasattr(item.config, "workerinput"):
        os._exit(1)
"""


def test_an_item_lost_with_its_xdist_worker_is_a_crash_record(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=ADD + ADD.replace("add_0", "add_1"))
    recorded(pytester.path, "ops", "add_0", "add_1")
    recorded_model(cpu_run(pytester.path, {"v0": NAIVE}))
    pytester.makeconftest(CRASHING)
    xml = pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "--mlir-json=run.json",
                                           f"--junitxml={xml}", *BENCH)
    records = records_of(pytester.path / "run.json")
    assert len(records) == 8, result.stdout.str()
    for node in ("ops.mlir::add_0[execute]", "run/model_linalg.mlir::v0[compile]"):
        record = records[node]
        assert (record["kind"], record["outcome"]) == ("crash", "failed"), record
        assert re.fullmatch(r"gw\d+", record["worker"]), record
        assert item_properties(xml)[node.replace("run/", "")]["mlir_kind"] == "crash"
    assert records["ops.mlir::add_1[execute]"]["kind"] == "pass"
    report = (pytester.path / "ops-run-report.txt").read_text()
    assert "1. ops.mlir::add_0[execute]: crash\n" in report and "lost with xdist worker gw" in report
    run_report = (pytester.path / "run" / "model_linalg-run-report.txt").read_text()
    assert "run/model_linalg.mlir::v0[compile]: crash" in run_report


DEVICES = """
import os

def pytest_mlir_device_opened(config, target, device_id, info):
    with open(os.path.join(str(config.rootpath), "opened.txt"), "a") as f:
        f.write(f"{target} {device_id} {getattr(config, 'workerinput', {}).get('workerid', '-')}\\n")
"""


def test_each_xdist_worker_opens_its_own_device(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(DEVICES)
    pytester.makefile(".mlir", ops="".join(ADD.replace("add_0", f"add_{i}") for i in range(4)))
    recorded(pytester.path, "ops", *(f"add_{i}" for i in range(4)))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "--mlir-devices", "3,5")
    result.assert_outcomes(passed=8)
    assert sorted((pytester.path / "opened.txt").read_text().splitlines()) == ["cpu 3 gw0", "cpu 5 gw1"]

