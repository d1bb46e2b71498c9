"""ONNX's node test cases (``onnx.backend.test.case.node``, built in memory by onnx), the
ones no compiler can match (random outputs, string tensors, image decoding), and the harness's
cases that run, as one TestCase class (``runnable``).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import re
import unittest
import warnings
from typing import Any

# ops whose outputs are drawn from a random generator
RANDOM_OPS = {"Bernoulli", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial"}
STRING_OPS = {"StringNormalizer", "StringConcat", "StringSplit", "RegexFullMatch"}
STRING = 8  # onnx.TensorProto.STRING
# training-mode Dropout draws a random mask, unless its ratio is zero
TRAINING_DROPOUT = re.compile(r"^test_training_dropout(?!_zero_ratio)")


def node_cases() -> list[Any]:
    """Every node case (``onnx.backend.test.case.test_case.TestCase``: name, model,
    data_sets, rtol, atol), as ``BackendTest`` loads them."""
    from onnx.backend.test.loader import load_model_tests

    with warnings.catch_warnings():  # onnx's case generators cast out-of-range values on purpose
        warnings.simplefilter("ignore")
        return list(load_model_tests(kind="node"))


def _has_string(values: Any) -> bool:
    return any(v.type.HasField("tensor_type") and v.type.tensor_type.elem_type == STRING for v in values)


def unmatchable(name: str, model: Any) -> str | None:
    """Why no compiler can match the case (``name``: its name, ``_cpu`` or not), or None."""
    name = re.sub(r"_(cpu|cuda)$", "", name)
    ops = {node.op_type for node in model.graph.node} | {
        node.op_type for function in model.functions for node in function.node}
    if ops & RANDOM_OPS:
        return f"outputs drawn from a random generator ({', '.join(sorted(ops & RANDOM_OPS))})"
    if TRAINING_DROPOUT.match(name):
        return "training-mode Dropout with a non-zero ratio: a random mask"
    if ops & STRING_OPS:
        return f"string tensors ({', '.join(sorted(ops & STRING_OPS))})"
    if "LabelEncoder" in ops and (_has_string(model.graph.input) or _has_string(model.graph.output)):
        return "string tensors (LabelEncoder with strings)"
    if "ImageDecoder" in ops:
        return "image decoding (ImageDecoder), not a tensor computation"
    return None


def unmatchable_names(cases: list[Any] | None = None) -> dict[str, str]:
    """The node cases no compiler can match, by name (without the device suffix), and why."""
    found = {}
    for case in node_cases() if cases is None else cases:
        why = unmatchable(case.name, case.model)
        if why:
            found[case.name] = why
    return found


def runnable(whole: type[unittest.TestCase], device: str, module: str) -> type[unittest.TestCase]:
    """``whole``'s tests on ``device`` that run (an xfail included), as one TestCase class of
    ``module``: without the skipped placeholder the harness makes for every case left out
    (thousands of items pytest would collect and report for nothing)."""
    tests = {name: getattr(whole, name) for name in dir(whole) if re.match(rf"test_.*_{device}$", name)
             and not getattr(getattr(whole, name), "__unittest_skip__", False)}
    return type(whole.__name__, (unittest.TestCase,), {**tests, "__module__": module})
