"""From a snippet to lowered upstream MLIR, shared by the targets that use the
upstream bindings (cpu, cuda): front-end legalization, parsing, the signature,
then the pipeline's parts with ``prepare_for_llvm`` between them."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pytest_mlir_snippets.golden.compare import OP_ULP
from pytest_mlir_snippets.golden.inputs import UnsupportedType
from pytest_mlir_snippets.mlirtext import ireeops as iree_text
from pytest_mlir_snippets.protocol import CompileFacts, Kind
from pytest_mlir_snippets.worker.core import Kept, SnippetFailure
from pytest_mlir_snippets.worker.lowering import checks as check_ops
from pytest_mlir_snippets.worker.lowering import fedvalues, frontend, mlirtools, oneprocess, vectorentry
from pytest_mlir_snippets.worker.lowering import ireeops as iree_ops
from pytest_mlir_snippets.worker.triage.failingpass import begin, imported, marked, plugin_step


@dataclass
class Lowered:
    module: Any  # the upstream ``ir.Module``, valid inside ``lowered``
    signature: tuple[Any, Any]  # (argument specs, result specs)
    diagnostics: mlirtools.Collector
    facts: CompileFacts = field(default_factory=CompileFacts)
    kept: Kept = field(default_factory=Kept)


@contextmanager
def lowered(module: str, function: str, pipeline: list[str], target: str,
            constants: Mapping[int, np.ndarray] | None = None,
            between: Callable[[Any], None] | None = None, stages: list[str] | None = None,
            before: Callable[[Any, mlirtools.Collector], None] | None = None) -> Iterator[Lowered]:
    """``module`` lowered by ``pipeline`` (parts run in order, ``between`` between
    them: ``prepare_for_llvm`` by default; ``before`` ahead of the first), inside its
    context; failures raise SnippetFailure, naming the part's stage (``stages``, else
    "lowering")."""
    from mlir import ir, passmanager

    kind = frontend.front_end(module)
    oneprocess.refuse(module, target)
    begin()  # the plugin's steps that ran before a failing pass are this compile's
    iree = iree_text.uses_iree_ops(module)
    if iree:  # IREE's util and check ops, in generic form (IREE-only dialects: unsupported)
        iree_ops.reject_iree_only(module, target)
        try:
            module = iree_text.rewrite(module)[0]
        except iree_text.IreeSyntaxError as error:
            raise SnippetFailure(Kind.UNSUPPORTED, f"{error.dialect}'s op in a form target {target} cannot read: "
                                 f"{error}") from None
    fed = iree_ops.Fed()
    text, own_signature, baked, checks = (frontend.legalize(module, kind, target, function, constants, fed) if kind
                                          else (module, None, "", []))
    with mlirtools.context_for(ir, text) as ctx, ir.Location.unknown(), mlirtools.collecting(ctx, target) as diags:
        try:
            with marked(lambda: imported(text, "mlir-opt")):
                parsed = ir.Module.parse(text)
        except Exception as error:
            failure = diags.failure(Kind.COMPILE_ERROR, "the snippet does not parse or verify", error)
            raise failure.with_triage(imported(text, "mlir-opt")) from None
        if iree and not kind:
            fed = iree_ops.give_meaning(parsed, ir, function, "arith.constant")
            checks = check_ops.capture(parsed, ir, function, dialect="arith")
        oneprocess.refuse_callbacks(target, checks, fed.parallel)
        _reject_unregistered(parsed, ctx, target)
        parsed, func = vectorentry.wrap(parsed, mlirtools.find_function(parsed, function), ir)  # vectors: memory
        if own_signature is None:
            fed.widened = fedvalues.widen_entry(func, ir, "arith")
        unfeedable = ""
        try:
            args, results = own_signature or mlirtools.signature(func, _shaped)
        except UnsupportedType as error:  # the compile goes on: only a run must feed and read them
            args, results, unfeedable = [], [], str(error)
        func.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
        approximated = sorted(mlirtools.ops_by_name(parsed, ir, frozenset(OP_ULP)))  # ULP allowances of the golden
        keep_manual_deallocation(parsed, diags)
        if before is not None:
            plugin_step(getattr(before, "__module__", "before").rsplit(".", 1)[-1], parsed,
                        lambda: before(parsed, diags))
        for i, part in enumerate(pipeline):
            if i:
                step = between or prepare_for_llvm
                name = getattr(step, "__name__", None) or type(step).__name__  # a function, or a callable's class
                plugin_step(name, parsed, functools.partial(step, parsed))
            # a PassManager per run: reusing one across modules crashed an ONNX test (test_mvn_expanded_ver18)
            mlirtools.run_passes(parsed, part, passmanager.PassManager.parse, diags,
                                 stages[i] if stages else "lowering")
        facts = CompileFacts(front_end=kind or "upstream", inputs=[str(s) for s in args],
                             input_specs=[(s.dims, s.element) for s in args], outputs=[str(s) for s in results],
                             baked=baked, kept_constants=list(fed.kept), widened=list(fed.widened))
        kept = Kept(source=module, constants=dict(constants or {}) if baked else {}, checks=list(checks),
                    ulp_ops=list(approximated or []), parallel=list(fed.parallel), unfeedable=unfeedable)
        if fed.values:  # constants fed at run time (see worker/lowering/ireeops.py)
            kept.fed, facts.fed_inputs = list(fed.values), list(fed.sources)
            first = len(args) - len(fed.values)
            facts.inputs = [*facts.inputs[:first], *(f"{spec} = {source}" for spec, source in
                                                     zip(facts.inputs[first:], fed.sources))]
        yield Lowered(parsed, (args, results), diags, facts, kept)


def prepare_for_llvm(module: Any) -> None:
    """Between the pipeline's parts: drop a spent transform schedule, and rewrite what
    this build's LLVM lowering cannot do."""
    from mlir import ir

    found = mlirtools.ops_by_name(module, ir, _REWRITTEN)  # one walk for every rewrite
    if "transform.named_sequence" in found or "transform.with_named_sequence" in module.operation.attributes:
        drop_schedule(module, found.get("transform.named_sequence", []))
    widen_i1_accesses(module, found.get("memref.load", []) + found.get("memref.store", []))
    expand_absi(module, found.get("math.absi", []))
    expand_copysign(module, found.get("math.copysign", []))
    as_intrinsics(module, [op for name in _INTRINSICS for op in found.get(name, [])])


