"""An optimization run's cuda stages that read its compile: ``[host_ops]`` (no loop or copy
left in host code) and ``[launch]`` (something runs on the GPU, not in blocks of one thread).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from pathlib import Path

from pytest_mlir_snippets.protocol import IterationFacts, Kind, Response

LARGE_GRID = 1024  # blocks: with one thread each, a launch this big wastes the GPU


def host_ops(path: Path, prior: Response) -> Response:
    """The verdict on ``prior`` (the iteration's compile of the model at ``path``)."""
    found = prior.iteration.host_ops if prior.iteration else None
    where = "; ".join(f"{op.op} at {at(path, op.line, op.column)}" for op in found or [])
    return Response(Kind.COMPILE_ERROR, f"host_ops: {len(found)} loop(s) or copies left in host code "
                    f"(outside gpu.module and kernels): {where}", iteration=_digest(prior)) if found \
        else Response(Kind.PASS, iteration=_digest(prior))


def launch(prior: Response) -> Response:
    kernels = (prior.iteration.kernels if prior.iteration else None) or []
    bad = [k for k in kernels if _product(k.block) == 1 and _product(k.grid) >= LARGE_GRID]
    problems = ["no gpu.launch or gpu.launch_func: nothing runs on the GPU"] if not kernels else [
        f"{k.kernel} launches {_product(k.grid)} blocks of 1 thread (grid {k.grid}, block {k.block})" for k in bad]
    return Response(Kind.COMPILE_ERROR, "launch: " + "; ".join(problems), iteration=_digest(prior)) if problems \
        else Response(Kind.PASS, iteration=_digest(prior))


def at(path: Path, line: int | None, column: int | None) -> str:
    """``path:line:column``, or the path alone where MLIR gave no location."""
    return f"{path}:{line}:{column}" if line else str(path)


def _digest(compiled: Response) -> IterationFacts:  # which compile a stage that reads it read
    found = compiled.iteration or IterationFacts()
    return IterationFacts(compiled_digest=found.compiled_digest, compiles=found.compiles)


def _product(sizes: list[int | None]) -> int:
    total = 1
    for size in sizes:
        total *= size or 1
    return total
