"""The ``cpu`` target: upstream MLIR bindings down to LLVM, run by the ExecutionEngine.

Its plain lowering (no fusion, no tiling, no vectorization: ``run_plain``) is a reference
for other targets' runs and the last one for its own; which reference a run is judged
against is chosen in ``worker/judging/goldens.py``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from pytest_mlir_snippets.golden.inputs import TypeSpec
from pytest_mlir_snippets.protocol import CompileFacts, Kind, Options, Recorded, Triage
from pytest_mlir_snippets.registry import TARGETS
from pytest_mlir_snippets.worker import benchstats, native_io
from pytest_mlir_snippets.worker.judging import dataflow
from pytest_mlir_snippets.worker.judging.goldens import ANOTHER, Goldens
from pytest_mlir_snippets.worker.judging.judge import judge_outputs, run_inputs
from pytest_mlir_snippets.worker.lowering import checkcalls, decompose, jit, mlirtools, parallelrun
from pytest_mlir_snippets.worker.lowering import passes as lowering
from pytest_mlir_snippets.worker.lowering.runtime_libs import INSTALL_HINT, runner_libraries
from pytest_mlir_snippets.worker.lowering.shlo import lapack_run
from pytest_mlir_snippets.worker.lowering.translatable import untranslatable
from pytest_mlir_snippets.worker.targets.base import Backend, Compiled, Executed, Kept, Reference, SnippetFailure
from pytest_mlir_snippets.worker.triage import failingpass

FRONT = "func.func(tosa-to-scf, tosa-to-linalg-named, tosa-to-linalg, tosa-to-arith, tosa-to-tensor)"
OPTIMIZE = "func.func(convert-elementwise-to-linalg, linalg-fuse-elementwise-ops), canonicalize, cse"
PLAIN = "func.func(convert-elementwise-to-linalg)"
BUFFERIZE = (
    "one-shot-bufferize{allow-return-allocs-from-loops bufferize-function-boundaries"
    " function-boundary-type-conversion=identity-layout-map},"
    " canonicalize, buffer-deallocation-pipeline, convert-bufferization-to-memref"
)
# complex arithmetic to arith and math before ``prepare_for_llvm``: it makes math.copysign
TO_LOOPS = "func.func(convert-linalg-to-loops), convert-complex-to-standard"
# bf16 arithmetic in f32 and bf16 truncation as integer ops (arith-emulate-unsupported-floats,
# arith-expand{include-bf16}): with upstream's __truncsfbf2 loaded, this LLVM build's x86
# code generation still asserts on some bf16 code ("Shift operators return type must be the
# same as their first arg": stablehlo.sign of bf16), so these stay. The small floats (f8,
# f6, f4) compute in f32 the same way; what is left on them (extf, truncf, the ops of a type
# the emulation cannot map) becomes calls into upstream's APFloat runtime library
# (convert-arith-to-apfloat, libmlir_apfloat_wrappers), after convert-arith-to-llvm has taken
# everything LLVM computes natively; their math ops compute in f32 (math-extend-to-supported-types,
# which leaves f16 and bf16 math as it was: in f32 their results moved past openxla's ULP bounds).
# Those steps are in the pipeline of a module that has small floats only (``SMALL``).
SMALL_FLOATS = ("f8E4M3FN", "f8E5M2", "f8E4M3", "f8E3M4", "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E8M0FNU", "f6E2M3FN",
                "f6E3M2FN", "f4E2M1FN")
TO_LLVM = (
    "convert-vector-to-scf, convert-scf-to-cf, expand-strided-metadata, lower-affine,"
    " convert-vector-to-llvm, finalize-memref-to-llvm,"
    " convert-complex-to-standard, func.func(math-expand-ops{ops=rsqrt}),<math> convert-math-to-funcs,"
    " convert-math-to-libm, convert-math-to-llvm,"
    " func.func(arith-emulate-unsupported-floats{source-types=bf16<floats> target-type=f32},"
    " arith-expand{include-bf16=true}),"
    " convert-arith-to-llvm,<apfloat> convert-index-to-llvm, convert-func-to-llvm, convert-cf-to-llvm,"
    " convert-complex-to-llvm, convert-ub-to-llvm, reconcile-unrealized-casts"
)


SMALL = re.compile(r"f[468]E\d")  # a small float type in a module's text (after a shape: 4xf8E5M2)


def to_llvm(small_floats: bool) -> str:
    """``TO_LLVM``, with the small floats' steps or without them."""
    return (TO_LLVM.replace("<math>", " math-extend-to-supported-types{extra-types=f16,bf16},")
            .replace("<floats>", "," + ",".join(SMALL_FLOATS))
            .replace("<apfloat>", " convert-arith-to-apfloat, convert-arith-to-llvm,") if small_floats else
            TO_LLVM.replace("<math>", "").replace("<floats>", "").replace("<apfloat>", ""))


