"""Upstream MLIR's integration tests as items: RUN lines honoured, CHECK lines as the golden."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_mlir_snippets.mlirtext.litscript import directive_verdict, item_names, read_script

INTEGRATION = "mlir-integration/Dialect"
FMA = f"{INTEGRATION}/Vector/CPU/fma.mlir"  # -test-lower-to-llvm, mlir-runner
ASSUME = f"{INTEGRATION}/MemRef/assume-alignment-runtime-verification.mlir"  # -test-cf-assert, 2>&1, two RUNs
ADDITION = f"{INTEGRATION}/Arith/CPU/addition.mlir"  # mlir-cpu-runner, --match-full-lines
COMPRESS = f"{INTEGRATION}/Vector/CPU/compress.mlir"  # frees its own buffers
CONV1D = f"{INTEGRATION}/Linalg/CPU/test-conv-1d-call.mlir"  # frees buffers a callee allocated
PADTENSOR = f"{INTEGRATION}/Linalg/CPU/test-padtensor.mlir"  # -test-linalg-transform-patterns

LLVM_ONLY = """// RUN: mlir-runner %s -e entry -entry-point-result=i32 | FileCheck %s

// CHECK: 42
llvm.func @helper() -> i32 {
  %0 = llvm.mlir.constant(42 : i32) : i32
  llvm.return %0 : i32
}
llvm.func @entry() -> i32 {
  %0 = llvm.call @helper() : () -> i32
  llvm.return %0 : i32
}
"""

PRINTS = """// DEFINE: %{{pipeline}} = --convert-vector-to-scf --convert-scf-to-cf --convert-vector-to-llvm \\
// DEFINE:   --convert-to-llvm --reconcile-unrealized-casts
// RUN: mlir-opt %s %{{pipeline}} | \\
// RUN:   mlir-runner -e main -entry-point-result=void --shared-libs=%mlir_c_runner_utils | \\
// RUN:   FileCheck %s --check-prefix=OUT -DVALUE=7
{directives}
// OUT: ( [[VALUE]], 8 )
func.func @main() {{
  %v = arith.constant dense<[7, 8]> : vector<2xi32>
  vector.print %v : vector<2xi32>
  return
}}
func.func @not_an_item(%a: i32) -> i32 {{
  return %a : i32
}}
"""

THROUGH_LLI = """// RUN: mlir-opt %s -convert-to-llvm -reconcile-unrealized-casts | mlir-translate -mlir-to-llvmir | \\
// RUN:   %lli --entry-function=entry --dlopen=%mlir_native_utils_lib_dir/libmlir_c_runner_utils%shlibext | \\
// RUN:   FileCheck %s
func.func private @printI64(i64)
func.func private @printNewline()
// CHECK: 42
func.func @entry() -> i32 {
  %c = arith.constant 42 : i64
  func.call @printI64(%c) : (i64) -> ()
  func.call @printNewline() : () -> ()
  %z = arith.constant 0 : i32
  return %z : i32
}
"""

OLD_TRANSFORM = """// RUN: mlir-opt %s -test-transform-dialect-interpreter -test-transform-dialect-erase-schedule \\
// RUN:   -convert-linalg-to-loops -convert-scf-to-cf -expand-strided-metadata -lower-affine \\
// RUN:   -convert-arith-to-llvm -finalize-memref-to-llvm -convert-func-to-llvm -convert-cf-to-llvm \\
// RUN:   -reconcile-unrealized-casts | \\
// RUN: mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils | FileCheck %s
func.func private @printMemrefF32(memref<*xf32>)
func.func @main() {
  %c = arith.constant 3.0 : f32
  %buf = memref.alloc() : memref<6xf32>
  linalg.fill ins(%c : f32) outs(%buf : memref<6xf32>)
  %u = memref.cast %buf : memref<6xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  memref.dealloc %buf : memref<6xf32>
  return
}
// CHECK: [3, 3, 3, 3, 3, 3]
transform.sequence failures(propagate) {
^bb1(%arg1: !transform.any_op):
  %0 = transform.structured.match ops{["linalg.fill"]} in %arg1 : (!transform.any_op) -> !transform.any_op
  %1, %loop = transform.structured.tile_using_for %0 tile_sizes [2]
    : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
}
"""

WRITES_THEN_READS = """// RUN: mlir-opt %s -convert-to-llvm -o %t.mlir
// RUN: mlir-runner %t.mlir -e one -entry-point-result=i32 | FileCheck %s --check-prefix=ONE
// RUN: mlir-opt %s -convert-to-llvm > %t2
// RUN: mlir-opt %t2 -reconcile-unrealized-casts | mlir-runner -e two -entry-point-result=i32 | \\
// RUN:   FileCheck %s --check-prefix=TWO
// ONE: 1
func.func @one() -> i32 {
  %c = arith.constant 1 : i32
  return %c : i32
}
// TWO: 2
func.func @two() -> i32 {
  %c = arith.constant 2 : i32
  return %c : i32
}
"""

EXPECTS_FAILURE = """// RUN: mlir-opt %s -convert-to-llvm | \\
// RUN:   not mlir-runner -e entry -entry-point-result=void | FileCheck %s
// CHECK-NOT: anything
func.func @entry() {
  return
}
"""


def copy(corpus: Path, folder: Path, *names: str) -> list[Path]:
    paths = []
    for name in names:
        target = folder / Path(name).name
        shutil.copyfile(corpus / name, target)
        paths.append(target)
    return paths


def records(path: Path) -> dict[str, dict]:
    return {r["name"]: r for r in json.loads(path.read_text())["items"]}


# ---------------------------------------------------------------- reading RUN lines (lit's parsers)
def test_run_lines_are_read_as_lit_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "t.mlir"
    path.write_text(PRINTS.format(directives="// REQUIRES: system-linux || system-darwin\n// XFAIL: *"))
    script = read_script(path)
    assert script is not None and len(script.commands) == 1
    command = script.commands[0]
    assert command.opt_stages == [["--convert-vector-to-scf", "--convert-scf-to-cf", "--convert-vector-to-llvm",
                                   "--convert-to-llvm", "--reconcile-unrealized-casts"]]
    assert command.entry == "main" and command.runner == "mlir-runner"
    assert command.runner_args[-1].endswith("/lib/libmlir_c_runner_utils.so")
    assert command.filecheck == [str(path), "--check-prefix=OUT", "-DVALUE=7"]
    assert item_names(script) == ["main"]
    assert directive_verdict(script, frozenset({"system-linux"})) == (None, True)
    assert directive_verdict(script, frozenset())[0] == "REQUIRES: system-linux || system-darwin (not on this machine)"


def test_several_commands_get_unique_stable_names_and_other_tools_are_not_run(corpus: Path, tmp_path: Path) -> None:
    (assume,) = copy(corpus, tmp_path, ASSUME)
    script = read_script(assume)
    assert script is not None
    assert item_names(script) == ["main-run1", "main-run2"] == item_names(read_script(assume))  # type: ignore[arg-type]
    assert all(c.merge_stderr for c in script.commands)
    other = tmp_path / "shlo.mlir"
    other.write_text("// RUN: stablehlo-opt %s | stablehlo-translate --interpret | diff %s -\n")
    script = read_script(other)
    assert script is not None and script.commands == [] and len(script.others) == 1


# ---------------------------------------------------------------- running them
@pytest.mark.slow
def test_run_lines_run_and_filecheck_is_the_golden(pytester: pytest.Pytester, corpus: Path, run_items) -> None:
    copy(corpus, pytester.path, FMA, ASSUME, ADDITION)
    pytester.makefile(".mlir", llvm_only=LLVM_ONLY, prints=PRINTS.format(directives=""))
    result, props = run_items("-v", f"--mlir-json={pytester.path / 'out.json'}")
    items = records(pytester.path / "out.json")
    assert sorted(props) == sorted([
        *(f"{f}::{n}[{s}]" for f, n in [("fma.mlir", "entry"), ("addition.mlir", "entry"),
                                        ("llvm_only.mlir", "entry"), ("prints.mlir", "main")]
          for s in ("compile", "execute")),
        *(f"assume-alignment-runtime-verification.mlir::main-run{i}[{s}]" for i in (1, 2)
          for s in ("compile", "execute"))])
    result.assert_outcomes(passed=12)
    executes = {name: r for name, r in items.items() if name.endswith("[execute]")}
    assert {r["golden"] for r in executes.values()} == {"filecheck"}
    assert executes["main[execute]"]["stdout"] == "( 7, 8 )\n"
    assert "ERROR: Runtime op verification failed" in executes["main-run1[execute]"]["stdout"]  # 2>&1, no abort
    assert executes["entry[execute]"]["stdout"]


@pytest.mark.slow
def test_a_changed_check_line_is_a_golden_mismatch_with_filechecks_words(pytester: pytest.Pytester,
                                                                         run_items) -> None:
    pytester.makefile(".mlir", prints=PRINTS.format(directives="").replace("( [[VALUE]], 8 )", "( [[VALUE]], 9 )"))
    result, props = run_items()
    assert props["prints.mlir::main[execute]"]["mlir_kind"] == "golden-mismatch"
    assert props["prints.mlir::main[execute]"]["mlir_golden"] == "filecheck"
    out = result.stdout.str()
    assert "error: OUT: expected string not found in input" in out
    assert "// OUT: ( [[VALUE]], 9 )" in out
    assert "( 7, 8 )" in out


@pytest.mark.slow
def test_directives_skip_and_xfail_the_files_items(pytester: pytest.Pytester, run_items) -> None:
    pytester.makefile(".mlir", unsupported=PRINTS.format(directives="// UNSUPPORTED: system-linux"),
                      required=PRINTS.format(directives="// REQUIRES: no-such-feature"),
                      xfail=PRINTS.format(directives="// XFAIL: *").replace("8 )", "9 )"),
                      xpass=PRINTS.format(directives="// XFAIL: host-supports-jit"),
                      own=PRINTS.format(directives="// XFAIL: host-supports-jit\n// XFAIL: cuda"))
    result, props = run_items("-rsx")
    outcome = {name: p["outcome"] for name, p in props.items()}
    assert outcome["unsupported.mlir::main[execute]"] == outcome["required.mlir::main[compile]"] == "skipped"
    assert outcome["xfail.mlir::main[execute]"] == "skipped"  # strict xfail, failed as expected
    assert outcome["xpass.mlir::main[execute]"] == "failure"  # XPASS(strict)
    assert outcome["own.mlir::main[execute]"] == "passed"  # the function's own line (not cpu) over the file's
    result.stdout.fnmatch_lines(["*REQUIRES: no-such-feature (not on this machine)*"])


@pytest.mark.slow
def test_a_test_pass_without_equivalent_is_a_compile_error_naming_the_flag(pytester: pytest.Pytester,
                                                                           corpus: Path, run_items) -> None:
    """test-linalg-to-vector-patterns: the public pad vectorization where the test pass's
    copy and convolution patterns have nothing to match; otherwise, and for other
    test passes, a compile-error naming the flag."""
    (padtensor,) = copy(corpus, pytester.path, PADTENSOR)
    text = padtensor.read_text()
    (pytester.path / "other.mlir").write_text(text.replace("=test-linalg-to-vector-patterns", "=test-patterns"))
    (pytester.path / "copies.mlir").write_text(text.replace(
        "  return\n}", "  %m = memref.alloc() : memref<2xf32>\n  memref.copy %m, %m : memref<2xf32> to memref<2xf32>\n"
        "  memref.dealloc %m : memref<2xf32>\n  return\n}", 1))
    result, props = run_items()
    assert props["test-padtensor.mlir::main[execute]"]["mlir_kind"] == "pass"
    assert props["other.mlir::main[compile]"]["mlir_kind"] == props["copies.mlir::main[compile]"]["mlir_kind"] \
        == "compile-error"
    out = result.stdout.str()
    assert "mlir-opt flag -test-linalg-transform-patterns=test-patterns: upstream's test pass" in out
    assert "covers tensor.pad only, and this module has memref.copy" in out


@pytest.mark.slow
def test_code_that_frees_its_own_buffers_runs_under_the_default_pipeline(pytester: pytest.Pytester,
                                                                         corpus: Path, run_items) -> None:
    """Without RUN lines: the cpu target's own pipeline, which no longer aborts them."""
    for path in copy(corpus, pytester.path, COMPRESS, CONV1D):
        path.write_text("".join(line for line in path.read_text().splitlines(keepends=True)
                                if not line.startswith("// RUN")))
    result, props = run_items()
    for item in ("compress.mlir::entry[execute]", "test-conv-1d-call.mlir::main[execute]"):
        # they print and return nothing: they ran to the end (no abort), with nothing to compare
        assert (props[item]["mlir_kind"], props[item]["mlir_golden"]) == ("skip", "none"), props[item]
    assert "does not have ownership" not in result.stdout.str()


