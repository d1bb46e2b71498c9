"""GridSample expanded by worker/lowering/onnx/sampling.py, against ONNX's reference implementation
on seeded random inputs: every mode and padding mode, both align_corners, GridSample-16 (4-D)
and GridSample-20+ (N-D), grids reaching past the borders and coordinates halfway between pixels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import test_onnx_expand
from onnx_cases import Case, write_case
from test_onnx_expand import assert_all_pass_on_recorded, run_cases

pytest.importorskip("onnx")
pytest.importorskip("torch_mlir")
pytestmark = pytest.mark.slow


def _grid(rng: np.random.Generator, shape: tuple[int, ...], reach: float = 1.7) -> np.ndarray:
    """Normalized coordinates in [-reach, reach]: past the borders where reach > 1."""
    return rng.uniform(-reach, reach, shape).astype(np.float32)


def _halfway(length: int, align: bool) -> np.ndarray:
    """Normalized coordinates whose pixel coordinate is k + 0.5 (k = -2 .. length): nearest's ties."""
    pixel = np.arange(-2, length + 1) + 0.5
    normalized = 2 * pixel / (length - 1) - 1 if align else (2 * pixel + 1) / length - 1
    return normalized.astype(np.float32)


def _write_as_opset16(folder: Path, case: Case) -> Path:
    """A case named ``*_as16`` imported at opset 20 (onnx.reference knows the modes linear and cubic
    only) and then declared GridSample-16, whose modes bilinear and bicubic are the same interpolations."""
    path = write_case(folder, case)
    if case.name.endswith("_as16"):
        text = path.read_text().replace("opset_version = 20 ", "opset_version = 16 ")
        text = text.replace('mode = "linear"', 'mode = "bilinear"').replace('mode = "cubic"', 'mode = "bicubic"')
        path.write_text(text)
    return path


