"""Optimization runs (SPEC 6): a folder with ``model_linalg.mlir`` and ``v0/``, ``v1/``, ...

Each iteration is a set of items on the run's ``model_linalg.mlir`` node, so that
``-k v3`` selects one iteration: ``run/model_linalg.mlir::v3[contract]`` and ``::v3[compile]``. So far the
contract and the compile (writing ``vN/gpu.mlir`` and ``vN/config.json``) are
checked; host_ops, launch, correctness and benchmark items come next (issue 6).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .failures import STDERR_MARKER, ItemFailure, MlirFailureRepr, skip
from .protocol import Kind, Request, Response
from .recorded import load_recorded
from .splitter import SnippetSource
from .state import run_state

MODEL = "model_linalg.mlir"
WRITTEN_BY_THE_ENGINEER = ("transform.mlir", "pass_pipeline.txt", "hypothesis.txt")
_ITERATION = re.compile(r"^v(\d+)$")
STAGES = ("contract", "compile", "correctness")


def is_run_model(path: Path) -> bool:
    return path.name == MODEL and (path.parent / "v0").is_dir()


def iterations(run: Path) -> list[Path]:
    found = [p for p in run.iterdir() if p.is_dir() and _ITERATION.match(p.name)]
    return sorted(found, key=lambda p: int(p.name[1:]))


class OptimizationRun(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        for folder in iterations(self.path.parent):
            for stage in STAGES:
                yield IterationItem.from_parent(self, name=f"{folder.name}[{stage}]", folder=folder, stage=stage)


class IterationItem(pytest.Item):
    def __init__(self, *, folder: Path, stage: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.folder = folder
        self.stage = stage
        self.kind: Kind | None = None
        self.user_properties.append(("mlir_run_stage", stage))  # not a snippet: run reports leave it out

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.folder, 0, self.name

    def runtest(self) -> None:
        if self.stage == "contract":
            self._contract()
        elif self.stage == "compile":
            self._compile()
        else:
            self._correctness()

    def _missing(self) -> list[str]:
        return [name for name in WRITTEN_BY_THE_ENGINEER if not (self.folder / name).is_file()]

    def _request(self, op: str) -> Request:
        missing = self._missing()
        if missing:
            skip(f"contract not met: {', '.join(missing)} missing")
        manager = run_state(self.config).device_manager()
        model = self.path.read_text()
        functions = SnippetSource(model).functions
        return Request(op, model, functions[0].name if functions else "", manager.options(), attachments={
            "schedule": (self.folder / "transform.mlir").read_text(),
            "pipeline": (self.folder / "pass_pipeline.txt").read_text()})

    def _correctness(self) -> None:
        """The iteration run against the reference: recorded outputs (PyTorch's, from
        ``mlir-snippets import-torch``) when the run has them, else the model on the cpu target."""
        request = self._request("iteration-execute")
        if not request.function:
            raise ItemFailure(Response(Kind.COMPILE_ERROR, f"{MODEL} has no public function"))
        request.golden = load_recorded(self.path, request.function, 1)
        response = run_state(self.config).device_manager().call(request)
        self.kind = response.kind
        if not response.ok:
            raise ItemFailure(response)
        self.user_properties += [(f"mlir_{k}", v) for k, v in response.metrics.items()]
        self.user_properties.append(("mlir_reference", response.info.get("reference", "")))

    def _compile(self) -> None:
        """Model + schedule (transform interpreter) + pass_pipeline.txt give vN/gpu.mlir and vN/config.json."""
        request = self._request("iteration")
        settings = run_state(self.config).settings
        response = run_state(self.config).device_manager().call(request)
        self.kind = response.kind
        if response.ir is not None:
            (self.folder / "gpu.mlir").write_text(response.ir)
        config = {"target": settings.target, "status": response.kind.value,
                  "host_ops": response.info.get("host_ops", []), "kernels": []}
        (self.folder / "config.json").write_text(json.dumps(config, indent=1) + "\n")
        if not response.ok:
            raise ItemFailure(response)

    def _contract(self) -> None:
        problems = [f"{self.folder.name}/{name} is missing" for name in self._missing()]
        hypothesis = self.folder / "hypothesis.txt"
        if hypothesis.is_file() and not hypothesis.read_text().strip():
            problems.append(f"{self.folder.name}/hypothesis.txt is empty")
        response = Response(Kind.PASS)
        schedule = self.folder / "transform.mlir"
        if schedule.is_file():
            manager = run_state(self.config).device_manager()
            response = manager.call(Request("schedule", schedule.read_text(), "", manager.options()))
            if not response.ok:
                problems.append(f"{self.folder.name}/transform.mlir: {response.message}")
        self.kind = Kind.PASS if not problems else (response.kind if not response.ok else Kind.COMPILE_ERROR)
        if problems:
            raise ItemFailure(Response(self.kind, "contract: " + "; ".join(problems), response.diagnostics,
                                       stderr=response.stderr))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ItemFailure):
            response = excinfo.value.response
            lines = [f"{response.kind.value}: {self.folder} [{self.stage}]", response.message]
            source = self.folder / "transform.mlir" if self.stage == "contract" else self.path
            lines += [f"{source}{f':{d.line}:{d.column}' if d.line else ''}: {d.severity}: {d.message}"
                      for d in response.diagnostics]
            if response.stderr.strip():
                lines += [STDERR_MARKER, response.stderr.rstrip()]
            return MlirFailureRepr("\n".join(lines))
        return super().repr_failure(excinfo)
