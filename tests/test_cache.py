"""The compile cache: verdicts kept in pytest's cache directory, shared by xdist workers, as data."""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from pytest_mlir_snippets.protocol import (
    AppliedTolerance,
    Compile,
    CompileFacts,
    Diagnostic,
    IterationFacts,
    Kind,
    Launch,
    Response,
    Verdict,
)
from pytest_mlir_snippets.sandbox.cache import FORMAT, CompileCache, decode, encode

OPS = """func.func @add_0(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @mul_0(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @bad_0(%a: tensor<4xf32>) -> tensor<4xi32> {
  %0 = arith.addf %a, %a : tensor<4xi32>
  return %0 : tensor<4xi32>
}
"""


def compile_props(pytester: pytest.Pytester, *args: str) -> dict[str, dict[str, str]]:
    from conftest import item_properties

    xml = pytester.path / "junit.xml"
    pytester.runpytest("--mlir-skip-exec", f"--junitxml={xml}", *args)
    return item_properties(xml)


def test_a_warm_rerun_compiles_nothing(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=OPS)
    folder = pytester.path / ".pytest_cache" / "d" / "mlir-snippets-compile"
    stale = folder / "0123456789abcdef" / "ab" / "abcdef"  # an older toolchain's entry
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"old")
    cold = compile_props(pytester, "-n", "2")  # two workers write the cache at once
    assert {n: p.get("mlir_cache") for n, p in cold.items()} == dict.fromkeys(cold)
    assert not stale.exists() and len(list(folder.iterdir())) == 1  # one toolchain's folder
    warm = compile_props(pytester)
    assert {p["mlir_cache"] for p in warm.values()} == {"hit"}
    assert warm["ops.mlir::bad_0[compile]"]["mlir_kind"] == "compile-error"  # verdicts, failures too
    assert "use of value '%a' expects different type" in warm["ops.mlir::bad_0[compile]"]["mlir_diagnostics"]
    assert {p.get("mlir_cache") for p in compile_props(pytester, "--mlir-no-cache").values()} == {None}
    # a changed function, or a changed option, is compiled again; the others are not
    pytester.makefile(".mlir", ops=OPS.replace("arith.mulf", "arith.subf"))
    edited = compile_props(pytester)
    assert {n: p.get("mlir_cache") for n, p in edited.items()} == {
        "ops.mlir::add_0[compile]": "hit", "ops.mlir::mul_0[compile]": None, "ops.mlir::bad_0[compile]": "hit"}
    assert {p.get("mlir_cache") for p in compile_props(pytester, "--mlir-opt-level=2").values()} == {None}
    # dynamic programs are refined to --mlir-dynamic-dim: another size is another compile
    assert {p.get("mlir_cache") for p in compile_props(pytester, "--mlir-dynamic-dim=3").values()} == {None}


