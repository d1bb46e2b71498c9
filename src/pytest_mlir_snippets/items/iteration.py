"""Optimization runs (SPEC 6): a folder with ``model_linalg.mlir`` and ``v0/``, ``v1/``, ...

Each iteration is a set of items on the run's ``model_linalg.mlir`` node, so that
``-k v3`` selects one iteration: ``run/model_linalg.mlir::v3[contract]``, ``[compile]``,
(cuda: ``[host_ops]``, ``[launch]``), ``[correctness]``, ``[benchmark]``; a run with a
``reference.py`` also gets ``pytorch[benchmark]`` (PyTorch eager and ``torch.compile``).
The run's target is ``--mlir-target`` when given, else a ``target: NAME`` line in its
``env_check.md``, else cpu. ``runreport`` writes the tables when the session ends.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_mlir_snippets.items.failures import STDERR_MARKER, ItemFailure, MlirFailureRepr, skip
from pytest_mlir_snippets.mlirtext.splitter import SnippetSource
from pytest_mlir_snippets.protocol import Kind, Request, Response
from pytest_mlir_snippets.reporting import benchmark as runreport
from pytest_mlir_snippets.session import run_state

MODEL = "model_linalg.mlir"
WRITTEN_BY_THE_ENGINEER = ("transform.mlir", "pass_pipeline.txt", "hypothesis.txt")
_ITERATION = re.compile(r"^v(\d+)$")
_TARGET_LINE = re.compile(r"^\s*[-*]?\s*target\s*:\s*`?(\w+)`?", re.IGNORECASE | re.MULTILINE)
STAGES = {"cpu": ("contract", "compile", "correctness", "benchmark"),
          "cuda": ("contract", "compile", "host_ops", "launch", "correctness", "benchmark")}
LARGE_GRID = 1024  # blocks: with one thread each, a launch this big wastes the GPU
MMA = ("mma.sync", "wgmma")


def is_run_model(path: Path) -> bool:
    return path.name == MODEL and (path.parent / "v0").is_dir()


def iterations(run: Path) -> list[Path]:
    found = [p for p in run.iterdir() if p.is_dir() and _ITERATION.match(p.name)]
    return sorted(found, key=lambda p: int(p.name[1:]))


def run_target(run: Path, config: pytest.Config) -> str:
    if config.getoption("mlir_target"):
        return str(config.getoption("mlir_target"))
    env = run / "env_check.md"
    m = _TARGET_LINE.search(env.read_text(errors="replace")) if env.is_file() else None
    return m.group(1).lower() if m else "cpu"


class OptimizationRun(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        target = run_target(self.path.parent, self.config)
        if target not in STAGES:
            yield IterationItem.from_parent(self, name="run[contract]", folder=self.path.parent, stage="contract",
                                            target=target)
            return
        if (self.path.parent / runreport.REFERENCE).is_file():
            yield IterationItem.from_parent(self, name="pytorch[benchmark]", folder=self.path.parent,
                                            stage="pytorch", target=target)
        for folder in iterations(self.path.parent):
            for stage in STAGES[target]:
                yield IterationItem.from_parent(self, name=f"{folder.name}[{stage}]", folder=folder, stage=stage,
                                                target=target)


class IterationItem(pytest.Item):
    def __init__(self, *, folder: Path, stage: str, target: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.folder = folder
        self.stage = stage
        self.target = target
        self.kind: Kind | None = None
        self.run_dir = folder.parent if _ITERATION.match(folder.name) else folder
        # not a snippet: run reports leave it out; runreport gathers it
        self.user_properties += [("mlir_run_stage", stage), ("mlir_run", str(self.run_dir)),
                                 ("mlir_iteration", folder.name if folder != self.run_dir else ""),
                                 ("mlir_target", target)]

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.folder, 0, self.name

    def runtest(self) -> None:
        if self.target not in STAGES:
            raise ItemFailure(Response(Kind.UNSUPPORTED, f"optimization runs are not run on target {self.target} "
                                       f"(known: {', '.join(STAGES)})"))
        getattr(self, f"_{self.stage}")()

    def _finish(self, response: Response) -> None:
        self.kind = response.kind
        self.user_properties.append(("mlir_kind", response.kind.value))
        self.user_properties += [(f"mlir_{k}", v) for k, v in response.metrics.items()]
        if response.kind is Kind.UNSUPPORTED:
            skip(response.message)
        if not response.ok:
            raise ItemFailure(response)

    # ------------------------------------------------------------------ requests
    def _missing(self) -> list[str]:
        return [name for name in WRITTEN_BY_THE_ENGINEER if not (self.folder / name).is_file()]

    def _request(self, op: str) -> Request:
        missing = self._missing()
        if missing:
            skip(f"contract not met: {', '.join(missing)} missing")
        manager = run_state(self.config).device_manager(self.target)
        model = self.path.read_text()
        functions = SnippetSource(model).functions
        return Request(op, model, functions[0].name if functions else "", manager.options(), attachments={
            "schedule": (self.folder / "transform.mlir").read_text(),
            "pipeline": (self.folder / "pass_pipeline.txt").read_text()})

    def _call(self, request: Request) -> Response:
        return run_state(self.config).device_manager(self.target).call(request)

    def _compiled(self) -> Response:
        """The iteration's compile (schedule + pipeline), once per process."""
        cache: dict[str, Response] = run_state(self.config).compiled
        key = f"iteration::{self.folder}"
        if key not in cache:
            cache[key] = self._call(self._request("iteration"))
        return cache[key]

    # ------------------------------------------------------------------ stages
    def _contract(self) -> None:
        problems = [f"{self.folder.name}/{name} is missing" for name in self._missing()]
        hypothesis = self.folder / "hypothesis.txt"
        if hypothesis.is_file() and not hypothesis.read_text().strip():
            problems.append(f"{self.folder.name}/hypothesis.txt is empty")
        response = Response(Kind.PASS)
        schedule = self.folder / "transform.mlir"
        if schedule.is_file():
            manager = run_state(self.config).device_manager(self.target)
            response = manager.call(Request("schedule", schedule.read_text(), "", manager.options()))
            if not response.ok:
                problems.append(f"{self.folder.name}/transform.mlir: {response.message}")
        kind = Kind.PASS if not problems else (response.kind if not response.ok else Kind.COMPILE_ERROR)
        self._finish(Response(kind, "contract: " + "; ".join(problems), response.diagnostics,
                              stderr=response.stderr) if problems else Response(Kind.PASS))

    def _compile(self) -> None:
        """Model + schedule (transform interpreter) + pass_pipeline.txt give vN/gpu.mlir,
        vN/kernels.ptx (when the pipeline makes a GPU binary) and vN/config.json."""
        response = self._compiled()
        if response.ir is not None:
            (self.folder / "gpu.mlir").write_text(response.ir)
        ptx = response.info.get("ptx", "")
        if ptx:
            (self.folder / "kernels.ptx").write_text(ptx)
        config = {"target": self.target, "status": response.kind.value,
                  "host_ops": response.info.get("host_ops", []), "kernels": response.info.get("kernels", [])}
        if ptx:
            config["ptx"] = {name: name in ptx for name in MMA} | {"matmul_like": _matmul_like(self.path)}
        (self.folder / "config.json").write_text(json.dumps(config, indent=1) + "\n")
        if ptx:
            self.user_properties.append(("mlir_mma", ", ".join(n for n in MMA if n in ptx) or "none"))
        self._finish(response)

    def _prior_compile(self) -> Response:
        response = self._compiled()
        if not response.ok:
            self.kind = None
            skip(f"compile failed ({response.kind.value})")
        return response

    def _host_ops(self) -> None:
        found = self._prior_compile().info.get("host_ops", [])
        where = "; ".join(f"{op['op']} at {self.path.name}:{op['line']}:{op['column']}" for op in found)
        self._finish(Response(Kind.COMPILE_ERROR, f"host_ops: {len(found)} loop(s) or copies left in host code "
                              f"(outside gpu.module and kernels): {where}") if found else Response(Kind.PASS))

    def _launch(self) -> None:
        kernels = self._prior_compile().info.get("kernels", [])
        bad = [k for k in kernels if _product(k["block"]) == 1 and _product(k["grid"]) >= LARGE_GRID]
        problems = ["no gpu.launch or gpu.launch_func: nothing runs on the GPU"] if not kernels else [
            f"{k['kernel']} launches {_product(k['grid'])} blocks of 1 thread (grid {k['grid']}, block {k['block']})"
            for k in bad]
        self._finish(Response(Kind.COMPILE_ERROR, "launch: " + "; ".join(problems)) if problems
                     else Response(Kind.PASS))

    def _golden(self, request: Request) -> Request:
        if not request.function:
            raise ItemFailure(Response(Kind.COMPILE_ERROR, f"{MODEL} has no public function"))
        from pytest_mlir_snippets.golden.recorded import load_recorded

        request.golden = load_recorded(self.path, request.function, 1)
        return request

    def _correctness(self) -> None:
        """Against recorded outputs (PyTorch's, from ``mlir-snippets import-torch``) when
        the run has them, else the model on the cpu target."""
        response = self._call(self._golden(self._request("iteration-execute")))
        if response.ok:
            self.user_properties.append(("mlir_reference", response.info.get("reference", "")))
        self._finish(response)

    def _benchmark(self) -> None:
        """Timed as ``benchstats`` says; when this code was measured before on this machine
        (same model, schedule, pipeline, target, toolchain, host), a run slower than then
        keeps timing to see that speed again (a noisy neighbour, not the code). A run that
        does not settle passes that median on to the next one (``reference_ms``), once."""
        request = self._golden(self._request("iteration-benchmark"))
        digest = runreport.code_digest(request.module, *request.attachments.values(), self.target)
        before = runreport.read_iteration(self.folder)
        last_settled = before.get("settled") == 1
        if before.get("digest") == digest:
            key = "median_ms" if last_settled else "reference_ms"
            request.options.bench_previous_ms = float(before.get(key, 0))
        response = self._call(request)
        if response.ok:
            carried = last_settled and response.metrics.get("settled") == 0 and request.options.bench_previous_ms
            runreport.write_iteration(self.folder, self.target, response.metrics, digest=digest,
                                      **({"reference_ms": request.options.bench_previous_ms} if carried else {}))
        self._finish(response)

    def _pytorch(self) -> None:
        manager = run_state(self.config).device_manager(self.target)
        request = Request("pytorch-benchmark", "", "", manager.options(),
                          attachments={"reference": str(self.folder / runreport.REFERENCE)})
        response = manager.call(request)
        if "compile_error" in response.info:
            self.user_properties.append(("mlir_compile_error", response.info["compile_error"]))
        self._finish(response)

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


def _product(sizes: list[int | None]) -> int:
    total = 1
    for size in sizes:
        total *= size or 1
    return total


def _matmul_like(model: Path) -> bool:
    text = model.read_text(errors="replace")
    return any(name in text for name in ("linalg.matmul", "linalg.batch_matmul", "linalg.matvec", "linalg.conv"))
