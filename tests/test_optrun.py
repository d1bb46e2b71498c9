"""Optimization run directories: one set of items per vN iteration, and the benchmark tables."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import has_cuda_device

from pytest_mlir_snippets.model import history
from pytest_mlir_snippets.model.record import ItemRecord
from pytest_mlir_snippets.model.recordinfo import RecordInfo

ROOT = Path(__file__).resolve().parent.parent

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
PLACEHOLDER = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    transform.yield
  }
}
"""


def read_iteration(folder: Path, target: str = "cpu") -> dict:
    """The iteration's last measurement, as the run's benchmark history keeps it."""
    return history.entries(folder.parent, target).get(folder.name, {})


def iteration(run: Path, name: str, schedule: str | None = SCHEDULE, hypothesis: str = "tile 8x8") -> None:
    folder = run / name
    folder.mkdir()
    if schedule is not None:
        (folder / "transform.mlir").write_text(schedule)
    (folder / "pass_pipeline.txt").write_text("builtin.module(canonicalize)\n")
    (folder / "hypothesis.txt").write_text(hypothesis)


def test_contract_per_iteration(pytester: pytest.Pytester) -> None:
    run = pytester.mkdir("run")
    (run / "model_linalg.mlir").write_text(MODEL)
    iteration(run, "v0")
    iteration(run, "v1", schedule=PLACEHOLDER)
    iteration(run, "v2", hypothesis="  \n")
    iteration(run, "v3", schedule="transform.named_sequence @__transform_main(")
    iteration(run, "v10", schedule=None)
    collected = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    assert [line for line in collected.outlines if "::" in line] == [
        f"run/model_linalg.mlir::v{n}[{stage}]" for n in (0, 1, 2, 3, 10)
        for stage in ("contract", "compile", "correctness", "benchmark")]
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs", "-k", "contract or compile")
    result.assert_outcomes(passed=4, failed=5, skipped=1)
    result.stdout.fnmatch_lines([
        "*contract: v1/transform.mlir: @__transform_main only yields: a placeholder, not a schedule*",
        "*contract: v2/hypothesis.txt is empty*",
        "*contract: v3/transform.mlir: transform.mlir does not parse*",
        "*v3/transform.mlir:1:*: error: *",
        "*contract: v10/transform.mlir is missing*",
    ])
    result.stdout.fnmatch_lines(["*contract not met: v10/transform.mlir missing*"])
    one = pytester.runpytest("-p", "no:cacheprovider", "-k", "v2 and (contract or compile)")
    one.assert_outcomes(failed=1, passed=1)


def test_compile_applies_the_schedule_and_the_pipeline(pytester: pytest.Pytester) -> None:
    run = pytester.mkdir("run")
    (run / "model_linalg.mlir").write_text(MODEL)
    iteration(run, "v0")
    (run / "v0" / "pass_pipeline.txt").write_text(
        "one-shot-bufferize{bufferize-function-boundaries}, func.func(convert-linalg-to-loops)\n")
    iteration(run, "v1")
    (run / "v1" / "pass_pipeline.txt").write_text("builtin.module(no-such-pass)\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "compile")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*invalid pass_pipeline.txt pipeline*'no-such-pass' is not a registered pass*",
                                 "*'no-such-pass' does not refer to*"])
    lowered = (run / "v0" / "llvm.mlir").read_text()
    assert "scf.for" in lowered and "memref<16x16xf32>" in lowered and "transform." not in lowered
    config = json.loads((run / "v0" / "config.json").read_text())
    assert config["target"] == "cpu" and config["status"] == "pass" and config["kernels"] == []
    assert {op["op"] for op in config["host_ops"]} == {"scf.for", "memref.copy"}  # the tile loops, and a copy
    assert all(op["line"] for op in config["host_ops"])
    assert json.loads((run / "v1" / "config.json").read_text())["status"] == "compile-error"


TO_LLVM = ("one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},"
           " buffer-deallocation-pipeline, convert-bufferization-to-memref, func.func(convert-linalg-to-loops),"
           " convert-scf-to-cf, expand-strided-metadata, lower-affine, finalize-memref-to-llvm,"
           " convert-arith-to-llvm, convert-index-to-llvm, convert-func-to-llvm, convert-cf-to-llvm,"
           " reconcile-unrealized-casts")