class Hostile:
    """Unpickled, it creates ``marker``: what a planted pickle could do instead."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return Path.touch, (Path(self.marker),)


def hostile_pickle(marker: Path) -> bytes:
    payload = pickle.dumps(Hostile(marker))
    probe = marker.with_name("probe")  # the payload works: unpickling it here does create the file
    pickle.loads(pickle.dumps(Hostile(probe)))
    assert probe.exists()
    probe.unlink()
    return payload


def test_planted_pickles_are_never_executed(pytester: pytest.Pytester) -> None:
    """Whoever can write .pytest_cache or a sidecar (a CI cache restored from another
    branch, a shared disk) plants pickles: nothing runs them, the items run as usual."""
    from conftest import item_properties

    pytester.makefile(".mlir", ops=OPS)
    marker = pytester.path / "PWNED"
    payload = hostile_pickle(marker)
    np.savez(pytester.path / "ops.add_0.npz", input_0=np.array([Hostile(marker)], dtype=object),
             input_1=np.ones(4, np.float32))
    a, b = np.arange(4, dtype=np.float32), np.full(4, 2, np.float32)  # mul_0's golden: no second compiler started
    np.savez(pytester.path / "ops.mul_0.npz", input_0=a, input_1=b, output_0=a * b)
    folder = pytester.path / ".pytest_cache" / "d" / "mlir-snippets-compile"
    xml = pytester.path / "junit.xml"

    def run() -> dict[str, dict[str, str]]:
        pytester.runpytest(f"--junitxml={xml}")
        return item_properties(xml)

    run()  # entries and the file's pack written: now every file there becomes a pickle, and the old name of each
    entries = [path for path in folder.rglob("*.json") if path.parent.name != "packs"]
    packs = list(folder.rglob("packs/*.json"))
    assert len(entries) == 3 and len(packs) == 1
    assert all(json.loads(path.read_bytes())["format"] == FORMAT for path in entries + packs)
    for path in [path for path in folder.rglob("*") if path.is_file()]:
        path.write_bytes(payload)
        path.with_suffix("").write_bytes(payload)
    props = run()
    assert not marker.exists()
    assert {n: (p["mlir_kind"], p.get("mlir_cache")) for n, p in props.items()} == {
        "ops.mlir::add_0[compile]": ("pass", None), "ops.mlir::add_0[execute]": ("execute-error", None),
        "ops.mlir::mul_0[compile]": ("pass", None), "ops.mlir::mul_0[execute]": ("pass", None),
        "ops.mlir::bad_0[compile]": ("compile-error", None), "ops.mlir::bad_0[execute]": ("skip", None)}
    assert props["ops.mlir::add_0[execute]"]["mlir_message"] == (
        "recorded golden data: ops.add_0.npz: input_0 is an array of Python objects (pickled data): it is not "
        "loaded, pickles can run code; record plain numeric arrays")
    assert all(json.loads(path.read_bytes())["format"] == FORMAT for path in entries + packs)  # compiled again
    assert {p.get("mlir_cache") for n, p in run().items() if n.endswith("[compile]")} == {"hit"}
    assert not marker.exists()


def verdict() -> Response:
    note = Diagnostic("note", "see current operation", 3, 1, file="schedule")
    return Response(Kind.COMPILE_ERROR, "compile failed", [Diagnostic("error", "bad type", 2, 8, [note])],
                    {"ms": 1.5}, ir="module {}", stderr="error: bad type\n", seconds=0.25, stage="compile",
                    facts=CompileFacts(inputs=["4xf32"]),
                    iteration=IterationFacts(kernels=[Launch("k", [8, 1, 1], [1, 1, 1], None, None)]),
                    values=[np.zeros(2)], verdict=Verdict(tolerance=AppliedTolerance(float("nan"), 0.0)))


def test_an_entry_holds_the_verdict_as_json_data() -> None:
    entry = encode(verdict(), "k1")
    assert json.loads(entry)["info"] == {"stage": "compile", "inputs": ["4xf32"], "kernels": [
        {"kernel": "k", "grid": [8, 1, 1], "block": [1, 1, 1], "line": None, "dynamic_shared_bytes": None}]}
    again = decode(entry, "k1")  # of the facts, what JSON holds as it is: no arrays, no NaN
    assert again == Response(**{**vars(verdict()), "values": None, "verdict": None})
    assert again is not None and again.diagnostics[0].notes[0].file == "schedule"


def cache_in(folder: Path) -> CompileCache:
    def mkdir(name: str) -> Path:
        (folder / name).mkdir(exist_ok=True)
        return folder / name

    return CompileCache(SimpleNamespace(cache=SimpleNamespace(mkdir=mkdir)), False)  # type: ignore[arg-type]


@pytest.mark.parametrize("change", [
    "garbage", "pickle", "another version", "a boolean version", "another key", "a kind never kept", "a crash",
    "about the machine", "an extra field", "a missing field", "a bad note", "a line that is text", "not a dict"])
def test_an_entry_that_is_not_one_for_its_key_is_ignored_and_rewritten(tmp_path: Path, change: str) -> None:
    cache = cache_in(tmp_path)
    request = Compile(OPS, "add_0")
    cache.put(request, verdict())
    path = cache._path(cache.key(request))
    good = json.loads(path.read_bytes())
    assert cache.get(request) is not None and cache.hits == 1
    bad = json.loads(path.read_bytes())
    changes: dict[str, Callable[[], object]] = {
        "another version": lambda: bad.update(format=FORMAT + 1),
        "a boolean version": lambda: bad.update(format=True),
        "another key": lambda: bad.update(key=cache.key(Compile(OPS, "mul_0"))),
        "a kind never kept": lambda: bad.update(kind="golden-mismatch"),
        "a crash": lambda: bad.update(kind=["crash"]),
        "about the machine": lambda: bad["info"].update(environment=True),
        "an extra field": lambda: bad.update(run="os.system('true')"),
        "a missing field": lambda: bad.pop("stderr"),
        "a bad note": lambda: bad["diagnostics"][0]["notes"].append({"severity": "note"}),
        "a line that is text": lambda: bad["diagnostics"][0].update(line="2"),
        "not a dict": lambda: bad.clear(),
    }
    if change == "garbage":
        path.write_bytes(b"\xff\x00{not json")
    elif change == "pickle":
        path.write_bytes(pickle.dumps(verdict()))
    else:
        changes[change]()
        path.write_text(json.dumps([] if change == "not a dict" else bad))
    assert cache.get(request) is None and cache.hits == 1 and not path.exists()  # a miss, the entry gone
    cache.put(request, verdict())  # what the compile found is written again
    assert json.loads(path.read_bytes()) == good and cache.get(request) is not None and cache.hits == 2


def test_a_link_planted_as_the_temporary_file_is_not_followed(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_mlir_snippets import paths

    cache = cache_in(tmp_path)
    request = Compile(OPS, "add_0")
    path = cache._path(cache.key(request))
    path.parent.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    (path.parent / f".{path.name}.planted").symlink_to(victim)  # at the first name the writer picks
    names = iter(["planted", "fresh"])
    monkeypatch.setattr(paths.secrets, "token_hex", lambda size: next(names))
    cache.put(request, verdict())
    assert victim.read_text() == "mine" and decode(path.read_bytes(), cache.key(request)) is not None


def test_a_warm_run_takes_its_entries_from_the_file_pack(tmp_path: Path) -> None:
    """Two processes (xdist workers) compile parts of one file: the file's pack holds both
    parts, and a later run takes every verdict from it, not from the entries' files."""
    first, second = cache_in(tmp_path), cache_in(tmp_path)
    add, mul = Compile(OPS, "add_0"), Compile(OPS, "mul_0")
    first.put(add, verdict(), "ops.mlir")
    second.put(mul, verdict(), "ops.mlir")
    first.close()
    second.close()
    for request in (add, mul):  # only the pack is left
        first._path(first.key(request)).unlink()
    later = cache_in(tmp_path)
    for request in (add, mul):
        response = later.get(request, "ops.mlir")
        assert response is not None and response.cache == "hit" and response.kind is Kind.COMPILE_ERROR
    assert later.get(add) is None  # without its file's group: no pack, and no entry file
    assert later.get(add, "other.mlir") is None


