"""JAX's exports on the ttnn target, compile-only through tt-xla's PJRT plugin (the ``tt``
extra; these tests skip without it), and a symbolic-shape export refined to its recorded
shapes on cpu."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_mlir_snippets.client import Sandbox
from pytest_mlir_snippets.compilekey import KeyKind, compile_key, request_key
from pytest_mlir_snippets.protocol import Compile, Kind, Options, Recorded
from pytest_mlir_snippets.worker.targets import tt_module, tt_pjrt

CORPUS = Path(__file__).resolve().parent / "data" / "jax"


def _usable() -> bool:
    try:
        tt_pjrt.plugin_library(fetch=False)
    except tt_pjrt.PluginError:
        return False
    return True


needs_plugin = pytest.mark.skipif(not _usable(), reason="no tt PJRT plugin in the cache: mlir-snippets fetch-tt")


def _run(pytester: pytest.Pytester, names: list[str], *args: str) -> dict[str, dict[str, Any]]:
    for name in names:
        shutil.copy(CORPUS / f"{name}.mlir", pytester.path)
        shutil.copy(CORPUS / f"{name}.main.npz", pytester.path)
    out = pytester.path / "records.json"
    pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly", f"--mlir-json={out}", *args)
    return {r["file"].split("/")[-1] + "::" + r["name"]: r for r in json.loads(out.read_text())["items"]}


def test_the_entry_is_read_whatever_its_locations_and_attributes() -> None:
    header = ('module @m attributes {jax.uses_shape_polymorphism = false} {\n'
              '  func.func public @main(%arg0: tensor<3x7xf32> loc("x (a) ->"), %arg1: tensor<?xi32> {jax.arg_info = '
              '"y)"} loc(#loc2)) -> (tensor<3x7xf32> {jax.result_info = "result[0]"}, tensor<2xbf16>) {\n'
              '    return %arg0 : tensor<3x7xf32>\n  }\n}\n')
    args, results = tt_module.signature(header)
    assert [(a.element, a.shape) for a in args] == [("f32", (3, 7)), ("i32", (None,))]
    assert [(r.element, r.shape) for r in results] == [("f32", (3, 7)), ("bf16", (2,))]
    single = ('func.func @main(%a: tensor<4xf32> loc("a")) -> tensor<4xf32> attributes {x} {\n'
              ' return %a : tensor<4xf32>\n}')
    assert [r.shape for r in tt_module.signature(single)[1]] == [(4,)]
    with pytest.raises(Exception, match="no @main in the module sent to the plugin"):
        tt_module.signature(single.replace("@main", "@other"))


@needs_plugin
def test_jax_exports_chlo_and_symbolic_shapes_compile_for_ttnn() -> None:
    """jax.export's entry (locations in its arguments), a module of chlo ops only (through the
    plugin, decomposed to StableHLO), a symbolic-shape export (refined to its recorded shapes)
    and a typed PRNG key (Shardy's mesh) all compile. tt-xla's client (and the plugin's fetch)
    start with the device, which the sandbox opens before a worker's first compile: that
    start-up is no item's compile time. One worker: the client starts once."""
    sandbox = Sandbox("ttnn")
    options = Options(target="ttnn", skip_exec=True)
    try:
        for name in ("export_softmax", "jnp_square", "poly_softmax", "random_typed_key_arg"):
            with np.load(CORPUS / f"{name}.main.npz") as data:
                recorded = Recorded([data[k] for k in sorted(data) if k.startswith("input_")])
            answer = sandbox.compile((CORPUS / f"{name}.mlir").read_text(), "main", options, recorded, timeout=300)
            assert answer.kind is Kind.PASS, f"{name}: {answer.message[:500]}"
            assert sandbox.opened == 1 and sandbox.device_is_open()
            if name == "poly_softmax":
                assert answer.facts is not None and answer.facts.inputs == ["tensor<4x5xf32>"], answer.facts
    finally:
        sandbox.close()


def test_two_symbolic_dimensions_take_their_recorded_sizes_on_cpu(pytester: pytest.Pytester) -> None:
    records = _run(pytester, ["poly_softmax"], "--mlir-target=cpu")
    execute = records["poly_softmax.mlir::main[execute]"]
    assert execute["kind"] == "pass" and execute["golden"] == "recorded", execute["message"]
    assert execute["input_shapes"] == ["4x5"]  # b=4, n=5: n is not --mlir-dynamic-dim


def test_the_recorded_shapes_are_part_of_the_compile_key() -> None:
    options = Options(target="cpu")
    keys = {compile_key(KeyKind.SNIPPET, "m", "main", options, shapes=shapes) for shapes in ((), ((3, 5),), ((5, 3),))}
    assert len(keys) == 3
    assert compile_key(KeyKind.SNIPPET, "m", "main", options, shapes=((3, 5),)) in keys
    constants = {0: np.zeros(2, np.float32)}
    assert compile_key(KeyKind.SNIPPET, "m", "main", options, constants=constants, shapes=((2,),)) != \
        compile_key(KeyKind.SNIPPET, "m", "main", options, constants=constants)
    dynamic = Compile((CORPUS / "poly_softmax.mlir").read_text(), "main", options=options)
    static = Compile((CORPUS / "export_softmax.mlir").read_text(), "main", options=options)
    for request, differ in ((dynamic, True), (static, False)):  # a static entry takes no shape from them
        recorded = [replace(request, recorded=Recorded([np.zeros(shape, np.float32)])) for shape in ((4, 5), (5, 4))]
        assert (request_key(recorded[0]) != request_key(recorded[1])) is differ