def test_correctness_against_the_model_and_against_recorded_outputs(pytester: pytest.Pytester, run_items) -> None:
    run = pytester.mkdir("run")
    (run / "model_linalg.mlir").write_text(MODEL)
    iteration(run, "v0")
    (run / "v0" / "pass_pipeline.txt").write_text(TO_LLVM)
    iteration(run, "v1")  # stops before LLVM: it cannot run
    (run / "v1" / "pass_pipeline.txt").write_text("one-shot-bufferize{bufferize-function-boundaries}")
    result, props = run_items("-k", "correctness")
    assert props["model_linalg.mlir::v0[correctness]"]["outcome"] == "passed"
    assert props["model_linalg.mlir::v0[correctness]"]["mlir_golden"] == "differential:iree-cpu"  # the model on IREE
    assert float(props["model_linalg.mlir::v0[correctness]"]["mlir_pcc"]) > 0.9999
    assert props["model_linalg.mlir::v1[correctness]"]["outcome"] == "failure"
    result.stdout.fnmatch_lines(["*translation to LLVM failed*"])
    # recorded outputs that disagree with the model: the iteration is caught
    a, b = np.ones((16, 16), np.float32), np.eye(16, dtype=np.float32)
    np.savez(run / "model_linalg.forward.npz", input_0=a, input_1=b, output_0=a @ b + 1)
    result, props = run_items("-k", "v0 and correctness")
    assert props["model_linalg.mlir::v0[correctness]"]["outcome"] == "failure"
    result.stdout.fnmatch_lines(["*results differ from the recorded outputs (model_linalg.forward.npz)*"])


NAIVE = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.yield
  }
}
"""
# A "schedule" that changes the result: the accumulator starts at 1 instead of 0.
WRONG = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %zero = transform.structured.match ops{["arith.constant"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.structured.replace %zero {
      %one = arith.constant 1.0 : f32
    } : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
"""


def test_cpu_run_benchmarks_and_never_picks_an_incorrect_iteration(pytester: pytest.Pytester, run_items) -> None:
    run = pytester.mkdir("run")
    (run / "model_linalg.mlir").write_text(MODEL)
    for name, schedule in (("v0", NAIVE), ("v1", SCHEDULE), ("v2", WRONG)):
        iteration(run, name, schedule=schedule)
        (run / name / "pass_pipeline.txt").write_text(TO_LLVM)
    result, props = run_items("--mlir-bench-time=0.05", "--mlir-bench-settle=0.5", "-rA")
    stages = {n: p for n, p in props.items() if n.startswith("model_linalg.mlir::")}
    assert [n for n in stages if n.endswith("[benchmark]")] == [f"model_linalg.mlir::v{i}[benchmark]" for i in range(3)]
    assert stages["model_linalg.mlir::v2[correctness]"]["mlir_kind"] == "golden-mismatch", result.stdout.str()[-2000:]
    for i in range(3):
        bench = stages[f"model_linalg.mlir::v{i}[benchmark]"]
        assert bench["outcome"] == "passed" and float(bench["mlir_samples"]) >= 20
        assert float(bench["mlir_min_ms"]) <= float(bench["mlir_median_ms"]) <= float(bench["mlir_max_ms"])
    medians = {f"v{i}": read_iteration(run / f"v{i}")["median_ms"] for i in range(3)}
    best = min(("v0", "v1"), key=lambda v: medians[v])
    table = (run / "benchmark.md").read_text()
    assert f"| {best} (best) | pass | pass |" in table, table
    assert "| v2 | pass | golden-mismatch |" in table
    assert (run / "best_pipeline.txt").read_text() == (run / best / "pass_pipeline.txt").read_text()
    assert (run / "best_transform.mlir").read_text() == (run / best / "transform.mlir").read_text()
    assert (run / "speedup.png").read_bytes()[:4] == b"\x89PNG"
    v0 = (run / "v0" / "benchmark.md").read_text()
    assert "| speedup vs v0 | 1.00x |" in v0 and "| correctness | pass |" in v0
    assert "| left out (CPU slowed) |" in v0 and "| samples | left out | vs v0 |" in table
    assert (read_iteration(run / "v0")["fixed_layout"] == 1) != ("| memory layout | randomized" in v0)
    assert (read_iteration(run / "v0")["fixed_layout"] == 1) == ("without address-space randomization" in v0)
    report = (run / "model_linalg-run-report.txt").read_text()  # the run's items, as a file's
    assert report.startswith("MLIR optimization run report") and "v2 " in report and "golden-mismatch" in report
    # only v2 this time: the others keep their figures, v2 is still not best
    run_items("--mlir-bench-time=0.05", "--mlir-bench-settle=0.5", "-k", "v2")
    assert f"| {best} (best) |" in (run / "benchmark.md").read_text()


