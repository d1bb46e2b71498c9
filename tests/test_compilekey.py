"""One compile key (``compilekey.py``) for the disk cache, the worker's memos and the
benchmark history; an iteration's stages fail when the module they would run is not
their [compile]'s; an optimization run's items go to one xdist worker (``scheduling.py``)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_mlir_snippets.compilekey import KeyKind, request_key
from pytest_mlir_snippets.protocol import (
    Compile,
    IterationBenchmark,
    IterationCompile,
    IterationExecute,
    IterationFacts,
    IterationRequest,
    Kind,
    Options,
    Recorded,
    Verdict,
)
from pytest_mlir_snippets.scheduling import RunScheduling, run_of
from pytest_mlir_snippets.worker.core import Compiled, Executed
from pytest_mlir_snippets.worker.loop import Worker

MODULE = "func.func @f(%a: tensor<4xi32>) -> tensor<4xi32> { return %a : tensor<4xi32> }"


def _request(**options: Any) -> Compile:
    return Compile(MODULE, "f", options=Options(**options))


def test_identical_requests_have_one_key_and_chip_or_iree_flags_make_another() -> None:
    key = request_key(_request(target="cuda"))
    assert key == request_key(_request(target="cuda")) and hash(key) == hash(request_key(_request(target="cuda")))
    assert key.digest() == request_key(_request(target="cuda")).digest() and len(key.digest()) == 64
    others = [request_key(_request(target="cuda", cuda_chip="sm_80")),
              request_key(_request(target="cuda", iree_compile_flags=["--iree-opt-level=O3"])),
              request_key(_request(target="cuda", sys_desc="/tmp/desc.ttsys")),
              request_key(_request(target="cuda", pipeline="builtin.module(canonicalize)")),
              request_key(replace(_request(target="cuda"), module=MODULE + "\n"))]
    assert len({key, *others}) == 1 + len(others)
    assert len({k.digest() for k in (key, *others)}) == 1 + len(others)
    # what only the run sees (seeds, tolerances, the device, deadlines) is not the compile's
    assert request_key(_request(target="cuda", seed=3, atol=1.0, device_id=1, deadline=5.0)) == key


def test_the_constants_a_compile_may_bake_in_are_in_its_key() -> None:
    plain = request_key(_request())
    axes = replace(_request(), recorded=Recorded([np.array([0, 1], dtype=np.int64)]))
    assert request_key(axes) != plain
    assert request_key(axes) == request_key(replace(axes, recorded=Recorded([np.array([0, 1], dtype=np.int64)])))
    assert request_key(axes) != request_key(replace(axes, recorded=Recorded([np.array([0, 2], dtype=np.int64)])))
    large = replace(_request(), recorded=Recorded([np.zeros(4096, dtype=np.float32)]))  # compared, never baked in
    assert request_key(large) == plain


def test_an_iteration_key_is_its_schedule_and_pipeline_not_the_stage_or_its_expectation() -> None:
    def stage(kind: type[IterationRequest], schedule: str = "s", expected: str = "") -> IterationRequest:
        return kind(MODULE, "f", Recorded([np.array([1])]), schedule=schedule, pipeline="p", expected_digest=expected)

    key = request_key(stage(IterationCompile))
    assert key.kind == KeyKind.ITERATION and request_key(_request()).kind == KeyKind.SNIPPET
    assert request_key(stage(IterationBenchmark, expected="abc")) == key
    assert request_key(stage(IterationExecute, schedule="t")) != key


# ------------------------------------------------------------------ the worker's memos and the digest check
class FakeBackend:
    forgets_compiled = False

    def __init__(self) -> None:
        self.module_text = "ir-1"

    def compile_iteration(self, model: str, schedule: str, pipeline: str, function: str) -> Compiled:
        return Compiled(self.module_text, function, None,
                        iteration=IterationFacts(compiled_digest=f"digest-of-{self.module_text}"))

    def compile(self, module: str, function: str, options: Options, constants: Any) -> Compiled:
        return Compiled(module, function, None)

    def execute(self, compiled: Compiled, options: Options, golden: Any) -> Executed:
        return Executed({}, Verdict())


def _worker() -> tuple[Worker, FakeBackend]:
    worker, backend = Worker("cpu"), FakeBackend()
    worker._backend = backend  # type: ignore[assignment]
    return worker, backend


def _iteration(kind: type[IterationRequest], expected: str = "") -> IterationRequest:
    return kind(MODULE, "f", schedule="s", pipeline="p", expected_digest=expected)


def test_a_stage_runs_its_compile_s_module_and_fails_on_another() -> None:
    worker, backend = _worker()
    compiled = worker.handle(_iteration(IterationCompile))
    assert compiled.ok and compiled.iteration is not None
    assert (compiled.iteration.compiled_digest, compiled.iteration.compiles) == ("digest-of-ir-1", 1)
    assert worker.handle(_iteration(IterationExecute, "digest-of-ir-1")).ok
    worker._compiled.clear()  # a compile made again (a worker restarted) that is not what [compile] wrote
    backend.module_text = "ir-2"
    failed = worker.handle(_iteration(IterationExecute, "digest-of-ir-1"))
    assert failed.kind is Kind.EXECUTE_ERROR and "\n" not in failed.message, failed.message
    assert "is not the one its [compile] made" in failed.message and failed.stage == "iteration-execute"
    assert worker.handle(_iteration(IterationExecute, "")).ok  # a stage that names none runs what there is


def test_snippet_compiles_never_push_an_iteration_s_compile_out_of_the_memo() -> None:
    from pytest_mlir_snippets.worker.memo import SIZE as CACHE_SIZE

    worker, _ = _worker()
    worker.handle(_iteration(IterationCompile))
    for n in range(CACHE_SIZE + 5):
        assert worker.handle(Compile(f"{MODULE}\n// {n}", "f")).ok
    again = worker.handle(_iteration(IterationExecute, "digest-of-ir-1"))
    assert again.iteration is not None and again.iteration.compiles == 1
    assert worker.iteration_compiles == 1
    assert len(worker._compiled.kinds[KeyKind.SNIPPET]) == CACHE_SIZE


# ------------------------------------------------------------------ the scheduler
def test_run_of_names_the_run_model_an_item_is_of() -> None:
    assert run_of("runs/a/model_linalg.mlir::v3[compile]") == "runs/a/model_linalg.mlir"
    assert run_of("model_linalg.mlir::pytorch[benchmark]") == "model_linalg.mlir"
    assert run_of("snippets/ops.mlir::add_0[compile]") is None
    assert run_of("snippets/my_model_linalg.mlir::f[compile]") is None


class FakeNode:
    shutting_down = False

    def __init__(self, name: str) -> None:
        self.sent: list[int] = []
        self.gateway = type("Gateway", (), {"id": name})

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent += indices

    def shutdown(self) -> None:
        self.shutting_down = True


def test_the_scheduler_sends_a_run_s_items_together_and_the_rest_as_load_does(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfig("--tx", "2*popen", "--dist", "load")
    collection = [f"ops.mlir::f{n}[{s}]" for n in range(6) for s in ("compile", "execute")]
    collection[4:4] = [f"run/model_linalg.mlir::v{n}[{s}]" for n in range(3)
                       for s in ("contract", "compile", "correctness", "benchmark")]
    collection += [f"other/model_linalg.mlir::v0[{s}]" for s in ("contract", "compile")]
    sched = RunScheduling(config)
    nodes = [FakeNode("gw0"), FakeNode("gw1")]
    for node in nodes:
        sched.add_node(node)
        sched.add_node_collection(node, collection)
    sched.schedule()
    while sched.pending:  # each node finishes its items one by one, as workers report them
        for node in nodes:
            for index in list(sched.node2pending[node]):
                sched.mark_test_complete(node, index)
    ran = {collection[i]: n for n, node in enumerate(nodes) for i in node.sent}
    assert sorted(ran) == sorted(collection)  # each item once
    for run in ("run/model_linalg.mlir", "other/model_linalg.mlir"):
        assert len({n for nodeid, n in ran.items() if nodeid.startswith(run)}) == 1, ran
    assert {n for nodeid, n in ran.items() if nodeid.startswith("ops.mlir")} == {0, 1}


def test_a_run_s_items_land_on_one_xdist_worker(pytester: pytest.Pytester) -> None:
    from test_optrun import MODEL, SCHEDULE, iteration

    for name in ("a", "b"):
        run = pytester.mkdir(name)
        (run / "model_linalg.mlir").write_text(MODEL)
        for version in ("v0", "v1"):
            iteration(run, version, SCHEDULE)
    (pytester.path / "ops.mlir").write_text("\n\n".join(
        f"func.func @f{n}(%a: i32) -> i32 {{ return %a : i32 }}" for n in range(4)))
    selected = ("-p", "no:cacheprovider", "-k", "not correctness and not benchmark")
    result = pytester.runpytest(*selected, "-n", "2", "-v")
    ran: dict[str, set[str]] = {}
    for line in result.outlines:
        found = re.match(r"\[(gw\d)\] \[\s*\d+%\] \w+ (\S+)", line)
        if found:
            ran.setdefault(found[2], set()).add(found[1])
    by_folder: dict[str, set[str]] = {}
    for nodeid, workers in ran.items():
        by_folder.setdefault(Path(nodeid.partition("::")[0]).parent.name or "ops", set()).update(workers)
    assert set(by_folder) == {"a", "b", "ops"}, result.outlines
    assert len(by_folder["a"]) == 1 and len(by_folder["b"]) == 1, ran
    collected = pytester.runpytest(*selected, "--collect-only", "-q")  # node ids as without xdist
    assert set(ran) == {line for line in collected.outlines if "::" in line}
