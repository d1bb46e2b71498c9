"""``mlir-snippets inventory``: a model's IR as ``ops.mlir``, one function per unique
op configuration, and ``op-report.txt`` (SPEC 9).

A configuration is the op's name, attributes, operand and result types, which
operands are constants, and its regions: the text of the op alone in a function
whose arguments are all its operands. Constant operands are inlined (the first
instance's values); every result is returned. Functions are ``<op>_<i>`` in the
order of first appearance. The model is parsed with MLIR: the upstream bindings
(unregistered dialects such as TTIR allowed, in generic form), or torch-mlir's
for torch and StableHLO. The model's own IR is never written out.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_mlir_snippets.protocol import Kind

OPS_FILE = "ops.mlir"
REPORT_FILE = "op-report.txt"
PLACEHOLDER = "inventory_function"
# Destinations (uninitialized: a function returning one has no defined result) and calls
# (their callee is not in ops.mlir) are counted, not extracted.
NOT_EXTRACTED = frozenset({"tensor.empty", "bufferization.alloc_tensor"})
_CONSTANT = re.compile(r"(^|\.)(constant|const)$|^torch\.constant\.|^torch\.vtensor\.literal$")


@dataclass
class Configuration:
    op: str
    key: str
    function: Any = None  # the emitted func.func (in the inventory's output module), named at the end
    instances: int = 0


@dataclass
class Inventory:
    source: str
    configurations: dict[str, Configuration] = field(default_factory=dict)  # key -> configuration, in order
    constants: int = 0
    skipped: Counter[str] = field(default_factory=Counter)  # op -> instances not extracted, and why
    ops_text: str = ""  # ops.mlir

    def instances(self) -> Counter[str]:
        counts: Counter[str] = Counter()
        for c in self.configurations.values():
            counts[c.op] += c.instances
        return counts


def _bindings(text: str) -> tuple[Any, Any, Any]:
    """(ir, func dialect, context) of the MLIR build that can parse ``text``."""
    from pytest_mlir_snippets.worker.lowering import frontend

    if frontend.front_end(text):
        ctx = frontend._torch_mlir_context()
        from torch_mlir import ir as tir
        from torch_mlir.dialects import func as tfunc

        return tir, tfunc, ctx
    from mlir import ir
    from mlir.dialects import func

    return ir, func, ir.Context()


class ParseError(Exception):
    """The model does not parse; ``lines``: MLIR's diagnostics, as ``file:line:col: error: ...``."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def _parse(text: str, source: str, ir: Any, ctx: Any) -> Any:
    """``text`` as a module; MLIR's diagnostics (whether the bindings hand them to a
    handler or keep them on the ``MLIRError``) at ``source``'s lines if it does not parse."""
    from pytest_mlir_snippets.worker.lowering.mlirtools import collecting

    with collecting(ctx, "inventory") as collector:
        try:
            return ir.Module.parse(text)
        except Exception as error:
            diagnostics = collector.failure(Kind.COMPILE_ERROR, "", error).diagnostics
    lines = []
    for d in diagnostics:
        for depth, diag in [(0, d)] + [(1, note) for note in d.notes]:
            where = f"{source}:{diag.line}:{diag.column}" if diag.line is not None else source
            lines.append(f"{'  ' * depth}{where}: {diag.severity}: {diag.message}")
    raise ParseError(lines)


def take_inventory(text: str, source: str) -> Inventory:
    ir, func, ctx = _bindings(text)
    inventory = Inventory(source)
    with ctx, ir.Location.unknown():
        ctx.allow_unregistered_dialects = True
        module = _parse(text, source, ir, ctx)
        scratch, out = ir.Module.create(), ir.Module.create()
        for name, attr in _named(module.operation.attributes):
            out.operation.attributes[name] = attr
        for top in module.body.operations:
            if top.operation.name != "func.func":
                continue
            for block in top.regions[0].blocks:
                for op in block.operations:
                    _take(op.operation, inventory, ir, func, scratch, out)
        inventory.ops_text = _render(inventory, ir, out)
    return inventory


def _take(op: Any, inventory: Inventory, ir: Any, func: Any, scratch: Any, out: Any) -> None:
    name = op.name
    if name == "func.return":
        return
    if _CONSTANT.search(name):
        inventory.constants += 1
        return
    if name in NOT_EXTRACTED or any(attr_name == "callee" for attr_name, _ in _named(op.attributes)):
        inventory.skipped[name] += 1
        return
    constant = [_is_constant(v) for v in op.operands]
    probe = _function(op, [False] * len(constant), ir, func, scratch, PLACEHOLDER)
    key = f"{name} {constant} " + probe.operation.get_asm()
    probe.operation.erase()
    found = inventory.configurations.get(key)
    if found is None:
        found = inventory.configurations[key] = Configuration(name, key, _function(op, constant, ir, func, out,
                                                                                     PLACEHOLDER))
    found.instances += 1


def _is_constant(value: Any) -> bool:
    owner = value.owner
    return hasattr(owner, "name") and not owner.operands and bool(_CONSTANT.search(owner.name))


def _function(op: Any, inline: list[bool], ir: Any, func: Any, module: Any, name: str) -> Any:
    """``op`` alone in a new function of ``module``: its operands, and the values its
    regions use from outside it (a ``linalg.generic`` body may use a constant defined
    above), are arguments or cloned constants."""
    operands = list(op.operands)
    captured = [v for v in _captured(op, ir) if not any(v == o for o in operands)]
    inline = inline + [_is_constant(v) for v in captured]
    used = operands + captured
    arg_types = [v.type for v, constant in zip(used, inline) if not constant]
    with ir.InsertionPoint(module.body):
        function = func.FuncOp(name, ir.FunctionType.get(arg_types, [r.type for r in op.results]))
        block = function.add_entry_block()
        with ir.InsertionPoint(block):
            args = iter(block.arguments)
            values = [_operation(v.owner).clone().results[0] if constant else next(args)
                      for v, constant in zip(used, inline)]
            copy = op.clone()
            for i in range(len(operands)):
                copy.operands[i] = values[i]
            for original, value in zip(captured, values[len(operands):]):
                for inner in _nested(copy, ir):
                    for i, operand in enumerate(inner.operands):
                        if operand == original:
                            inner.operands[i] = value
            func.ReturnOp(list(copy.results))
    return function


