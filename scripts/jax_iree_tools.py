"""IREE's own tools on the JAX corpus: ``iree-compile`` (llvm-cpu) and ``iree-run-module``
with the sidecar's inputs and its outputs as ``--expected_output`` (IREE's own comparison
and thresholds), to compare with what the plugin's iree-cpu target passes.

    python scripts/jax_iree_tools.py [--corpus tests/data/jax] [--json out.json]

Prints one line per failing function (its stage and the tool's first error line) and the
pass count.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
_TYPES = {"float32": "f32", "float16": "f16", "int8": "i8", "int32": "i32", "int64": "i64", "uint8": "ui8",
          "uint32": "ui32", "bool": "i1", "complex64": "c64"}


def _element(array: np.ndarray, declared: str) -> str:
    return "bf16" if declared == "bf16" else _TYPES[array.dtype.name]


def _declared(text: str) -> tuple[list[str], list[str]]:
    """The element types of @main's arguments and results as the module writes them."""
    import re

    head = text[text.index("func.func public @main("):]
    head = head[:head.index("{\n")]
    args, _, results = head.partition(") -> ")
    element = re.compile(r"tensor<(?:[\d?]+x)*([a-z0-9<>]+?)>")
    return element.findall(args), element.findall(results)


def _spec(array: np.ndarray, element: str, folder: Path, name: str) -> str:
    if array.dtype.kind == "c":  # iree-run-module reads no complex element type, but .npy files
        np.save(folder / f"{name}.npy", array)
        return f"@{folder / name}.npy"
    shape = "x".join(str(d) for d in array.shape)
    path = folder / f"{name}.bin"
    path.write_bytes(np.ascontiguousarray(array).tobytes())
    return f"{shape}x{element}=@{path}" if shape else f"{element}=@{path}"


def run_one(mlir: Path, tools: Path, work: Path) -> tuple[str, str]:
    vmfb = work / f"{mlir.stem}.vmfb"
    compiled = subprocess.run([str(tools / "iree-compile"), str(mlir), "--iree-hal-target-device=local",
                               "--iree-hal-local-target-device-backends=llvm-cpu", "-o", str(vmfb)],
                              capture_output=True, text=True, timeout=300)
    if compiled.returncode:
        return "compile-error", _first_error(compiled.stderr)
    data = np.load(mlir.with_name(f"{mlir.stem}.main.npz"))
    arg_types, result_types = _declared(mlir.read_text())
    flags = [f"--input={_spec(data[k], _element(data[k], t), work, f'{mlir.stem}_{k}')}"
             for k, t in zip(sorted((k for k in data.files if k.startswith("input_")), key=lambda k: int(k[6:])),
                             arg_types)]
    flags += [f"--expected_output={_spec(data[k], _element(data[k], t), work, f'{mlir.stem}_{k}')}"
              for k, t in zip(sorted((k for k in data.files if k.startswith("output_")), key=lambda k: int(k[7:])),
                              result_types)]
    ran = subprocess.run([str(tools / "iree-run-module"), f"--module={vmfb}", "--device=local-task",
                          "--function=main", *flags], capture_output=True, text=True, timeout=300)
    if ran.returncode:
        return "execute-error" if "[FAILED]" not in ran.stdout else "golden-mismatch", _first_error(
            ran.stderr + ran.stdout)
    return "pass", ""


def _first_error(text: str) -> str:
    lines = [line for line in text.splitlines() if "error" in line.lower() or "FAILED" in line]
    return (lines or text.splitlines() or [""])[0][:200]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT / "tests" / "data" / "jax")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    tools = Path(shutil.which("iree-compile") or Path(sys.executable).parent / "iree-compile").parent
    verdicts = {}
    with tempfile.TemporaryDirectory() as work:
        for mlir in sorted(args.corpus.glob("*.mlir")):
            verdicts[mlir.stem] = run_one(mlir, tools, Path(work))
            if verdicts[mlir.stem][0] != "pass":
                print(f"{mlir.stem:32s} {verdicts[mlir.stem][0]:16s} {verdicts[mlir.stem][1]}", flush=True)
    passed = sum(v[0] == "pass" for v in verdicts.values())
    print(f"IREE's own tools: {passed} of {len(verdicts)} pass")
    if args.json:
        args.json.write_text(json.dumps(verdicts, indent=1) + "\n")


if __name__ == "__main__":
    main()
