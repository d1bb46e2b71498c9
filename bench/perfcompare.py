"""``bench/performance.py --compare REF``: the plugin's ratios on this tree and on a git
ref, measured in one run, taking turns, so that whatever else runs on the machine slows
both alike.

REF is checked out into a temporary git worktree; each tree's commands run with
``PYTHONPATH`` at its own ``src`` (the installed entry point then loads that tree's
plugin, in pytest and in its sandbox workers) and in its own folder (its own compile
cache). Every round runs each tree's commands, the trees' order alternating, and pytest's
floor beside each tree's short commands (``tree_round``); a ratio is the quotient of
medians over the rounds. Both wall seconds
and CPU seconds (the command and all it started) are kept: on a shared machine the CPU
ratio is the steadier one, except for ``-n 2 / -n 0``, which is about wall time.

Before the rounds, each tree runs once with bytecode written (``PYTHONDONTWRITEBYTECODE``
unset for that run): Python's and pytest's caches of the plugin's modules (pytest
rewrites the modules of every ``pytest11`` plugin, and caches the result beside them)
are then there, as they are for an installed plugin and for the other plugins the
floor loads; a machine that sets ``PYTHONDONTWRITEBYTECODE`` would otherwise charge
only the plugin, in every run, for compiling its sources.

All plugin runs are compile-only (``--mlir-skip-exec``) with one explicit
``--mlir-pipeline`` (the cpu target's pipeline as one string, as the ``mlir-opt`` baseline
runs it); the serial loop and ``mlir-opt`` run that pipeline too.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from performance import FLOOR, LOOP, ROOT, mlir_opt, one_pipeline, opt_per_function, snippet_file

# (name, how it reads, this/ref goal): a ratio of two measurements, "a / b"
RATIOS = [
    ("collect / floor collect", "--collect-only / floor", 1.2),
    ("cold -n 0 / loop", "cold -n 0 / serial in-process loop", 0.55),
    ("cold -n 2 / cold -n 0", "-n 2 / -n 0 (cold)", 0.55),
    ("warm -n 0 / floor run", "warm cache / floor run", 1.3),
    ("mlir-opt / cold -n 0", "mlir-opt per function / plugin -n 0", 5.0),
]


def run(cmd: list[str], cwd: Path, env: dict[str, str], check: bool = True) -> tuple[float, float]:
    """(wall, CPU) seconds of ``cmd``, CPU counting every process it started and waited for;
    ``check``: a failing command ends the benchmark."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if check and done.returncode != 0:
        tail = done.stdout.decode(errors="replace")[-2000:]
        raise SystemExit(f"{' '.join(cmd)} in {cwd} failed ({done.returncode}):\n{tail}")
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def tree_env(src: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def prepare(folder: Path, n: int) -> None:
    folder.mkdir(parents=True)
    (folder / "ops.mlir").write_text(snippet_file(n))
    (folder / "loop.py").write_text(LOOP)
    for name, lines in (("floor", n), ("floor_half", n // 2)):  # 2N items (collect), N (compile-only runs)
        (folder / name).mkdir()
        (folder / name / "conftest.py").write_text(FLOOR)
        (folder / name / "ops.items").write_text("".join(f"f_{i}\n" for i in range(lines)))


def tree_round(folder: Path, floor: Path, env: dict[str, str], pipeline: str,
               repeat: int = 3) -> dict[str, tuple[float, float]]:
    """One round of a tree's measurements. The short commands (about a second) run next
    to the floor command they are compared with, taking turns ``repeat`` times, and keep
    the fastest of each (as ``timeit`` does): a share of the machine that changes between
    a run and its floor, seconds apart, would otherwise move their ratio more than the
    plugin does."""
    pytest = [sys.executable, "-m", "pytest", "-q", f"--mlir-pipeline={pipeline}"]
    compile_only = [*pytest, "--mlir-skip-exec", "ops.mlir"]
    floor_cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:mlir_snippets"]
    pairs = {"floor collect": ([*floor_cmd, "--collect-only", "floor"], floor),
             "collect": ([*pytest, "--collect-only", "ops.mlir"], folder),
             "floor run": ([*floor_cmd, "floor_half"], floor),
             "warm -n 0": ([*compile_only, "-n", "0"], folder)}
    best: dict[str, tuple[float, float]] = {}
    for _ in range(repeat):
        for key, (cmd, cwd) in pairs.items():
            wall, cpu = run(cmd, cwd, env)
            previous = best.get(key, (float("inf"), float("inf")))
            best[key] = (min(previous[0], wall), min(previous[1], cpu))
    return {
        **best,
        "cold -n 0": run([*compile_only, "--mlir-no-cache", "-n", "0"], folder, env),
        "cold -n 2": run([*compile_only, "--mlir-no-cache", "-n", "2"], folder, env),
        "loop": run([sys.executable, "loop.py", "ops.mlir", pipeline], folder, env),
    }


def ratio(name: str, m: dict[str, float]) -> float:
    a, b = name.split(" / ")
    return m[a] / m[b]


@contextmanager
def ref_tree(ref: str, work: Path) -> Iterator[Path]:
    """``ref`` checked out in a detached git worktree under ``work``, removed afterwards."""
    checkout = work / "ref-tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(checkout), ref], check=True,
                   stdout=subprocess.DEVNULL)
    try:
        yield checkout
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(checkout)], check=False)
        shutil.rmtree(checkout, ignore_errors=True)


