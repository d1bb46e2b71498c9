"""The ttnn target on the real tt-mlir, through tt-xla's PJRT plugin (the ``tt`` extra),
compile-only on this machine (no card): tt-mlir's verdicts, its artifacts, its diagnostics
at the snippet's lines. Without the extra these tests skip; the plugin checks that refuse
a wrong build run everywhere."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_mlir_snippets.worker.targets import tt_pjrt
from test_tt import no_client


def _usable() -> bool:
    try:
        tt_pjrt.plugin_library()
    except tt_pjrt.PluginError:
        return False
    return True


needs_plugin = pytest.mark.skipif(not _usable(), reason="the tt extra is not installed: pip install -e '.[tt]'")


@needs_plugin
def test_the_plugin_is_fetched_whole_into_the_cache_where_jax_does_not_look(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """libtt.so comes out of the pinned wheel into the cache, and nothing else is left there;
    JAX in the same environment, without JAX_PLATFORMS, still runs on the CPU (an installed
    plugin registers a backend that aborts it without a card)."""
    monkeypatch.setenv("MLIR_SNIPPETS_TT_CACHE", str(tmp_path))
    with pytest.raises(tt_pjrt.PluginError, match="not in the cache"):
        tt_pjrt.plugin_library(fetch=False)
    library = tt_pjrt.plugin_library()
    if library.parent != tmp_path:
        pytest.skip(f"a tt PJRT plugin is installed ({library}): the cache is not used")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".fetch.lock", library.name]
    assert tt_pjrt.plugin_library() == library  # fetched once
    env = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"}
    try:
        import jax  # noqa: F401
    except ImportError:
        return
    ran = subprocess.run([sys.executable, "-c", "import jax.numpy as jnp; print(float(jnp.ones(3).sum()))"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert (ran.returncode, ran.stdout.strip()) == (0, "3.0"), ran.stderr[-2000:]


def test_a_plugin_that_cannot_be_fetched_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLIR_SNIPPETS_TT_CACHE", str(tmp_path))
    monkeypatch.setattr(tt_pjrt, "PLUGIN_WHEEL", "jax-tt-plugin==0.0.0.dev0")
    monkeypatch.setattr(tt_pjrt.importlib.util, "find_spec", lambda name: None)  # nothing installed
    with pytest.raises(tt_pjrt.PluginError, match=r"could not be fetched with pip: .*jax-tt-plugin") as error:
        tt_pjrt.plugin_library()
    assert "\n" not in str(error.value)
    assert [p.name for p in tmp_path.iterdir()] == [".fetch.lock"]  # no partial file left

OPS = """module @jit_ops {
  func.func public @add(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = stablehlo.add %a, %b : tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }
  func.func public @main(%a: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = stablehlo.exponential %a : tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }
  func.func public @calls_main(%a: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = call @main(%a) : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %1 = stablehlo.maximum %0, %a : tensor<32x32xf32>
    return %1 : tensor<32x32xf32>
  }
  func.func public @broken(%a: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = stablehlo.add %a, %a : tensor<32x32xi32>
    return %0 : tensor<32x32xf32>
  }
  func.func public @fft(%a: tensor<32xf32>) -> tensor<17xcomplex<f32>> {
    %0 = stablehlo.fft %a, type = RFFT, length = [32] : (tensor<32xf32>) -> tensor<17xcomplex<f32>>
    return %0 : tensor<17xcomplex<f32>>
  }
}
"""


def _records(pytester: pytest.Pytester, *args: str) -> tuple[Any, dict[str, dict[str, Any]]]:
    out = pytester.path / "records.json"
    result = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-json={out}", *args)
    return result, {r["name"]: r for r in json.loads(out.read_text())["items"]}


@needs_plugin
def test_stablehlo_compiles_through_tt_mlir_with_its_artifacts(pytester: pytest.Pytester) -> None:
    (pytester.path / "ops.mlir").write_text(OPS)
    result, records = _records(pytester, "--mlir-target=ttnn", "--mlir-save-artifacts", "-rs")
    for name in ("add", "main", "calls_main"):
        assert records[f"{name}[compile]"]["kind"] == "pass", records[f"{name}[compile]"]["message"]
        execute = records[f"{name}[execute]"]
        assert execute["kind"] == "skip" and execute["message"] == "compiled for ttnn; running needs a Tenstorrent " \
                                                                   "device"
    folder = next(pytester.path.rglob("calls_main/ttnn"))
    sent = (folder / "stablehlo.mlir").read_text()
    assert "func.func public @main(" in sent and "call @main_0(" in sent  # the entry is PJRT's main
    assert "ttir." in (folder / "ttir.mlir").read_text() and "ttnn." in (folder / "ttnn.mlir").read_text()
    flat = (folder / "program.ttnn").read_bytes()
    assert struct.unpack_from("<I", flat)[0] == len(flat) - 4 and flat[8:12] == b"TTNN"
    broken = records["broken[compile]"]
    assert broken["kind"] == "compile-error" and "expects different type than prior uses" in broken["message"]
    assert "ops.mlir:16:" in result.stdout.str()  # tt-mlir's location, on the snippet's line
    fft = records["fft[compile]"]
    assert fft["kind"] == "compile-error" and "Failed to convert from SHLO to TTIR" in fft["message"]


@needs_plugin
def test_ttir_needs_the_builder_and_ttmetal_needs_d2m(pytester: pytest.Pytester,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (pytester.path / "t.mlir").write_text('func.func @m(%a: tensor<32x32xf32>) -> tensor<32x32xf32> {\n'
                                          '  %0 = "ttir.abs"(%a) : (tensor<32x32xf32>) -> tensor<32x32xf32>\n'
                                          '  return %0 : tensor<32x32xf32>\n}\n')
    (pytester.path / "mixed.mlir").write_text('func.func @m(%a: tensor<32x32xf32>) -> tensor<32x32xbf16> {\n'
                                              '  %0 = "ttir.abs"(%a) : (tensor<32x32xf32>) -> tensor<32x32xf32>\n'
                                              '  %1 = stablehlo.convert %0 : (tensor<32x32xf32>) -> '
                                              'tensor<32x32xbf16>\n'
                                              '  return %1 : tensor<32x32xbf16>\n}\n')
    out = pytester.path / "records.json"  # one run for both files: one worker
    no_client(pytester, monkeypatch)  # TTIR never goes to tt-xla's client; StableHLO sent there would say so
    pytester.runpytest("-p", "no:cacheprovider", f"--mlir-json={out}", "--mlir-target=ttnn")
    records = {(r["file"].split("/")[-1], r["name"]): r for r in json.loads(out.read_text())["items"]}
    assert records["t.mlir", "m[compile]"]["kind"] == "unsupported"
    assert "TTIR and TTNN input go through tt-mlir's builder" in records["t.mlir", "m[compile]"]["message"]
    # StableHLO among TTIR ops: the builder's too
    assert "TTIR and TTNN input go through tt-mlir's builder" in records["mixed.mlir", "m[compile]"]["message"]
    (pytester.path / "t.mlir").unlink()
    (pytester.path / "mixed.mlir").write_text(OPS)
    _, records = _records(pytester, "--mlir-target=ttmetal")
    assert "this tt-xla build has no TTMetal (D2M) pipeline" in records["add[compile]"]["message"]


@needs_plugin
def test_a_descriptor_given_is_used_as_it_is(pytester: pytest.Pytester) -> None:
    (pytester.path / "ops.mlir").write_text(OPS)
    (pytester.path / "bad.ttsys").write_text("not a descriptor")
    _, records = _records(pytester, "--mlir-target=ttnn", f"--mlir-sys-desc={pytester.path / 'bad.ttsys'}", "-k",
                          "add")
    assert records["add[compile]"]["kind"] == "unsupported"
    assert "is not a tt system descriptor (a size-prefixed TTSY flatbuffer)" in records["add[compile]"]["message"]
    missing = pytester.runpytest("--mlir-target=ttnn", "--mlir-sys-desc=nowhere.ttsys")
    assert missing.ret == 4 and "--mlir-sys-desc: no file at nowhere.ttsys" in missing.stderr.str()


def test_another_libtt_build_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "jax_plugins" / "libtt"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "libtt.so").write_bytes(b"\x7fELF not the pinned build")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(tt_pjrt.PluginError, match="is not the pinned jax-tt-plugin build"):
        tt_pjrt.plugin_library()


def test_a_serialized_executable_is_read_as_tt_xla_writes_it() -> None:
    ttir, ttnn = b"module {ttir}", b"module {ttnn}"
    flat = struct.pack("<I", 12) + b"\x00\x00\x00\x00TTNN\x00\x00\x00\x00"
    body = ttir + ttnn + flat
    header = b"TTSERv00" + struct.pack("<6Q", 0, len(ttir), len(ttir), len(ttnn), len(ttir) + len(ttnn), len(flat))
    artifacts = tt_pjrt.Artifacts.from_serialized(header + body)
    assert (artifacts.ttir, artifacts.ttnn, artifacts.flatbuffer) == ("module {ttir}", "module {ttnn}", flat)
    artifacts.check_flatbuffer()
    with pytest.raises(ValueError, match="not a size-prefixed TTNN file"):
        tt_pjrt.Artifacts("", "", flat[:-1]).check_flatbuffer()


def test_the_entry_becomes_main_and_a_main_there_steps_aside() -> None:
    module = "func.func @main() { return }\nfunc.func @f() { call @main() : () -> () return }\n"
    renamed = tt_pjrt.as_main(module, "f")
    assert "func.func @main_0()" in renamed and "func.func @main()" in renamed and "call @main_0()" in renamed
    assert tt_pjrt.as_main(module, "main") == module
