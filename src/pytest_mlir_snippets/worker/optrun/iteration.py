"""Compile one iteration of an optimization run: the payload (``model_linalg.mlir``),
its Transform schedule applied by the transform interpreter, then its pass pipeline one
top-level step at a time, through the target's own compile (``lowering.lowered``): one
compile whose result every stage of the iteration reads (``Steps``)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pytest_mlir_snippets.protocol import HostOp, IterationFacts, Kind, Launch
from pytest_mlir_snippets.worker.lowering import mlirtools

INTERPRETER = "builtin.module(transform-interpreter)"
HOST_LOOPS = ("scf.for", "scf.parallel", "scf.forall", "affine.for", "affine.parallel", "memref.copy")


def full_pipeline(text: str) -> str:
    """``pass_pipeline.txt`` as a module pipeline."""
    text = text.strip()
    if text.startswith("builtin.module("):
        return text
    return f"builtin.module({text})" if text else "builtin.module()"


def splice(ir: Any, model: str, schedule: str) -> Any:
    """The payload with the schedule's named sequences in it, for the transform
    interpreter (parsed in the current context, each text under its file's name)."""
    payload = mlirtools.parse_named(ir, model, "model_linalg.mlir")
    sequence = mlirtools.parse_named(ir, schedule, "transform.mlir")
    payload.operation.attributes["transform.with_named_sequence"] = ir.UnitAttr.get()
    insert = ir.InsertionPoint(payload.body)
    for op in sequence.body.operations:
        insert.insert(op.clone())
    return payload


def iteration_source(model: str, schedule: str, target: str = "cpu") -> str:
    """The model with the schedule spliced in, as text for a backend to compile (each
    op keeps its file's location); a compile-error with MLIR's diagnostics, located in
    ``model_linalg.mlir`` or ``transform.mlir``, when one of them does not parse."""
    from mlir import ir

    with ir.Context() as ctx, ir.Location.unknown(), mlirtools.collecting(ctx, target) as diags:
        try:
            text: str = splice(ir, model, schedule).operation.get_asm(enable_debug_info=True)
        except Exception as error:
            raise diags.failure(Kind.COMPILE_ERROR, "the model or the schedule does not parse", error) from None
        return text


def pipeline_steps(text: str) -> list[str]:
    """The top-level elements of ``pass_pipeline.txt``, each a pipeline of its own:
    ``builtin.module(a, b{x=1}, func.func(c))`` gives ``a``, ``b{x=1}``, ``func.func(c)``."""
    inner = full_pipeline(text)[len("builtin.module("):-1]
    steps, depth, current = [], 0, ""
    for char in inner:
        depth += (char in "({[") - (char in ")}]")
        if char == "," and depth == 0:
            steps.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        steps.append(current.strip())
    return [f"builtin.module({step})" for step in steps]


class Steps:
    """What an iteration's compile does between its steps (``lowering.lowered``'s
    ``between``): the rewrites every compile of the target gets (``prepare_for_llvm``: after
    the transform interpreter, the schedule dropped; after every step, what this build's
    LLVM lowering cannot take, such as the i1 loads and stores of a boolean buffer, which
    ``finalize-memref-to-llvm`` asserts on, made before a later step lowers them);
    after every step, loops left in host code (before the host is lowered they are loops;
    after, branches) and the kernels' launch shapes, as found."""

    def __init__(self) -> None:
        self.count = 0
        self.seen: dict[tuple[Any, ...], HostOp] = {}
        self.kernels: list[Launch] = []

    def __call__(self, module: Any) -> None:
        from pytest_mlir_snippets.worker.lowering.passes import prepare_for_llvm

        prepare_for_llvm(module)
        self.count += 1
        self.observe(module)

    def observe(self, module: Any) -> None:
        from mlir import ir

        for found in host_ops(module, ir):
            self.seen.setdefault((found.op, found.line, found.column), found)
        self.kernels = launches(module, ir) or self.kernels

    def finish(self, module: Any) -> Finished:
        """After the last step: what the iteration's stages read, and the final IR (the
        text of ``vN/llvm.mlir`` or ``vN/gpu.mlir``) with its sha256 (``compiled_digest``)."""
        from mlir import ir

        if self.count == 0:  # an empty pass_pipeline.txt: no step after the schedule
            self(module)
        else:
            self.observe(module)
        text = str(module)
        facts = IterationFacts(compiled_digest=hashlib.sha256(text.encode("utf-8")).hexdigest(),
                               host_ops=list(self.seen.values()), kernels=self.kernels)
        return Finished(text, facts, gpu_assembly(module, ir))


@dataclass
class Finished:
    """An iteration's compile, as ``Steps.finish`` found it."""

    text: str  # the final IR (vN/llvm.mlir, vN/gpu.mlir: registry.Target.run_ir)
    facts: IterationFacts
    ptx: str  # its gpu.binary's assembly ("": none)


@contextmanager
def lowered_iteration(model: str, schedule: str, pipeline: str, function: str,
                      target: str) -> Iterator[tuple[Any, Finished]]:
    """An iteration through the target's own compile (``lowering.lowered``): the transform
    interpreter, then each top-level step of ``pass_pipeline.txt`` (``Steps`` between them);
    the lowered module, inside its context, and what ``Steps.finish`` found."""
    from pytest_mlir_snippets.worker.lowering.passes import lowered

    steps = pipeline_steps(pipeline)
    between = Steps()
    with lowered(iteration_source(model, schedule, target), function, [INTERPRETER, *steps], target,
                 between=between, stages=["the transform schedule", *["pass_pipeline.txt"] * len(steps)]) as low:
        yield low, between.finish(low.module)


def _constant(value: Any) -> int | None:
    owner = value.owner
    name = getattr(owner, "name", None)
    if name in ("arith.constant", "llvm.mlir.constant"):
        try:
            return int(owner.attributes["value"].value)
        except (ValueError, TypeError, AttributeError):
            return None
    return None


def launches(module: Any, ir: Any) -> list[Launch]:
    """Grid, block and dynamic shared memory of every ``gpu.launch`` / ``gpu.launch_func``
    (None where a size is not a constant)."""
    found = []
    for op in mlirtools.ops_where(module, ir, lambda op: op.name in ("gpu.launch", "gpu.launch_func")):
        view = op.opview
        grid = [_constant(getattr(view, f"gridSize{axis}")) for axis in "XYZ"]
        block = [_constant(getattr(view, f"blockSize{axis}")) for axis in "XYZ"]
        shared = view.dynamicSharedMemorySize
        kernel = (str(op.attributes["kernel"]).split("::")[-1].lstrip("@") if op.name == "gpu.launch_func"
                  else "(inline gpu.launch)")
        line, _ = mlirtools.location_of(str(op.location))
        found.append(Launch(kernel, grid, block, line, _constant(shared) if shared is not None else 0))
    return found


def gpu_assembly(module: Any, ir: Any) -> str:
    """The PTX (or other assembly) of every ``gpu.binary`` of the module."""
    from mlir.dialects import gpu

    texts = []
    for op in mlirtools.ops_where(module, ir, lambda op: op.name == "gpu.binary"):
        for attr in op.attributes["objects"]:
            data = gpu.ObjectAttr(attr).object
            texts.append(data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data))
    return "\n".join(texts)


def host_ops(module: Any, ir: Any) -> list[HostOp]:
    """Loops and copies left in host code (outside ``gpu.module`` and GPU kernels)."""
    def on_host(op: Any) -> bool:
        if op.name not in HOST_LOOPS:
            return False
        parent = op.parent
        while parent is not None:
            if parent.name in ("gpu.module", "gpu.launch", "gpu.func"):
                return False
            parent = parent.parent
        return True

    found = []
    for op in mlirtools.ops_where(module, ir, on_host):
        line, column = mlirtools.location_of(str(op.location))
        found.append(HostOp(op.name, line, column))
    return found
