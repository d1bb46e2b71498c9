"""What the plugin costs against the compile work itself and against other ways of
running the same snippets, measured in one run; writes docs/performance.md.

    python bench/performance.py [--sizes 1000 10000] [--opt-baseline-size 1000]
    python bench/performance.py --compare REF|bench/baseline.json [--save-baseline JSON]

For each generated snippet file (N functions of common ops, every one distinct):
- pytest's floor: a conftest collecting 2N trivial items from a listing, collected
  (``--collect-only -q``) and run;
- the plugin: ``--collect-only -q``; compile-only (``--mlir-skip-exec``) at -n 0 and
  -n 2 with a cold compile cache, then again warm; compile and execute at -n 0 and -n 2;
- a serial in-process loop over the same functions (the original tool's way: split,
  compile, no isolation, no reports), in a fresh process;
- one ``mlir-opt`` process per function with the cpu target's pipeline (lit-style),
  on the first ``--opt-baseline-size`` functions, scaled to N.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHAPES = [(4, 8), (8, 8), (16, 4), (2, 32), (32, 2), (8, 16)]
OPS = [
    "  %0 = tosa.add %a, %b : ({t}, {t}) -> {t}\n",
    "  %0 = arith.mulf %a, %b : {t}\n",
    "  %s = arith.subf %a, %b : {t}\n  %0 = math.exp %s : {t}\n",
    "  %m = arith.maximumf %a, %b : {t}\n  %0 = arith.addf %m, %a : {t}\n",
    "  %shift = \"tosa.const\"() <{{values = dense<0> : tensor<1xi8>}}> : () -> tensor<1xi8>\n"
    "  %0 = tosa.mul %a, %b, %shift : ({t}, {t}, tensor<1xi8>) -> {t}\n",
]


def snippet_file(n: int) -> str:
    """N distinct functions: an op from OPS on one of SHAPES, a constant making each unique."""
    parts = []
    for i in range(n):
        rows, cols = SHAPES[i % len(SHAPES)]
        t = f"tensor<{rows}x{cols}xf32>"
        body = OPS[(i // len(SHAPES)) % len(OPS)].format(t=t)
        parts.append(f"func.func @f_{i}(%a: {t}, %b: {t}) -> {t} {{\n{body}"
                     f"  %k = arith.constant dense<{i}.0> : {t}\n  %r = arith.addf %0, %k : {t}\n"
                     f"  return %r : {t}\n}}\n")
    return "".join(parts)


FLOOR = """import pytest


class Trivial(pytest.Item):
    def runtest(self):
        pass


class Listing(pytest.File):
    def collect(self):
        for line in self.path.read_text().splitlines():
            for stage in ("compile", "execute"):
                yield Trivial.from_parent(self, name=f"{{line}}[{{stage}}]")


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".items":
        return Listing.from_parent(parent, path=file_path)
"""


LOOP = """import sys, time
from pytest_mlir_snippets.worker.targets.cpu import CpuBackend
from pytest_mlir_snippets.protocol import Options
from pytest_mlir_snippets.mlirtext.splitter import SnippetSource

start = time.perf_counter()
source = SnippetSource(open(sys.argv[1]).read())
backend = CpuBackend()
options = Options(pipeline=sys.argv[2] if len(sys.argv) > 2 else None)
failed = 0
for fn in source.functions:
    try:
        backend.compile(source.split(fn).text, fn.name, options)
    except Exception:
        failed += 1
print(time.perf_counter() - start, failed)
"""


def timed(cmd: list[str], cwd: Path, repeat: int = 1) -> float:
    """Wall seconds of ``cmd``; with ``repeat``, the best of that many runs (short
    commands on a shared 2-core machine are noisy)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
        best = min(best, time.perf_counter() - start)
        if done.returncode not in (0, 1):
            tail = done.stdout.decode(errors="replace")[-2000:]
            raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{tail}")
    return best


def mlir_opt() -> str | None:
    import mlir  # a namespace package: its folder is on __path__

    for folder in mlir.__path__:
        candidate = Path(folder) / "bin" / "mlir-opt"
        if candidate.is_file():
            return str(candidate)
    return shutil.which("mlir-opt")


def one_pipeline() -> str:
    """The cpu target's two-part pipeline as one ``builtin.module(...)`` string."""
    from pytest_mlir_snippets.worker.targets.cpu import default_pipeline

    first, second = default_pipeline()
    return first[:-1] + ", " + second[len("builtin.module("):]