def default_pipeline(plain: bool = False, own_deallocation: bool = False, small_floats: bool = False) -> list[str]:
    """The cpu target's pipeline from upstream dialects on tensors to the LLVM dialect,
    in two parts, with ``prepare_for_llvm`` between them. ``own_deallocation``: the
    snippet frees its own buffers (``memref.dealloc``), and the ownership-based
    deallocation is left out. That pass assumes it owns what it did not see allocated
    (a buffer returned by a callee, an allocation canonicalization re-made from
    ``memref.alloc(%c16)``) and checks at run time that code freeing such a buffer does
    not: "expected that the block does not have ownership" (SIGABRT), on code upstream
    runs with its own pipelines (Vector gather, compress; Linalg conv-1d). Buffers that
    bufferization adds to such a snippet are then not freed (a leak, not a crash).
    ``small_floats``: with the steps f8, f6 and f4 need (``SMALL`` finds them in a module)."""
    bufferize = BUFFERIZE.replace(" buffer-deallocation-pipeline,", "") if own_deallocation else BUFFERIZE
    return [f"builtin.module({FRONT}, {PLAIN if plain else OPTIMIZE}, {bufferize}, {TO_LOOPS})",
            f"builtin.module({to_llvm(small_floats)})"]


def frees_own_buffers(module: str) -> bool:
    return "memref.dealloc" in module