def test_a_benchmark_much_slower_than_the_same_codes_last_one_keeps_timing(pytester: pytest.Pytester,
                                                                           run_items) -> None:
    """vN/benchmark.md records what was measured (a digest of model, schedule, pipeline,
    target, toolchain, host); the next measurement of the same code that runs over 1.25x
    slower keeps timing (--mlir-bench-settle) and, not seeing that speed, says it did not settle."""
    run = pytester.mkdir("run")
    (run / "model_linalg.mlir").write_text(MODEL)
    iteration(run, "v0", schedule=SCHEDULE)
    (run / "v0" / "pass_pipeline.txt").write_text(TO_LLVM)
    run_items("--mlir-bench-time=0.05", "--mlir-bench-settle=0.5", "-k", "benchmark")
    first = read_iteration(run / "v0")
    assert len(first["digest"]) == 16
    faked = run / history.FILE  # as if the code had once run ten times faster
    data = json.loads(faked.read_text())
    data["targets"]["cpu"]["v0"].update(median_ms=first["median_ms"] / 10, settled=1.0)
    faked.write_text(json.dumps(data))
    assert read_iteration(run / "v0")["median_ms"] == first["median_ms"] / 10
    run_items("--mlir-bench-time=0.05", "--mlir-bench-settle=0.5", "-k", "benchmark")
    second = read_iteration(run / "v0")
    assert second["settled"] == 0 and second["median_ms"] > first["median_ms"] / 5
    assert second["digest"] == first["digest"] and second["reference_ms"] == first["median_ms"] / 10
    run_items("--mlir-bench-time=0.05", "--mlir-bench-settle=0.5", "-k", "benchmark")  # judged by it once more
    third = read_iteration(run / "v0")
    assert third["settled"] == 0 and "reference_ms" not in third  # and then no longer
    (run / "v0" / "pass_pipeline.txt").write_text(TO_LLVM + "\n")  # other code: other digest
    run_items("--mlir-bench-time=0.05", "--mlir-bench-settle=0.5", "-k", "benchmark", "--mlir-bench-layout=random")
    fourth = read_iteration(run / "v0")
    assert fourth["digest"] != first["digest"] and fourth["fixed_layout"] == 0
    text = (run / "v0" / "benchmark.md").read_text()
    assert "| memory layout | randomized (--mlir-bench-layout=random" in text
    assert "without address-space randomization" not in text


def test_cuda_run_without_a_gpu(pytester: pytest.Pytester, run_items, copy_into) -> None:
    """The cuda example: PTX, kernels and the host_ops and launch checks anywhere;
    correctness and benchmark skip without a GPU."""
    run = copy_into(ROOT / "examples" / "runs" / "cuda_matmul", "run")
    result, props = run_items("-rA")
    outcome = {n.split("::")[1]: p["outcome"] for n, p in props.items()}
    failed = {n for n, o in outcome.items() if o == "failure"}
    on_gpu = {f"v{i}[{s}]" for i in (2, 3) for s in ("correctness", "benchmark")} if has_cuda_device() else set()
    assert {"v2[host_ops]", "v3[launch]"} <= failed <= {"v2[host_ops]", "v3[launch]"} | on_gpu, result.stdout.str()
    if has_cuda_device():  # the correct mappings run and match the model on the cpu target
        assert outcome["v0[correctness]"] == outcome["v1[correctness]"] == "passed", result.stdout.str()
    result.stdout.fnmatch_lines([
        "*host_ops: 1 loop(s) or copies left in host code (outside gpu.module and kernels): "
        "scf.for at *run/model_linalg.mlir:3:8*",
        "*launch: forward_kernel launches 65536 blocks of 1 thread (grid [[]256, 256, 1], block [[]1, 1, 1])*"])
    if not has_cuda_device():
        assert all(outcome[f"v{i}[{s}]"] == "skipped" for i in range(4) for s in ("correctness", "benchmark"))
        result.stdout.fnmatch_lines(["*no CUDA device*"])
    ptx = (run / "v0" / "kernels.ptx").read_text()
    assert ".visible .entry forward_kernel" in ptx and ".target sm_80" in ptx
    config = json.loads((run / "v0" / "config.json").read_text())
    assert config["kernels"][0]["grid"] == [8, 8, 1] and config["kernels"][0]["block"] == [32, 32, 1]
    assert config["ptx"] == {"mma.sync": False, "wgmma": False, "matmul_like": True}
    assert json.loads((run / "v1" / "config.json").read_text())["kernels"][0]["grid"] == [8, 16, 1]
    assert "| v3 | launch compile-error |" in (run / "benchmark.md").read_text()


