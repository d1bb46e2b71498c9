"""A run sharded over CI jobs with pytest-split, merged by `mlir-snippets report`, gives
the reports of one unsharded run; a shard that never reported is named, its items not run."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from test_run import recorded

CLI = str(Path(sys.executable).with_name("mlir-snippets"))
CRASHER = """func.func @wild_load(%t: tensor<4xf32>) -> f32 {
  %far = arith.constant 1099511627776 : index
  %0 = tensor.extract %t[%far] : tensor<4xf32>
  return %0 : f32
}
"""
HANGS = """func.func @spins(%x: i64) -> i64 {
  %r = scf.while (%i = %x) : (i64) -> i64 {
    %true = arith.constant true
    scf.condition(%true) %i : i64
  } do {
  ^bb0(%i: i64):
    %one = arith.constant 1 : i64
    %next = arith.addi %i, %one : i64
    scf.yield %next : i64
  }
  return %r : i64
}
"""
COMMON = ("-p", "no:cacheprovider", "--mlir-bench-time=0.05", "--mlir-bench-settle=0", "--mlir-bench-warmup=1",
          "examples")
# The hang alone gets a short budget (pytest-timeout's marker bounds the item's calls); every
# other item keeps the plugin's default, which no busy machine exhausts, so that all four runs
# give each item the same verdict. A hang never answers: a second is as good as any budget.
HANG_BUDGET = """
import pytest

def pytest_collection_modifyitems(items):
    for item in items:
        if item.name == "spins[execute]":
            item.add_marker(pytest.mark.timeout(1))
"""


def reports(root: Path) -> dict[str, str]:
    """Every report under ``root``; of a run's benchmark table, the iterations with their
    checks and correctness (the figures, and so the best, are timings: no two runs agree)."""
    found = {}
    for path in sorted(root.rglob("*")):
        if path.name.endswith("-run-report.txt") or path.name == "mlir-snippets-combined-report.txt":
            found[path.relative_to(root).as_posix()] = path.read_text()
        elif path.name == "benchmark.md" and path.parent.name in ("cpu_mlp", "cuda_matmul"):
            rows = [line.split(" | ")[:3] for line in path.read_text().splitlines() if line.startswith("| v")]
            found[path.relative_to(root).as_posix()] = repr([[row[0].removesuffix(" (best)"), *row[1:]]
                                                             for row in rows])
    return found


def clear(root: Path) -> None:
    for path in root.rglob("*"):
        if path.name.endswith("-run-report.txt") or path.name in ("mlir-snippets-combined-report.txt",
                                                                   "benchmark.md"):
            path.unlink()


@pytest.mark.slow
def test_three_shards_merge_into_the_reports_of_one_run(pytester: pytest.Pytester, copy_into) -> None:
    from conftest import EXAMPLES

    pytest.importorskip("pytest_split")
    examples = copy_into(EXAMPLES, "examples")
    for run in ("cpu_conv", "cpu_matmul", "cpu_softmax"):  # one cpu run is enough here, and each costs 5 s a time
        shutil.rmtree(examples / "runs" / run)
    # three snippet files are enough too (the run is made 4 times): failures of each stage, a skip, passes
    for name in ("arith_math", "linalg", "onnx", "stablehlo", "tosa"):
        (examples / f"{name}.mlir").unlink()
    # nor PyTorch's timing: torch.compile takes longer than --mlir-timeout on a busy machine
    (examples / "runs" / "cpu_mlp" / "reference.py").unlink()
    python_tests = examples / "test_python_api.py"  # whose expected hang waits a shorter time too
    assert python_tests.read_text().count("timeout=2)") == 1
    python_tests.write_text(python_tests.read_text().replace("timeout=2)", "timeout=0.5)"))
    (examples / "hostile.mlir").write_text(CRASHER + HANGS)
    pytester.makeconftest(HANG_BUDGET)
    one = pytester.runpytest_subprocess(*COMMON, "--mlir-json=all.json")
    expected = reports(examples)
    assert "hostile-run-report.txt" in expected and "runs/cpu_mlp/benchmark.md" in expected
    summary = [line for line in one.outlines if "snippet(s)" in line or line.startswith("items per outcome")]
    for group in (1, 2, 3):
        clear(examples)
        shard = pytester.runpytest_subprocess(*COMMON, "--splits=3", f"--group={group}", f"--mlir-json=g{group}.json")
        shard.stdout.fnmatch_lines([f"*Running group {group}/3*"])
    clear(examples)
    merged = pytester.run(CLI, "report", "g1.json", "g2.json", "g3.json", "--json", "merged.json")
    assert merged.ret == 1  # the examples fail on purpose
    assert reports(examples) == expected
    assert [line for line in merged.outlines if "snippet(s)" in line or line.startswith("items per")] == summary
    items = {r["nodeid"]: r["kind"] for r in json.loads((pytester.path / "merged.json").read_text())["items"]}
    alone = {r["nodeid"]: r["kind"] for r in json.loads((pytester.path / "all.json").read_text())["items"]}
    assert items == alone
    assert items["examples/hostile.mlir::wild_load[execute]"] == "crash"
    assert items["examples/hostile.mlir::spins[execute]"] == "timeout"

    # shard 2 never reported (its job was cancelled): named, and its items are not run
    lost = {r["nodeid"] for r in json.loads((pytester.path / "g2.json").read_text())["items"]}
    clear(examples)
    partial = pytester.run(CLI, "report", "g1.json", "g3.json", "--json", "partial.json")
    assert partial.ret == 1
    partial.stdout.fnmatch_lines([f"*shard 2 of 3 did not report: its {len(lost)} item(s) are counted as not run*"])
    combined = (examples / "mlir-snippets-combined-report.txt").read_text()
    assert "shard 2 of 3 did not report" in combined
    records = {r["nodeid"]: r for r in json.loads((pytester.path / "partial.json").read_text())["items"]}
    assert {n for n, r in records.items() if r["kind"] == "not-run"} == lost
    assert set(records) == set(alone)


def test_each_shard_gets_its_device(pytester: pytest.Pytester) -> None:
    """A CI matrix job passes its own device with --mlir-devices; the shard's process opens it."""
    pytest.importorskip("pytest_split")
    pytester.makeconftest("""
import os
def pytest_mlir_device_opened(config, target, device_id, info):
    with open(os.path.join(str(config.rootpath), "opened.txt"), "a") as f:
        f.write(f"{device_id}\\n")
""")
    add = """func.func @add_{n}(%a: tensor<4xf32>) -> tensor<4xf32> {{
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}}
"""
    pytester.makefile(".mlir", ops="".join(add.format(n=n) for n in range(4)))
    recorded(pytester.path, "ops", *(f"add_{n}" for n in range(4)), inputs=1)  # their golden: no second compiler
    for group, device in ((1, 3), (2, 5)):
        result = pytester.runpytest("-p", "no:cacheprovider", "--splits=2", f"--group={group}",
                                    f"--mlir-devices={device}", f"--mlir-json=g{group}.json")
        result.assert_outcomes(passed=4)
    assert (pytester.path / "opened.txt").read_text().split() == ["3", "5"]
    for group in (1, 2):
        doc = json.loads((pytester.path / f"g{group}.json").read_text())
        assert doc["shard"] == {"group": group, "splits": 2}