def _nested(op: Any, ir: Any) -> list[Any]:
    found: list[Any] = []

    def visit(inner: Any) -> Any:
        if inner != op:
            found.append(inner)
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return found


def _captured(op: Any, ir: Any) -> list[Any]:
    """Values used inside ``op``'s regions but defined outside ``op``, in order of use."""
    if not len(op.regions):
        return []
    found: list[Any] = []
    for inner in _nested(op, ir):
        for value in inner.operands:
            if not _inside(value, op) and not any(value == f for f in found):
                found.append(value)
    return found


def _inside(value: Any, op: Any) -> bool:
    owner = value.owner
    parent = _operation(owner).parent if hasattr(owner, "name") else owner.owner
    while parent is not None:
        if _operation(parent) == op:
            return True
        parent = _operation(parent).parent
    return False


def _render(inventory: Inventory, ir: Any, out: Any) -> str:
    """The output module, printed by MLIR (so resource blobs of inlined constants come
    along), with a comment above each function."""
    numbers: Counter[str] = Counter()
    notes = {}
    for c in inventory.configurations.values():
        base = short_name(c.op)
        uid = f"{base}_{numbers[base]}"
        numbers[base] += 1
        c.function.operation.attributes["sym_name"] = ir.StringAttr.get(uid)
        notes[uid] = f"  // {c.op}: {c.instances} instance(s)"
    lines = [f"// Op inventory of {inventory.source} (mlir-snippets inventory): one function per configuration."]
    for line in str(out).splitlines():
        m = re.match(r"\s*func\.func @([\w$.-]+)\(", line)
        if m and m.group(1) in notes:
            lines.append(notes[m.group(1)])
        lines.append(line)
    return "\n".join(lines) + "\n"


def _named(attributes: Any) -> list[tuple[str, Any]]:
    """(name, attribute) pairs, in both bindings (one iterates names, the other pairs)."""
    pairs = [attributes[i] for i in range(len(attributes))]
    return [(p.name, p.attr) for p in pairs]


def _operation(owner: Any) -> Any:
    return getattr(owner, "operation", owner)


def short_name(op: str) -> str:
    """``ttir.add`` -> ``add``, ``torch.aten.add.Tensor`` -> ``aten_add_Tensor``."""
    return re.sub(r"\W", "_", op.split(".", 1)[1] if "." in op else op)


def render_report(title: str, inventories: list[Inventory]) -> str:
    counts: Counter[str] = Counter()
    configurations: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    for inv in inventories:
        counts.update(inv.instances())
        skipped.update(inv.skipped)
        for c in inv.configurations.values():
            configurations[c.op] += 1
    total = sum(counts.values())
    lines = [f"op inventory: {title}",
             f"total instances:          {total}",
             f"distinct ops:             {len(counts)}",
             f"distinct configurations:  {sum(configurations.values())}",
             f"constants (inlined where used): {sum(inv.constants for inv in inventories)}"]
    if skipped:
        lines.append("not extracted (destinations, calls): "
                     + ", ".join(f"{op} x{n}" for op, n in skipped.most_common()))
    if len(inventories) > 1:
        lines += ["", "graphs:"] + [f"  {inv.source}: {sum(inv.instances().values())} instances, "
                                    f"{len(inv.configurations)} configurations" for inv in inventories]
    width = max([len("op"), *(len(op) for op in counts)])
    lines += ["", f"{'op':{width}}  {'instances':>9}  {'share':>6}  {'configurations':>14}"]
    for op, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"{op:{width}}  {n:9d}  {100 * n / max(1, total):5.1f}%  {configurations[op]:14d}")
    return "\n".join(lines) + "\n"


def write_inventory(inventory: Inventory, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / OPS_FILE).write_text(inventory.ops_text)
    (folder / REPORT_FILE).write_text(render_report(inventory.source, [inventory]))
    return folder / OPS_FILE


def run(inputs: list[Path], out: Path | None) -> tuple[list[Path], list[str]]:
    """Inventory of each input into a folder named after it (``<model folder>/<stem>/``,
    or under ``out`` at its path relative to the inputs' common folder); a combined
    report at the outputs' common parent when there are several. Returns (ops files, problems)."""
    written, problems, done = [], [], []
    base = Path(os.path.commonpath([p.resolve().parent for p in inputs])) if inputs else Path(".")
    for path in inputs:
        folder = (out / path.resolve().parent.relative_to(base) if out else path.parent) / path.stem
        try:
            inventory = take_inventory(path.read_text(), str(path))
        except ParseError as error:  # a model that does not parse: say where, go on with the others
            problems.append("\n".join([f"{path}: cannot take the inventory: MLIR cannot parse it", *error.lines]))
            continue
        except Exception as error:  # unreadable, not UTF-8, an op the extraction cannot copy
            problems.append(f"{path}: cannot take the inventory: {str(error).strip().splitlines()[0]}")
            continue
        written.append(write_inventory(inventory, folder))
        done.append(inventory)
    if len(written) > 1:
        common = Path(os.path.commonpath([p.parent.parent for p in written]))
        (common / REPORT_FILE).write_text(render_report(f"{len(done)} graphs under {common}", done))
    return written, problems