@pytest.mark.slow
def test_wide_int_emulation_keeps_the_signatures(pytester: pytest.Pytester, corpus: Path, run_items) -> None:
    """-test-arith-emulate-wide-int: the public pass on the emulate_* functions, wrapped;
    -naive-convert-vector-to-llvm (newer than LLVM 22) as LLVM 22's convert-vector-to-llvm."""
    copy(corpus, pytester.path, f"{INTEGRATION}/Arith/CPU/test-wide-int-emulation-max-min-i16.mlir")
    result, props = run_items("--mlir-print-ir", "-rP")
    assert {p["mlir_kind"] for p in props.values()} == {"pass"} and len(props) == 4
    out = result.stdout.str()
    assert "@emulate_maxui__emulated(" in out and "vector<2xi8>" in out
    legacy = props["test-wide-int-emulation-max-min-i16.mlir::entry-run1[execute]"]["mlir_legacy"]
    assert "--naive-convert-vector-to-llvm -> -convert-vector-to-llvm" in legacy


def test_removed_passes_and_ops_become_what_upstream_replaced_them_with() -> None:
    """Only flags the wheels lack are replaced; the dialect bufferize passes become one
    one-shot-bufferize where the first ran; ops keep their lines."""
    from pytest_mlir_snippets.worker.lowering.legacy import bridge_syntax, left_for_finish, modernize

    old = ["-arith-bufferize", "-linalg-bufferize", "-func-bufferize", "-finalizing-bufferize",
           "-buffer-deallocation", "-convert-linalg-to-loops",
           "--naive-convert-vector-to-llvm=reassociate-fp-reductions"]
    assert modernize(old, lambda name: name == "convert-linalg-to-loops") == [
        "-one-shot-bufferize=bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map",
        "-buffer-deallocation-pipeline", "-convert-bufferization-to-memref", "-convert-linalg-to-loops",
        "-convert-vector-to-llvm=reassociate-fp-reductions"]
    assert modernize(old, lambda name: True) == old  # a wheel that has them runs them
    assert modernize(["-tensor-bufferize"], lambda name: False) == ["-one-shot-bufferize"]
    assert modernize(["--sparse-compiler=enable-runtime-library=false"], lambda name: False) == [
        "-sparsifier=enable-runtime-library=false"]
    assert bridge_syntax("%p = llvm.mlir.null : !llvm.ptr")[0] == "%p = llvm.mlir.zero : !llvm.ptr"
    assert bridge_syntax("%m = arith.maxf %a, %b : f32")[0] == "%m = arith.maximumf %a, %b : f32"
    assert bridge_syntax("%e = tensor.expand_shape %t [[0, 1]] : tensor<6xf32> into tensor<2x3xf32>")[0] == (
        "%e = tensor.expand_shape %t [[0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>")
    dynamic = "%e = tensor.expand_shape %t [[0, 1]] : tensor<?xf32> into tensor<2x?xf32>"
    assert bridge_syntax(dynamic) == (dynamic, [])  # its sizes would have to be computed: left as written
    assert bridge_syntax("%t = bufferization.to_tensor %m restrict : memref<4x?xf32>")[0] == (
        "%t = bufferization.to_tensor %m restrict : memref<4x?xf32> to tensor<4x?xf32>")
    text, why = bridge_syntax("%v = vector.splat %f : vector<1x[4]xf32>\n%m = bufferization.to_memref %t : T to M\n")
    assert text == "%v = vector.broadcast %f : f32 to vector<1x[4]xf32>\n%m = bufferization.to_buffer %t : T to M\n"
    assert len(why) == 2 and bridge_syntax("%v = vector.broadcast %f : f32 to vector<4xf32>") == (
        "%v = vector.broadcast %f : f32 to vector<4xf32>", [])
    text, why = bridge_syntax("%e = vector.extractelement %v[%i : index] : vector<4xf32>\n"
                              "%w = vector.insertelement %e, %z[] : vector<f32>\n")
    assert text == ("%e = vector.extract %v[%i] : f32 from vector<4xf32>\n"
                    "%w = vector.insert %e, %z[] : f32 into vector<f32>\n") and len(why) == 2
    assert left_for_finish({"cf.br", "arith.constant", "llvm.call"})
    assert not left_for_finish({"cf.br", "memref.load"}) and not left_for_finish({"llvm.func"})


