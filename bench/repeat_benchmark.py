"""How repeatable is an optimization-run benchmark? Run one iteration's benchmark
item several times (each a fresh pytest and sandbox) and print the spread of medians.

    python bench/repeat_benchmark.py [--run examples/runs/cpu_mlp] [--iteration v1] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, default=ROOT / "examples" / "runs" / "cpu_mlp")
    parser.add_argument("--iteration", default="v1")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--bench-time", type=float, default=1.0)
    args = parser.parse_args()
    medians = []
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / args.run.name
        shutil.copytree(args.run, run)
        for _ in range(args.repeat):
            subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(run), "-k",
                            f"{args.iteration} and benchmark", f"--mlir-bench-time={args.bench_time}"],
                           cwd=tmp, check=True, stdout=subprocess.DEVNULL)
            text = (run / args.iteration / "benchmark.md").read_text()
            data = json.loads(text.split("```json\n")[1].split("\n```")[0])
            medians.append(data["median_ms"])
            print(f"median {data['median_ms']:.4f} ms (p20 {data['p20_ms']:.4f}, p80 {data['p80_ms']:.4f}, "
                  f"{int(data['samples'])} samples)")
    spread = (max(medians) - min(medians)) / min(medians)
    print(f"{args.run.name}/{args.iteration}: {args.repeat} runs, medians {min(medians):.4f}..{max(medians):.4f} ms, "
          f"spread {100 * spread:.1f}% of the smallest")


if __name__ == "__main__":
    main()
