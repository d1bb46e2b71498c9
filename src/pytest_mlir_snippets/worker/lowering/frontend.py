"""Front-end legalization: StableHLO and torch/ONNX into upstream dialects.

Those dialects live only in torch-mlir's bundled MLIR, so the snippet is parsed and legalized
there, then printed (with locations) for the upstream bindings (TOSA, linalg, ... need nothing).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from pytest_mlir_snippets.golden.checks import Check
from pytest_mlir_snippets.golden.inputs import UnsupportedType
from pytest_mlir_snippets.protocol import Diagnostic, Kind
from pytest_mlir_snippets.worker.core import SnippetFailure
from pytest_mlir_snippets.worker.lowering import checks as check_ops
from pytest_mlir_snippets.worker.lowering import fedvalues, ireeops, mlirtools, onnx, parallel, shlo, torch_rewrites
from pytest_mlir_snippets.worker.lowering.bake import bake_inputs
from pytest_mlir_snippets.worker.lowering.shlo import jaxops, refine
from pytest_mlir_snippets.worker.triage.failingpass import imported, leftover, marked, plugin_step

# StableHLO: first to plain StableHLO (callees inlined, without the inliner's canonicalization,
# which drops an unused check.eq; quantized ops as integer math; chlo decomposed), then
# ``shlo.rewrite`` (what the legalization has no pattern for), then to linalg
STABLEHLO_PREPARE = ("builtin.module(inline{default-pipeline=}, func.func(stablehlo-legalize-quant-to-math,"
                     " chlo-legalize-to-stablehlo, stablehlo-legalize-deprecated-ops{fail-on-unused=false}))")
STABLEHLO_PIPELINE = ("builtin.module(func.func(stablehlo-legalize-to-linalg), stablehlo-convert-to-signless,"
                      " func.func(canonicalize))")
# torch-mlir's torch-backend-to-linalg-on-tensors-backend-pipeline without its final
# contract check, which rejects ops the upstream lowering handles (math.absi);
# ``_leftovers`` reports what is really left, at its location.
TORCH_TO_LINALG = (
    "func.func(torch-restructure-non-constant-axes, torch-fuse-quantized-ops, convert-torch-to-tmtensor,"
    " canonicalize, convert-torch-to-linalg, canonicalize, convert-torch-to-scf, convert-torch-to-arith,"
    " convert-torch-to-tensor), convert-torch-conversion-to-mlprogram,"
    " func.func(memref-expand, canonicalize, resolve-shaped-type-result-dims, cse),"
    " torch-func-backend-type-conversion, func.func(canonicalize, torch-finalizing-backend-type-conversion)"
)
ONNX_TO_TORCH = "builtin.module(func.func(convert-torch-onnx-to-torch))"
# After ONNX_TO_TORCH and ``torch_rewrites``, tried in order: the direct route (an
# ONNX import already has value semantics and static types, ~15 ms) and, when it
# fails, the full backend contract (~150 ms).
TORCH_PIPELINES = (
    f"builtin.module(func.func(torch-decompose-complex-ops), {TORCH_TO_LINALG})",
    f"builtin.module(torch-lower-to-backend-contract, func.func(cse, canonicalize), {TORCH_TO_LINALG})",
)
TM_TENSOR_TO_LOOPS = "builtin.module(func.func(tm-tensor-bufferize, tm-tensor-to-loops))"
_USES = {
    "stablehlo": re.compile(r"\b(?:stablehlo|chlo)\."),
    "torch": re.compile(r"!torch\.|\btorch\.(?:operator|aten|prim|constant|vtensor)|\"onnx\."),
}
_ONNX_OP = re.compile(r"\"onnx\.")
_torch_mlir: dict[str, Any] = {}
# what of a StableHLO function's constant inputs is fed at run time: none, the given ones
# (``util.unfoldable_constant``, ``@inputs()``), or also a self-checking function's own constants
FEED_NONE, FEED_GIVEN, FEED_ALL = 0, 1, 2
# run on an empty module, it loads the chlo dialect (a dependency of this pass), which
# torch-mlir's bindings cannot register otherwise
LOADS_CHLO = "builtin.module(func.func(stablehlo-legalize-quant-to-math))"


def front_end(module_text: str) -> str | None:
    """Which front end a module needs: 'stablehlo', 'torch' or None."""
    for name, pattern in _USES.items():
        if pattern.search(module_text):
            return name
    return None


def _torch_mlir_context() -> Any:
    try:
        import torch_mlir._mlir_libs._stablehlo as stablehlo
        import torch_mlir.ir as tir
        import torch_mlir.passmanager as tpm
        from torch_mlir.dialects import torch as torch_dialect
    except ImportError as error:
        raise SnippetFailure(Kind.UNSUPPORTED, f"torch-mlir is not installed ({error}); "
                             "install pytest-mlir-snippets[frontends]") from None
    if not _torch_mlir:
        stablehlo.register_stablehlo_passes()
        _torch_mlir.update(ir=tir, pm=tpm)
    ctx = tir.Context()
    ctx.enable_multithreading(False)  # as mlirtools' contexts: one small module at a time
    torch_dialect.register_dialect(ctx)
    stablehlo.register_dialect(ctx)
    with ctx, tir.Location.unknown():
        tpm.PassManager.parse(LOADS_CHLO).run(tir.Module.parse("module {}").operation)
    return ctx


def legalize(module_text: str, kind: str, target: str, function: str,
             constants: Mapping[int, np.ndarray] | None = None,
             fed: ireeops.Fed | None = None) -> tuple[str, Any, str, list[Check]]:
    """Parse with torch-mlir, lower ``kind`` to linalg on tensors.

    Returns the text, for StableHLO the entry's signature in its own types
    (unsigned integers stay unsigned there, and signless after legalization), and
    what was baked in: a torch function that does not lower as written (axes,
    shapes or pads given as inputs) is lowered again with ``constants``, the
    recorded values of its small integer inputs, as literals; the inputs stay
    in the signature, unused; an input of rank 2 or more (data, not axes) is left out of
    that when the function lowers without it. Last, StableHLO's checks captured as results
    (``checks``).
    A StableHLO function's constant inputs (``util.unfoldable_constant``, ``@inputs()``)
    become arguments, their values added to ``fed``; when the lowering fails with them
    fed, that failure is the verdict (a pass with them constant would test the folder).
    """
    pipelines = (STABLEHLO_PIPELINE,) if kind == "stablehlo" else TORCH_PIPELINES
    try:
        try:
            text, signature, checks = _first_that_lowers(module_text, kind, target, function, pipelines, fed,
                                                         feed=FEED_ALL)
        except SnippetFailure as failure:
            if fed is None or not fed.own or failure.kind is not Kind.COMPILE_ERROR:
                raise
            # the function's own constants: kept constant where the lowering needs them
            why = f"the lowering needs it constant ({failure.message.splitlines()[0][:120]})"
            kept = [f"{s}: kept as a constant, {why}" for s in fed.own]
            fed.values, fed.sources, fed.kept, fed.own = [], [], [], []
            text, signature, checks = _first_that_lowers(module_text, kind, target, function, pipelines, fed,
                                                         feed=FEED_GIVEN)
            fed.kept += kept
        return text, signature, "", checks
    except SnippetFailure as failure:
        if kind == "stablehlo" and fed is not None and fed.values and failure.kind is Kind.COMPILE_ERROR:
            raise _fed_failure(failure, module_text, target, function, pipelines, fed) from None
        if kind != "torch" or not constants or failure.kind is not Kind.COMPILE_ERROR:
            raise
        as_written = failure
    try:
        specialized, baked = bake_inputs(module_text, function, constants, _torch_mlir_context(), _torch_mlir["ir"])
    except Exception:
        raise as_written from None
    if not baked:
        raise as_written
    try:
        lowered = _first_that_lowers(specialized, kind, target, function, pipelines)
    except SnippetFailure:
        raise as_written from None  # the snippet's own failure says more than the retry's
    # a baked input of rank 2 or more is data rather than axes or a shape: fed after all where it lowers without it
    ctx = _torch_mlir_context()
    for index in sorted(i for i, v in constants.items() if v.ndim > 1):
        fewer = {i: v for i, v in constants.items() if i != index}
        try:
            fewer_text, fewer_baked = bake_inputs(module_text, function, fewer, ctx, _torch_mlir["ir"])
            lowered = _first_that_lowers(fewer_text, kind, target, function, pipelines)
        except SnippetFailure:  # needed constant after all
            continue
        constants, baked = fewer, fewer_baked
    text, signature, checks = lowered
    return text, signature, baked, checks


def _fed_failure(failure: SnippetFailure, module_text: str, target: str, function: str, pipelines: tuple[str, ...],
                 fed: ireeops.Fed) -> SnippetFailure:
    """The verdict of a StableHLO function that does not lower with its constant inputs fed
    as arguments: its own compile-error, never a pass of the same function folded; whether
    it lowers with them kept constant is said in the message."""
    try:
        _first_that_lowers(module_text, "stablehlo", target, function, pipelines, ireeops.Fed(), feed=FEED_NONE)
        note = "it lowers only with them kept constant, which would test the constant folder instead"
    except SnippetFailure:
        note = "it does not lower with them kept constant either"
    fed_names = ", ".join(fed.sources)
    failure.message = f"{failure.message} (with its inputs fed at run time: {fed_names}; {note})"
    return failure


def _first_that_lowers(module_text: str, kind: str, target: str, function: str, pipelines: tuple[str, ...],
                       fed: ireeops.Fed | None = None, feed: int = FEED_ALL) -> tuple[str, Any, list[Check]]:
    for attempt, pipeline in enumerate(pipelines, 1):
        try:
            return _legalize_with(module_text, kind, target, function, pipeline, fed, feed)
        except SnippetFailure as failure:
            if attempt == len(pipelines) or failure.kind is not Kind.COMPILE_ERROR:
                raise
    raise AssertionError("unreachable")


def _legalize_with(module_text: str, kind: str, target: str, function: str, pipeline: str,
                   fed: ireeops.Fed | None = None, feed: int = FEED_ALL) -> tuple[str, Any, list[Check]]:
    ctx = _torch_mlir_context()
    tir, tpm = _torch_mlir["ir"], _torch_mlir["pm"]
    checking = kind == "stablehlo" and check_ops.uses_checks(module_text)
    module_text = jaxops.sharding_in_generic_form(module_text) if kind == "stablehlo" else module_text
    ctx.allow_unregistered_dialects = True  # the check and util dialects' ops, in generic form; others named below
    with ctx, tir.Location.unknown(), mlirtools.collecting(ctx, target) as diags:
        try:
            with marked(lambda: imported(module_text, "torch-mlir-opt")):
                module = tir.Module.parse(module_text)
        except Exception as error:
            failure = diags.failure(Kind.COMPILE_ERROR, "the snippet does not parse or verify", error)
            raise failure.with_triage(imported(module_text, "torch-mlir-opt")) from None
        if kind == "stablehlo" and "interpreter.run_parallel" in module_text:  # before: it is no registered op
            plans = parallel.rewrite(module, tir)
            if fed is not None:
                fed.parallel = plans
        if kind == "stablehlo" and "sdy." in module_text:
            jaxops.drop_sharding(module, tir)  # Shardy's annotations: nothing to do on one device
        mlirtools.reject_unregistered(module, tir, ctx, target, allowed=("check.", "util."))
        signature, checks = None, []
        if kind == "stablehlo" and fed is not None:
            fed.extend(ireeops.give_meaning(module, tir, function, "stablehlo.constant", feed >= FEED_GIVEN))
            if feed >= FEED_GIVEN:
                fed.extend(ireeops.feed_inputs_call(module, tir, function))
            if feed == FEED_ALL and checking:
                fed.extend(ireeops.feed_constants(module, tir, function, "stablehlo.constant", check_ops.is_check))
        if kind == "stablehlo":
            mlirtools.run_passes(module, STABLEHLO_PREPARE, tpm.PassManager.parse, diags, "stablehlo legalization")
            if checking:  # after inlining: a check in a callee is the entry's now
                checks = check_ops.capture(module, tir, function)
            sizes = _refine(module, tir, tpm, function, diags)
            plugin_step("shlo.rewrite", module, lambda: shlo.rewrite(module, tir))
            widened = fedvalues.widen_entry(mlirtools.find_function(module, function), tir, "stablehlo")
            if fed is not None:
                fed.widened = widened
            try:
                args, results = mlirtools.signature(mlirtools.find_function(module, function), tir.ShapedType)
            except UnsupportedType as error:
                raise SnippetFailure(Kind.UNSUPPORTED, str(error)) from None
            signature = ([dataclasses.replace(spec, size=sizes.get(i)) for i, spec in enumerate(args)], results)
        if kind == "torch" and _ONNX_OP.search(module_text):  # an ONNX import (plain torch ops need none of it)
            expanded = plugin_step("onnx.expand", module, lambda: onnx.expand(module, tir))
            mlirtools.run_passes(module, ONNX_TO_TORCH, tpm.PassManager.parse, diags, "ONNX import")
            if expanded:
                mlirtools.run_passes(module, onnx.INLINE, tpm.PassManager.parse, diags, "ONNX import")
        if kind == "torch":
            plugin_step("torch.flatten_losses", module, lambda: torch_rewrites.flatten_losses(module, tir))
        given = module.operation.get_asm(enable_debug_info=True)  # a leftover's reproducer starts here
        mlirtools.run_passes(module, pipeline, tpm.PassManager.parse, diags, f"{kind} legalization")
        if "tm_tensor." in str(module):  # sort, scatter, top-k: TMTensor ops, which only torch-mlir lowers
            mlirtools.run_passes(module, TM_TENSOR_TO_LOOPS, tpm.PassManager.parse, diags, "TMTensor lowering")
            _mark_fresh_buffers(module, tir)
        left = _leftovers(module, tir)
        if left:
            raise SnippetFailure(Kind.COMPILE_ERROR, f"{kind} legalization left {len(left)} op(s) without a lowering"
                                 f" to linalg", left, triage=leftover(kind, pipeline, given,
                                                                      [d.message.split("'")[1] for d in left]))
        text = mlirtools.spell_out_booleans(module.operation.get_asm(enable_debug_info=True))
        return text, signature, checks



def _refine(module: Any, tir: Any, tpm: Any, function: str, diags: mlirtools.Collector) -> dict[int, int]:
    """A dynamic entry refined to static shapes (``shlo/refine.py``): the recorded inputs'
    shapes, else every dynamic dimension and dimension argument ``--mlir-dynamic-dim``; the
    dimension arguments' sizes."""
    func = mlirtools.find_function(module, function)
    if not refine.needs_refinement(module, func, tir):
        return {}
    size = refine.DYNAMIC_DIM.get()
    sizes = refine.dimension_sizes(func, tir, size)
    try:
        left = refine.refine(module, tir, function, sizes, refine.concrete_shapes(func, tir, size),
                             tpm.PassManager.parse, diags)
    except ValueError as error:
        raise SnippetFailure(Kind.COMPILE_ERROR, str(error)) from None
    if left:
        where = [Diagnostic("error", f"'{op.name}' still has a dynamic result: {op.results[0].type}",
                            *mlirtools.location_of(str(op.location))) for op in left[:5]]
        raise SnippetFailure(Kind.COMPILE_ERROR, f"shape refinement (dynamic dimensions = {size}) left {len(left)} "
                             "op(s) with dynamic shapes", where)
    return sizes