@pytest.mark.slow
def test_files_of_other_llvm_versions_run_with_upstreams_replacements(pytester: pytest.Pytester, corpus: Path,
                                                                       run_items) -> None:
    """-arith-bufferize ... -buffer-deallocation (removed), vector.splat (removed), and
    cf that LLVM 22's convert-func-to-llvm leaves: each file passes on FileCheck."""
    copy(corpus, pytester.path, f"{INTEGRATION}/Linalg/CPU/test-tensor-e2e.mlir",
         f"{INTEGRATION}/Vector/CPU/transfer-read-2d.mlir", CONV1D)
    _, props = run_items()
    assert {p["mlir_kind"] for p in props.values()} == {"pass"} and len(props) == 10
    assert {p["mlir_golden"] for n, p in props.items() if n.endswith("[execute]")} == {"filecheck"}
    legacy = {n.split("::")[0]: p.get("mlir_legacy", "") for n, p in props.items() if n.endswith("[execute]")}
    assert "-arith-bufferize -linalg-bufferize -tensor-bufferize -func-bufferize -> -one-shot-bufferize" \
        in legacy["test-tensor-e2e.mlir"]  # what was replaced, and why
    assert "vector.splat removed" in legacy["transfer-read-2d.mlir"]
    assert "cf.br" in legacy["test-conv-1d-call.mlir"]


