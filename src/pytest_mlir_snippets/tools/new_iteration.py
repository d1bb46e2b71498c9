"""``mlir-snippets new-iteration RUN [--from vN]``: the next iteration of an optimization run.

Writes ``RUN/vK/`` (K: the first number after the run's last iteration) with
``transform.mlir`` and ``pass_pipeline.txt`` copied from ``vN`` (default: the last
iteration), or, in a run without iterations, the starting schedule of the run's
target (its ``run_starter`` in ``registry.py``, one of ``STARTERS``), and an empty ``hypothesis.txt``: the iteration's
``[contract]`` item fails until it says what the iteration tries.

The starting points:

- cpu (``loops``): a schedule that only canonicalizes, and a pipeline that lowers every linalg op
  to plain loops (``convert-linalg-to-loops``) and on to LLVM, math ops as the cpu target's own
  pipeline lowers them (``rsqrt`` expanded, ``erf``, ``tanh``, ... as libm calls, the rest as
  LLVM intrinsics): correct on any model the cpu target runs, and the baseline the next
  iterations are measured against. Boolean (i1) buffers take the plugin's rewrite between
  the steps (``optrun.iteration.Steps``);
- cuda (``matmul-nvvm``): the mapping of a 2-D ``linalg.matmul`` (32x32 output tiles per block, one
  element per thread, ``examples/runs/cuda_matmul/v0``) and the NVVM pipeline for
  sm_80: edit the match and the tile sizes for the model's ops.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from pytest_mlir_snippets.model.layout import MODEL, STAGES, declared_target, iterations
from pytest_mlir_snippets.registry import TARGETS

CPU_SCHEDULE = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
"""
CPU_PIPELINE = (
    "builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion="
    "identity-layout-map}, buffer-deallocation-pipeline, convert-bufferization-to-memref, "
    "func.func(convert-linalg-to-loops), convert-complex-to-standard, convert-vector-to-scf, convert-scf-to-cf, "
    "expand-strided-metadata, lower-affine, convert-vector-to-llvm, finalize-memref-to-llvm, "
    "func.func(math-expand-ops{ops=rsqrt}), convert-math-to-funcs, convert-math-to-libm, convert-math-to-llvm, "
    "convert-arith-to-llvm, convert-index-to-llvm, convert-func-to-llvm, convert-cf-to-llvm, convert-complex-to-llvm, "
    "convert-ub-to-llvm, reconcile-unrealized-casts)\n")
CUDA_SCHEDULE = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    %blocks, %grid = transform.structured.tile_using_forall %mm tile_sizes [32, 32] (mapping = [#gpu.block<y>, #gpu.block<x>])
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %threads, %group = transform.structured.tile_using_forall %blocks tile_sizes [1, 1] (mapping = [#gpu.thread<y>, #gpu.thread<x>])
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %bufferized = transform.bufferization.one_shot_bufferize %root {bufferize_function_boundaries = true,
        function_boundary_type_conversion = 1 : i32, memcpy_op = "linalg.copy"} : (!transform.any_op) -> !transform.any_op
    %func = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    %launch = transform.gpu.map_forall_to_blocks %func generate_gpu_launch : (!transform.any_op) -> !transform.any_op
    %mapped = transform.gpu.map_nested_forall_to_threads %launch block_dims = [32, 32, 1] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
"""  # noqa: E501 - MLIR as written
CUDA_PIPELINE = ("builtin.module(func.func(convert-linalg-to-loops, lower-affine, canonicalize), gpu-kernel-outlining, "
                 "gpu-lower-to-nvvm-pipeline{cubin-format=isa cubin-chip=sm_80 cubin-features=+ptx80})\n")
STARTERS = {"loops": (CPU_SCHEDULE, CPU_PIPELINE), "matmul-nvvm": (CUDA_SCHEDULE, CUDA_PIPELINE)}


class NewIterationError(ValueError):
    pass


@dataclass
class Written:
    folder: Path
    source: str  # where transform.mlir and pass_pipeline.txt came from: "v2", or "the cpu starting schedule"


def new_iteration(run: Path, source: str | None = None) -> Written:
    """Write the run's next iteration; raises ``NewIterationError`` saying what is wrong."""
    run = run.parent if run.name == MODEL else run
    if not (run / MODEL).is_file():
        raise NewIterationError(f"{run}: not an optimization run (no {MODEL})")
    existing = iterations(run)
    folder = run / f"v{int(existing[-1].name[1:]) + 1 if existing else 0}"
    start: Path | None = existing[-1] if existing else None
    if source is not None:
        start = run / source
        if start not in existing:
            raise NewIterationError(f"--from {source}: no such iteration in {run} "
                                    f"(there are: {', '.join(f.name for f in existing) or 'none'})")
    target = declared_target(run)
    starter = STARTERS.get(TARGETS[target].run_starter) if target in TARGETS else None
    if start is None and starter is None:
        raise NewIterationError(f"{run}: target {target} has no optimization runs (known: {', '.join(STAGES)})")
    folder.mkdir()
    if start is not None:
        for name in ("transform.mlir", "pass_pipeline.txt"):
            if (start / name).is_file():
                shutil.copyfile(start / name, folder / name)
    elif starter is not None:
        schedule, pipeline = starter
        (folder / "transform.mlir").write_text(schedule)
        (folder / "pass_pipeline.txt").write_text(pipeline)
    (folder / "hypothesis.txt").write_text("")
    return Written(folder, start.name if start is not None else f"the {target} starting schedule")


def next_steps(written: Written) -> list[str]:
    """What the command prints: what it wrote, and what to edit."""
    folder = written.folder
    return [f"wrote {folder}/: transform.mlir and pass_pipeline.txt from {written.source}, an empty hypothesis.txt",
            f"next: say what this iteration tries in {folder / 'hypothesis.txt'} (its [contract] fails while empty),",
            f"      change the schedule in {folder / 'transform.mlir'} and/or the passes in "
            f"{folder / 'pass_pipeline.txt'},",
            f"      then run: pytest {folder.parent} -k {folder.name}"]
