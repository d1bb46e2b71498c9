"""The commands of IREE's tools that compile a snippet as an iree target's item did: the
target's ``iree-compile.sh``, a failed execute's ``reproduce.sh`` (``iree_driver.py``) and
the cuts of ``--mlir-bisect`` (``iree_bisect.py``)."""

from __future__ import annotations

from collections.abc import Callable

from pytest_mlir_snippets.worker.targets.iree_compiler import ONNX_TO_TORCH


def compile_commands(flags: list[str], route: str, vmfb: str,
                     tool: Callable[[str], str] = str) -> list[list[str]]:
    """The commands that compile ``snippet.mlir`` to ``vmfb`` as an item did (the onnx
    route: ``iree-opt`` first); ``tool`` names each tool's executable."""
    own_type = any(f.startswith("--iree-input-type=") for f in flags)
    if route.startswith("onnx via") and not own_type:
        pipeline = f"--pass-pipeline=builtin.module({ONNX_TO_TORCH})"
        return [[tool("iree-opt"), "snippet.mlir", pipeline, "-o", "snippet.torch.mlir"],
                [tool("iree-compile"), "snippet.torch.mlir", *flags, "--iree-input-type=torch", "-o", vmfb]]
    kind = route.split()[0]
    extra = [] if own_type or kind == "none" else [f"--iree-input-type={kind}"]
    return [[tool("iree-compile"), "snippet.mlir", *flags, *extra, "-o", vmfb]]