class CpuBackend(Backend):
    name = "cpu"

    def __init__(self) -> None:
        from mlir.execution_engine import ExecutionEngine

        self.engine_type = ExecutionEngine
        self._reference: dict[tuple[str, str], Compiled] = {}
        self._last_reference: tuple[Compiled, list[tuple[str, tuple[int, ...], bytes]], Reference] | None = None
        self._goldens = Goldens(plain=self)  # the references of its runs and of reference requests

    # ------------------------------------------------------------------ compile
    def compile(self, module: str, function: str, options: Options,
                constants: Mapping[int, np.ndarray] | None = None) -> Compiled:
        pipeline = [options.pipeline] if options.pipeline else default_pipeline(
            own_deallocation=frees_own_buffers(module), small_floats=SMALL.search(module) is not None)
        return self._compile(module, function, pipeline, options.print_ir, constants, options.opt_level,
                             translate=not options.skip_exec, own_steps=not options.pipeline)

    def compile_iteration(self, model: str, schedule: str, pipeline: str, function: str) -> Compiled:
        """An iteration: schedule, then ``pass_pipeline.txt`` step by step (``optrun.iteration``);
        translated and linked here where it reached the LLVM dialect, so that a translation that
        fails or times out is the compile's; else at the first run (``vN/llvm.mlir``)."""
        from pytest_mlir_snippets.worker.optrun.iteration import lowered_iteration

        with lowered_iteration(model, schedule, pipeline, function, self.name) as (low, done):
            low.facts.ptx, low.kept.source, low.kept.ir_file = done.ptx, model, TARGETS[self.name].run_ir
            compiled = Compiled(done.text, function, low.signature, None, low.facts, low.kept, done.facts)
            if not untranslatable(low.module):
                compiled.handle = self._translate(low, 3)
                self.link(compiled)
            return compiled

    def _translate(self, low: lowering.Lowered, opt_level: int) -> Any:
        """``low``'s module in an ExecutionEngine (machine code at the first lookup: ``link``)."""
        try:
            with failingpass.marked(lambda: failingpass.translation(low.module)):
                engine = self.engine_type(low.module, opt_level=opt_level, shared_libs=runner_libraries())
                lapack_run.attach(engine, low.module)  # JAX's LAPACK calls (lowering/shlo/lapack.py)
                return engine
        except Exception as error:
            failure = low.diagnostics.failure(Kind.COMPILE_ERROR, "translation to LLVM failed", error)
            if not any(d.line is not None for d in failure.diagnostics):  # where in the snippet, when it can
                failure.diagnostics += untranslatable(low.module)
            raise failure.with_triage(failingpass.translation(low.module)) from None

    def _compile(self, module: str, function: str, pipeline: list[str], keep_ir: bool = True,
                 constants: Mapping[int, np.ndarray] | None = None, opt_level: int = 3,
                 translate: bool = True, analyze: bool = True, own_steps: bool = True,
                 steps: tuple[Any, Any] | None = None) -> Compiled:
        """``translate``: to LLVM IR in an ExecutionEngine, else (nothing will run it) only
        checked translatable: an engine costs about half a compile-only function's time,
        most of it the machine code its destruction generates. ``analyze``: say which
        results depend on run-time values (a snippet's, not a reference's). ``own_steps``:
        the default pipeline's steps before it (``decompose.lower``), not for a user's pipeline.
        ``steps``: the Python steps (before, between) of a pipeline cut by ``bisect``."""
        before, between = steps or (decompose.lower if own_steps and decompose.needed(module) else None, None)
        with lowering.lowered(module, function, pipeline, self.name, constants, between, before=before) as low:
            engine = self._translate(low, opt_level) if translate else None
            if not translate:
                rejected = untranslatable(low.module)
                if rejected:
                    raise SnippetFailure(Kind.COMPILE_ERROR, "translation to LLVM failed", rejected,
                                         triage=failingpass.translation(low.module))
            elif analyze and not low.kept.unfeedable:  # it will run: whether its results depend on its inputs
                low.kept.runtime_results = dataflow.runtime_results(low.module, function, len(low.signature[1]))
            final = str(low.module) if keep_ir else ""
        return Compiled(final, function, low.signature, engine, low.facts, low.kept)

    def link(self, compiled: Compiled) -> None:
        """Generate machine code and resolve symbols (the JIT does it lazily): a function
        that needs a missing external symbol fails here, as a compile-error. An
        iteration's compile is translated to LLVM IR here, at its first run: its
        [compile] stands for the pipeline, which a schedule under work may not yet take
        to the LLVM dialect."""
        if compiled.kept.linked:
            return
        if compiled.kept.link_failure is not None:  # one translation per compile, failed or not
            raise compiled.kept.link_failure
        if compiled.handle is None:
            try:
                compiled.handle = self._engine(compiled.ir, compiled.kept.ir_file)
            except SnippetFailure as failure:
                compiled.kept.link_failure = failure
                raise
        checkcalls.attach(compiled.handle, compiled.kept)  # before the first lookup makes the code
        parallelrun.attach(compiled.handle, compiled.kept)
        if not compiled.handle.raw_lookup("_mlir_ciface_" + compiled.function):
            hint = "" if runner_libraries() else f"; {INSTALL_HINT}"
            raise SnippetFailure(Kind.COMPILE_ERROR, f"@{compiled.function} does not link: an external symbol it "
                                 f"needs is missing (see the JIT session error below){hint}")
        compiled.kept.linked = True

    def _engine(self, text: str, name: str = "") -> Any:
        """An ExecutionEngine for compiled IR in the LLVM dialect, given as text (``name``: the
        file it is written to, which its diagnostics then point into)."""
        from mlir import ir

        with ir.Context() as ctx, ir.Location.unknown(), mlirtools.collecting(ctx, self.name) as diags:
            try:
                module = mlirtools.parse_module_named(ir, text, name) if name else ir.Module.parse(text)
                return self.engine_type(module, opt_level=3, shared_libs=runner_libraries())
            except Exception as error:
                raise diags.failure(Kind.COMPILE_ERROR, "translation to LLVM failed", error,
                                    failing_pass="translation") from None

    # ------------------------------------------------------------------ execute
    def execute(self, compiled: Compiled, options: Options,
                golden: Recorded | None) -> Executed:
        inputs = run_inputs(compiled, options, golden)
        return judge_outputs(compiled, options, golden, inputs, self._run(compiled, inputs),
                             lambda: self.reference(compiled, options, inputs))

    def run(self, compiled: Compiled, inputs: list[np.ndarray], options: Options) -> list[np.ndarray]:
        return self._run(compiled, inputs)

    def benchmark(self, compiled: Compiled, options: Options, golden: Recorded | None) -> dict[str, float]:
        """Wall time of the call alone (arguments built once, inputs at several placements:
        ``jit.Placements``), on a monotonic clock; the buffers each call returns are freed
        between calls, untimed."""
        self.link(compiled)
        args, results = compiled.signature
        inputs = run_inputs(compiled, options, golden)
        checkcalls.start(compiled.kept, recording=False)
        try:
            call = jit.Placements(compiled.handle, compiled.function, args, results, inputs)
            return benchstats.measure(call.run, options, after=call.release, begin=call.restart,
                                      layouts=call.PLACES)
        except Exception as error:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"execution failed: {error}") from None

    def _run(self, compiled: Compiled, inputs: list[np.ndarray]) -> list[np.ndarray]:
        self.link(compiled)
        args, results = compiled.signature
        copies = [np.array(v, copy=True) for v in inputs]
        checkcalls.start(compiled.kept)
        try:
            outputs = jit.invoke(compiled.handle, compiled.function, args, results, copies)
        except Exception as error:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"execution failed: {error}") from None
        failed = parallelrun.failure(compiled.kept)  # run_parallel's instances (lowering/parallel.py)
        if failed:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"interpreter.run_parallel: {failed}")
        return outputs

    def reference_for(self, module: str, function: str, options: Options, inputs: list[np.ndarray]) -> Reference:
        """Another target's reference (``worker/judging/reference.py``): what the cpu target gives
        for ``function`` of ``module`` on ``inputs`` (``goldens.REFERENCES[ANOTHER]``)."""
        from pytest_mlir_snippets.worker.lowering.frontend import front_end

        stub = Compiled("", function, None, facts=CompileFacts(front_end=front_end(module) or "upstream"),
                        kept=Kept(source=module))
        return self._goldens.reference(ANOTHER, stub, options, inputs)

    def reference(self, compiled: Compiled, options: Options, inputs: list[np.ndarray]) -> Reference:
        """What a run of ``compiled`` on ``inputs`` is judged against when nothing is recorded;
        the last one kept, for a failed execute's driver (``worker/triage/cpu_driver.py``), which asks again."""
        given = [(v.dtype.str, v.shape, v.tobytes()) for v in map(np.asarray, inputs)]
        last = self._last_reference
        if last is not None and last[0] is compiled and last[1] == given:
            return last[2]
        found = self._goldens.reference(self.name, compiled, options, inputs)
        self._last_reference = (compiled, given, found)
        return found

    def bisect(self, module: str, function: str, options: Options, golden: Recorded | None,
               constants: Mapping[int, np.ndarray]) -> Triage:
        """``worker/triage/cpu_bisect.py``: the item's pipeline, cut, then the plain one's steps."""
        from pytest_mlir_snippets.worker.triage.cpu_bisect import Cuts

        own, small = frees_own_buffers(module), SMALL.search(module) is not None
        item = [options.pipeline] if options.pipeline else default_pipeline(False, own, small)
        tails = [default_pipeline(True, dealloc, small) for dealloc in dict.fromkeys((own, True))]
        cuts = Cuts(module, item, tails, own_steps=not options.pipeline)
        return cuts.search(lambda parts, steps: self._compile(module, function, parts, False, constants,
                                                              options.opt_level, analyze=False, steps=steps),
                           self._run, lambda compiled, inputs: self._goldens.reference(self.name, compiled,
                                                                                       options, inputs),
                           options, golden)

    def close_device(self) -> None:
        self._goldens.close()

    def run_plain(self, compiled: Compiled, inputs: list[np.ndarray]) -> list[np.ndarray]:
        """``compiled``'s function (``kept.source``) through the plain lowering, run on ``inputs``."""
        source = compiled.kept.source
        key = (source, compiled.function)
        if key not in self._reference:
            try:
                pipeline = default_pipeline(plain=True, own_deallocation=frees_own_buffers(source),
                                            small_floats=SMALL.search(source) is not None)
                self._reference[key] = self._compile(source, compiled.function, pipeline,
                                                     False, compiled.kept.constants, opt_level=0, analyze=False)
            except SnippetFailure as failure:
                raise SnippetFailure(Kind.EXECUTE_ERROR, "the reference (plain lowering) does not compile: "
                                     + failure.message, failure.diagnostics) from None
        reference = self._reference[key]
        fed = reference.kept.fed
        if fed and len(inputs) + len(fed) == len(reference.signature[0]):  # the caller's inputs, then the constants
            inputs = [*inputs, *fed]
        with native_io.quiet_stdout():  # a snippet that prints has printed once already
            return self._run(reference, inputs)


__all__ = ["CpuBackend", "TypeSpec", "default_pipeline"]
