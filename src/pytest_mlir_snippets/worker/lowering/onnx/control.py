"""Loop and If whose control is known at compile time, rewritten in place.

torch-mlir converts ``onnx.Loop`` only with loop-carried values (no scan outputs) and
``onnx.If`` only as ``torch.prim.If``, whose branches must agree on types. Where the trip
count and conditions fold to constants (``fold``), the Loop is unrolled: its body cloned
once per iteration before it, the iteration number and condition as literals, the carried
values threaded through, each iteration's scan values given a leading unit axis and
concatenated (ONNX's Loop stacks them); an If with a constant condition is replaced by
its taken branch.

Unlike the other expansions, these are not built in a private function at ``OPSET``: the
body's ops are the model's own, at the model's opset, and may use values of the
enclosing function (ONNX subgraphs capture outer values), so they stay in that function.
The expander therefore replaces the op itself and returns None (nothing to call). The
walk in ``expand`` is post-order: ops nested in a body were offered to their expanders
before the body is cloned; Ifs and Loops in the clones whose control depended on the
iteration number are tried again once it is a literal.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.onnx import fold as folding
from pytest_mlir_snippets.worker.lowering.onnx.build import Emitter, OnnxOp, defining_op, onnx_name, parse_type
from pytest_mlir_snippets.worker.lowering.onnx.lift import lifted

MAX_ITERATIONS = 1024  # larger loops are left to torch-mlir: unrolling them would swamp the compile


def loop(op: OnnxOp, e: Emitter) -> list[Any] | None:
    if op.operation is not None:
        unroll(op.operation, e.tir, op.opset)
    return None  # unrolled in place, or left to torch-mlir


def if_(op: OnnxOp, e: Emitter) -> list[Any] | None:
    if op.operation is not None:
        inline(op.operation, e.tir, op.opset)
    return None  # inlined in place, or left to torch-mlir


def _flag(value: np.ndarray | None) -> bool | None:
    """A folded condition as a bool, None where it is not one element."""
    if value is None or value.size != 1:
        return None
    return bool(value.reshape(-1)[0])


def inline(if_op: Any, tir: Any, opset: int) -> bool:
    """Replace ``if_op`` by its taken branch when its condition folds; whether it did.
    The importer orders regions by attribute name: ``else_branch`` first, ``then_branch`` second."""
    cond = _flag(folding.fold(if_op.operands[0]))
    if cond is None:
        return False
    block = if_op.regions[1 if cond else 0].blocks[0]
    ops = list(block.operations)
    terminator, body = ops[-1], ops[:-1]
    for inner in body:
        inner.move_before(if_op)
    _retry_nested(body, tir, opset)  # the terminator's operands follow what these replace
    values = list(terminator.operands)
    _refine_returned(if_op.results, values)
    _replace(if_op, values)
    return True


def unroll(loop_op: Any, tir: Any, opset: int) -> bool:
    """Unroll ``loop_op`` when its trip count and every condition fold; whether it did.
    ONNX: ``M`` (trip count) and ``cond`` are optional, the body gets the iteration number,
    the condition and the N carried values, and gives the next condition, the N carried
    values and K scan values; it runs while cond and (no M or it < M)."""
    before = {op.operation for op in loop_op.block.operations}  # what was there: the rest is erased on giving up
    try:
        return _unroll(loop_op, tir, opset, before)
    except Exception:  # a form not foreseen: nothing of the attempt stays
        _give_up(loop_op, before)
        raise


def _unroll(loop_op: Any, tir: Any, opset: int, before: set[Any]) -> bool:
    operands = list(loop_op.operands)
    trip, cond = operands[0], operands[1]
    trip_absent, cond_absent = (str(v.type) == "!torch.none" for v in (trip, cond))
    count = None if trip_absent else folding.fold(trip)
    running = True if cond_absent else _flag(folding.fold(cond))
    # the scan outputs' static length is the number of iterations that ran (the import
    # took it from the model's shapes): it stands in for a count or condition known only
    # at run time, every condition then true
    executed = _scan_length(loop_op, len(operands) - 2)
    fixed = executed is not None and ((not trip_absent and count is None) or running is None)
    if fixed:
        count, running = np.array(executed), True
    if (not trip_absent and count is None) or (trip_absent and cond_absent and not fixed):
        return False  # an unknown trip count, or an infinite loop
    limit = None if count is None else int(np.asarray(count).reshape(-1)[0])
    if limit is not None and limit > MAX_ITERATIONS:
        return False
    if running is None:
        return False
    block = loop_op.regions[0].blocks[0]
    args = list(block.arguments)
    ops = list(block.operations)
    terminator, body = ops[-1], ops[:-1]
    carried = operands[2:]
    n = len(carried)
    e = Emitter(tir, loop_op.block, loop_op.location, before=loop_op)
    scans: list[list[Any]] = [[] for _ in list(terminator.operands)[1 + n:]]
    iteration = 0
    while running and (limit is None or iteration < limit):
        if iteration >= MAX_ITERATIONS:
            return _give_up(loop_op, before)
        mapping = dict(zip(args[2:], carried, strict=True))
        mapping[args[0]] = e.const(np.array(iteration), _dtype(args[0], "si64"))
        mapping[args[1]] = e.const(np.array(running), "i1")
        mapped = clone_body(loop_op, body, terminator, mapping, tir, opset)
        running = True if fixed else _flag(folding.fold(mapped[0]))
        if running is None:
            return _give_up(loop_op, before)  # a condition known only at run time
        carried = mapped[1:1 + n]
        for k, value in enumerate(mapped[1 + n:]):
            scans[k].append(value)
        iteration += 1
    results = list(carried)
    for k, values in enumerate(scans):
        stacked = _stack(e, values, loop_op.results[n + k], terminator.operands[1 + n + k], opset)
        if stacked is None:
            return _give_up(loop_op, before)
        results.append(stacked)
    _refine_returned(loop_op.results, results)
    _replace(loop_op, results)
    return True


def clone_body(op: Any, body: list[Any], terminator: Any, mapping: dict[Any, Any], tir: Any, opset: int) -> list[Any]:
    """One iteration: ``body``'s ops cloned before ``op`` with ``mapping``'s values for its
    arguments, nested Ifs and Loops retried; what the terminator gives, in the clones."""
    clones = []
    for inner in [*body, terminator]:  # the terminator too: it follows the nested rewrites below
        clone = inner.clone(ip=tir.InsertionPoint(op))
        _remap(clone, mapping, tir)
        clones.append(clone)
        mapping.update(zip(inner.results, clone.results, strict=True))
    _retry_nested(clones[:-1], tir, opset)
    mapped = list(clones[-1].operands)
    clones[-1].erase()
    return mapped


def _scan_length(loop_op: Any, carried: int) -> int | None:
    """The leading dimension every scan output of ``loop_op`` declares, if they declare one."""
    lengths = set()
    for result in list(loop_op.results)[carried:]:
        parsed = parse_type(str(result.type))
        if parsed is None or not parsed[0]:
            return None
        lengths.add(parsed[0][0])
    return lengths.pop() if len(lengths) == 1 else None


def _dtype(value: Any, default: str) -> str:
    parsed = parse_type(str(value.type))
    return default if parsed is None else parsed[1]


def _remap(op: Any, mapping: dict[Any, Any], tir: Any) -> None:
    """Point ``op``'s operands, and those of the ops in its regions, at their clones."""
    def visit(inner: Any) -> Any:
        for i, operand in enumerate(inner.operands):
            if operand in mapping:
                inner.operands[i] = mapping[operand]
        return tir.WalkResult.ADVANCE

    op.walk(visit)