def drop_schedule(module: Any, schedules: list[Any]) -> None:
    """After the transform interpreter: the payload alone (its schedule, ``schedules``: the
    ``transform.named_sequence`` ops, and the attribute that marks the module as holding one)."""
    for op in schedules:
        op.erase()
    if "transform.with_named_sequence" in module.operation.attributes:
        del module.operation.attributes["transform.with_named_sequence"]


_MANUAL = frozenset({"memref.alloc", "memref.realloc", "memref.dealloc"})


def keep_manual_deallocation(module: Any, diagnostics: mlirtools.Collector) -> None:
    """A snippet that frees its own buffers (``memref.dealloc``, ``memref.realloc``)
    keeps doing so: its allocations and frees get ``bufferization.manual_deallocation``,
    which the ownership-based deallocation leaves to the snippet (it otherwise stops
    with 'memory free side-effect on MemRef value not supported!'). Buffers that
    bufferization adds are still freed by the pass. A realloc is expanded first
    (alloc, copy, dealloc), so that what it allocates and frees is marked too."""
    from mlir import ir, passmanager

    found = mlirtools.ops_by_name(module, ir, _MANUAL)
    if found.get("memref.realloc"):
        mlirtools.run_passes(module, "builtin.module(expand-realloc)", passmanager.PassManager.parse, diagnostics,
                             "realloc expansion")
        found = mlirtools.ops_by_name(module, ir, _MANUAL)
    if not found.get("memref.dealloc"):
        return
    for ops in found.values():
        for op in ops:
            op.attributes["bufferization.manual_deallocation"] = ir.UnitAttr.get()


# math ops convert-math-to-libm rejects, though LLVM has them as intrinsics
_INTRINSICS = {"math.ctpop": "llvm.intr.ctpop", "math.ctlz": "llvm.intr.ctlz", "math.cttz": "llvm.intr.cttz"}
# the intrinsics' attributes: a zero counts every bit, as math.ctlz and math.cttz say
_ZERO_NOT_POISON = frozenset({"llvm.intr.ctlz", "llvm.intr.cttz"})
_REWRITTEN = frozenset({"transform.named_sequence", "memref.load", "memref.store", "math.absi",
                        "math.copysign", *_INTRINSICS})


def as_intrinsics(module: Any, candidates: list[Any]) -> None:
    """The math ops of ``_INTRINSICS`` as the LLVM intrinsics they lower to."""
    from mlir import ir

    for op in candidates:
        with ir.InsertionPoint(op), op.location:
            name = _INTRINSICS[op.name]
            attributes = {"is_zero_poison": ir.BoolAttr.get(False)} if name in _ZERO_NOT_POISON else {}
            new = ir.Operation.create(name, results=[op.results[0].type], operands=list(op.operands),
                                      attributes=attributes)
        op.results[0].replace_all_uses_with(new.result)
        op.erase()


