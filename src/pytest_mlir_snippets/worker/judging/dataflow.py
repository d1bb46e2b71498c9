"""Which results of a compiled function depend on values given at run time.

A pass means something only when the code under test computed the results from the
inputs it was given: a function whose results the constant folder computed (a constant
store, a copy of a constant global) passes whatever code generation does. This module
answers from the final IR, the LLVM dialect a target hands to its JIT, with a taint
analysis of the entry function:

- its arguments are given at run time: scalars are tainted, and the memory behind
  pointer arguments (memref descriptors' buffers) holds tainted data;
- an op's results are tainted when an operand is; a load is tainted when its address is
  or when the memory it reads (an allocation, a global, an argument's buffer, found by
  following the pointer back to where it was made) holds tainted data; a store of a
  tainted value (or through a tainted address) taints the memory it writes;
- a call, an intrinsic that touches memory, or any other op without results (a GPU
  launch) taints every memory its pointer operands reach when it reads tainted data or
  gets a tainted operand;
- a call of ``interpreter.run_parallel``'s (``lowering/parallel.py``) gives tainted results:
  the worker computes them by running the programs' compiled code;
- branch operands flow into the successors' block arguments (a tainted condition
  taints them all);
- a loop's induction variables (integer block arguments of the other blocks) are computed
  at run time too: data computed from them (``stablehlo.iota``) taints the memory it is
  stored into, but an address computed from them does not taint what it loads (a copy of a
  constant, element by element, stays a constant);
- a result is computed at run time when its value is tainted or a buffer it points to
  holds tainted data.

The analysis is conservative in one direction only: what it calls compile-time cannot
depend on the inputs; a partly folded function is runtime.
"""

from __future__ import annotations

from typing import Any

ALLOCATORS = frozenset({"malloc", "aligned_alloc", "calloc", "realloc", "_mlir_memref_to_llvm_alloc",
                        "_mlir_memref_to_llvm_aligned_alloc"})
_FREE = frozenset({"free", "_mlir_memref_to_llvm_free"})
_PURE_TERMINATORS = frozenset({"llvm.return", "llvm.unreachable"})
_MEMORY_INTRINSICS = ("llvm.intr.mem", "llvm.intr.masked.", "llvm.intr.matrix", "llvm.intr.prefetch")


class State:
    def __init__(self) -> None:
        self.data: set[Any] = set()  # tainted values
        self.loop: set[Any] = set()  # values computed from induction variables (not addresses' taint)
        self.roots: dict[Any, frozenset[str]] = {}  # value -> the memories its pointer may point into
        self.hot: set[str] = set()  # memories holding tainted data
        self.pointees: dict[str, set[str]] = {}  # memory -> memories whose pointers were stored in it
        self.changed = False

    def taint(self, value: Any) -> None:
        if value not in self.data:
            self.data.add(value)
            self.changed = True

    def count(self, value: Any) -> None:
        """``value`` computed from a loop's induction variables."""
        if value not in self.loop:
            self.loop.add(value)
            self.changed = True

    def point(self, value: Any, roots: frozenset[str]) -> None:
        old = self.roots.get(value, frozenset())
        if not roots <= old:
            self.roots[value] = old | roots
            self.changed = True

    def heat(self, roots: frozenset[str] | set[str]) -> None:
        if not set(roots) <= self.hot:
            self.hot |= roots
            self.changed = True

    def reach(self, roots: frozenset[str]) -> frozenset[str]:
        """``roots`` and every memory whose pointer was stored in them, transitively."""
        found, todo = set(roots), list(roots)
        while todo:
            for inner in self.pointees.get(todo.pop(), ()):
                if inner not in found:
                    found.add(inner)
                    todo.append(inner)
        return frozenset(found)


def runtime_results(module: Any, function: str, count: int) -> list[bool] | None:
    """Per result of ``function`` (an ``llvm.func`` of ``module`` that had ``count`` results
    before lowering: several come back as one struct): whether it depends on a value given
    at run time. ``None`` when the module holds no such function in the LLVM dialect."""
    entry = next((op for op in module.body.operations if op.operation.name == "llvm.func"
                  and str(op.attributes["sym_name"]).strip('"') == function and len(op.regions[0].blocks)), None)
    if entry is None:
        return None
    state = State()
    first = entry.regions[0].blocks[0]
    for index, argument in enumerate(first.arguments):
        if str(argument.type) == "!llvm.ptr":
            state.point(argument, frozenset({f"arg{index}"}))
            state.hot.add(f"arg{index}")
        else:
            state.data.add(argument)
    for block in list(entry.regions[0].blocks)[1:]:
        state.loop.update(a for a in block.arguments if str(a.type).startswith("i"))
    ops = [op.operation for block in entry.regions[0].blocks for op in block.operations]
    returned = [_parts(ret.operands[0], count) if count > 1 else {0: [ret.operands[0]]}
                for ret in ops if ret.name == "llvm.return" and len(ret.operands)]
    state.changed = True
    while state.changed:
        state.changed = False
        for op in ops:
            _visit(op, state)
        depends = [False] * count
        for parts in returned:
            for index, values in parts.items():
                depends[index] = depends[index] or any(_tainted(v, state) for v in values)
        if all(depends):  # taint only grows: nothing more to learn
            break
    return depends


