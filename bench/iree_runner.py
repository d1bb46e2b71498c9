"""iree-test-suites' own runner against this plugin's iree-cpu (or cpu) target, on the same
ONNX operator tests; writes a section of docs/performance.md (the rest of the file is kept).

    python bench/iree_runner.py [--target iree-cpu|cpu] [--tests N] [--workers 2] [--corpus DIR]

Both run on a copy of ``shared/corpus/iree-onnx-ops`` laid out as iree-test-suites lays
it (``onnx_ops/onnx/node/generated/test_*``) with the same config
(``bench/iree_test_suites/onnx_ops_cpu_llvm_sync.json``: their cpu config, its
compile flags, ``--device=local-sync`` and skip lists), one after the other, each at
``-n N`` and each from a cold start (no compile cache: ``-p no:cacheprovider``):

- theirs: their ``onnx_ops/conftest.py`` (vendored unchanged in
  ``bench/iree_test_suites/``), one item per test, an ``iree-compile`` and an
  ``iree-run-module`` process per test (the tools of the same IREE wheels, from this
  interpreter's ``bin``); ``pyjson5``, which it imports, is given a JSON stand-in when it
  is not installed (their config is plain JSON);
- ours: ``pytest --mlir-target iree-cpu --mlir-expectations <the config>``, a test
  passing when its ``[execute]`` item passes (compiled, ran, matched the recorded outputs);
  with ``--target cpu``, ``pytest --mlir-target cpu`` (the config's skip lists and expected
  failures are IREE's: not given), torch-mlir and MLIR's ExecutionEngine in place of IREE.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENDORED = ROOT / "bench" / "iree_test_suites"
def markers(target: str) -> tuple[str, str]:
    """The section's begin and end lines in docs/performance.md, one section per target."""
    name = "iree-runner" if target == "iree-cpu" else f"iree-runner-{target}"
    return f"<!-- {name}: begin -->", f"<!-- {name}: end -->"
PYJSON5_STANDIN = ("import json\n\n\ndef load(f):\n    return json.load(f)\n\n\n"
                   "def decode(s):\n    return json.loads(s)\n")


def lay_out(corpus: Path, tests: list[str], root: Path) -> Path:
    """The tests in iree-test-suites' layout under ``root/onnx_ops``; returns the config's path."""
    suite = root / "onnx_ops"
    generated = suite / "onnx" / "node" / "generated"
    generated.mkdir(parents=True)
    for name in tests:
        shutil.copytree(corpus / name, generated / name)
    (suite / "configs").mkdir()
    config = suite / "configs" / "onnx_ops_cpu_llvm_sync.json"
    shutil.copy(VENDORED / "onnx_ops_cpu_llvm_sync.json", config)
    return config


