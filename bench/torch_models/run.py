"""The cpu starting point of an optimization run on common PyTorch modules: each model of
``models.py`` imported (``mlir-snippets import-torch``), given ``new-iteration``'s v0, and
checked (``v0[compile]``, ``v0[correctness]`` against PyTorch's outputs), one pytest run.

    python bench/torch_models/run.py [OUTDIR] [-k NAMES]

Prints each model's outcome and the seconds the import and the run took."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# every factory of models.py; rfft is one torch-mlir cannot import (its error is one line)
MODELS = ("gelu_mlp", "mha", "sdpa", "encoder", "layernorm", "conv_bn", "lstm", "lstm_tuple", "gru", "softmax",
          "misc", "groupnorm", "embedding", "maxpool", "rfft")


def prepare(out: Path, names: list[str]) -> dict[str, str]:
    """Each model imported into ``out/NAME`` with v0 started; the import's error where it fails."""
    from pytest_mlir_snippets.tools.new_iteration import new_iteration
    from pytest_mlir_snippets.tools.torch_import import TorchImportError, import_torch

    failed = {}
    for name in names:
        try:
            import_torch(f"{HERE / 'models.py'}:{name}", out / name)
        except TorchImportError as error:
            failed[name] = str(error)
            continue
        new_iteration(out / name)
        (out / name / "v0" / "hypothesis.txt").write_text("the starting point\n")
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", nargs="?", type=Path)
    parser.add_argument("-k", dest="names", help="comma-separated models (default: all)")
    args = parser.parse_args()
    names = args.names.split(",") if args.names else list(MODELS)
    out = args.outdir or Path(tempfile.mkdtemp(prefix="torch-models-"))
    start = time.perf_counter()
    failed = prepare(out, names)
    imported = time.perf_counter()
    for name, why in failed.items():
        print(f"{name}: import-torch: {why}")
    runs = [str(out / name) for name in names if name not in failed]
    result = subprocess.run([sys.executable, "-m", "pytest", *runs, "-q", "-n", "0", "-p", "no:cacheprovider",
                             "-k", "v0 and (compile or correctness)", "-rfEs"], check=False)
    print(f"{len(names)} models in {out}: import {imported - start:.0f} s, "
          f"compile and correctness {time.perf_counter() - imported:.0f} s")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