@pytest.mark.slow
def test_cpu_example_run_from_pytorch(pytester: pytest.Pytester, run_items, copy_into) -> None:
    run = copy_into(ROOT / "examples" / "runs" / "cpu_mlp", "run")
    report = pytester.path / "records.json"
    result, props = run_items("--mlir-bench-time=0.05", "--mlir-bench-settle=0.5", f"--mlir-json={report}")
    assert all(p["outcome"] == "passed" for p in props.values()), result.stdout.str()[-3000:]
    records = {r["name"]: r for r in json.loads(report.read_text())["items"]}
    assert records["pytorch[compile]"]["kind"] == "pass"  # torch.compile in its own item ...
    assert records["pytorch[benchmark]"]["info"]["torch_compile"] == "reused"  # ... the benchmark reuses it
    assert props["model_linalg.mlir::v2[correctness]"]["mlir_reference"] == \
        "recorded outputs (model_linalg.forward.npz)"
    table = (run / "benchmark.md").read_text()
    assert "(best)" in table and "vs torch.compile" in table and (run / "speedup.png").is_file()


def test_the_fastest_iteration_is_best_only_when_correct(tmp_path: Path) -> None:
    from pytest_mlir_snippets.reporting import benchmark

    run = tmp_path / "run"
    records = []
    for name, median in (("v0", 4.0), ("v1", 2.0), ("v2", 1.0)):
        iteration(run if run.exists() else run_dir(run), name)
        figures = {"median_ms": median, "p20_ms": median, "p80_ms": median, "min_ms": median, "max_ms": median,
                   "std_ms": 0.0, "samples": 20.0}
        records.append(ItemRecord(f"run/model_linalg.mlir::{name}[benchmark]", f"{name}[benchmark]",
                                  "run/model_linalg.mlir", name, "benchmark", benchmark=figures, run="run"))
    verdicts = {"v0": "pass", "v1": "pass", "v2": "golden-mismatch"}

    def correctness() -> list[ItemRecord]:
        return [ItemRecord(f"run/model_linalg.mlir::{name}[correctness]", f"{name}[correctness]",
                           "run/model_linalg.mlir", name, "correctness", kind, run="run")
                for name, kind in verdicts.items()]

    benchmark.write_run(run, "cpu", records + correctness())
    table = (run / "benchmark.md").read_text()
    assert "| v1 (best) |" in table and "| v2 | not run | golden-mismatch | 1.000 |" in table, table
    assert "| 2.00x |" in table  # v1 against v0
    assert (run / "best_pipeline.txt").read_text() == (run / "v1" / "pass_pipeline.txt").read_text()
    verdicts.update(v1="golden-mismatch", v0="execute-error")
    benchmark.write_run(run, "cpu", correctness())  # the figures stay in the history
    assert "Best: none" in (run / "benchmark.md").read_text()
    assert not (run / "best_pipeline.txt").exists() and not (run / "best_transform.mlir").exists()
    assert "| v1 | not run | golden-mismatch | 2.000 |" in (run / "benchmark.md").read_text()


def run_dir(run: Path) -> Path:
    run.mkdir()
    (run / "model_linalg.mlir").write_text(MODEL)
    return run


