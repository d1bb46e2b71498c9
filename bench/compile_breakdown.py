"""Where a cold compile's CPU time goes in the cpu target's worker, per function, for
the functions ``bench/performance.py`` generates; CPU seconds of this process (steady
on a shared machine), after a warm-up.

    python bench/compile_breakdown.py [--functions 200]

Parts, in the order the worker does them (worker/lowering/passes.py, targets/cpu.py):
parse, PassManager.parse, the pipeline's two parts (prepare_for_llvm between them),
the ExecutionEngine (translation to LLVM IR, the JIT set up; machine code is generated
at the first call, not here) and its destruction when the compiled function is dropped;
then the whole ``Worker.handle`` of a compile request, whose difference to the parts'
sum is the worker's own Python.
"""

from __future__ import annotations

import argparse
import resource


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", type=int, default=200)
    args = parser.parse_args()
    from mlir import ir, passmanager
    from mlir.execution_engine import ExecutionEngine
    from performance import snippet_file

    from pytest_mlir_snippets.mlirtext.splitter import SnippetSource
    from pytest_mlir_snippets.protocol import Op, Options, Request
    from pytest_mlir_snippets.worker.loop import Worker
    from pytest_mlir_snippets.worker.lowering.passes import prepare_for_llvm
    from pytest_mlir_snippets.worker.lowering.runtime_libs import runner_libraries
    from pytest_mlir_snippets.worker.targets.cpu import default_pipeline

    source = SnippetSource(snippet_file(args.functions + 20))
    texts = [(source.split(fn).text, fn.name) for fn in source.functions]
    warm, texts = texts[:20], texts[20:]
    pipeline, libs = default_pipeline(), runner_libraries()
    parts = dict.fromkeys(["parse", "PassManager.parse", "pipeline", "prepare_for_llvm", "engine", "engine destroyed"],
                          0.0)
    with ir.Context() as ctx, ir.Location.unknown():
        ctx.allow_unregistered_dialects = True
        for round_ in (warm, texts):
            for key in parts:
                parts[key] = 0.0
            for text, _ in round_:
                t0 = cpu()
                module = ir.Module.parse(text)
                parts["parse"] += cpu() - t0
                for i, part in enumerate(pipeline):
                    if i:
                        t0 = cpu()
                        prepare_for_llvm(module)
                        parts["prepare_for_llvm"] += cpu() - t0
                    t0 = cpu()
                    pm = passmanager.PassManager.parse(part)
                    t1 = cpu()
                    pm.run(module.operation)
                    parts["PassManager.parse"] += t1 - t0
                    parts["pipeline"] += cpu() - t1
                t0 = cpu()
                engine = ExecutionEngine(module, opt_level=0, shared_libs=libs)
                t1 = cpu()
                del engine
                parts["engine"] += t1 - t0
                parts["engine destroyed"] += cpu() - t1
    worker = Worker("cpu")
    for text, name in warm:
        worker.handle(Request(Op.COMPILE, text, name, Options()))
    t0 = cpu()
    for text, name in texts:
        worker.handle(Request(Op.COMPILE, text, name, Options()))
    worker._compiled.clear()  # its last compiles destroyed too, as the parts' were
    whole = cpu() - t0
    n = len(texts)
    print(f"CPU ms per function ({n} functions)\n\n| part | ms |\n|---|---|")
    for key, seconds in parts.items():
        print(f"| {key} | {seconds / n * 1000:.2f} |")
    print(f"| sum of the parts | {sum(parts.values()) / n * 1000:.2f} |")
    print(f"| Worker.handle (compile request) | {whole / n * 1000:.2f} |")


if __name__ == "__main__":
    main()
