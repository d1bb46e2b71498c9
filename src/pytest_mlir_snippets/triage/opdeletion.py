"""The plugin's own reduction, for what ``mlir-reduce`` cannot reduce: upstream's dialects
have no reduction patterns, and its erasure of op ranges leaves the uses of their results
dangling (the candidate does not verify), so a chain of ops feeding a function's result
does not shrink there.

One op at a time, last first (in the pre-order walk of the module, block terminators kept),
each edit re-verified by MLIR before it is tried:

- an op whose results are unused is erased;
- otherwise its results' uses are given one of its own operands of the same type (the op
  bypassed; each operand in turn), else an argument of the function of that type, else a
  zero constant of that type (``arith.constant``; not for a constant), and the op is erased.

An edit is kept when the candidate is still interesting; rounds repeat until one keeps none.
Each kept edit removes an op, or turns one that is not a constant into one, so they end.

A snippet upstream's bindings cannot parse (a torch-dialect or StableHLO one) is read with
torch-mlir's (``torch_mlir.ir``, with its torch and StableHLO dialects registered, as
``torch-mlir-opt`` has them), and each edit verified there.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any


def count_ops(text: str) -> int | None:
    """Ops in ``text`` (the module itself not counted); None when MLIR cannot parse it."""
    ir = bindings(text)
    if ir is None:
        return None
    with _context(ir):
        return len(_walk(ir.Module.parse(text), ir, keep_terminators=True))


def parse_error(text: str) -> str:
    """Why upstream's bindings cannot parse ``text``, in one line ("" when they can)."""
    from mlir import ir

    with _context(ir):
        try:
            ir.Module.parse(text)
        except Exception as error:
            return next((line.strip() for line in str(error).splitlines() if "error:" in line),
                        str(error).splitlines()[0] if str(error) else type(error).__name__)
    return ""


def function_type(text: str, name: str) -> str | None:
    """The type of the function ``@name`` of ``text`` as MLIR prints it (its arguments and
    results); None when no bindings here parse ``text`` or it has no such function."""
    ir = bindings(text)
    if ir is None:
        return None
    with _context(ir):
        for op in ir.Module.parse(text).body.operations:
            if op.operation.name == "func.func" and str(op.attributes["sym_name"]).strip('"') == name:
                return str(op.attributes["function_type"])
    return None


def bindings(text: str) -> Any:
    """The ``ir`` module of the first bindings that parse ``text``: upstream's, else
    torch-mlir's (torch, StableHLO); None when neither does."""
    for ir in _installed():
        with _context(ir):
            try:
                ir.Module.parse(text)
            except Exception:
                continue
        return ir
    return None


def _installed() -> list[Any]:
    from mlir import ir

    found = [ir]
    try:
        import torch_mlir.ir as tir
    except ImportError:  # without the frontends extra: upstream's dialects alone
        return found
    return [*found, tir]


def shrink(text: str, interesting: Callable[[str], bool], on_kept: Callable[[str], None] = lambda _: None) -> str:
    """The smallest ``text`` the edits reach that stays ``interesting`` (``text`` itself
    when no bindings here parse it)."""
    ir = bindings(text)
    if ir is None:
        return text
    kept = True
    while kept:
        kept = False
        index = _candidates(text, ir) - 1
        while index >= 0:
            for candidate in _edits(text, index, ir):
                if interesting(candidate):
                    text, kept = candidate, True
                    on_kept(candidate)
                    break
            index -= 1
    return text


def _context(ir: Any) -> Any:
    """A context of ``ir``'s bindings; torch-mlir's with its own dialects registered."""
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    if ir.__name__.startswith("torch_mlir"):
        import torch_mlir._mlir_libs._stablehlo as stablehlo
        from torch_mlir.dialects import torch as torch_dialect

        torch_dialect.register_dialect(ctx)
        stablehlo.register_dialect(ctx)
    return ctx


def _walk(module: Any, ir: Any, keep_terminators: bool = False) -> list[Any]:
    """The ops of ``module`` in pre-order (the module and, unless kept, each block's last op left out)."""
    found: list[Any] = []

    def visit(op: Any) -> Any:
        if op.name != "builtin.module":
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    if keep_terminators:
        return found
    return [op for op in found if not _last_in_block(op)]


def _last_in_block(op: Any) -> bool:
    block_ops = list(op.block.operations) if op.block is not None else []
    return bool(block_ops) and block_ops[-1] == op


def _candidates(text: str, ir: Any) -> int:
    with _context(ir):
        return len(_walk(ir.Module.parse(text), ir))


def _edits(text: str, index: int, ir: Any) -> Iterator[str]:
    """The candidates that remove op ``index`` of ``text``'s walk, each verified: erased when
    its results are unused, else each way of giving their uses another value in turn."""
    choice, choices = 0, 1
    while choice < choices:
        with _context(ir), ir.Location.unknown():
            module = ir.Module.parse(text)
            op = _walk(module, ir)[index]
            if op.name == "func.func" and not _private(op):
                return  # a public function is the test subject, or one of the file's
            used = any(True for result in op.results for _ in result.uses)
            choices = len(op.operands) + 2 if used else 1  # each operand, an argument, a zero
            if not used or _replace_uses(op, choice, ir):
                op.erase()
                if module.operation.verify():
                    yield str(module)
        choice += 1


def _private(op: Any) -> bool:
    visibility = op.attributes["sym_visibility"] if "sym_visibility" in op.attributes else None
    return visibility is not None and str(visibility).strip('"') == "private"


def _replace_uses(op: Any, choice: int, ir: Any) -> bool:
    """Give each used result of ``op`` another value of its type: operand ``choice`` of
    ``op``, or (``choice`` past the operands) an argument of its function, then a zero
    constant (not for a constant: a constant for a constant would never end)."""
    operands = list(op.operands)
    for result in op.results:
        if not any(True for _ in result.uses):
            continue
        if choice < len(operands):
            value = operands[choice] if operands[choice].type == result.type else None
        elif choice == len(operands):
            value = _argument(op, result.type)
        else:
            value = None if op.name == "arith.constant" else _zero(op, result.type, ir)
        if value is None:
            return False
        result.replace_all_uses_with(value)
    return True


def _argument(op: Any, kind: Any) -> Any:
    """An argument of ``kind`` of the function ``op`` is in (None: it has none)."""
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        parent = parent.parent
    if parent is None:
        return None
    return next((a for a in parent.regions[0].blocks[0].arguments if a.type == kind), None)


def _zero(op: Any, kind: Any, ir: Any) -> Any:
    """A zero of ``kind`` (an integer, index or float, or a static tensor or vector of them) before ``op``."""
    shaped = isinstance(kind, ir.ShapedType)
    if shaped and not (isinstance(kind, (ir.RankedTensorType, ir.VectorType)) and kind.has_static_shape):
        return None
    element = kind.element_type if shaped else kind
    if isinstance(element, ir.FloatType):
        attr = ir.FloatAttr.get(element, 0.0)
    elif isinstance(element, (ir.IntegerType, ir.IndexType)):
        attr = ir.IntegerAttr.get(element, 0)
    else:
        return None
    if shaped:
        attr = ir.DenseElementsAttr.get_splat(kind, attr)
    with ir.InsertionPoint(op):
        return ir.Operation.create("arith.constant", results=[kind], attributes={"value": attr}).result
