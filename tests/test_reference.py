"""References: which one judges a target's runs (``worker/judging/goldens.py``), and a worker's
reference worker (``worker/judging/reference.py``), a ``client.Sandbox`` of its own: a reference
that hangs or crashes is a golden that could not be computed ("no independent golden",
naming why), never the item's timeout or crash."""

from __future__ import annotations

import time

import numpy as np
import pytest

from pytest_mlir_snippets.golden.inputs import TypeSpec
from pytest_mlir_snippets.protocol import CompileFacts, Golden, Kind, Options, Response, info_json
from pytest_mlir_snippets.registry import TARGETS
from pytest_mlir_snippets.worker.core import Compiled, Kept, Reference, SnippetFailure
from pytest_mlir_snippets.worker.judging.goldens import ANOTHER, REFERENCES, Goldens, Unavailable, plain_cpu
from pytest_mlir_snippets.worker.judging.judge import judge_outputs
from pytest_mlir_snippets.worker.judging.reference import OtherTarget

SPIN = """func.func @spin(%t: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %r = scf.while (%i = %c0) : (index) -> index {
    %true = arith.constant true
    scf.condition(%true) %i : index
  } do {
  ^bb0(%i: index):
    %one = arith.constant 1 : index
    %next = arith.addi %i, %one : index
    scf.yield %next : index
  }
  %v = tensor.extract %t[%r] : tensor<4xf32>
  %s = tensor.insert %v into %t[%c0] : tensor<4xf32>
  return %s : tensor<4xf32>
}
"""
WILD = """func.func @wild(%t: tensor<4xf32>) -> tensor<4xf32> {
  %far = arith.constant 1099511627776 : index
  %c0 = arith.constant 0 : index
  %0 = tensor.extract %t[%far] : tensor<4xf32>
  %1 = tensor.insert %0 into %t[%c0] : tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""
ADD = """func.func @add(%t: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %t, %t : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


@pytest.fixture
def cpu_reference():
    reference = OtherTarget("cpu")
    yield reference
    reference.close()


def _judged(reference: OtherTarget, module: str, function: str, timeout: float) -> dict[str, object]:
    """What the judge says of a run, ``timeout`` seconds left to it, whose golden is ``reference``'s outputs."""
    spec = TypeSpec("tensor", "f32", (4,))
    compiled = Compiled("", function, ([spec], [spec]),
                        facts=CompileFacts(inputs=["tensor<4xf32>"], outputs=["tensor<4xf32>"]))
    x = np.ones(4, np.float32)
    options = Options(deadline=time.monotonic() + timeout)
    executed = judge_outputs(compiled, options, None, [x], [2 * x],
                             lambda: reference.outputs(module, function, options, [x]))
    return dict(info_json(Response(Kind.PASS, verdict=executed.verdict)), metrics=executed.metrics)


def test_a_reference_answers(cpu_reference: OtherTarget) -> None:
    info = _judged(cpu_reference, ADD, "add", 60)
    assert info["golden"] == Golden.DIFFERENTIAL_CPU and info["reference"] == "cpu target (plain lowering)"


def test_a_hanging_reference_is_no_independent_golden(cpu_reference: OtherTarget) -> None:
    start = time.perf_counter()
    info = _judged(cpu_reference, SPIN, "spin", 3.5)  # a hang: any time left to it is spent
    assert time.perf_counter() - start < 3.5  # within the item's time
    assert info["golden"] == Golden.NONE and info["metrics"] == {}
    assert str(info["reference"]).startswith("no independent golden: the reference (cpu target) gave no outputs "
                                             "within 2.")  # four fifths of the time left (2.8 s)
    assert _judged(cpu_reference, ADD, "add", 60)["golden"] == Golden.DIFFERENTIAL_CPU  # a fresh one next time


def test_a_crashing_reference_is_no_independent_golden(cpu_reference: OtherTarget) -> None:
    info = _judged(cpu_reference, WILD, "wild", 60)
    assert info["golden"] == Golden.NONE
    assert str(info["reference"]).startswith("no independent golden: the reference (cpu target) crashed (exit code")
    with pytest.raises(SnippetFailure) as failure:
        cpu_reference.outputs(WILD, "wild", Options(), [np.ones(4, np.float32)])
    assert failure.value.kind is Kind.EXECUTE_ERROR


class Doubled:
    """A plain lowering that doubles its inputs."""

    def run_plain(self, compiled: Compiled, inputs: list[np.ndarray]) -> list[np.ndarray]:
        return [2 * v for v in inputs]


def _stub(front_end: str = "upstream") -> Compiled:
    return Compiled("", "f", None, facts=CompileFacts(front_end=front_end), kept=Kept(source=ADD))


def test_every_target_judged_by_the_judge_has_its_references() -> None:
    """tt-mlir's targets are judged by tt-mlir's own golden report."""
    assert set(REFERENCES) == {name for name in TARGETS if not name.startswith("tt")} | {ANOTHER}


def test_another_targets_run_is_judged_against_the_cpu_lowering() -> None:
    x = np.ones(4, np.float32)
    for target in ("cuda", ANOTHER):
        found = Goldens(Doubled()).reference(target, _stub(), Options(), [x])
        assert (found.name, found.golden) == ("cpu target (plain lowering)", Golden.DIFFERENTIAL_CPU)
        assert np.array_equal(found.outputs[0], 2 * x)


def test_a_reference_that_cannot_take_the_function_passes_to_the_next_and_says_why(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def busy(goldens: Goldens, compiled: Compiled, options: Options, inputs: list[np.ndarray]) -> Reference:
        raise Unavailable("it was busy")

    def failing(goldens: Goldens, compiled: Compiled, options: Options, inputs: list[np.ndarray]) -> Reference:
        raise SnippetFailure(Kind.EXECUTE_ERROR, "it does not compile")

    monkeypatch.setitem(REFERENCES, "x", (busy, plain_cpu))
    found = Goldens(Doubled()).reference("x", _stub(), Options(), [np.ones(4, np.float32)])
    assert found.name == "cpu target (plain lowering) (it was busy)" and found.golden == Golden.DIFFERENTIAL_CPU
    monkeypatch.setitem(REFERENCES, "x", (failing, plain_cpu))  # a failure ends the search
    with pytest.raises(SnippetFailure, match="it does not compile"):
        Goldens(Doubled()).reference("x", _stub(), Options(), [np.ones(4, np.float32)])