def test_a_malformed_benchmark_history_is_read_as_far_as_it_is_data(tmp_path: Path) -> None:
    """benchmarks.json is read back as data: what ``history.update`` would not have written
    (a string where an entry is, a figure that is text, stages that are not a table) is left out."""
    from pytest_mlir_snippets.reporting import benchmark

    run = run_dir(tmp_path / "run")
    for name in ("v0", "v1", "v2"):
        iteration(run, name)
    (run / history.FILE).write_text(json.dumps({"version": history.VERSION, "targets": {
        "cpu": {"v0": "a string", "v1": {"median_ms": "fast", "samples": True, "min_ms": 1.0, "stages": "pass",
                                          "digest": 7, "speedup_v0": "x", "run": "os.system('true')"},
                "v2": {"median_ms": 2.0, "digest": "d2", "settled": 1, "stages": {"correctness": "pass", "x": 3}}},
        "cuda": ["not", "a", "table"]}}))
    assert history.load(run) == {"cpu": {"v1": {"min_ms": 1.0},
                                         "v2": {"median_ms": 2.0, "digest": "d2", "settled": 1,
                                                "stages": {"correctness": "pass"}}}}
    assert history.reference_ms(run, "cpu", "v2", "d2") == 2.0 and history.reference_ms(run, "cpu", "v1", "") == 0
    records = [ItemRecord("run/model_linalg.mlir::v1[correctness]", "v1[correctness]", "run/model_linalg.mlir",
                          "v1", "correctness", "pass", run="run")]
    benchmark.write_run(run, "cpu", records)  # the tables are written, the history rewritten as data
    assert "| v2 (best) | not run | pass | 2.000 |" in (run / "benchmark.md").read_text()
    assert history.entries(run, "cpu")["v1"] == {"min_ms": 1.0, "stages": {"correctness": "pass"}}


def test_a_partial_run_keeps_the_whole_table_and_explains_its_figures(tmp_path: Path) -> None:
    """After -k v1 the run's table keeps v0's row and the PyTorch columns from the
    history (said to be from an earlier run); left out reads "N of M"; each row has its
    hypothesis; the plot says grey only when a bar is grey."""
    from pytest_mlir_snippets.reporting import benchmark

    run = run_dir(tmp_path / "run")

    def measured(name: str, median: float) -> list[ItemRecord]:
        figures = {"median_ms": median, "p20_ms": median, "p80_ms": median, "min_ms": median, "max_ms": median,
                   "std_ms": 0.0, "samples": 20.0, "slowed": 3.0, "median_all_ms": median}
        node = f"run/model_linalg.mlir::{name}"
        return [ItemRecord(f"{node}[benchmark]", f"{name}[benchmark]", "run/model_linalg.mlir", name, "benchmark",
                           benchmark=figures, run="run"),
                ItemRecord(f"{node}[correctness]", f"{name}[correctness]", "run/model_linalg.mlir", name,
                           "correctness", "pass", run="run")]

    iteration(run, "v0", hypothesis="naive loops")
    iteration(run, "v1", hypothesis="tile 8x8 | then vectorize\nmore words")
    pytorch = ItemRecord("run/model_linalg.mlir::pytorch[benchmark]", "pytorch[benchmark]", "run/model_linalg.mlir",
                         "pytorch", "pytorch", benchmark={"eager_median_ms": 8.0, "compile_median_ms": 4.0},
                         info=RecordInfo(measured="2026-01-02 03:04:05"), run="run")
    benchmark.write_run(run, "cpu", measured("v0", 4.0) + measured("v1", 2.0) + [pytorch])
    whole = (run / "benchmark.md").read_text()
    assert "| vs v0 | vs eager | vs torch.compile | hypothesis |" in whole
    assert "| 20 | 3 of 23 | 2.00x | 4.00x | 2.00x | tile 8x8 \\| then vectorize |" in whole, whole
    assert "left out: N of M timed calls were made while the CPU ran slowed" in whole
    benchmark.write_run(run, "cpu", measured("v1", 2.0))  # -k v1
    partial = (run / "benchmark.md").read_text()
    assert "| v0 | not run | pass | 4.000 |" in partial and "| 1.00x | 2.00x | 1.00x | naive loops |" in partial
    assert "eager 8.000 ms, torch.compile 4.000 ms (measured 2026-01-02 03:04:05, not in this run)." in partial
    assert benchmark.plot_title("run", "cpu", [{"correctness": "pass"}]) == \
        "run on cpu: speedup of each iteration vs v0"
    assert benchmark.plot_title("run", "cpu", [{"correctness": "golden-mismatch"}]).endswith("\ngrey = not correct")