def test_lit_local_cfg_files_apply_as_lit_applies_them(tmp_path: Path) -> None:
    """From the suite's root down: a build option the wheels lack marks the folder
    unsupported; substitutions and `env` before the runner are kept."""
    (tmp_path / "lit.cfg.py").write_text("")
    (tmp_path / "lit.local.cfg").write_text('config.substitutions.append(("%{libs}", "-shared-libs=x.so"))\n')
    amx = tmp_path / "AMX"
    amx.mkdir()
    (amx / "lit.local.cfg").write_text("if not config.mlir_run_amx_tests:\n    config.unsupported = True\n")
    text = "// RUN: mlir-opt %s | env A=1 mlir-runner -e main %{libs} | FileCheck %s\n"
    (tmp_path / "t.mlir").write_text(text)
    (amx / "t.mlir").write_text(text)
    script = read_script(tmp_path / "t.mlir")
    assert script is not None and directive_verdict(script) == (None, False)
    assert script.commands[0].runner_args == ["-e", "main", "-shared-libs=x.so"]
    assert script.commands[0].env == {"A": "1"}
    amx_script = read_script(amx / "t.mlir")
    assert amx_script is not None
    assert directive_verdict(amx_script)[0] == f"UNSUPPORTED: {amx / 'lit.local.cfg'} marks the folder unsupported " \
                                               "on this machine"