def _stack(e: Emitter, values: list[Any], result: Any, body_value: Any, opset: int) -> Any:
    """Each iteration's scan value with a leading unit axis, concatenated; with no iteration, an
    empty tensor of the scan value's shape (None where that shape is not static)."""
    parsed = parse_type(str(body_value.type))
    dtype = _dtype(result, _dtype(body_value, "f32"))
    if not values:
        if parsed is None:
            return None
        return e.const(np.zeros([0, *parsed[0]]), dtype)
    declared = parse_type(str(result.type))  # [iterations, *row] where the import knew it
    rows, row_shapes = [], []
    for value in values:
        shape = folding.static_shape(value)
        if shape is None and declared is not None and declared[0]:
            shape = declared[0][1:]
        if shape is None:
            return None
        row_shapes.append(shape)
        # a leading unit axis: Reshape takes its shape as an input at every opset since 5
        # (Unsqueeze's axes became an input at 13, and torch-mlir converts few of the older ones)
        rows.append(e.op1("Reshape", [value, e.const([1, *shape], "si64")], [1, *shape], dtype))
    if any(shape != row_shapes[0] for shape in row_shapes):
        return None  # scan values of different shapes do not stack
    if len(rows) == 1:
        return rows[0]
    return lifted(e.op1("Concat", rows, [len(rows), *row_shapes[0]], dtype, axis=0), e.tir, opset)


def _refine_returned(results: Any, values: list[Any]) -> None:
    """Where a ``func.return`` uses a result whose replacement has another type (the
    import's ``[?]`` in a body), give the replacement the declared type: the function's
    signature is the model's own output types, which stay."""
    for result, value in zip(results, values, strict=True):
        returned = any(getattr(u.owner, "operation", u.owner).name == "func.return" for u in result.uses)
        if returned and str(result.type) != str(value.type) and defining_op(value) is not None:
            value.set_type(result.type)


def _replace(op: Any, values: list[Any]) -> None:
    for result, value in zip(op.results, values, strict=True):
        result.replace_all_uses_with(value)
    op.erase()


def _give_up(loop_op: Any, before: set[Any]) -> bool:
    """Erase what the unrolling put before ``loop_op``, last first."""
    made = [op.operation for op in loop_op.block.operations if op.operation not in before]
    for op in reversed(made):
        op.erase()
    return False


def _retry_nested(ops: list[Any], tir: Any, opset: int) -> None:
    """Ifs and Loops in ``ops`` (or their regions) whose control may now fold, innermost first."""
    found: list[Any] = []

    def visit(inner: Any) -> Any:
        if onnx_name(inner) in ("If", "Loop"):
            found.append(inner)
        return tir.WalkResult.ADVANCE

    for op in ops:
        op.walk(visit)
    for inner in found:
        if onnx_name(inner) == "If":
            inline(inner, tir, opset)
        else:
            unroll(inner, tir, opset)