def run(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """(wall seconds, CPU seconds of the command and everything it started, the result)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done


def outcomes(junit: Path) -> dict[str, str]:
    """test case name -> passed / failure / error / skipped."""
    found = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        outcome = next((tag for tag in ("failure", "error", "skipped") if case.find(tag) is not None), "passed")
        found[f"{case.get('classname')}::{case.get('name')}"] = outcome
    return found


def test_name(case: str) -> str:
    """The test folder of a junit test case (its class name is the path, dotted)."""
    m = re.search(r"generated\.([^.]+)\.", case)
    return m.group(1) if m else case


def theirs(corpus: Path, tests: list[str], workers: int, env: dict[str, str]) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="iree-theirs-") as tmp:
        config = lay_out(corpus, tests, Path(tmp))
        suite = config.parent.parent
        shutil.copy(VENDORED / "onnx_ops_conftest.py", suite / "conftest.py")
        if importlib.util.find_spec("pyjson5") is None:
            (Path(tmp) / "pyjson5.py").write_text(PYJSON5_STANDIN)
        env = dict(env, PYTHONPATH=os.pathsep.join(filter(None, [tmp, env.get("PYTHONPATH", "")])))
        junit = Path(tmp) / "junit.xml"
        wall, cpu, done = run([sys.executable, "-m", "pytest", "-p", "no:mlir_snippets", "-p", "no:cacheprovider", "-q",
                          "-n", str(workers), f"--config-files={config}", f"--junitxml={junit}", "onnx"], suite, env)
        found = outcomes(junit) if junit.exists() else {}
    return {"wall": wall, "cpu": cpu, "passed": sum(o == "passed" for o in found.values()), "items": len(found),
            "summary": done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:],
            "passing": sorted(test_name(k) for k, o in found.items() if o == "passed")}


def ours(corpus: Path, tests: list[str], workers: int, env: dict[str, str],
         target: str = "iree-cpu") -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="iree-ours-") as tmp:
        config = lay_out(corpus, tests, Path(tmp))
        suite = config.parent.parent
        junit = Path(tmp) / "junit.xml"
        expectations = [f"--mlir-expectations={config}"] if target == "iree-cpu" else []
        wall, cpu, done = run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", str(workers),
                               f"--mlir-target={target}", *expectations, f"--junitxml={junit}", "onnx"], suite, env)
        found = outcomes(junit) if junit.exists() else {}
    executes = {k: o for k, o in found.items() if k.endswith("[execute]")}
    return {"wall": wall, "cpu": cpu, "passed": sum(o == "passed" for o in executes.values()), "items": len(found),
            "summary": done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:],
            "passing": sorted(test_name(k) for k, o in executes.items() if o == "passed")}


def section(result: dict[str, object], tests: int, workers: int, target: str = "iree-cpu") -> str:
    t, o = result["theirs"], result["ours"]
    assert isinstance(t, dict) and isinstance(o, dict)
    ratio = o["wall"] / t["wall"] if t["wall"] else float("nan")
    only_theirs = sorted(set(t["passing"]) - set(o["passing"]))
    only_ours = sorted(set(o["passing"]) - set(t["passing"]))
    versions = ", ".join(f"{p} {metadata.version(p)}" for p in ("iree-base-compiler", "iree-base-runtime"))
    begin, end = markers(target)
    how = ("Both compile with the config's flags verbatim (the config names its device, so the plugin adds no "
           "flag of its own: IREE's default generic CPU, not the host's) and through one input route, IREE's own "
           "`onnx` import, as `iree-compile` takes the file. What still differs: ours compiles in the worker's "
           "process with one compiler session (no `iree-compile` start per test: loading its 300 MB library "
           "costs ~0.2 s of CPU) and runs in one runtime instance per worker; ours judges outputs with "
           "`--mlir-atol`/`--mlir-rtol` defaults by element type (theirs: `iree-run-module --expected_output`'s "
           "tolerance); shapes must match exactly in both." if target == "iree-cpu" else
           "Ours compiles with torch-mlir (ONNX expansions first, docs/onnx.md) and upstream MLIR, and runs with "
           "MLIR's ExecutionEngine, in the worker's process; without IREE's config (its skip lists and expected "
           "failures are IREE's), judged with `--mlir-atol`/`--mlir-rtol` defaults by element type; shapes "
           "must match exactly in both.")
    return "\n".join([
        begin,
        f"## IREE's own runner against the {target} target",
        "",
        f"Written by `python bench/iree_runner.py` on {datetime.date.today()}, {os.cpu_count()} cores, "
        f"{platform.python_version()}, {versions}. The same {tests} ONNX operator tests "
        "(`shared/corpus/iree-onnx-ops`, in iree-test-suites' layout) and the same config "
        "(their `onnx_ops_cpu_llvm_sync.json`: `--iree-hal-target-backends=llvm-cpu`, "
        f"`--device=local-sync`, their skip lists), one run after the other, each at `-n {workers}` from a cold "
        "start (no compile cache); wall seconds of the whole pytest command, and the CPU seconds of it and all "
        "it started (the machine is shared: CPU time says what each costs whatever else runs beside).",
        "",
        "| runner | tests passed | items | wall (s, median) | s per test | each run's wall (s) | CPU (s, median) |",
        "|---|---|---|---|---|---|---|",
        f"| iree-test-suites' conftest (`iree-compile` + `iree-run-module` per test) | {t['passed']} | {t['items']} "
        f"| {t['wall']:.1f} | {t['wall'] / tests:.3f} | {', '.join(map(str, t['walls']))} | {t['cpu']:.1f} |",
        f"| pytest-mlir-snippets `--mlir-target {target}` (`[execute]` passed) | {o['passed']} | {o['items']} "
        f"| {o['wall']:.1f} | {o['wall'] / tests:.3f} | {', '.join(map(str, o['walls']))} | {o['cpu']:.1f} |",
        "",
        f"Ours took {ratio:.2f}x their wall time and {o['cpu'] / t['cpu']:.2f}x their CPU time "
        f"(medians of {len(t['walls'])} run(s) each, taking turns). "
        "Where the verdicts differ: passing only in theirs: "
        f"{', '.join(only_theirs) or 'none'}; only in ours: {', '.join(only_ours) or 'none'}.",
        how,
        end,
    ])


def write_section(path: Path, text: str, target: str = "iree-cpu") -> None:
    """Replace this benchmark's section of ``path``, or add it at the end; the rest stays."""
    begin, end = markers(target)
    old = path.read_text() if path.exists() else "# Performance\n"
    if begin in old and end in old:
        new = old[:old.index(begin)] + text + old[old.index(end) + len(end):]
    else:
        new = old.rstrip("\n") + "\n\n" + text + "\n"
    path.write_text(new)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=("iree-cpu", "cpu"), default="iree-cpu", help="this plugin's target")
    parser.add_argument("--tests", type=int, default=0, help="the first N tests (default: all)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1,
                        help="run both this many times, taking turns; the tables give the median walls")
    parser.add_argument("--corpus", type=Path, default=Path(os.environ.get(
        "MLIR_SNIPPETS_CORPUS", ROOT.parent / "shared" / "corpus")) / "iree-onnx-ops")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "performance.md")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    tests = sorted(p.name for p in args.corpus.iterdir() if (p / "model.mlir").is_file())
    tests = tests[:args.tests] if args.tests else tests
    # the IREE tools of this interpreter's wheels first on PATH, for their runner
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    runs: dict[str, list[dict[str, object]]] = {"theirs": [], "ours": []}
    for _ in range(args.repeat):  # taking turns: a busy spell of a shared machine hits both
        runs["theirs"].append(theirs(args.corpus, tests, args.workers, env))
        runs["ours"].append(ours(args.corpus, tests, args.workers, env, args.target))
        for name in runs:
            print(f"{name}: {json.dumps({k: v for k, v in runs[name][-1].items() if k != 'passing'})}", flush=True)
    result: dict[str, object] = {}
    for name, done in runs.items():
        walls = sorted(float(r["wall"]) for r in done)  # type: ignore[arg-type]
        result[name] = dict(done[-1], wall=statistics.median(walls),
                            walls=[round(float(r["wall"]), 1) for r in done],  # type: ignore[arg-type]
                            cpu=statistics.median(float(r["cpu"]) for r in done))  # type: ignore[arg-type]
    write_section(args.out, section(result, len(tests), args.workers, args.target), args.target)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