def test_gridsample_4d_against_the_reference(pytester: pytest.Pytester, run_items,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(test_onnx_expand, "write_case", _write_as_opset16)
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
    grid = _grid(rng, (2, 6, 3, 2))
    cases = []
    for mode, opset, suffix in (("linear", 20, "_as16"), ("nearest", 16, ""), ("cubic", 20, "_as16"),
                                ("cubic", 22, "")):
        for padding in ("zeros", "border", "reflection"):
            for align in (0, 1):
                cases.append(Case(f"gs_{mode}_{padding}_{align}_{opset}{suffix}", "GridSample", [x, grid],
                                  {"mode": mode, "padding_mode": padding, "align_corners": align}, opset=opset))
    cases += [
        Case("gs_defaults_as16", "GridSample", [x, _grid(rng, (2, 2, 7, 2), 1.0)], opset=20),
        Case("gs_far_reflection", "GridSample", [x[:1], _grid(rng, (1, 4, 5, 2), 6.0)],
             {"mode": "linear", "padding_mode": "reflection"}, opset=20),
        Case("gs_f64_grid_f64", "GridSample", [x.astype(np.float64), grid.astype(np.float64)],
             {"mode": "cubic", "padding_mode": "border", "align_corners": 1}, opset=20),
        Case("gs_f16_grid_f16", "GridSample", [x.astype(np.float16), grid.astype(np.float16)],
             {"mode": "linear", "padding_mode": "reflection", "align_corners": 0}, opset=20,
             tolerance="rtol=1e-2 atol=1e-3"),  # f16 grid coordinates: the reference rounds them elsewhere
        Case("gs_f64_reflection", "GridSample", [x.astype(np.float64), grid],
             {"mode": "linear", "padding_mode": "reflection", "align_corners": 1}, opset=20),
        Case("gs_size1_axis", "GridSample", [x[:, :, :1, :], grid], {"mode": "linear", "padding_mode": "zeros"},
             opset=20),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_gridsample_nd_against_the_reference(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(12)
    x5 = rng.standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
    grid5 = _grid(rng, (1, 2, 3, 4, 3))
    x3 = rng.standard_normal((2, 3, 6)).astype(np.float32)
    cases = [Case(f"gs5_{mode}_{padding}_{align}", "GridSample", [x5, grid5],
                  {"mode": mode, "padding_mode": padding, "align_corners": align}, opset=22)
             for mode, padding, align in (("linear", "zeros", 0), ("linear", "border", 1), ("linear", "reflection", 0),
                                          ("nearest", "zeros", 1), ("nearest", "reflection", 1),
                                          ("cubic", "zeros", 0), ("cubic", "reflection", 1))]
    for align in (0, 1):  # nearest on pixel coordinates k + 0.5: rounded half to even, then padded
        ties = np.tile(_halfway(6, bool(align)), (2, 1))[:, :, None]
        for padding in ("zeros", "border", "reflection"):
            cases.append(Case(f"gs3_nearest_ties_{padding}_{align}", "GridSample", [x3, ties],
                              {"mode": "nearest", "padding_mode": padding, "align_corners": align}, opset=20))
    cases += [
        Case("gs3_cubic_reflection", "GridSample", [x3, _grid(rng, (2, 9, 1), 3.0)],
             {"mode": "cubic", "padding_mode": "reflection"}, opset=20),
        Case("gs_default_linear_20", "GridSample", [x3, _grid(rng, (2, 4, 1))], opset=20),
        Case("gs_int32_nearest", "GridSample", [rng.integers(-50, 50, (1, 2, 4, 3)).astype(np.int32),
                                                _grid(rng, (1, 3, 3, 2))],
             {"mode": "nearest", "padding_mode": "border"}, opset=20),
        Case("gs_int64_linear", "GridSample", [rng.integers(-50, 50, (1, 2, 4, 3)).astype(np.int64),
                                               np.round(_grid(rng, (1, 3, 3, 2)) * 2) / 2],
             {"mode": "linear", "align_corners": 1}, opset=20),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def _write_with_constant_regions(folder: Path, case: Case) -> Path:
    """A RoiAlign case named ``*_constrois`` whose regions (input 1) are a literal in the model (the
    argument stays, unused): sampling_ratio 0's sample counts then follow from the regions."""
    path = write_case(folder, case)
    if case.name.endswith("_constrois"):
        rois = case.inputs[1]
        assert rois is not None
        body = np.array2string(rois, separator=", ", floatmode="unique").replace("\n", "")
        literal = (f"%rois = torch.vtensor.literal(dense<{body}> : tensor<{rois.shape[0]}x4xf32>) : "
                   f"!torch.vtensor<[{rois.shape[0]},4],f32>\n    ")
        text = path.read_text().replace("%0 = torch.operator", literal + "%0 = torch.operator")
        path.write_text(text.replace('"onnx.RoiAlign"(%arg0, %arg1, %arg2)', '"onnx.RoiAlign"(%arg0, %rois, %arg2)'))
    return path


def test_roialign_against_the_reference(pytester: pytest.Pytester, run_items,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(test_onnx_expand, "write_case", _write_with_constant_regions)
    rng = np.random.default_rng(13)
    x = rng.standard_normal((2, 3, 10, 8)).astype(np.float32)
    # whole image, corners, past the borders, smaller than a pixel (forced 1 x 1 without half_pixel), reversed
    rois = np.array([[0, 0, 7, 9], [0, 5, 4, 9], [5, 5, 9, 11], [-3, -2, 12, 11], [2.3, 1.7, 2.9, 2.1],
                     [6, 7, 2, 3]], np.float32)
    batch = np.array([0, 1, 1, 0, 1, 0], np.int64)
    cases = [Case(f"roi_{mode}_{transform}_{ratio}", "RoiAlign", [x, rois, batch],
                  {"mode": mode, "coordinate_transformation_mode": transform, "output_height": 3, "output_width": 4,
                   "sampling_ratio": ratio, "spatial_scale": 0.9}, opset=22)
             for mode in ("avg", "max") for transform in ("half_pixel", "output_half_pixel") for ratio in (1, 2)]
    random_rois = np.sort(rng.uniform(-2, 20, (4, 2, 2)), axis=1).transpose(0, 2, 1).reshape(4, 4)
    cases += [
        Case("roi_defaults_16", "RoiAlign", [x, rois, batch], {"sampling_ratio": 2}, opset=16),
        Case("roi_max_random_scaled", "RoiAlign", [x, random_rois.astype(np.float32), np.array([1, 0, 1, 1])],
             {"mode": "max", "output_height": 2, "output_width": 5, "sampling_ratio": 3, "spatial_scale": 0.5},
             opset=22),
        Case("roi_avg_adaptive_constrois", "RoiAlign", [x, rois, batch],
             {"output_height": 2, "output_width": 3, "spatial_scale": 0.9}, opset=22),
        Case("roi_max_adaptive_constrois", "RoiAlign", [x, rois, batch],
             {"mode": "max", "coordinate_transformation_mode": "output_half_pixel", "output_height": 3,
              "output_width": 2}, opset=22),
        Case("roi_avg_f64", "RoiAlign", [x.astype(np.float64), rois.astype(np.float64), batch],
             {"output_height": 4, "output_width": 2, "sampling_ratio": 2}, opset=22),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))
