"""``stablehlo.batch_norm_inference``, ``batch_norm_training`` and ``batch_norm_grad``
as the elementwise StableHLO ops and sums the specification defines them with
(``stablehlo-legalize-to-linalg`` lowers those): the feature vectors broadcast
along ``feature_index``, sums over every other dimension, in the operand's
element type and in the specification's order of operations.
"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.worker.lowering.shlo.build import Builder, replace, static_ops

OPS = ("stablehlo.batch_norm_inference", "stablehlo.batch_norm_training", "stablehlo.batch_norm_grad")


def lower_all(module: Any, tir: Any) -> int:
    """Every batch norm op with static shapes, expanded; how many."""
    found = static_ops(module, tir, *OPS)
    for op in found:
        with tir.InsertionPoint(op):
            values = _Expand(op, tir).run()
        replace(op, values)
    return len(found)


class _Expand:
    def __init__(self, op: Any, tir: Any) -> None:
        self.op, self.tir = op, tir
        self.b = Builder(tir, op.location)
        self.operand = op.operands[0]
        self.type = self.operand.type
        shaped = tir.RankedTensorType(self.type)
        self.element = shaped.element_type
        self.feature = int(tir.IntegerAttr(op.attributes["feature_index"]).value)
        self.epsilon = float(tir.FloatAttr(op.attributes["epsilon"]).value)
        self.others = [d for d in range(shaped.rank) if d != self.feature]
        self.count = 1
        for d in self.others:
            self.count *= shaped.shape[d]
        self.vector = tir.RankedTensorType.get([shaped.shape[self.feature]], self.element)

    def run(self) -> list[Any]:
        operands = list(self.op.operands)
        if self.op.name == "stablehlo.batch_norm_inference":
            return [self.inference(*operands[1:])]
        if self.op.name == "stablehlo.batch_norm_training":
            return self.training(*operands[1:])
        return self.grad(*operands[1:])

    # ---------------------------------------------------------------- the definitions
    def inference(self, scale: Any, offset: Any, mean: Any, variance: Any) -> Any:
        centered = self.ew("subtract", self.operand, self.bcast(mean))
        stddev = self.ew("sqrt", self.ew("add", self.bcast(variance), self.splat(self.epsilon)))
        normalized = self.ew("divide", centered, stddev)
        return self.ew("add", self.ew("multiply", self.bcast(scale), normalized), self.bcast(offset))

    def training(self, scale: Any, offset: Any) -> list[Any]:
        mean = self.ew("divide", self.sum(self.operand), self.splat(self.count, self.vector))
        centered = self.ew("subtract", self.operand, self.bcast(mean))
        variance = self.ew("divide", self.sum(self.ew("multiply", centered, centered)),
                           self.splat(self.count, self.vector))
        return [self.inference(scale, offset, mean, variance), mean, variance]

    def grad(self, scale: Any, mean: Any, variance: Any, grad_output: Any) -> list[Any]:
        epsilon = self.splat(self.epsilon)
        centered = self.ew("subtract", self.operand, self.bcast(mean))
        stddev = self.ew("sqrt", self.ew("add", self.bcast(variance), epsilon))
        normalized = self.ew("divide", centered, stddev)
        count = self.splat(self.count)
        i1 = self.ew("multiply", grad_output, count)
        i2 = self.bcast(self.sum(grad_output))
        i3 = self.bcast(self.sum(self.ew("multiply", grad_output, centered)))
        i4 = self.ew("multiply", i3, centered)
        i5 = self.ew("divide", i4, self.ew("add", self.bcast(variance), epsilon))
        i6 = self.ew("subtract", self.ew("subtract", i1, i2), i5)
        grad_operand = self.ew("multiply", self.ew("divide", self.ew("divide", self.bcast(scale), stddev), count), i6)
        grad_scale = self.sum(self.ew("multiply", grad_output, normalized))
        return [grad_operand, grad_scale, self.sum(grad_output)]

    # ---------------------------------------------------------------- StableHLO ops
    def ew(self, name: str, *operands: Any) -> Any:
        return self.b.op(f"stablehlo.{name}", [operands[0].type], operands).result

    def splat(self, value: float, kind: Any = None) -> Any:
        kind = kind or self.type
        attr = self.tir.DenseElementsAttr.get_splat(kind, self.tir.FloatAttr.get(self.element, value))
        return self.b.op("stablehlo.constant", [kind], [], value=attr).result

    def bcast(self, vector: Any) -> Any:
        return self.b.op("stablehlo.broadcast_in_dim", [self.type], [vector],
                         broadcast_dimensions=self.tir.DenseI64ArrayAttr.get([self.feature])).result

    def sum(self, value: Any) -> Any:
        """``value`` summed over every dimension but the feature's."""
        tir = self.tir
        scalar = tir.RankedTensorType.get([], self.element)
        zero = self.splat(0.0, scalar)
        reduce = self.b.op("stablehlo.reduce", [self.vector], [value, zero], regions=1,
                           dimensions=tir.DenseI64ArrayAttr.get(self.others))
        block = reduce.regions[0].blocks.append(scalar, scalar)
        with tir.InsertionPoint(block):
            total = self.b.op("stablehlo.add", [scalar], list(block.arguments)).result
            self.b.op("stablehlo.return", [], [total])
        return reduce.result