def _tainted(value: Any, state: State) -> bool:
    if value in state.data or value in state.loop:
        return True
    return bool(state.reach(state.roots.get(value, frozenset())) & state.hot)


def _parts(value: Any, count: int) -> dict[int, list[Any]]:
    """The values inserted at each top-level position of a struct built by ``llvm.insertvalue``."""
    found: dict[int, list[Any]] = {i: [] for i in range(count)}
    current = value
    while hasattr(current, "owner") and getattr(current.owner, "name", "") == "llvm.insertvalue":
        op = current.owner
        position = int(next(iter(op.attributes["position"])))
        if position in found:
            found[position].append(op.operands[1])
        current = op.operands[0]
    if not all(found.values()):  # not built in view: every part depends on the whole value
        return {i: [value] for i in range(count)}
    return found


def _visit(op: Any, state: State) -> None:
    name = op.name
    operands = list(op.operands)
    if name == "llvm.load":
        address = operands[0]
        roots = state.reach(state.roots.get(address, frozenset()))
        if address in state.data or roots & state.hot:
            state.taint(op.results[0])
        inner = frozenset(r for root in roots for r in state.pointees.get(root, ()))
        if inner:
            state.point(op.results[0], inner)
        return
    if name == "llvm.store":
        value, address = operands[0], operands[1]
        roots = state.roots.get(address, frozenset())
        if value in state.data or value in state.loop or address in state.data:
            state.heat(roots)
        stored = state.roots.get(value, frozenset())
        for root in roots:
            held = state.pointees.setdefault(root, set())
            if not stored <= held:
                held |= stored
                state.changed = True
        return
    if name == "llvm.alloca":
        state.point(op.results[0], frozenset({f"stack{_where(op)}"}))
        return
    if name == "llvm.mlir.addressof":
        state.point(op.results[0], frozenset({f"global:{str(op.attributes['global_name']).lstrip('@')}"}))
        return
    callee = str(op.attributes["callee"]).lstrip("@").strip('"') if name == "llvm.call" and \
        "callee" in op.attributes else ""
    if callee in _FREE:
        return
    if callee in ALLOCATORS:
        fresh = frozenset({f"heap{_where(op)}"})
        state.point(op.results[0], fresh | (state.roots.get(operands[0], frozenset()) if callee == "realloc"
                                            else frozenset()))
        return
    successors = list(op.successors) if name not in _PURE_TERMINATORS else []
    if successors:
        _branch(operands, successors, state)
        return
    # run_parallel's results come from the programs' compiled code, run by the worker (lowering/parallel.py)
    tainted_in = any(v in state.data for v in operands) or "__mlir_snippets_parallel_" in callee
    counted = not tainted_in and any(v in state.loop for v in operands)
    roots = frozenset(r for v in operands for r in state.roots.get(v, ()))
    touches_memory = name == "llvm.call" or name.startswith(_MEMORY_INTRINSICS) or (
        not len(op.results) and name not in _PURE_TERMINATORS)
    if touches_memory:
        reach = state.reach(roots)
        if tainted_in or reach & state.hot:
            tainted_in = True
            state.heat(reach)
        roots = reach
    for result in op.results:
        if tainted_in:
            state.taint(result)
        elif counted and not touches_memory:
            state.count(result)
        if roots:
            state.point(result, roots)


def _branch(operands: list[Any], successors: list[Any], state: State) -> None:
    """Every operand of a branch may flow into every block argument of its successors."""
    tainted = any(v in state.data for v in operands)
    counted = any(v in state.loop for v in operands)
    roots = frozenset(r for v in operands for r in state.roots.get(v, ()))
    for block in successors:
        for argument in block.arguments:
            if tainted:
                state.taint(argument)
            elif counted:
                state.count(argument)
            if roots:
                state.point(argument, roots)


def _where(op: Any) -> str:
    """A name for the memory an op allocates, the same for the op on every pass."""
    return f"@{hash(op)}"


__all__ = ["runtime_results"]
