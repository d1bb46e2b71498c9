"""Whether what a function checks or returns depends on values given at run time, on IR
with value semantics (IREE's after its global optimization): the tensor-level twin of
``dataflow.runtime_results``, which reads the LLVM dialect.
"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.worker.judging.dataflow import State

# ops whose results the optimizer may not see through: values given at run time, as far
# as the code after them is concerned (IREE's own meaning of them)
OPAQUE = frozenset({"util.optimization_barrier", "util.unfoldable_constant"})
_CALLS = frozenset({"util.call", "func.call"})
_RETURNS = frozenset({"util.return", "func.return"})


def tensor_runtime(module: Any, function: str) -> bool | None:
    """Whether what ``function`` of ``module`` checks (its check ops' operands) or returns
    depends on a value given at run time, on IR with value semantics (IREE's after its
    global optimization: tensors, calls, no memory but globals). Sources: the public entry's
    arguments and the results of ``OPAQUE`` ops; taint flows through operands (captured
    values of regions included), a region's yields into its op's results, call operands
    into the callee's arguments and its returns into the call's results, and stored into a
    global out of its loads. ``None``: no such function."""
    functions = {str(op.attributes["sym_name"]).strip('"'): op for op in module.body.operations
                 if op.operation.name in ("util.func", "func.func") and len(op.regions[0].blocks)}
    if function not in functions:
        return None
    ops = _nested(module.operation)
    state = State()  # its ``hot``: the globals stored tainted data
    tainted = state.data
    tainted.update(functions[function].regions[0].blocks[0].arguments)
    returns = {name: [op for op in _nested(f) if op.name in _RETURNS] for name, f in functions.items()}

    def taint(values: Any) -> None:
        for value in values:
            state.taint(value)

    state.changed = True
    while state.changed:
        state.changed = False
        for op in ops:
            name = op.name
            ins = any(v in tainted for v in op.operands)
            if name in OPAQUE:
                taint(op.results)
            elif name in _CALLS:
                callee = functions.get(str(op.attributes["callee"]).lstrip("@").strip('"'))
                if callee is None:
                    if ins:
                        taint(op.results)
                    continue
                taint(a for a, v in zip(callee.regions[0].blocks[0].arguments, op.operands) if v in tainted)
                callee_name = str(callee.attributes["sym_name"]).strip('"')
                taint(r for i, r in enumerate(op.results)
                      if any(i < len(ret.operands) and ret.operands[i] in tainted for ret in returns[callee_name]))
            elif name == "util.global.store":
                if ins:
                    state.heat({_global(op)})
            elif name == "util.global.load":
                if _global(op) in state.hot:
                    taint(op.results)
            elif len(op.regions):
                yields = any(v in tainted for region in op.regions for block in region.blocks
                             if len(block.operations) for v in list(block.operations)[-1].operands)
                if ins:
                    taint(a for region in op.regions for block in region.blocks for a in block.arguments)
                if ins or yields:
                    taint(op.results)
            elif ins:
                taint(op.results)
                if name not in _RETURNS:
                    taint(a for block in list(op.successors) for a in block.arguments)
    checks = [op for op in ops if op.name.startswith("check.expect")]
    if checks:
        return any(v in tainted for op in checks for v in op.operands)
    return any(v in tainted for ret in returns[function] for v in ret.operands)


def _nested(op: Any) -> list[Any]:
    found: list[Any] = []
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                found.append(inner.operation)
                found.extend(_nested(inner.operation))
    return found


def _global(op: Any) -> str:
    return str(op.attributes["global"]).lstrip("@").strip('"')


__all__ = ["tensor_runtime"]
