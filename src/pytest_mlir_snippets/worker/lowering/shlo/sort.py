"""``stablehlo.sort`` as a bubble sort along its dimension, which
``stablehlo-legalize-to-linalg`` then finishes.

For every slice along ``dimension`` (loops over the other dimensions), ``n`` passes
compare each neighbour pair with the comparator, ``comparator(x[j + 1], x[j])``
operand by operand as the region's arguments expect, and swap the pair in every
operand when it says true: a swap only on "strictly before" keeps equal elements in
order, so the sort is stable whether ``is_stable`` asks for it or not. Quadratic:
meant for correctness checks, not speed. The comparator runs on 0-d tensors,
moved from the region into the innermost loop.
"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.worker.lowering.shlo.build import Builder, inline, replace, static_ops


def lower_all(module: Any, tir: Any) -> int:
    """Every ``stablehlo.sort`` with static shapes, as loops; how many."""
    found = static_ops(module, tir, "stablehlo.sort")
    for op in found:
        lower(op, tir)
    return len(found)


def lower(op: Any, tir: Any) -> None:
    inputs = list(op.operands)
    dimension = int(tir.IntegerAttr(op.attributes["dimension"]).value)
    block = op.regions[0].blocks[0]
    with tir.InsertionPoint(op):
        b = Builder(tir, op.location)
        shape = b.shape(inputs[0])
        dimension %= max(len(shape), 1)
        n = shape[dimension] if shape else 1
        others = [size for d, size in enumerate(shape) if d != dimension]

        def slice_sort(outer: list[Any], values: list[Any]) -> list[Any]:
            def at(j: Any) -> list[Any]:
                position = list(outer)
                position.insert(dimension, j)
                return position

            def step(ivs: list[Any], current: list[Any]) -> list[Any]:
                j = ivs[1]
                here, there = at(j), at(b.add(j, b.index(1)))
                firsts = [b.extract(v, here) for v in current]
                seconds = [b.extract(v, there) for v in current]
                arguments = []
                for first, second in zip(firsts, seconds):
                    arguments += [b.as_0d(second), b.as_0d(first)]
                (before,) = inline(tir, block, arguments)
                swap = b.extract(before, [])
                out = []
                for value, first, second in zip(current, firsts, seconds):
                    low = b.arith.SelectOp(swap, second, first, loc=op.location).result
                    high = b.arith.SelectOp(swap, first, second, loc=op.location).result
                    out.append(b.insert(high, b.insert(low, value, here), there))
                return out

            return b.loops([n, n - 1], values, step) if n > 1 else values

        results = b.loops(others, inputs, slice_sort)
    replace(op, results)