@pytest.mark.slow
def test_mlir_translate_into_lli_and_not(pytester: pytest.Pytester, run_items) -> None:
    pytester.makefile(".mlir", lli=THROUGH_LLI, expects_failure=EXPECTS_FAILURE)
    result, props = run_items()
    assert props["lli.mlir::entry[execute]"]["mlir_kind"] == "pass"
    assert props["lli.mlir::entry[execute]"]["mlir_golden"] == "filecheck"
    assert props["expects_failure.mlir::entry[execute]"]["mlir_kind"] == "execute-error"
    assert "mlir-runner exited 0, but the RUN line expects a failure (not)" in result.stdout.str()


@pytest.mark.slow
def test_a_file_an_earlier_command_writes_is_read_as_its_pipeline(pytester: pytest.Pytester, run_items) -> None:
    """`mlir-opt %s ... -o %t` (or `> %t`), then `mlir-runner %t` or `mlir-opt %t | ...`:
    the writer's stages run first, in process; the writer is no item."""
    path = pytester.makefile(".mlir", chained=WRITES_THEN_READS)
    script = read_script(path)
    assert script is not None and script.others == [] and item_names(script) == ["one-run1", "two-run2"]
    assert script.commands[1].opt_stages == [["-convert-to-llvm"], ["-reconcile-unrealized-casts"]]
    assert script.commands[0].text.startswith(f"mlir-opt {path} -convert-to-llvm -o ")
    _, props = run_items()
    assert {n: p["mlir_kind"] for n, p in props.items() if n.endswith("[execute]")} == {
        "chained.mlir::one-run1[execute]": "pass", "chained.mlir::two-run2[execute]": "pass"}


