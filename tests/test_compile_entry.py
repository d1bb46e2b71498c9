"""One compile entry (``RunState.compile``) for snippet, iteration, RUN-line items and
``mlir_device``: the compile cache, the in-run memo and prefetch in one place, keyed by
typed subjects."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_mlir_snippets.protocol import Compile, FunctionRequest, Kind, Response, SubjectKind
from pytest_mlir_snippets.session import RunState, Subject
from pytest_mlir_snippets.settings import Settings


class Worker:
    """A target's device manager, as the session uses it: calls and compiles sent ahead."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.sent: list[FunctionRequest] = []
        self.ahead: list[FunctionRequest] = []

    def call(self, request: FunctionRequest, timeout: float | None = None) -> Response:
        self.sent.append(request)
        return Response(Kind.PASS, f"{self.target}: {request.module}")

    def submit(self, request: FunctionRequest) -> bool:
        self.ahead.append(request)
        return True


class Cache:
    def __init__(self) -> None:
        self.kept: dict[str, Response] = {}

    def get(self, request: FunctionRequest, group: str | None = None) -> Response | None:
        return self.kept.get(request.module)

    def put(self, request: FunctionRequest, response: Response, group: str | None = None) -> None:
        self.kept[request.module] = response

    def close(self) -> None:
        pass


@pytest.fixture
def state(pytester: pytest.Pytester) -> Any:
    config = pytester.parseconfigure("-p", "no:cacheprovider")
    made = RunState(Settings.from_config(config), config)
    made.managers = {"cpu": Worker("cpu"), "cuda": Worker("cuda")}  # type: ignore[dict-item]
    made.compile_cache = Cache()  # type: ignore[assignment]
    yield made
    config._ensure_unconfigure()


def requests(module: str) -> tuple[list[int], Any]:
    made = [0]

    def request() -> Compile:
        made[0] += 1
        return Compile(module, "f")
    return made, request


def test_a_subject_is_compiled_once_by_its_targets_worker_and_remembered(state: Any) -> None:
    snippet = Subject(SubjectKind.SNIPPET, "ops.mlir", "f", "cpu")
    lit = Subject(SubjectKind.LIT, "ops.mlir", "f", "cpu")  # the same names, another subject
    iteration = Subject(SubjectKind.ITERATION, "run/model_linalg.mlir", "v0", "cuda")
    made, request = requests("a")
    first = state.compile(snippet, request, 5.0)
    assert state.compiled_first(snippet, request, 5.0) is first and made == [1]
    assert state.compiled_first(lit, requests("b")[1], 5.0).message == "cpu: b"
    assert state.compiled_first(iteration, requests("c")[1], 5.0, cache=False).message == "cuda: c"
    assert [r.module for r in state.managers["cpu"].sent] == ["a", "b"]
    assert [r.module for r in state.managers["cuda"].sent] == ["c"]
    assert set(state.compiled) == {snippet, lit, iteration} and "c" not in state.compile_cache.kept
    # a verdict the cache kept is not compiled again, in this process or the next
    assert state.compile(Subject(SubjectKind.SNIPPET, "other.mlir", "f", "cpu"), requests("a")[1], 5.0) is first
    assert len(state.managers["cpu"].sent) == 2
    # mlir_device's compiles go through the same entry, neither cached nor remembered
    python = Subject(SubjectKind.PYTHON, "<mlir>", "f", "cpu")
    state.compile(python, requests("d")[1], 5.0, cache=False, remember=False)
    assert python not in state.compiled and "d" not in state.compile_cache.kept


def test_a_compile_sent_ahead_is_the_one_its_item_takes(state: Any) -> None:
    """``prefetch`` sends the next compile ahead (the worker answers the same request
    object) or finds its verdict in the cache; ``compile`` then makes no request of its own."""
    ahead = Subject(SubjectKind.SNIPPET, "ops.mlir", "g", "cpu")
    sent = Compile("g", "g")
    state.prefetch(ahead, sent)
    made, request = requests("g")
    assert state.compile(ahead, request, 5.0).message == "cpu: g" and made == [0]
    assert state.managers["cpu"].ahead == [sent] and state.managers["cpu"].sent == [sent]
    cached = Subject(SubjectKind.SNIPPET, "ops.mlir", "h", "cpu")
    state.compile_cache.kept["h"] = Response(Kind.COMPILE_ERROR, "kept")
    state.prefetch(cached, Compile("h", "h"))
    assert state.compile(cached, request, 5.0).message == "kept" and made == [0]
    assert state.managers["cpu"].ahead == [sent] and len(state.managers["cpu"].sent) == 1
