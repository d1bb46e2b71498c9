"""Building blocks for StableHLO lowerings written with torch-mlir's bindings: index
arithmetic, scalars in and out of 0-d tensors, loop nests over tensors, and a
StableHLO region's ops moved (inlined) where they are needed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


class Builder:
    """Creates ops at the current insertion point (the caller's ``with``), at ``loc``."""

    def __init__(self, tir: Any, loc: Any) -> None:
        from torch_mlir.dialects import arith, scf, tensor

        self.tir, self.loc = tir, loc
        self.arith, self.scf, self.tensor = arith, scf, tensor
        self.index_type = tir.IndexType.get()
        self._constants: dict[tuple[int, Any], Any] = {}

    # ---------------------------------------------------------------- scalars
    def index(self, value: int) -> Any:
        return self.arith.ConstantOp(self.index_type, value, loc=self.loc).result

    def i1(self, value: bool) -> Any:
        return self.arith.ConstantOp(self.tir.IntegerType.get_signless(1), int(value), loc=self.loc).result

    def add(self, a: Any, b: Any) -> Any:
        return self.arith.AddIOp(a, b, loc=self.loc).result

    def both(self, a: Any, b: Any) -> Any:
        return self.arith.AndIOp(a, b, loc=self.loc).result

    def below(self, value: Any, bound: int) -> Any:
        """``0 <= value < bound`` for an index (one unsigned comparison)."""
        return self.arith.CmpIOp(self.arith.CmpIPredicate.ult, value, self.index(bound), loc=self.loc).result

    def to_index(self, scalar: Any) -> Any:
        return self.arith.IndexCastOp(self.index_type, scalar, loc=self.loc).result

    # ---------------------------------------------------------------- tensors
    def op(self, name: str, results: Sequence[Any], operands: Sequence[Any], regions: int = 0,
           **attributes: Any) -> Any:
        return self.tir.Operation.create(name, results=list(results), operands=list(operands), attributes=attributes,
                                         regions=regions, loc=self.loc)

    def extract(self, tensor: Any, indices: Sequence[Any]) -> Any:
        return self.tensor.ExtractOp(tensor, list(indices), loc=self.loc).result

    def insert(self, scalar: Any, tensor: Any, indices: Sequence[Any]) -> Any:
        return self.tensor.InsertOp(scalar, tensor, list(indices), loc=self.loc).result

    def as_0d(self, scalar: Any) -> Any:
        kind = self.tir.RankedTensorType.get([], scalar.type)
        return self.tensor.FromElementsOp(kind, [scalar], loc=self.loc).result

    def element_type(self, tensor: Any) -> Any:
        return self.tir.RankedTensorType(tensor.type).element_type

    def shape(self, tensor: Any) -> list[int]:
        return list(self.tir.RankedTensorType(tensor.type).shape)

    def convert(self, tensor: Any, element: str) -> Any:
        """``stablehlo.convert`` of ``tensor`` to ``element`` (nothing when it is already)."""
        if str(self.element_type(tensor)) == element:
            return tensor
        kind = self.tir.RankedTensorType.get(self.shape(tensor), self.tir.Type.parse(element))
        return self.op("stablehlo.convert", [kind], [tensor]).result

    # ---------------------------------------------------------------- control flow
    def loops(self, bounds: Sequence[int], carried: Sequence[Any],
              body: Callable[[list[Any], list[Any]], list[Any]]) -> list[Any]:
        """A nest of ``scf.for`` over ``bounds`` carrying ``carried``; ``body(ivs, values)``
        returns the new values at the innermost level. The nest's results."""
        if not bounds:
            return body([], list(carried))
        zero, one = self.index(0), self.index(1)
        loop = self.scf.ForOp(zero, self.index(bounds[0]), one, list(carried), loc=self.loc)
        with self.tir.InsertionPoint(loop.body):
            inner = self.loops(bounds[1:], list(loop.inner_iter_args),
                               lambda ivs, values: body([loop.induction_variable, *ivs], values))
            self.scf.YieldOp(inner, loc=self.loc)
        return list(loop.results)

    def if_else(self, condition: Any, types: Sequence[Any], then: Callable[[], list[Any]],
                otherwise: Callable[[], list[Any]]) -> list[Any]:
        branch = self.scf.IfOp(condition, list(types), has_else=True, loc=self.loc)
        with self.tir.InsertionPoint(branch.then_block):
            self.scf.YieldOp(then(), loc=self.loc)
        with self.tir.InsertionPoint(branch.else_block):
            self.scf.YieldOp(otherwise(), loc=self.loc)
        return list(branch.results)


def inline(tir: Any, block: Any, arguments: Sequence[Any]) -> list[Any]:
    """Move ``block``'s ops (not its terminator) to the current insertion point, its
    arguments replaced by ``arguments``; the values its terminator returned. The block
    is left with its terminator only: use it once, then erase its op."""
    for arg, value in zip(block.arguments, arguments):
        arg.replace_all_uses_with(value)
    ops = list(block.operations)
    here = tir.InsertionPoint.current
    for op in ops[:-1]:
        here.insert(op.detach_from_parent())
    return list(ops[-1].operands)


def static_ops(module: Any, tir: Any, *names: str) -> list[Any]:
    """``ops_named``, those whose operands all have static shapes (what the lowerings expand)."""
    return [op for op in ops_named(module, tir, *names)
            if all(tir.RankedTensorType(v.type).has_static_shape for v in op.operands)]


def replace(op: Any, values: Sequence[Any]) -> None:
    """``op``'s results replaced by ``values``, one for one, and ``op`` erased."""
    for old, new in zip(op.results, values):
        old.replace_all_uses_with(new)
    op.erase()


def ops_named(module: Any, tir: Any, *names: str) -> list[Any]:
    """The ops called one of ``names``, innermost first (a region's op before its parent)."""
    found: list[Any] = []

    def visit(op: Any) -> Any:
        if op.name in names:
            found.append(op)
        return tir.WalkResult.ADVANCE

    module.operation.walk(visit, tir.WalkOrder.POST_ORDER)
    return found