def expand_copysign(module: Any, candidates: list[Any] | None = None) -> None:
    """``math.copysign(a, b)`` as bits: ``a``'s magnitude, ``b``'s sign.
    ``convert-math-to-libm`` rejects it (f32 included), and libm has none for f16/bf16."""
    from mlir import ir
    from mlir.dialects import arith

    if candidates is None:
        candidates = mlirtools.ops_where(module, ir, lambda op: op.name == "math.copysign")
    for op in candidates:
        kind = op.results[0].type
        vector = str(kind).startswith("vector<")
        width = ir.FloatType(ir.VectorType(kind).element_type if vector else kind).width
        element = ir.IntegerType.get_signless(width)
        bits = ir.VectorType.get(ir.VectorType(kind).shape, element) if vector else element
        low = ir.IntegerAttr.get(element, (1 << (width - 1)) - 1)  # all but the sign bit
        high = ir.IntegerAttr.get(element, -(1 << (width - 1)))  # the sign bit
        with ir.InsertionPoint(op), op.location:
            masks = [arith.constant(bits, ir.DenseElementsAttr.get_splat(bits, m) if vector else m)
                     for m in (low, high)]
            magnitude = arith.andi(arith.bitcast(bits, op.operands[0]), masks[0])
            sign = arith.andi(arith.bitcast(bits, op.operands[1]), masks[1])
            op.results[0].replace_all_uses_with(arith.bitcast(kind, arith.ori(magnitude, sign)))
        op.erase()


def expand_absi(module: Any, candidates: list[Any] | None = None) -> None:
    """``math.absi`` as ``x < 0 ? 0 - x : x``: ``convert-math-to-libm`` rejects it."""
    from mlir import ir
    from mlir.dialects import arith

    if candidates is None:
        candidates = mlirtools.ops_where(module, ir, lambda op: op.name == "math.absi")
    for op in candidates:
        with ir.InsertionPoint(op), op.location:
            value = op.operands[0]
            kind = value.type
            zero_attr = (ir.DenseElementsAttr.get_splat(kind, ir.IntegerAttr.get(ir.VectorType(kind).element_type, 0))
                         if str(kind).startswith("vector<") else ir.IntegerAttr.get(kind, 0))
            zero = arith.constant(kind, zero_attr)
            negative = arith.cmpi(arith.CmpIPredicate.slt, value, zero)
            op.results[0].replace_all_uses_with(arith.select(negative, arith.subi(zero, value), value))
        op.erase()


_SUB_BYTE = re.compile(r"^i[1-7]$")


def widen_i1_accesses(module: Any, candidates: list[Any] | None = None) -> None:
    """Turn ``memref.load``/``store`` of i1 (and other integers narrower than a byte:
    i2, i4) into one-element vector accesses.

    The LLVM 22 build of the ``mlir`` wheel asserts (and aborts the process) when
    lowering a scalar i1 memref access to LLVM; a ``vector<1xi1>`` access lowers
    to the same byte-per-element load and store. A rank-0 memref gets a 0-d
    ``vector<i1>`` access (the verifier rejects a vector of higher rank than the memref).
    """
    from mlir import ir
    from mlir.dialects import vector

    def i1_access(op: Any) -> bool:
        scalar = op.results[0] if op.name == "memref.load" else op.operands[0]
        return _SUB_BYTE.match(str(scalar.type)) is not None

    if candidates is None:
        candidates = mlirtools.ops_where(module, ir, lambda op: op.name in ("memref.load", "memref.store"))
    for op in [op for op in candidates if i1_access(op)]:
        memref = op.operands[0 if op.name == "memref.load" else 1]
        rank = ir.MemRefType(memref.type).rank  # rank 0: a 0-d vector (vector<1xi1> would outrank it)
        with ir.InsertionPoint(op), op.location:
            one = ir.VectorType.get([1] if rank else [], ir.IntegerType(op.results[0].type if op.name == "memref.load"
                                                                         else op.operands[0].type))
            if op.name == "memref.load":
                loaded = vector.load(one, memref, list(op.operands[1:]))
                value = vector.extract(loaded, [], [0] if rank else [])
                op.results[0].replace_all_uses_with(value)
            else:
                wide = vector.broadcast(one, op.operands[0])
                vector.store(wide, memref, list(op.operands[2:]))
        op.erase()


def _shaped(t: Any) -> Any:
    from mlir import ir

    return ir.ShapedType(t)


def _reject_unregistered(module: Any, ctx: Any, target: str) -> None:
    """Ops of dialects this build of MLIR does not have: unsupported, by name (a
    compile-error for a dialect no target knows)."""
    from mlir import ir

    mlirtools.reject_unregistered(module, ir, ctx, target)
