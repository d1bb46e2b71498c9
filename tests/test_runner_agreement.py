"""The plugin's benchmark of an optimization-run iteration against upstream's ``mlir-runner``
on the same IR (``tools/upstream_timing.py``; ``bench/runner_agreement.py`` does it for
every run, docs/benchmark-agreement.md). Two causes of disagreement were found:

- an iteration whose schedule copies data per tile (``transform.structured.pad``,
  ``promote``: a ``memref.copy`` in the tile loops) ran each copy through a Python
  ``memrefCopy`` that the plugin registered with the ExecutionEngine: 18x slower than
  ``mlir-runner`` for the padded matmul below (25.4 ms against 1.39 ms), and the run named
  the wrong iteration best. The copy is upstream's ``libmlir_c_runner_utils`` in both;
- some kernels run up to 1.3x slower with the stack at one place than at another (their
  vector spills against 64-byte lines and their data), and a process keeps the stack
  position its environment's size gives it: ``cpu_conv/v2`` took 0.142 ms in the plugin's
  worker and 0.172 ms under ``mlir-runner``. The plugin calls the kernel with the stack at
  8 places in turn, whatever its caller's (``jit.Placements``), and reports the mean of
  the layouts' medians; the last test checks the places.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest

from pytest_mlir_snippets.tools import upstream_timing

MODEL = """func.func @forward(%a: tensor<64x256xf32>, %b: tensor<256x128xf32>) -> tensor<64x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<64x256xf32>, tensor<256x128xf32>)
                     outs(%init : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}
"""
IDENTITY = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.yield
  }
}
"""
# every 8x32x16 tile copied into padded buffers and its result copied back
PADDED_TILES = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %m = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l:3 = transform.structured.tile_using_for %m tile_sizes [8, 32, 16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %p, %pad, %copy = transform.structured.pad %t {padding_values = [0.0 : f32, 0.0 : f32, 0.0 : f32],
        padding_dimensions = [0, 1, 2], nofold_flags = [1, 1, 1], copy_back_op = "linalg.copy"}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
"""
PIPELINE = ("builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion="
            "identity-layout-map}, buffer-deallocation-pipeline, convert-bufferization-to-memref,"
            " func.func(convert-linalg-to-loops), convert-scf-to-cf, expand-strided-metadata, lower-affine,"
            " finalize-memref-to-llvm, convert-arith-to-llvm, convert-index-to-llvm, convert-func-to-llvm,"
            " convert-cf-to-llvm, reconcile-unrealized-casts)")


def make_run(folder: Path) -> Path:
    folder.mkdir()
    (folder / "model_linalg.mlir").write_text(MODEL)
    for name, schedule in (("v0", IDENTITY), ("v1", PADDED_TILES)):
        (folder / name).mkdir()
        (folder / name / "transform.mlir").write_text(schedule)
        (folder / name / "pass_pipeline.txt").write_text(PIPELINE)
        (folder / name / "hypothesis.txt").write_text("a test iteration")
    return folder


def test_the_timing_harness_lowers_and_prints_one_time_per_call(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run")
    upstream = upstream_timing.UpstreamIteration(run, "v0", warmup=1)
    times = upstream.times(7)
    assert len(times) == 7 and all(0 < t < 1000 for t in times), times


@pytest.mark.slow
def test_an_iteration_that_copies_per_tile_times_as_under_mlir_runner(pytester: pytest.Pytester) -> None:
    run = make_run(pytester.path / "run")
    upstream = upstream_timing.UpstreamIteration(run, "v1")
    assert "llvm.call @memrefCopy" in upstream.kernel  # the copies this test is about are there
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "v1 and benchmark", "--mlir-bench-time=0.5",
                                "--mlir-json=run.json")
    result.assert_outcomes(passed=1)
    items = json.loads((pytester.path / "run.json").read_text())["items"]
    plugin = next(item["benchmark"]["median_ms"] for item in items if item["name"] == "v1[benchmark]")
    upstream.warmup = int(250 / plugin)  # a fresh process's first calls of it run up to 1.5x slower
    calls = max(160, int(500 / plugin))
    runner = min(upstream.median(calls) for _ in range(2))  # a busy machine slows, never speeds
    for _ in range(8):  # a slow spell of this shared machine can outlast two runs: more, while it looks slower
        if plugin / runner > 1 / 1.5:
            break
        runner = min(runner, upstream.median(calls))
    # docs/benchmark-agreement.md holds them within 1.15x on a quiet machine; 1.5x here leaves room for a
    # busy one, and the Python memrefCopy was 18x
    assert 1 / 1.5 < plugin / runner < 1.5, f"plugin {plugin:.3f} ms, mlir-runner {runner:.3f} ms"


WHERE = """func.func @where(%out: memref<1xi64>) {
  %slot = memref.alloca() : memref<1xi64>
  %address = memref.extract_aligned_pointer_as_index %slot : memref<1xi64> -> index
  %value = arith.index_cast %address : index to i64
  %c0 = arith.constant 0 : index
  memref.store %value, %slot[%c0] : memref<1xi64>
  %kept = memref.load %slot[%c0] : memref<1xi64>
  memref.store %kept, %out[%c0] : memref<1xi64>
  return
}
"""


def stack_places() -> list[int]:
    """Where the stack is within a page when each of ``jit.Placements``'s layouts calls a
    function."""
    from pytest_mlir_snippets.protocol import Options
    from pytest_mlir_snippets.worker.lowering import jit
    from pytest_mlir_snippets.worker.targets.cpu import CpuBackend

    backend = CpuBackend()
    compiled = backend.compile(WHERE, "where", Options(opt_level=3))
    backend.link(compiled)
    args, results = compiled.signature
    placements = jit.Placements(compiled.handle, "where", args, results, [np.zeros(1, np.int64)])
    places = []
    for call in placements.calls:
        call.run()
        places.append(int(call.outputs()[0][0]) % 4096)
    return places


def test_every_layout_calls_with_the_stack_at_its_own_place_whatever_the_callers() -> None:
    here = stack_places()
    assert sorted({p % 64 for p in here}) == sorted({(here[0] - s) % 64 for s in (0, 16, 32, 48)}), here
    assert len(set(here)) == len(here)  # and each at another place in the page
    elsewhere: list[int] = []
    thread = threading.Thread(target=lambda: elsewhere.extend(stack_places()))  # another stack, elsewhere
    thread.start()
    thread.join()
    assert elsewhere == here
