"""The layout of an optimization run (SPEC 6): a folder with ``model_linalg.mlir`` and
``v0/``, ``v1/``, ...; which files the engineer writes, which stages each target checks.
Pure: no pytest, no MLIR.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import re
from pathlib import Path

from pytest_mlir_snippets.registry import TARGETS

MODEL = "model_linalg.mlir"
REFERENCE = "reference.py"  # a PyTorch reference: the run also gets pytorch[benchmark]
WRITTEN_BY_THE_ENGINEER = ("transform.mlir", "pass_pipeline.txt", "hypothesis.txt")
# target -> its optimization runs' stages, from the registry (registry.py)
STAGES = {name: target.run_stages for name, target in TARGETS.items() if target.run_stages}
CHECKS = ("contract", "compile", "host_ops", "launch")  # what must pass before an iteration can be best
_ITERATION = re.compile(r"^v(\d+)$")
_TARGET_LINE = re.compile(r"^\s*[-*]?\s*target\s*:\s*`?(\w+)`?", re.IGNORECASE | re.MULTILINE)


def is_run_model(path: Path) -> bool:
    return path.name == MODEL and (path.parent / "v0").is_dir()


def in_optimization_run(file_path: Path) -> bool:
    """Inside an optimization run directory (``model_linalg.mlir`` beside ``v0/``): its
    files belong to the run's own items, not to snippet collection."""
    return any((folder / MODEL).is_file() and (folder / "v0").is_dir()
               for folder in (file_path.parent, file_path.parent.parent))


def is_iteration(name: str) -> bool:
    return _ITERATION.match(name) is not None


def iterations(run: Path) -> list[Path]:
    found = [p for p in run.iterdir() if p.is_dir() and is_iteration(p.name)]
    return sorted(found, key=lambda p: int(p.name[1:]))


def declared_target(run: Path) -> str:
    """The run's own target: a ``target: NAME`` line in its ``env_check.md``, else cpu."""
    env = run / "env_check.md"
    m = _TARGET_LINE.search(env.read_text(errors="replace")) if env.is_file() else None
    return m.group(1).lower() if m else "cpu"


def compiled_ir(target: str) -> str:
    """The file (in ``vN/``) an iteration's [compile] writes its final IR to: ``llvm.mlir`` on
    cpu (the LLVM dialect, the weights as globals), ``gpu.mlir`` on cuda."""
    return TARGETS[target].run_ir if target in TARGETS else "gpu.mlir"


def missing_files(folder: Path) -> list[str]:
    return [name for name in WRITTEN_BY_THE_ENGINEER if not (folder / name).is_file()]


def matmul_like(model: Path) -> bool:
    """Whether a run's model is a matmul or convolution (its PTX may then use MMA)."""
    text = model.read_text(errors="replace")
    return any(name in text for name in ("linalg.matmul", "linalg.batch_matmul", "linalg.matvec", "linalg.conv"))
