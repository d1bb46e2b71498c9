"""``stablehlo.select_and_scatter`` as loops, as the reference interpreter runs it.

The result starts as ``init_value`` everywhere. For every index of ``source``, the
window at ``source_index * window_strides - padding_low`` is scanned in order (its
out-of-bounds positions skipped): the first element is selected, and each element
after it replaces the selection unless ``select(selected, element)`` is true.
Then ``result[selected] = scatter(scatter(init_value, source[source_index]),
result[selected])`` (the interpreter's ``reduce`` of those two values). The
select region runs inside the window loop; the scatter region twice (the second
time a copy of it).
"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.worker.lowering.shlo.build import Builder, inline, replace, static_ops


def lower_all(module: Any, tir: Any) -> int:
    """Every ``stablehlo.select_and_scatter`` with static shapes, as loops; how many."""
    found = static_ops(module, tir, "stablehlo.select_and_scatter")
    for op in found:
        lower(op, tir)
    return len(found)


def _ints(tir: Any, op: Any, name: str, default: list[int]) -> list[int]:
    if name not in op.attributes:
        return default
    attr = op.attributes[name]
    try:
        return list(tir.DenseI64ArrayAttr(attr))
    except (TypeError, ValueError):
        return [int(v) for v in tir.DenseIntElementsAttr(attr)]


def lower(op: Any, tir: Any) -> None:
    operand, source, init = op.operands
    rank = len(tir.RankedTensorType(operand.type).shape)
    window = _ints(tir, op, "window_dimensions", [1] * rank)
    strides = _ints(tir, op, "window_strides", [1] * rank)
    low = _ints(tir, op, "padding", [0] * 2 * rank)[0::2]
    select = op.regions[0].blocks[0]
    with tir.InsertionPoint(op):
        b = Builder(tir, op.location)
        twin = op.clone()  # a second scatter region
        shape = b.shape(operand)
        element = b.element_type(operand)
        start = b.op("stablehlo.broadcast_in_dim", [op.results[0].type], [init],
                     broadcast_dimensions=tir.DenseI64ArrayAttr.get([])).result

        def per_source(source_index: list[Any], carried: list[Any]) -> list[Any]:
            (result,) = carried
            zero = b.extract(b.op("stablehlo.constant", [tir.RankedTensorType.get([], element)], [],
                                  value=tir.DenseElementsAttr.get_splat(tir.RankedTensorType.get([], element),
                                                                        _zero(tir, element))).result, [])
            state = [b.i1(False), zero, *[b.index(0) for _ in shape]]

            def per_window(offsets: list[Any], now: list[Any]) -> list[Any]:
                at = [b.add(b.arith.MulIOp(s, b.index(stride), loc=b.loc).result, b.index(o_low))
                      for s, stride, o_low in zip(source_index, strides, [-x for x in low])]
                at = [b.add(a, w) for a, w in zip(at, offsets)]
                inside = b.i1(True)
                for a, size in zip(at, shape):
                    inside = b.both(inside, b.below(a, size))

                def consider() -> list[Any]:
                    has, chosen, where = now[0], now[1], now[2:]
                    current = b.extract(operand, at)
                    base = b.arith.SelectOp(has, chosen, current, loc=b.loc).result
                    base_at = [b.arith.SelectOp(has, w, a, loc=b.loc).result for w, a in zip(where, at)]
                    (keep,) = inline(tir, select, [b.as_0d(base), b.as_0d(current)])
                    kept = b.extract(keep, [])
                    picked = b.arith.SelectOp(kept, base, current, loc=b.loc).result
                    picked_at = [b.arith.SelectOp(kept, w, a, loc=b.loc).result for w, a in zip(base_at, at)]
                    return [b.i1(True), picked, *picked_at]

                return b.if_else(inside, [v.type for v in now], consider, lambda: list(now))

            has, _, *where = b.loops(window, state, per_window)

            def scatter() -> list[Any]:
                value = b.as_0d(b.extract(source, source_index))
                (first,) = inline(tir, op.regions[1].blocks[0], [init, value])
                (second,) = inline(tir, twin.regions[1].blocks[0], [first, b.as_0d(b.extract(result, where))])
                return [b.insert(b.extract(second, []), result, where)]

            return b.if_else(has, [result.type], scatter, lambda: [result])

        (final,) = b.loops(b.shape(source), [start], per_source)
    twin.erase()
    replace(op, [final])


def _zero(tir: Any, element: Any) -> Any:
    text = str(element)
    if text.startswith(("f", "bf")):
        return tir.FloatAttr.get(element, 0.0)
    if text.startswith("complex"):
        raise ValueError("complex select_and_scatter")
    return tir.IntegerAttr.get(element, 0)
