"""Everything a machine with a CUDA GPU should check, in one command, in at most 8 minutes.

    bash scripts/gpu_check.sh [--corpus ../shared/corpus] [--workers 8] [--doc docs/gpu.md]

Steps, each within its own time limit and all within ``--budget`` seconds (470):
``pytest -m gpu`` (the suite's GPU tests); the examples' snippet files, tt-mlir's
StableHLO snippets and a slice of openxla's StableHLO testdata (every 4th file outside
``dynamic/``) on ``--mlir-target cuda``, and on ``iree-cuda`` where that target and
IREE's packages are installed; ``examples/runs/cuda_matmul`` end to end (compile,
host_ops, launch, correctness, benchmark). Inputs are copied into a temporary folder
first (the corpus is read-only; the repository's run keeps its own history). Writes
``docs/gpu.md``: the device, pass counts per outcome kind for each step, the failures'
signatures, and the cuda run's benchmark table.

Without a CUDA device it stops at once, saying "no CUDA device" (exit code 2).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Step:
    name: str
    seconds: float = 0.0
    finished: bool = True
    exit_code: int = 0
    summary: str = ""  # pytest's last line
    items: list[dict] = field(default_factory=list)


def device_line() -> str:
    """The device, or exit 2 with "no CUDA device: <why>"."""
    from pytest_mlir_snippets.worker.targets.cuda_driver import call, chip, devices

    count, why = devices()
    if not count:
        print(f"gpu_check: no CUDA device ({why}): nothing to check on this machine")
        sys.exit(2)
    name = call("cuDeviceGetName", 256, call("cuDeviceGet", 0))
    name = name.split(b"\0")[0].decode() if isinstance(name, bytes) else str(name)
    return f"{count} device(s); device 0: {name.strip()} ({chip(0)})"


def run_pytest(step: Step, args: list[str], cwd: Path, limit: float) -> Step:
    """``pytest ARGS`` in ``cwd`` for at most ``limit`` seconds: then SIGTERM, which the
    plugin takes as Ctrl-C (its JSON is still written), and a kill 20 s later."""
    results = cwd / (re.sub(r"\W+", "_", step.name).strip("_") + ".json")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--mlir-json={results}", *args]
    start = time.perf_counter()
    proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=max(limit, 1))
    except subprocess.TimeoutExpired:
        step.finished = False
        proc.send_signal(signal.SIGTERM)
        try:
            output, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
    step.seconds = time.perf_counter() - start
    step.exit_code = proc.returncode
    lines = [line for line in output.splitlines() if line.strip()]
    step.summary = lines[-1].strip("= ") if lines else ""
    if results.exists():
        step.items = json.loads(results.read_text())["items"]
    print(f"gpu_check: {step.name}: {step.summary} ({step.seconds:.0f} s{'' if step.finished else ', cut'})",
          flush=True)
    return step


def testdata_slice(source: Path, target: Path, every: int) -> int:
    files = sorted(p for p in source.rglob("*.mlir") if "dynamic" not in p.relative_to(source).parts)
    for path in files[::every]:
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, destination)
    return len(files[::every])


def iree_cuda() -> bool:
    """Whether the iree-cuda target and IREE's packages are installed."""
    try:
        import iree.compiler
        import iree.runtime  # noqa: F401

        from pytest_mlir_snippets.worker.targets import TARGETS
    except ImportError:
        return False
    return "iree-cuda" in TARGETS


def kinds(step: Step) -> str:
    found = Counter(item["kind"] for item in step.items)
    return ", ".join(f"{kind} {n}" for kind, n in sorted(found.items())) or "no records"


def functions(step: Step) -> str:
    """Subjects (a function, an iteration) whose items all passed, of those that ran."""
    subjects: dict[str, list[str]] = {}
    for item in step.items:
        subjects.setdefault(f"{item['file']}::{item['function']}", []).append(item["kind"])
    passed = sum(all(k == "pass" for k in ks) for ks in subjects.values())
    return f"{passed} of {len(subjects)}" if subjects else "-"