@pytest.mark.parametrize("change", ["another key", "a kind never kept", "pickle", "not a pack"])
def test_a_pack_entry_that_is_not_one_for_its_key_is_not_taken(tmp_path: Path, change: str) -> None:
    cache = cache_in(tmp_path)
    add, mul = Compile(OPS, "add_0"), Compile(OPS, "mul_0")
    cache.put(add, verdict(), "ops.mlir")
    cache.close()
    pack = next(tmp_path.rglob("packs/*.json"))
    document = json.loads(pack.read_bytes())
    text = document["entries"][cache.key(add)]
    if change == "another key":  # a verdict filed under another function's key
        document["entries"][cache.key(mul)] = document["entries"].pop(cache.key(add))
    elif change == "a kind never kept":
        document["entries"][cache.key(add)] = text.replace('"kind":"compile-error"', '"kind":"golden-mismatch"')
    elif change == "pickle":
        document["entries"][cache.key(add)] = pickle.dumps(verdict()).hex()
    pack.write_bytes(pickle.dumps(document) if change == "not a pack" else json.dumps(document).encode())
    cache._path(cache.key(add)).unlink()
    later = cache_in(tmp_path)
    assert later.get(add, "ops.mlir") is None and later.get(mul, "ops.mlir") is None and later.hits == 0


def test_a_pack_drops_what_no_run_used_for_a_while(tmp_path: Path) -> None:
    """An edited function's old verdict leaves its file's pack once no run has used it
    for PACK_DAYS; what another process used lately stays."""
    from pytest_mlir_snippets.sandbox.cache import PACK_DAYS

    old, recent = cache_in(tmp_path), cache_in(tmp_path)
    add, mul, bad = (Compile(OPS, name) for name in ("add_0", "mul_0", "bad_0"))
    old.put(add, verdict(), "ops.mlir")
    recent.put(mul, verdict(), "ops.mlir")
    old.close()
    recent.close()
    pack = next(tmp_path.rglob("packs/*.json"))
    document = json.loads(pack.read_bytes())
    document["used"][old.key(add)] -= PACK_DAYS * 86400 + 60
    pack.write_text(json.dumps(document))
    now = cache_in(tmp_path)
    now.put(bad, verdict(), "ops.mlir")
    now.close()
    assert set(json.loads(pack.read_bytes())["entries"]) == {now.key(mul), now.key(bad)}
