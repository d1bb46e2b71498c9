"""What an optimization run's iteration's ``[compile]`` writes (``items/iteration.py``): in
``vN/``, the final IR (``vN/llvm.mlir`` on cpu, ``vN/gpu.mlir`` on cuda), ``kernels.ptx``
(when the pipeline makes a GPU binary) and ``config.json``; for another target than the
run's own, each with the target in its name (``vN/config.cpu.json``), as the benchmark
tables do, so that one target's compile never rewrites another's; and, under the output
root, a failed or crashed compile's reproducer, as a snippet's (``triage/reproducer.py``).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from pytest_mlir_snippets.model.layout import compiled_ir, declared_target, matmul_like
from pytest_mlir_snippets.paths import artifact_dir, write_atomic
from pytest_mlir_snippets.protocol import IterationFacts, Kind, Response
from pytest_mlir_snippets.triage import reproducer

MMA = ("mma.sync", "wgmma")


@dataclass(frozen=True)
class IterationFiles:
    folder: Path  # vN/
    model: Path  # the run's model_linalg.mlir
    target: str

    @property
    def suffix(self) -> str:
        """"" for the run's own target, else ``.TARGET``."""
        return "" if self.target == declared_target(self.folder.parent) else f".{self.target}"

    @property
    def ir_file(self) -> Path:
        stem, _, ext = compiled_ir(self.target).rpartition(".")
        return self.folder / f"{stem}{self.suffix}.{ext}"

    def write(self, response: Response) -> None:
        """The compile's files in ``vN/``; an iteration with a GPU binary gets which MMA
        instructions its PTX uses (``response.iteration.mma``)."""
        if response.ir is not None:
            write_atomic(self.ir_file, response.ir)
        ptx = response.facts.ptx if response.facts else ""
        if ptx:
            write_atomic(self.folder / f"kernels{self.suffix}.ptx", ptx)
        found = response.iteration or IterationFacts()
        config: dict[str, Any] = {"target": self.target, "status": response.kind.value,
                                  "host_ops": [asdict(op) for op in found.host_ops or []],
                                  "kernels": [asdict(k) for k in found.kernels or []]}
        if ptx:
            config["ptx"] = {name: name in ptx for name in MMA} | {"matmul_like": matmul_like(self.model)}
            response.iteration = replace(found, mma=", ".join(n for n in MMA if n in ptx) or "none")
        write_atomic(self.folder / f"config{self.suffix}.json", json.dumps(config, indent=1) + "\n")

    def reproducer(self, response: Response, output_root: Path, rootdir: Path, title: str) -> Path | None:
        """A failed or crashed compile's ``reproduce.sh`` (the failing pass on the IR it was
        given) in ``<output root>/ops_mlir_snippets/<run>/model_linalg.mlir/vN/<target>/``;
        an earlier one removed once the compile passes."""
        where = artifact_dir(output_root, self.model, self.folder.name, self.target, rootdir)
        if response.kind not in (Kind.COMPILE_ERROR, Kind.CRASH):
            reproducer.remove(where)
            return None
        return reproducer.write(where, response, title)
