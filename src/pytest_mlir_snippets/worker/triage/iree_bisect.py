"""``--mlir-bisect`` on iree-cpu: which ``--compile-to`` phase of IREE's compiler made a
golden-mismatch's results wrong.

A cut after phase k: the installed ``iree-compile`` compiles the snippet with the item's
flags up to that phase (``--compile-to=k``), then compiles that output on with the
target's plain flags (``--compile-from=k``: the device flags alone, none of an IREE
config's, at ``--iree-opt-level=O0``); the worker runs the module on the item's inputs
and judges it against the item's golden, computed once. The cut right after import is
the plain compile of the snippet; the last, after ``vm``, is the item's whole compile.
``worker/triage/bisect.py`` searches the phases, as it does the cpu target's passes:
``front-end`` when even the plain compile differs.
"""

from __future__ import annotations

import copy
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Protocol

import numpy as np

from pytest_mlir_snippets.mlirtext.native import native_tool
from pytest_mlir_snippets.protocol import Options, Recorded, Triage
from pytest_mlir_snippets.worker.core import Compiled, Reference
from pytest_mlir_snippets.worker.judging.judge import run_inputs
from pytest_mlir_snippets.worker.targets.iree_commands import DEVICE_FLAGS, KEEP_ABI, compile_commands
from pytest_mlir_snippets.worker.targets.iree_runtime import Program
from pytest_mlir_snippets.worker.triage import bisect as search

# iree-compile's phases, in order (`iree-compile --help`: --compile-to); start and end left out
PHASES = ("input", "abi", "preprocessing", "global-optimization", "dispatch-creation", "flow", "stream",
          "executable-sources", "executable-configurations", "executable-targets", "hal", "vm")
PLAIN = ("--iree-opt-level=O0",)
CUT_TIMEOUT = 120.0  # seconds for one cut's two compiles


class IreeLike(Protocol):
    """What a bisection uses of ``targets.iree.IreeBackend`` (which calls it: no import of it here)."""

    def compile(self, module: str, function: str, options: Options,
                constants: Mapping[int, np.ndarray] | None = None) -> Compiled: ...
    def ready(self, device_id: int | None) -> None: ...
    def flags(self, options: Options) -> list[str]: ...
    def verbatim(self, options: Options) -> bool: ...
    def target_flags(self, options: Options) -> list[str]: ...
    def reference(self, compiled: Compiled, options: Options, inputs: list[np.ndarray]) -> Reference: ...
    def run(self, compiled: Compiled, inputs: list[np.ndarray], options: Options) -> list[np.ndarray]: ...


def plain_flags(backend: IreeLike, options: Options) -> list[str]:
    """The flags of a cut's rest: the device's, nothing else a config gives."""
    if backend.verbatim(options):
        own = [f for f in options.iree_compile_flags if f.split("=", 1)[0] in DEVICE_FLAGS]
    else:
        own = [*backend.target_flags(options), *KEEP_ABI]
    return [*own, *PLAIN]


def cut_vmfb(folder: Path, module: str, item: list[str], plain: list[str], route: str, k: int,
             deadline: float | None = None) -> bytes | None:
    """The module of the cut after ``PHASES[k]`` (-1: the plain compile alone), compiled in
    ``folder``; None when a compile fails or runs past ``deadline`` (``time.monotonic()``)."""
    (folder / "snippet.mlir").write_text(module)
    tool = native_tool
    if k < 0:
        commands = compile_commands(plain, route, "cut.vmfb", tool)
    else:
        *head, last = compile_commands(item, route, "cut.mlir", tool)
        phase = PHASES[k]
        commands = [*head, [*last, f"--compile-to={phase}"],
                    [tool("iree-compile"), "cut.mlir", *plain, f"--compile-from={phase}", "-o", "cut.vmfb"]]
    for command in commands:
        left = CUT_TIMEOUT if deadline is None else min(CUT_TIMEOUT, max(1.0, deadline - time.monotonic()))
        try:
            done = subprocess.run(command, cwd=folder, capture_output=True, timeout=left, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode != 0:
            return None
    return (folder / "cut.vmfb").read_bytes()


def bisect(backend: IreeLike, module_text: str, function: str, options: Options,
           golden: Recorded | None) -> Triage:
    """``diverged_after`` (a phase, ``front-end`` or ``translation``) and the cuts tried."""
    compiled = backend.compile(module_text, function, replace(options, skip_exec=True))
    backend.ready(options.device_id)
    module, route = compiled.kept.source, compiled.facts.iree_route or "none"
    item, plain = backend.flags(options), plain_flags(backend, options)
    judged = search.cut_verdicts(options, golden, lambda _cut, given: backend.reference(compiled, options, given),
                                 run_inputs(compiled, options, golden))

    def run(cut: Compiled, inputs: list[np.ndarray]) -> list[np.ndarray]:
        return backend.run(cut, [np.array(v, copy=True) for v in inputs], options)

    def verdict(k: int) -> bool | None:
        with tempfile.TemporaryDirectory(prefix="mlir-iree-bisect-") as folder:
            vmfb = cut_vmfb(Path(folder), module, item, plain, route, k, options.deadline)
        cut = None if vmfb is None else Compiled(compiled.ir, compiled.function, compiled.signature,
                                                   Program(vmfb), compiled.facts, copy.copy(compiled.kept))
        return judged(cut, run)

    return search.search(list(PHASES), verdict, options.deadline)
