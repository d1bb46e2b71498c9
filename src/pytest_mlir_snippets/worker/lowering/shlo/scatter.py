"""``stablehlo.scatter`` as loops, which ``stablehlo-legalize-to-linalg`` then finishes.

As the specification (and the reference interpreter) define it: for every index of
``updates[0]``, the start index read from ``scatter_indices`` and the window index
give the result index; an update whose result index is out of bounds is skipped,
per element; otherwise ``update_computation(results[i], updates[i])`` is stored
there, in the order of the update indices. The loops carry the results as tensors
(``scf.for``, ``tensor.extract``/``insert``); the update computation runs on 0-d
tensors, moved from the scatter's region into the loop body.
"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.worker.lowering.shlo.build import Builder, inline, replace, static_ops


def lower_all(module: Any, tir: Any) -> int:
    """Every ``stablehlo.scatter`` of ``module`` with static shapes, as loops; how many."""
    found = static_ops(module, tir, "stablehlo.scatter")
    for op in found:
        lower(op, tir)
    return len(found)


def lower(op: Any, tir: Any) -> None:
    import torch_mlir._mlir_libs._stablehlo as stablehlo

    dims = stablehlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    count = len(op.results)
    operands = list(op.operands)
    inputs, indices, updates = operands[:count], operands[count], operands[count + 1:]
    with tir.InsertionPoint(op):
        b = Builder(tir, op.location)
        indices = b.convert(indices, "i64")
        shape = b.shape(inputs[0])
        index_rank = len(b.shape(indices))
        update_rank = len(b.shape(updates[0]))
        window_dims = list(dims.update_window_dims)
        scatter_dims = [d for d in range(update_rank) if d not in window_dims]
        to_operand = list(dims.scattered_dims_to_operand_dims)
        vector_dim = dims.index_vector_dim
        skipped = set(dims.inserted_window_dims) | set(dims.input_batching_dims)
        block = op.regions[0].blocks[0]

        def body(ivs: list[Any], results: list[Any]) -> list[Any]:
            # where in scatter_indices: the update's scatter dims, the index vector dim left open
            where: list[Any] = [ivs[d] for d in scatter_dims]
            open_at = vector_dim if vector_dim < index_rank else None
            if open_at is not None:
                where.insert(open_at, None)
            result_index: list[Any] = [None] * len(shape)
            for k, d in enumerate(to_operand):
                at = [b.index(k) if w is None else w for w in where]
                result_index[d] = b.to_index(b.extract(indices, at))
            for d, batch in zip(dims.input_batching_dims, dims.scatter_indices_batching_dims):
                result_index[d] = _plus(b, result_index[d], where[batch])
            window = iter(ivs[d] for d in window_dims)
            for d in range(len(shape)):
                if d not in skipped:
                    result_index[d] = _plus(b, result_index[d], next(window))
            at = [b.index(0) if v is None else v for v in result_index]
            inside = b.i1(True)
            for v, size in zip(at, shape):
                inside = b.both(inside, b.below(v, size))

            def update() -> list[Any]:
                olds = [b.as_0d(b.extract(r, at)) for r in results]
                news = [b.as_0d(b.extract(u, ivs)) for u in updates]
                values = inline(tir, block, olds + news)
                return [b.insert(b.extract(v, []), r, at) for v, r in zip(values, results)]

            return b.if_else(inside, [r.type for r in results], update, lambda: list(results))

        new = b.loops(b.shape(updates[0]), inputs, body)
    replace(op, new)


def _plus(b: Builder, a: Any, c: Any) -> Any:
    return c if a is None else b.add(a, c)