def render(device: str, steps: list[Step], benchmark: str, budget: float) -> str:
    lines = ["# GPU check", "", "Written by `bash scripts/gpu_check.sh` (scripts/gpu_check.py); do not edit.", "",
             f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", f"- device: {device}",
             f"- time: {sum(s.seconds for s in steps):.0f} s of {budget:.0f} s", "",
             "| step | pytest | all items passed (functions, iterations) | items per outcome kind | seconds |",
             "|---|---|---|---|---|"]
    for s in steps:
        cut = " (cut at its time limit)" if not s.finished else ""
        lines.append(f"| {s.name} | {s.summary}{cut} | {functions(s)} | {kinds(s)} | {s.seconds:.0f} |")
    for s in steps:
        failed = [i for i in s.items if i["outcome"] == "failed"]
        if failed:
            lines += ["", f"## Failures: {s.name}", ""]
            signatures = Counter(i.get("signature") or i["message"].splitlines()[0][:120] for i in failed
                                 if i.get("signature") or i["message"])
            lines += [f"- {n} x `{sig}`" for sig, n in signatures.most_common(15)]
            lines += [f"- {i['nodeid']}: {i['kind']}" for i in failed[:10]]
    table = [("###" + line[1:] if line.startswith("# ") else line) for line in benchmark.strip().splitlines()
             if not line.startswith("![")]  # the run's own heading one level down; no picture
    lines += ["", "## examples/runs/cuda_matmul: benchmark", "", *(table or ["(no benchmark.md written)"]), ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path(os.environ.get("MLIR_SNIPPETS_CORPUS",
                                                                           ROOT.parent / "shared" / "corpus")))
    parser.add_argument("--workers", type=int, default=min(8, os.cpu_count() or 2))
    parser.add_argument("--doc", type=Path, default=ROOT / "docs" / "gpu.md")
    parser.add_argument("--budget", type=float, default=470.0, help="seconds for all the steps together")
    args = parser.parse_args()
    device = device_line()
    print(f"gpu_check: {device}", flush=True)
    deadline = time.monotonic() + args.budget
    steps: list[Step] = []
    workers = ["-n", str(args.workers)]

    def left(limit: float) -> float:
        return min(limit, deadline - time.monotonic())

    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        work = Path(tmp)
        steps.append(run_pytest(Step("pytest -m gpu"), ["-m", "gpu", "-rs", str(ROOT / "tests")], ROOT, left(100)))
        examples = work / "examples"
        examples.mkdir()
        for path in (ROOT / "examples").iterdir():
            if path.is_file():
                shutil.copy(path, examples / path.name)
        stablehlo = work / "tt-mlir-stablehlo"
        shutil.copytree(args.corpus / "tt-mlir-snippets" / "stablehlo", stablehlo)
        count = testdata_slice(args.corpus / "stablehlo-testdata", work / "testdata", 4)
        targets = ["cuda", *(["iree-cuda"] if iree_cuda() else [])]
        for target in targets:
            for name, folder, limit in (("examples", examples, 50), ("tt-mlir StableHLO", stablehlo, 50),
                                        (f"openxla testdata (every 4th: {count} files)", work / "testdata", 150)):
                if left(limit) < 10:
                    break
                steps.append(run_pytest(Step(f"{name} on {target}"), [f"--mlir-target={target}", *workers,
                                                                       str(folder)], work, left(limit)))
        run = work / "runs" / "cuda_matmul"
        shutil.copytree(ROOT / "examples" / "runs" / "cuda_matmul", run)
        if left(80) >= 10:
            steps.append(run_pytest(Step("examples/runs/cuda_matmul"), ["-rA", str(run)], work, left(80)))
        benchmark = (run / "benchmark.md").read_text() if (run / "benchmark.md").exists() else ""
        args.doc.parent.mkdir(parents=True, exist_ok=True)
        args.doc.write_text(render(device, steps, benchmark, args.budget))
    print(f"gpu_check: wrote {args.doc}")
    # 0: every step ran to its end (failed items are in the doc); 1: a step was cut or errored
    return 0 if all(s.finished and s.exit_code in (0, 1) for s in steps) else 1


if __name__ == "__main__":
    sys.exit(main())
