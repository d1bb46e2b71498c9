"""The splitter against the MLIR parser, on every corpus file and on hard cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_mlir_snippets.mlirtext.splitter import SnippetSource, SplitError

ir = pytest.importorskip("torch_mlir.ir")
stablehlo = pytest.importorskip("torch_mlir._mlir_libs._stablehlo")
torch_dialect = pytest.importorskip("torch_mlir.dialects.torch")

# Files whose custom syntax belongs to dialects no installed MLIR has (tt-mlir's
# ttcore/ttir, Shardy): the parser cannot read them at all, split or not.
UNPARSABLE = {"sdy_manual_computation.mlir", "stablehlo_convert_cpu_hoisted.mlir",
              "ttir_device_module_nested_func.mlir", "ttir_to_layout.mlir"}


def context():
    ctx = ir.Context()
    torch_dialect.register_dialect(ctx)
    stablehlo.register_dialect(ctx)
    ctx.allow_unregistered_dialects = True
    return ctx


def public_definitions(module) -> list[str]:
    """What the parser says: public func.func definitions, nested modules included."""
    names: list[str] = []

    def walk(op) -> None:
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    if child.operation.name == "func.func":
                        attrs = child.attributes
                        visibility = attrs["sym_visibility"].value if "sym_visibility" in attrs else "public"
                        if visibility == "public" and len(child.regions[0].blocks):
                            names.append(attrs["sym_name"].value)
                    else:
                        walk(child.operation)

    walk(module.operation)
    return names


def corpus_files(corpus: Path) -> list[Path]:
    return sorted(corpus.glob("tt-mlir-snippets/**/*.mlir")) + sorted(corpus.glob("iree-onnx-ops/*/model.mlir"))


@pytest.mark.slow
def test_agrees_with_the_parser_on_every_corpus_file(corpus: Path) -> None:
    files = corpus_files(corpus)
    assert len(files) > 500
    checked, unparsable, functions = 0, set(), 0
    for path in files:
        text = path.read_text()
        source = SnippetSource(text)
        names = [fn.name for fn in source.functions]
        functions += len(names)
        with context():
            try:
                module = ir.Module.parse(text)
            except ir.MLIRError as error:
                assert "not found for custom op" in str(error), path
                unparsable.add(path.name)
                for fn in source.functions:  # a split parses, or fails the same way
                    try:
                        split = ir.Module.parse(source.split(fn).text)
                    except ir.MLIRError as split_error:
                        assert "not found for custom op" in str(split_error), (path, fn.name)
                    else:
                        assert fn.name in public_definitions(split), (path, fn.name)
                continue
            assert names == public_definitions(module), path
            for fn in source.functions:
                split = ir.Module.parse(source.split(fn).text)
                assert fn.name in public_definitions(split), (path, fn.name)
            checked += 1
    assert unparsable == UNPARSABLE
    assert checked == len(files) - len(UNPARSABLE)
    assert functions > 600


def test_unparsable_files_still_split_by_structure(corpus: Path) -> None:
    path = corpus / "tt-mlir-snippets/ttir/ttir_device_module_nested_func.mlir"
    source = SnippetSource(path.read_text())
    assert [fn.uid for fn in source.functions] == ["my_modela", "my_modelb"]
    first = source.split(source.functions[0]).text
    assert "@nested_func" in first and "@my_modelb" not in first  # the callee comes along
    assert "@nested_func" not in source.split(source.functions[1]).text


HARD = r'''#map = affine_map<(d0) -> (d0)>
!alias = tensor<4xf32>
module attributes {outer.attr = "x{y}"} {
  memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
  func.func private @decl(!alias) -> !alias
  func.func private @helper(%x: !alias) -> !alias {
    %0 = func.call @decl(%x) : (!alias) -> !alias
    return %0 : !alias
  }
  // a comment with a brace { and a "quote
  func.func @multi_line(
      %a: tensor<4xf32> {test.name = "a}b"},
      %b: tensor<4xf32>)
      -> (tensor<4xf32> {test.result = "}"})
      attributes {test.fn = {nested = [1, 2]}} {
    %s = "test.op"() {text = "} { // not a comment"} : () -> i1
    %0 = func.call @helper(%a) : (!alias) -> !alias
    return %0 : tensor<4xf32>
  }
  func.func @"quoted.name/with..dots"() -> memref<4xf32> {
    %0 = memref.get_global @table : memref<4xf32>
    return %0 : memref<4xf32>
  }
  func.func nested @not_an_item() { return }
  module @inner attributes {inner.attr = 1 : i32} {
    func.func @same() { return }
  }
  module @other {
    func.func @same() { return }
  }
}
'''


def test_hard_cases_split_and_parse() -> None:
    source = SnippetSource(HARD)
    assert [fn.uid for fn in source.functions] == ["multi_line", "quoted.name/with..dots", "inner.same", "other.same"]
    assert [fn.line for fn in source.functions] == [11, 20, 26, 29]
    with context():
        for fn in source.functions:
            text = source.split(fn).text
            ir.Module.parse(text)
        multi = source.split(source.functions[0]).text
        assert "@helper" in multi and "@decl" in multi and "@table" not in multi
        assert "#map = " in multi and "!alias = " in multi
        quoted = source.split(source.functions[1]).text
        assert "@table" in quoted and "@helper" not in quoted
        inner = source.split(source.functions[2]).text
        assert "outer.attr" in inner and "inner.attr" in inner  # attributes of both enclosing modules


def test_line_map_points_into_the_file() -> None:
    source = SnippetSource(HARD)
    fn = source.functions[0]
    split = source.split(fn)
    func_line = split.text.splitlines().index(next(line for line in split.text.splitlines() if "@multi_line(" in line))
    assert split.original_line(func_line + 1) == fn.line


def test_generic_form_and_resources() -> None:
    text = '''"builtin.module"() ({
  "func.func"() <{function_type = () -> tensor<2xf32>, sym_name = "gen"}> ({
    %0 = "arith.constant"() <{value = dense_resource<blob_a> : tensor<2xf32>}> : () -> tensor<2xf32>
    "func.return"(%0) : (tensor<2xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = () -> (), sym_name = "hidden", sym_visibility = "private"}> ({
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
{-#
  dialect_resources: {
    builtin: {
      blob_a: "0x040000000000803F00000040",
      blob_unused: "0x0400000000004040"
    }
  }
#-}
'''
    source = SnippetSource(text)
    assert [fn.name for fn in source.functions] == ["gen"]
    split = source.split(source.functions[0]).text
    assert "blob_a" in split and "blob_unused" not in split
    with context():
        ir.Module.parse(split)


def test_duplicates_in_one_module_get_distinct_ids() -> None:
    source = SnippetSource("func.func @f() { return }\nfunc.func @f() { return }\n")
    assert [fn.uid for fn in source.functions] == ["f", "f~2"]
    assert source.functions[1].duplicate_of == 1


@pytest.mark.parametrize("text", ["func.func @f() {\n  return\n", "module {\n  func.func @f() { return }\n"])
def test_unbalanced_text_is_a_split_error(text: str) -> None:
    with pytest.raises(SplitError):
        SnippetSource(text)
