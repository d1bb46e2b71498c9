"""``bench/performance.py --compare BASELINE.json``: this tree's ratios against a baseline
checked in beside it (``bench/baseline*.json``), so that a change shows its cost without a
second tree measured in the same run.

A baseline holds one tree's medians (wall and CPU seconds) and ratios, measured as
``--compare REF`` measures a tree (``perfcompare.tree_round``), with the machine they were
measured on (cores, load average before and after) and the commit. Only ratios travel
between machines: each is a quotient of two commands of the same run (the plugin against
pytest's floor, the serial loop, ``mlir-opt``), so a slower machine or a busier one moves
both sides. CPU ratios are the steadier ones on a shared machine.

    python bench/performance.py --compare REF --sizes 1000 --save-baseline bench/baseline.json
    python bench/performance.py --compare bench/baseline.json     # its size, unless --sizes
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from perfcompare import measure_trees, medians, print_ratios, ratios
from performance import ROOT

VERSION = 1


def save_baseline(path: Path, n: int, rounds: int, samples: dict[str, list[tuple[float, float]]],
                  opt: tuple[float, float] | None, load_before: float | None = None) -> None:
    """One tree's figures as a baseline file."""
    med = medians(samples)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    data = {
        "version": VERSION, "functions": n, "rounds": rounds, "date": time.strftime("%Y-%m-%d %H:%M"),
        "commit": commit, "cores": os.cpu_count(),
        "load_average": {"before": load_before, "after": os.getloadavg()[0]},
        "medians": {k: {"wall": round(w, 3), "cpu": round(c, 3)} for k, (w, c) in med.items()},
        "mlir_opt": {"wall": round(opt[0], 3), "cpu": round(opt[1], 3)} if opt else None,
        "ratios": {k: {"wall": round(w, 4), "cpu": round(c, 4)} for k, (w, c) in ratios(med, opt).items()},
    }
    path.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {path}")


def load(path: Path) -> dict[str, tuple[float, float]]:
    """A baseline's ratios as (wall, CPU); SystemExit when the file is no baseline."""
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise SystemExit(f"{path}: not a baseline of version {VERSION}")
    return {k: (float(v["wall"]), float(v["cpu"])) for k, v in data["ratios"].items()}


def compare_baseline(path: Path, n: int | None, rounds: int, opt_size: int, save: Path | None = None) -> None:
    """This tree measured now, its ratios against ``path``'s; at the baseline's size unless ``n``."""
    data = json.loads(path.read_text())
    base = load(path)
    size = n or int(data["functions"])
    if size != data["functions"]:
        print(f"note: the baseline was measured at {data['functions']} functions, this run at {size}")
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="perfbaseline-") as tmp:
        samples, opt = measure_trees({"this": ROOT / "src"}, size, rounds, opt_size, Path(tmp))
    this = ratios(medians(samples["this"]), opt)
    print(f"\n{size} functions, {rounds} rounds; this tree against {path} (commit {data.get('commit')}, "
          f"{data.get('date')}, load {data.get('load_average')}); load average now {load_before:.1f} -> "
          f"{os.getloadavg()[0]:.1f}")
    print_ratios(this, base, "baseline")
    if save is not None:
        save_baseline(save, size, rounds, samples["this"], opt, load_before)
