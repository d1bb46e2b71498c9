"""Compile one iteration of an optimization run: the payload (``model_linalg.mlir``),
its Transform schedule applied by the transform interpreter, then its pass pipeline."""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.protocol import Kind, Response
from pytest_mlir_snippets.worker.core import SnippetFailure
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


def iteration_source(model: str, schedule: str) -> str:
    """The model with the schedule spliced in, for a backend to compile; or a compile-error."""
    try:
        return spliced(model, schedule)
    except Exception as error:
        raise SnippetFailure(Kind.COMPILE_ERROR, f"the model or the schedule does not parse: {error}") from None


def spliced(model: str, schedule: str) -> str:
    """``splice`` as text, for a backend that parses it itself."""
    from mlir import ir

    with ir.Context(), ir.Location.unknown():
        text: str = splice(ir, model, schedule).operation.get_asm(enable_debug_info=True)
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


def compile_iteration(model: str, schedule: str, pipeline: str, target: str) -> Response:
    """Schedule, then ``pass_pipeline.txt`` one top-level step at a time, so that loops
    left in host code are seen before the host is lowered (they vanish into branches
    then), and so are the kernels' launch shapes."""
    from mlir import ir, passmanager

    with ir.Context() as ctx, ir.Location.unknown(), mlirtools.collecting(ctx, target) as diags:
        try:
            payload = splice(ir, model, schedule)
        except Exception as error:
            failure = diags.failure(Kind.COMPILE_ERROR, "the model or the schedule does not parse", error)
            return Response(failure.kind, failure.message, failure.diagnostics)
        seen: dict[tuple[Any, ...], dict[str, Any]] = {}
        kernels: list[dict[str, Any]] = []
        try:
            steps = pipeline_steps(pipeline)
            for number, step in enumerate([INTERPRETER, *steps]):
                stage = "the transform schedule" if number == 0 else "pass_pipeline.txt"
                mlirtools.run_passes(payload, step, passmanager.PassManager.parse, diags, stage)
                if number == 0:
                    mlirtools.drop_schedule(payload, ir)
                for found in host_ops(payload, ir):
                    seen.setdefault((found["op"], found["line"], found["column"]), found)
                kernels = launches(payload, ir) or kernels
        except SnippetFailure as failure:
            return Response(failure.kind, failure.message, failure.diagnostics)
        info: dict[str, Any] = {"host_ops": list(seen.values()), "kernels": kernels}
        ptx = gpu_assembly(payload, ir)
        if ptx:
            info["ptx"] = ptx
        return Response(Kind.PASS, ir=str(payload), info=info)


def _constant(value: Any) -> int | None:
    owner = value.owner
    name = getattr(owner, "name", None)
    if name in ("arith.constant", "llvm.mlir.constant"):
        try:
            return int(owner.attributes["value"].value)
        except (ValueError, TypeError, AttributeError):
            return None
    return None


def launches(module: Any, ir: Any) -> list[dict[str, Any]]:
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
        found.append({"kernel": kernel, "grid": grid, "block": block, "line": line,
                      "dynamic_shared_bytes": _constant(shared) if shared is not None else 0})
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


def host_ops(module: Any, ir: Any) -> list[dict[str, Any]]:
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
        found.append({"op": op.name, "line": line, "column": column})
    return found
