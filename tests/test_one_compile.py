"""An optimization run's iteration is compiled once (issue 41): its [compile] writes
vN/gpu.mlir from the same compile that [host_ops] and [launch] read and [correctness] and
[benchmark] run, so that every record of an iteration names one ``compiled_digest``, the
sha256 of that file, and the worker made one compile per iteration."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from test_optrun import MODEL, SCHEDULE, TO_LLVM, iteration

ROOT = Path(__file__).resolve().parent.parent


def _records(pytester: pytest.Pytester, *args: str) -> list[dict[str, Any]]:
    out = pytester.path / "records.json"
    pytester.runpytest("-p", "no:cacheprovider", f"--mlir-json={out}", "--mlir-bench-time=0.05",
                       "--mlir-bench-settle=0.5", *args)
    return [r for r in json.loads(out.read_text())["items"] if r["function"].startswith("v")]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_text(encoding="utf-8").encode("utf-8")).hexdigest()


def test_a_cpu_iteration_is_compiled_once_and_every_stage_names_that_compile(pytester: pytest.Pytester) -> None:
    run = pytester.mkdir("run")
    (run / "model_linalg.mlir").write_text(MODEL)
    for name, tiles in (("v0", "[8, 8]"), ("v1", "[4, 8]")):
        iteration(run, name, SCHEDULE.replace("[8, 8]", tiles))
        (run / name / "pass_pipeline.txt").write_text(TO_LLVM + "\n")
    records = _records(pytester)
    by_iteration: dict[str, dict[str, dict[str, Any]]] = {}
    for record in records:
        by_iteration.setdefault(record["function"], {})[record["stage"]] = record
    for number, name in enumerate(("v0", "v1"), 1):
        stages = by_iteration[name]
        assert {s: r["kind"] for s, r in stages.items()} == {"contract": "pass", "compile": "pass",
                                                              "correctness": "pass", "benchmark": "pass"}
        digests = {stages[s]["compiled_digest"] for s in ("compile", "correctness", "benchmark")}
        assert digests == {_digest(run / name / "llvm.mlir")}, digests
        # the worker's iteration compiles so far, as each stage saw them: one per iteration
        assert {stages[s]["info"]["compiles"] for s in ("compile", "correctness", "benchmark")} == {number}
    # what runs is what vN/llvm.mlir shows: the C interface the JIT calls is in it (the
    # stepwise path the [compile] item had before left it out, so the digests differed)
    assert "_mlir_ciface_forward" in (run / "v0" / "llvm.mlir").read_text()
    assert by_iteration["v0"]["compile"]["compiled_digest"] != by_iteration["v1"]["compile"]["compiled_digest"]


def test_a_cuda_iteration_compiled_without_a_gpu_names_one_compile(pytester: pytest.Pytester, copy_into) -> None:
    copy_into(ROOT / "examples" / "runs" / "cuda_matmul", "cuda_matmul")
    records = _records(pytester)
    run = pytester.path / "cuda_matmul"
    seen = 0
    for name in ("v0", "v1", "v2", "v3"):
        stages = {r["stage"]: r for r in records if r["function"] == name}
        assert stages["compile"]["kind"] == "pass", stages["compile"]["message"]
        digests = {stages[s]["compiled_digest"] for s in ("compile", "host_ops", "launch")}
        assert digests == {_digest(run / name / "gpu.mlir")}, (name, digests)
        assert stages["compile"]["info"]["compiles"] == seen + 1
        seen += 1
        assert (run / name / "kernels.ptx").read_text().strip()