def _mark_fresh_buffers(module: Any, tir: Any) -> None:
    """``tm-tensor-bufferize`` wraps buffers it just allocated in ``bufferization.to_tensor``:
    say so (``restrict``, ``writable``), which One-Shot Bufferize then requires."""
    for op in mlirtools.ops_where(module, tir, lambda op: op.name == "bufferization.to_tensor"):
        op.attributes["restrict"] = tir.UnitAttr.get()
        op.attributes["writable"] = tir.UnitAttr.get()


_FRONT_END_DIALECTS = ("stablehlo.", "chlo.", "torch.", "onnx.", "tm_tensor.")


def _target_of(op: Any) -> str:
    """`` @lapack_sgesdd_ffi``: a custom call's target, which says what the call is."""
    if op.name != "stablehlo.custom_call" or "call_target_name" not in op.attributes:
        return ""
    return f" @{str(op.attributes['call_target_name']).strip(chr(34))}"


def _leftovers(module: Any, tir: Any) -> list[Diagnostic]:
    """An error per front-end op the legalization did not convert, at its location."""
    found: list[Diagnostic] = []

    def visit(op: Any) -> Any:
        if op.name.startswith(_FRONT_END_DIALECTS):
            where = mlirtools.location_of(str(op.location))
            found.append(Diagnostic("error", f"failed to legalize operation '{op.name}'{_target_of(op)}", *where))
            return tir.WalkResult.SKIP  # its region's terminators are not news
        return tir.WalkResult.ADVANCE

    module.operation.walk(visit, tir.WalkOrder.PRE_ORDER)
    return found
