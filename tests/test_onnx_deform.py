"""DeformConv expanded by worker/lowering/onnx/deform.py against ONNX's reference
implementation on random inputs (seeded): mask and bias present or not, groups, offset
groups, strides, pads, dilations, non-square kernels, offsets that reach outside the input,
f64 and f16, opsets 19 and 22. The reference implements 2-D only; 1-D and 3-D (which the
specification allows) are checked against its N-D form written out here, itself checked
against the reference in 2-D."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

import onnx_cases
from onnx_cases import Case
from test_onnx_expand import assert_all_pass_on_recorded, run_cases

pytest.importorskip("onnx")
pytest.importorskip("torch_mlir")
pytestmark = pytest.mark.slow


def _inputs(rng: np.random.Generator, x: tuple[int, ...], oc: int, group: int, kernel: tuple[int, ...],
            out: tuple[int, ...], offset_group: int, spread: float, bias: bool, mask: bool,
            dtype: Any = np.float32) -> list[np.ndarray | None]:
    taps = math.prod(kernel)
    values: list[np.ndarray | None] = [
        rng.standard_normal(x), rng.standard_normal((oc, x[1] // group, *kernel)),
        rng.standard_normal((x[0], offset_group * taps * len(kernel), *out)) * spread,
        rng.standard_normal((oc,)) if bias else None,
        rng.uniform(0, 1, (x[0], offset_group * taps, *out)) if mask else None,
    ]
    return [None if v is None else v.astype(dtype) for v in values]


def test_deform_conv_2d_against_the_reference(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(19)
    cases = [
        Case("deform_basic_no_bias_no_mask", "DeformConv",
             _inputs(rng, (1, 1, 3, 3), 1, 1, (2, 2), (2, 2), 1, 0.5, False, False), {}, opset=19),
        Case("deform_mask_bias_groups_pads", "DeformConv",
             _inputs(rng, (2, 4, 5, 6), 6, 2, (3, 3), (5, 6), 1, 1.5, True, True),
             {"group": 2, "pads": [1, 1, 1, 1], "kernel_shape": [3, 3]}, opset=22),
        Case("deform_offset_groups_strides_dilations", "DeformConv",
             _inputs(rng, (1, 4, 7, 6), 3, 1, (2, 2), (4, 3), 2, 1.0, True, False),
             {"offset_group": 2, "strides": [2, 2], "dilations": [2, 1], "pads": [1, 0, 2, 1]}, opset=22),
        Case("deform_groups_and_offset_groups_rect_kernel", "DeformConv",
             _inputs(rng, (1, 4, 5, 7), 4, 2, (2, 3), (4, 3), 4, 0.8, False, True),
             {"group": 2, "offset_group": 4, "strides": [1, 2]}, opset=19),
        Case("deform_far_offsets_outside", "DeformConv",
             _inputs(rng, (2, 2, 4, 4), 2, 1, (3, 3), (2, 2), 1, 4.0, True, True), {}, opset=22),
        Case("deform_integer_offsets_f64", "DeformConv",
             [v if i != 2 or v is None else np.round(v) for i, v in enumerate(
                 _inputs(rng, (1, 2, 4, 5), 2, 1, (2, 2), (4, 5), 1, 2.0, True, True, np.float64))],
             {"pads": [1, 1, 0, 1], "dilations": [1, 2]}, opset=22),
        Case("deform_f16", "DeformConv",
             _inputs(rng, (1, 2, 4, 4), 2, 2, (2, 2), (3, 3), 1, 0.7, True, True, np.float16), {"group": 2},
             opset=22, tolerance="rtol=1e-2"),  # ONNX's reference rounds to f16 at other steps: a few ULP
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def deform_conv_nd(x: np.ndarray, w: np.ndarray, offset: np.ndarray, b: np.ndarray | None,
                   mask: np.ndarray | None, group: int = 1, offset_group: int = 1, strides: Any = None,
                   pads: Any = None, dilations: Any = None) -> np.ndarray:
    """The reference's loops for any number of spatial axes: each tap sampled at kernel grid
    + offset, multilinear over the 2^n corners around it, a corner outside the input 0."""
    nd = x.ndim - 2
    kernel, out, space = w.shape[2:], offset.shape[2:], x.shape[2:]
    strides, dilations, pads = strides or [1] * nd, dilations or [1] * nd, pads or [0] * (2 * nd)
    n, c, oc = x.shape[0], x.shape[1], w.shape[0]
    off = offset.reshape(n, offset_group, *kernel, nd, *out).astype(np.float64)
    msk = np.ones((n, offset_group, *kernel, *out)) if mask is None else mask.reshape(n, offset_group, *kernel, *out)
    res = np.zeros((n, oc, *out))
    cin, cout = c // group, oc // group
    for bi, o, i in itertools.product(range(n), range(oc), range(c)):
        if i // cin != o // cout:
            continue
        g = i // (c // offset_group)
        for p in itertools.product(*[range(s) for s in out]):
            for k in itertools.product(*[range(s) for s in kernel]):
                pos = [p[d] * strides[d] - pads[d] + k[d] * dilations[d] + off[(bi, g, *k, d, *p)] for d in range(nd)]
                low = [math.floor(v) for v in pos]
                value = 0.0
                for bits in itertools.product((0, 1), repeat=nd):
                    at = [low[d] + bits[d] for d in range(nd)]
                    if all(0 <= at[d] < space[d] for d in range(nd)):
                        weight = math.prod(pos[d] - low[d] if bits[d] else 1 - (pos[d] - low[d]) for d in range(nd))
                        value += weight * float(x[(bi, i, *at)])
                res[(bi, o, *p)] += value * float(w[(o, i % cin, *k)]) * float(msk[(bi, g, *k, *p)])
    if b is not None:
        res += b.reshape(-1, *[1] * nd)
    return res.astype(x.dtype)


def test_the_nd_form_matches_the_reference_in_2d() -> None:
    rng = np.random.default_rng(3)
    x, w, off, b, mask = _inputs(rng, (1, 4, 5, 7), 2, 2, (2, 3), (3, 2), 2, 1.5, True, True)
    attrs = {"group": 2, "offset_group": 2, "strides": [2, 2], "pads": [1, 0, 0, 1], "dilations": [1, 2]}
    (expected,) = onnx_cases.reference_outputs(Case("nd_check", "DeformConv", [x, w, off, b, mask], attrs))
    assert x is not None and w is not None and off is not None
    np.testing.assert_allclose(deform_conv_nd(x, w, off, b, mask, **attrs), expected, rtol=1e-5, atol=1e-5)


def test_deform_conv_1d_and_3d_against_the_nd_form(pytester: pytest.Pytester, run_items,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def outputs(case: Case) -> list[np.ndarray]:
        x, w, off, b, mask = case.inputs
        assert x is not None and w is not None and off is not None
        return [deform_conv_nd(x, w, off, b, mask, **case.attrs)]

    monkeypatch.setattr(onnx_cases, "reference_outputs", outputs)
    rng = np.random.default_rng(23)
    cases = [
        Case("deform_1d_mask_bias_strides", "DeformConv",
             _inputs(rng, (2, 2, 9), 3, 1, (3,), (4,), 2, 1.2, True, True),
             {"offset_group": 2, "strides": [2], "pads": [1, 0], "dilations": [2]}, opset=22),
        Case("deform_3d_groups", "DeformConv",
             _inputs(rng, (1, 2, 3, 4, 4), 2, 2, (2, 2, 2), (2, 3, 2), 1, 0.6, True, False),
             {"group": 2, "strides": [1, 1, 2], "pads": [0, 0, 0, 0, 0, 1]}, opset=19),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_deform_conv_specification_examples(pytester: pytest.Pytester, run_items) -> None:
    """The examples of ONNX's DeformConv documentation: padding, none, mask and bias."""
    x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    w = np.ones((1, 1, 2, 2), np.float32)
    padded = np.zeros((1, 8, 4, 4), np.float32)
    padded[0, 0, 0, 0], padded[0, 5, 1, 2] = 0.5, -0.1
    plain = np.zeros((1, 8, 2, 2), np.float32)
    plain[0, 0, 0, 0], plain[0, 5, 0, 1] = 0.5, -0.1
    mask = np.ones((1, 4, 2, 2), np.float32)
    mask[0, 2, 1, 1] = 0.2
    cases = [
        Case("deform_spec_with_padding", "DeformConv", [x, w, padded], {"kernel_shape": [2, 2], "pads": [1] * 4},
             opset=19),
        Case("deform_spec_without_padding", "DeformConv", [x, w, plain], {"kernel_shape": [2, 2], "pads": [0] * 4},
             opset=19),
        Case("deform_spec_mask_bias", "DeformConv", [x, w, plain, np.ones(1, np.float32), mask],
             {"kernel_shape": [2, 2], "pads": [0] * 4}, opset=22),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))