@pytest.mark.slow
def test_the_transform_dialect_test_interpreter_applies_the_files_schedule(pytester: pytest.Pytester,
                                                                           run_items) -> None:
    """-test-transform-dialect-interpreter: the module's one top-level transform op
    (here an old-style transform.sequence), applied by the public interpreter."""
    from mlir import ir

    from pytest_mlir_snippets.worker.lowering.optflags import interpret_schedule

    with ir.Context():
        module = ir.Module.parse(OLD_TRANSFORM)
        interpret_schedule(module)
        assert "scf.for" in str(module)  # the fill tiled by 2
    pytester.makefile(".mlir", old_transform=OLD_TRANSFORM)
    _, props = run_items()
    assert props["old_transform.mlir::main[execute]"]["mlir_kind"] == "pass"


def test_upstreams_own_lit_local_cfgs_run_with_this_hosts_site_values(corpus: Path, tmp_path: Path) -> None:
    """Upstream's ``Integration/lit.local.cfg`` (integration tests on only where the build says
    so) and the folders' own, at their places: the site table says on, with no emulator, so
    the tests run; an Arm-only folder skips naming its lit.local.cfg."""
    configs = corpus / "lit-configs" / "Integration"
    shutil.copytree(configs, tmp_path / "Integration")
    cpu = tmp_path / "Integration" / "Dialect" / "LLVMIR" / "CPU"
    sve = tmp_path / "Integration" / "Dialect" / "Vector" / "CPU" / "ArmSVE"
    sve.mkdir(parents=True)
    (sve / "lit.local.cfg").write_text("if not config.mlir_run_arm_sve_tests:\n    config.unsupported = True\n")
    text = "// RUN: mlir-opt %s -test-lower-to-llvm | mlir-runner -e main %{libs} | FileCheck %s\n"
    for folder in (cpu, sve):
        (folder / "t.mlir").write_text(text)
    script = read_script(cpu / "t.mlir")
    assert script is not None and directive_verdict(script) == (None, False)
    sve_script = read_script(sve / "t.mlir")
    assert sve_script is not None
    assert directive_verdict(sve_script)[0] == f"UNSUPPORTED: {sve / 'lit.local.cfg'} marks the folder " \
                                               "unsupported on this machine"


def test_op_anchored_passes_nest_as_mlir_opt_nests_them() -> None:
    from pytest_mlir_snippets.worker.lowering.optflags import steps

    notes: list[str] = []
    assert steps(["--lower-vector-mask", "-test-lower-to-llvm"], notes)[0] == \
        "builtin.module(func.func(lower-vector-mask))"
    assert any("convert-cf-to-llvm, convert-ub-to-llvm" in note for note in notes)  # what the emulation adds