def measure_trees(trees: dict[str, Path], n: int, rounds: int, opt_size: int, work: Path) -> tuple[
        dict[str, dict[str, list[tuple[float, float]]]], tuple[float, float] | None]:
    """Each tree's samples (wall, CPU) by measurement, ``rounds`` rounds taking turns (the
    order alternating), and ``mlir-opt`` per function scaled to ``n`` (None without it)."""
    pipeline = one_pipeline()
    for name in (*trees, "floor"):
        prepare(work / name, n)
    envs = {name: tree_env(src) for name, src in trees.items()}
    for name in trees:  # fill each tree's compile cache for the warm runs, and its bytecode caches
        writing = {k: v for k, v in envs[name].items() if k != "PYTHONDONTWRITEBYTECODE"}
        run([sys.executable, "-m", "pytest", "-q", f"--mlir-pipeline={pipeline}", "--mlir-skip-exec",
             "-n", "0", "ops.mlir"], work / name, writing)
    samples: dict[str, dict[str, list[tuple[float, float]]]] = {name: {} for name in trees}
    names = list(trees)
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            measured = tree_round(work / name, work / "floor", envs[name], pipeline)
            for key, value in measured.items():
                samples[name].setdefault(key, []).append(value)
        print(f"round {r + 1}/{rounds} done", flush=True)
    tool = mlir_opt()
    if not tool:
        return samples, None
    count = min(n, opt_size)
    (work / "opt").mkdir()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = opt_per_function(work / "opt", (work / "floor" / "ops.mlir").read_text(), count, tool)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return samples, (wall * n / count, cpu * n / count)


def medians(samples: dict[str, list[tuple[float, float]]]) -> dict[str, tuple[float, float]]:
    """(wall, CPU) medians over the rounds, by measurement."""
    return {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in samples.items()}


def ratios(med: dict[str, tuple[float, float]], opt: tuple[float, float] | None) -> dict[str, tuple[float, float]]:
    """Each of ``RATIOS`` as (wall, CPU) from one tree's medians."""
    found = {}
    for name, _, _ in RATIOS:
        if name.startswith("mlir-opt") and opt is None:
            continue
        walls = {**{k: v[0] for k, v in med.items()}, **({"mlir-opt": opt[0]} if opt else {})}
        cpus = {**{k: v[1] for k, v in med.items()}, **({"mlir-opt": opt[1]} if opt else {})}
        found[name] = (ratio(name, walls), ratio(name, cpus))
    return found


def compare(ref: str, n: int, rounds: int, opt_size: int, save: Path | None = None) -> None:
    """This tree against git ``ref``, taking turns; ``save``: this tree's figures written
    there as a baseline (``perfbaseline.py``)."""
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="perfcompare-") as tmp:
        work = Path(tmp)
        with ref_tree(ref, work) as checkout:
            samples, opt = measure_trees({"this": ROOT / "src", "ref": checkout / "src"}, n, rounds, opt_size, work)
    report(ref, n, rounds, samples, opt)
    if save is not None:
        from perfbaseline import save_baseline

        save_baseline(save, n, rounds, samples["this"], opt, load_before)


def report(ref: str, n: int, rounds: int, samples: dict[str, dict[str, list[tuple[float, float]]]],
           opt: tuple[float, float] | None) -> None:
    print(f"\n{n} functions, {rounds} rounds; this tree ({ROOT}) against {ref}; medians, seconds (wall / CPU)\n")
    print("| measurement | this wall | ref wall | this CPU | ref CPU |\n|---|---|---|---|---|")
    for key in samples["this"]:
        t, r = samples["this"][key], samples["ref"][key]
        print(f"| {key} | {statistics.median(w for w, _ in t):.2f} | {statistics.median(w for w, _ in r):.2f} "
              f"| {statistics.median(c for _, c in t):.2f} | {statistics.median(c for _, c in r):.2f} |")
    if opt:
        print(f"| mlir-opt per function (scaled to {n}) | {opt[0]:.2f} | | {opt[1]:.2f} | |")
    this, base = ratios(medians(samples["this"]), opt), ratios(medians(samples["ref"]), opt)
    print_ratios(this, base, "ref")


def print_ratios(this: dict[str, tuple[float, float]], base: dict[str, tuple[float, float]], other: str) -> None:
    """The ratios of this tree and of ``other`` (ref, baseline), and their quotients."""
    print(f"\n| ratio | goal | this (wall) | {other} (wall) | this/{other} (wall) | this (CPU) | {other} (CPU) "
          f"| this/{other} (CPU) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, label, goal in RATIOS:
        if name not in this or name not in base:
            continue
        cells = [f"{this[name][c]:.2f} | {base[name][c]:.2f} | {this[name][c] / base[name][c]:.3f}" for c in (0, 1)]
        sign = ">=" if name.startswith("mlir-opt") else "<="
        print(f"| {label} | {sign} {goal} | {cells[0]} | {cells[1]} |")
    print(f"\nthis/{other} below 1 is an improvement, except for mlir-opt per function / plugin (higher is "
          "better); -n 2 / -n 0 is about wall time (its CPU ratio is not a goal).")