def opt_per_function(folder: Path, source_text: str, count: int, tool: str) -> float:
    from pytest_mlir_snippets.mlirtext.splitter import SnippetSource

    pipeline = one_pipeline()
    source = SnippetSource(source_text)
    files = []
    for fn in source.functions[:count]:
        path = folder / f"{fn.name}.mlir"
        path.write_text(source.split(fn).text)
        files.append(path)
    start = time.perf_counter()
    for path in files:
        subprocess.run([tool, f"--pass-pipeline={pipeline}", str(path), "-o", os.devnull], check=False,
                       stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def measure(n: int, opt_size: int, workdir: Path, execute: bool) -> dict[str, float]:
    folder = workdir / f"n{n}"
    folder.mkdir()
    (folder / "ops.mlir").write_text(snippet_file(n))
    for name, lines in (("floor", n), ("floor_half", n // 2)):  # 2N items, and N (compile-only's count)
        (folder / name).mkdir(exist_ok=True)
        (folder / name / "conftest.py").write_text(FLOOR)
        (folder / name / "ops.items").write_text("".join(f"f_{i}\n" for i in range(lines)))
    pytest = [sys.executable, "-m", "pytest", "-q"]
    r: dict[str, float] = {}
    r["floor collect"] = timed([*pytest, "--collect-only", "-p", "no:mlir_snippets", "floor"], folder, repeat=3)
    r["floor run (2N items)"] = timed([*pytest, "-p", "no:mlir_snippets", "floor"], folder)
    r["floor run (N items)"] = timed([*pytest, "-p", "no:mlir_snippets", "floor_half"], folder)
    r["plugin collect"] = timed([*pytest, "--collect-only", "ops.mlir"], folder, repeat=3)
    for workers in ("0", "2"):
        shutil.rmtree(folder / ".pytest_cache", ignore_errors=True)
        r[f"compile-only -n {workers} cold"] = timed([*pytest, "--mlir-skip-exec", "-n", workers, "ops.mlir"], folder)
        r[f"compile-only -n {workers} warm"] = timed([*pytest, "--mlir-skip-exec", "-n", workers, "ops.mlir"], folder)
        if execute:
            r[f"compile+execute -n {workers}"] = timed([*pytest, "--mlir-no-cache", "-n", workers, "ops.mlir"],
                                                       folder)
    (folder / "loop.py").write_text(LOOP)
    r["serial in-process loop"] = timed([sys.executable, "loop.py", "ops.mlir"], folder)
    tool = mlir_opt()
    if tool:
        count = min(n, opt_size)
        (folder / "opt").mkdir()
        seconds = opt_per_function(folder / "opt", (folder / "ops.mlir").read_text(), count, tool)
        r["mlir-opt per function"] = seconds * n / count
    return r


def table(results: dict[int, dict[str, float]]) -> list[str]:
    lines = []
    for n, r in results.items():
        loop = r["serial in-process loop"]
        cold = r["compile-only -n 0 cold"]
        checks = [
            ("--collect-only vs pytest's floor (collect)", r["plugin collect"] / r["floor collect"], 1.5),
            ("compile-only -n 0 cold vs serial in-process loop", cold / loop, 1.25),
            ("compile-only -n 2 cold vs -n 0 cold", r["compile-only -n 2 cold"] / cold, 0.6),
            ("compile-only warm (-n 0) vs pytest's floor (run, N items)",
             r["compile-only -n 0 warm"] / r["floor run (N items)"], 2.0),
        ]
        if "mlir-opt per function" in r:
            checks.append(("compile-only -n 0 cold vs mlir-opt per function", cold / r["mlir-opt per function"],
                           1 / 3))
        lines += [f"### {n} functions ({2 * n} items)", "", "| measurement | seconds |", "|---|---|"]
        lines += [f"| {k} | {v:.2f} |" for k, v in r.items()]
        lines += ["", "| ratio | measured | target | met |", "|---|---|---|---|"]
        lines += [f"| {name} | {value:.2f}x | <= {limit:.2f}x | {'yes' if value <= limit else 'no'} |"
                  for name, value, limit in checks]
        lines.append("")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--opt-baseline-size", type=int, default=1000)
    parser.add_argument("--execute-sizes", type=int, nargs="*", default=[1000],
                        help="sizes also measured with compile and execute (slow: a JIT and a reference each)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "performance.md")
    parser.add_argument("--compare", metavar="REF",
                        help="measure this tree and git REF interleaved in one run (bench/perfcompare.py), or "
                             "this tree against a baseline file (bench/baseline*.json, bench/perfbaseline.py); "
                             "prints both sides' ratios and their quotient, writes nothing else")
    parser.add_argument("--rounds", type=int, default=3, help="--compare: rounds (medians are compared)")
    parser.add_argument("--save-baseline", type=Path, metavar="JSON",
                        help="--compare: this tree's figures written as a baseline file")
    args = parser.parse_args()
    if args.compare:
        from perfbaseline import compare_baseline
        from perfcompare import compare

        sizes = parser.parse_args([]).sizes
        if args.compare.endswith(".json"):
            compare_baseline(Path(args.compare), None if args.sizes == sizes else args.sizes[0], args.rounds,
                             args.opt_baseline_size, args.save_baseline)
        else:
            compare(args.compare, args.sizes[0], args.rounds, args.opt_baseline_size, args.save_baseline)
        return
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            results[n] = measure(n, args.opt_baseline_size, Path(tmp), n in args.execute_sizes)
            print("\n".join(table({n: results[n]})), flush=True)
    lines = ["# Performance", "", f"Written by `python bench/performance.py` on {time.strftime('%Y-%m-%d')}, "
             f"on {os.cpu_count()} cores; wall seconds of whole commands (interpreter start included; "
             "the two --collect-only lines are the best of 3 runs).",
             "The mlir-opt figure runs the cpu target's pipeline in one process per function on the first "
             f"{args.opt_baseline_size} functions, scaled to N.", "", *table(results)]
    if args.out.is_file():  # other scripts' sections (iree_runner.py's, the profile's) stay
        pattern = r"<!-- ([\w-]+): begin -->.*?<!-- \1: end -->"
        lines += [block.group(0) for block in re.finditer(pattern, args.out.read_text(), re.S)]
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