def test_the_plot_names_the_run_and_target_and_draws_pytorch_eager(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """speedup.png is titled with the run and its target, and has PyTorch eager's line on
    the speedup-vs-v0 axis, here above every bar: eager is faster than the best iteration."""
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    from matplotlib.figure import Figure

    from pytest_mlir_snippets.reporting import benchmark

    saved: list[Figure] = []
    monkeypatch.setattr(Figure, "savefig", lambda figure, path, **_: saved.append(figure))
    run = run_dir(tmp_path / "mlp_run")
    records = []
    for name, median in (("v0", 4.0), ("v1", 2.0)):
        iteration(run, name)
        node = f"mlp_run/model_linalg.mlir::{name}"
        records += [ItemRecord(f"{node}[benchmark]", f"{name}[benchmark]", "mlp_run/model_linalg.mlir", name,
                               "benchmark", benchmark={"median_ms": median, "samples": 20.0}, run="mlp_run"),
                    ItemRecord(f"{node}[correctness]", f"{name}[correctness]", "mlp_run/model_linalg.mlir", name,
                               "correctness", "pass", run="mlp_run")]
    pytorch = ItemRecord("mlp_run/model_linalg.mlir::pytorch[benchmark]", "pytorch[benchmark]",
                         "mlp_run/model_linalg.mlir", "pytorch", "pytorch", run="mlp_run",
                         benchmark={"eager_median_ms": 1.4})
    benchmark.write_run(run, "cpu", [*records, pytorch])
    assert "| 2.00x | 0.70x |" in (run / "benchmark.md").read_text()
    (axes,) = saved[-1].axes
    assert axes.get_title() == "mlp_run on cpu: speedup of each iteration vs v0"
    eager = [line for line in axes.get_lines() if line.get_label().startswith("PyTorch eager")]
    assert [line.get_label() for line in eager] == ["PyTorch eager (2.86x v0)"]
    assert eager[0].get_ydata()[0] == pytest.approx(4.0 / 1.4)
    assert axes.get_ylim()[1] > 4.0 / 1.4  # the line is in view, above the bars
    benchmark.write_run(run, "cpu", records)  # no PyTorch figures this run: the history's are drawn
    assert any(line.get_label().startswith("PyTorch eager") for line in saved[-1].axes[0].get_lines())


def test_new_iteration_starts_the_next_one(pytester: pytest.Pytester) -> None:
    """A run without iterations gets v0 from its target's starting schedule, which runs
    as it is once the hypothesis is written; then v1 from the last one, v2 --from v0."""
    import sys

    cli = str(Path(sys.executable).with_name("mlir-snippets"))
    run = run_dir(pytester.path / "run")
    first = pytester.run(cli, "new-iteration", "run")
    assert first.ret == 0, first.stderr.str()
    assert first.outlines[0] == "wrote run/v0/: transform.mlir and pass_pipeline.txt from the cpu starting " \
                                "schedule, an empty hypothesis.txt"
    first.stdout.fnmatch_lines(["next: say what this iteration tries in run/v0/hypothesis.txt*",
                                "      then run: pytest run -k v0"])
    assert sorted(p.name for p in (run / "v0").iterdir()) == ["hypothesis.txt", "pass_pipeline.txt", "transform.mlir"]
    empty = pytester.runpytest("-p", "no:cacheprovider", "run", "-k", "contract")
    empty.assert_outcomes(failed=1)
    empty.stdout.fnmatch_lines(["*v0/hypothesis.txt is empty*"])
    (run / "v0" / "hypothesis.txt").write_text("Naive loops: the baseline.\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "run", "-k", "not benchmark")
    result.assert_outcomes(passed=3)  # contract, compile, correctness of the starting schedule
    (run / "v0" / "pass_pipeline.txt").write_text("builtin.module(canonicalize)\n")
    assert pytester.run(cli, "new-iteration", str(run / "model_linalg.mlir")).ret == 0
    assert (run / "v1" / "pass_pipeline.txt").read_text() == "builtin.module(canonicalize)\n"
    assert (run / "v1" / "hypothesis.txt").read_text() == ""
    assert pytester.run(cli, "new-iteration", "run", "--from", "v0").ret == 0
    assert (run / "v2" / "transform.mlir").read_text() == (run / "v0" / "transform.mlir").read_text()
    wrong = pytester.run(cli, "new-iteration", "run", "--from", "v9")
    assert wrong.ret == 2 and wrong.errlines == ["mlir-snippets new-iteration: --from v9: no such iteration in "
                                                 "run (there are: v0, v1, v2)"]
    assert pytester.run(cli, "new-iteration", "nowhere").ret == 2
