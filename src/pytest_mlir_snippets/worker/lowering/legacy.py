"""Upstream integration tests of other LLVM versions than the wheels' (22.1.8): their
``mlir-opt`` flags and syntax mapped to what upstream replaced them with.

Each file is at its own llvm-project commit. Where upstream removed or renamed a pass,
or an op, and said what takes its place, a small table here applies that replacement;
nothing else is rewritten. A flag applies only where the wheels' MLIR has no pass of
that name (a newer wheel that has it runs it as written).

- passes (``modernize``): ``RENAMED`` below, and the dialect-conversion bufferize passes
  (``PARTIAL_BUFFERIZE``), which upstream replaced by one ``one-shot-bufferize``
  (llvm-project#93488, #113840, #114152: "migrate to One-Shot Bufferize");
- syntax (``bridge_syntax``): only when the file does not parse as written, ops that
  upstream removed or renamed, rewritten as upstream's own migration did;
- lowering (``FINISH``): LLVM 22's ``convert-func-to-llvm`` no longer lowers ``cf``
  (llvm-project#120580, whose note reads "If you see failures, add
  -convert-cf-to-llvm to your pass pipeline") nor ``arith``, and its vector lowerings
  leave ``ub.poison``; a pipeline written before that leaves only such ops behind,
  which the runner of its time never saw: they are lowered before the runner.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# flag name -> (the flags in its place; why). A single replacement keeps the flag's options.
RENAMED: dict[str, tuple[tuple[str, ...], str]] = {
    "naive-convert-vector-to-llvm": (
        ("convert-vector-to-llvm",),
        "newer than LLVM 22: upstream moved the body of LLVM 22's convert-vector-to-llvm (vector-to-vector "
        "lowerings, then the conversion) to this name (NaiveConvertVectorToLLVMPass.cpp: the same pattern "
        "sets and options)"),
    "sparse-compiler": (
        ("sparsifier",), "renamed to sparsifier (llvm-project#71875), options kept"),
    "convert-memref-to-llvm": (
        ("finalize-memref-to-llvm",), "renamed to finalize-memref-to-llvm (LLVM 17)"),
    "convert-linalg-to-llvm": (
        ("finalize-memref-to-llvm",),
        "removed; its body was linalg.yield to llvm.return (no op left to lower by then) plus the memref-to-llvm "
        "patterns (LinalgToLLVM.cpp, llvm-project 039b969)"),
    "buffer-deallocation": (
        ("buffer-deallocation-pipeline", "convert-bufferization-to-memref"),
        "removed (llvm-project#126366) for the ownership-based buffer deallocation; that pipeline leaves "
        "bufferization.clone/dealloc, which convert-bufferization-to-memref lowers (as upstream's migrated "
        "integration tests run it)"),
    "finalizing-bufferize": (
        (), "removed (llvm-project#114154); not needed after one-shot-bufferize (#111177)"),
}
# the dialect-conversion bufferize passes, removed for One-Shot Bufferize
PARTIAL_BUFFERIZE = frozenset({
    "arith-bufferize", "linalg-bufferize", "tensor-bufferize", "func-bufferize", "scf-bufferize",
    "vector-bufferize", "bufferization-bufferize", "shape-bufferize"})
# func-bufferize gave functions identity-layout memref signatures; one-shot-bufferize's
# function-boundary option of the same effect
ONE_SHOT = "one-shot-bufferize"
FUNCTION_BOUNDARIES = "bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map"

# what a pipeline may leave behind that it lowered in its time: cf and arith, which
# convert-func-to-llvm lowered too; ub.poison, which LLVM 22's vector lowerings create
# where older ones created llvm.mlir.poison/undef directly (the reason the
# -test-lower-to-llvm list here has convert-ub-to-llvm too)
FINISH_DIALECTS = frozenset({"cf", "arith", "ub"})
FINISH = ("builtin.module(convert-cf-to-llvm, convert-arith-to-llvm, convert-ub-to-llvm, "
          "reconcile-unrealized-casts)")


def modernize(args: list[str], registered: Callable[[str], bool], notes: list[str] | None = None) -> list[str]:
    """``args`` of one mlir-opt command with the removed passes (those ``registered``
    says the wheels lack) replaced by what took their place; ``notes`` gets each
    replacement and its reason."""
    notes = [] if notes is None else notes
    partial = [i for i, a in enumerate(args) if _name(a) in PARTIAL_BUFFERIZE and not registered(_name(a))]
    out: list[str] = []
    for i, arg in enumerate(args):
        name = _name(arg)
        if i in partial:
            if i == partial[0]:  # one one-shot-bufferize where the first of them ran
                whole = any(_name(args[j]) == "func-bufferize" for j in partial)
                out.append(f"-{ONE_SHOT}={FUNCTION_BOUNDARIES}" if whole else f"-{ONE_SHOT}")
                notes.append(f"{' '.join(args[j] for j in partial)} -> {out[-1]}: removed (llvm-project#93488, "
                             "#113840, #114152) for One-Shot Bufferize")
        elif name in RENAMED and arg.startswith("-") and not registered(name):
            flags, why = RENAMED[name]
            options = arg.partition("=")[2]
            new = [f"-{flags[0]}={options}"] if len(flags) == 1 and options else [f"-{flag}" for flag in flags]
            out.extend(new)
            notes.append(f"{arg} -> {' '.join(new) or 'nothing'}: {why}")
        else:
            out.append(arg)
    return out


def _name(arg: str) -> str:
    return arg.lstrip("-").partition("=")[0]


# upstream's own rewrite of vector.splat (llvm-project#152230; removed in #162167):
# `vector.splat %x : vector<4x[8]xf32>` is `vector.broadcast %x : f32 to vector<4x[8]xf32>`
_SPLAT = re.compile(r"vector\.splat\s+(\S+)\s*:\s*vector<((?:\[?\d+\]?x)*)\s*([^>]+)>")
# vector.extractelement/insertelement (removed in llvm-project#149603 "in favor of the
# vector.extract and vector.insert counterparts"), with an index position or none (0-D)
_VECTOR = r"vector<((?:\[?\d+\]?x)*)\s*([^>]+)>"
_EXTRACT = re.compile(r"vector\.extractelement\s+(%[^\s\[]+)\[(?:(%\S+)\s*:\s*index)?\]\s*:\s*" + _VECTOR)
_INSERT = re.compile(r"vector\.insertelement\s+(%[^\s,]+)\s*,\s*(%[^\s\[]+)\[(?:(%\S+)\s*:\s*index)?\]\s*:\s*"
                     + _VECTOR)
# expand_shape to a static shape without output_shape (before llvm-project#69267, which
# made the output shape an explicit input): that shape is the result type's
_EXPAND = re.compile(r"((?:tensor|memref)\.expand_shape\s+%[^\s\[]+\s*\[(?:\s*\[[\d,\s]*\]\s*,?)*\])"
                     r"(\s*(?:attributes\s*)?(?:\{[^{}]*\})?\s*:\s*\S+\s+into\s+(?:tensor|memref)<((?:\d+x)+)[a-zA-Z])")


def _with_output_shape(m: re.Match[str]) -> str:
    dims = m.group(3).rstrip("x").split("x")
    return f"{m.group(1)} output_shape [{', '.join(dims)}]{m.group(2)}"


SYNTAX: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str], str], ...] = (
    (_SPLAT, r"vector.broadcast \1 : \3 to vector<\2\3>",
     "vector.splat removed (llvm-project#162167) for vector.broadcast of a scalar"),
    (_EXTRACT, r"vector.extract \1[\2] : \4 from vector<\3\4>",
     "vector.extractelement removed (llvm-project#149603) for vector.extract"),
    (_INSERT, r"vector.insert \1, \2[\3] : \5 into vector<\4\5>",
     "vector.insertelement removed (llvm-project#149603) for vector.insert"),
    (re.compile(r"\bbufferization\.to_memref\b"), "bufferization.to_buffer",
     "bufferization.to_memref renamed to_buffer (llvm-project#137180, NFC)"),
    # to_tensor's tensor type, once inferred from a plain memref type, is written out since
    # llvm-project#142986 ("users now need to provide the tensor type explicitly")
    (re.compile(r"(bufferization\.to_tensor\s+%[^\s:]+(?:\s+(?:restrict|writable))*\s*:\s*memref<([^<>,]+)>)(?!\s*to\b)"),
     r"\1 to tensor<\2>", "bufferization.to_tensor's inferred tensor type written out (llvm-project#142986)"),
    (_EXPAND, _with_output_shape, "expand_shape to a static shape: its output_shape written out (llvm-project#69267)"),
    (re.compile(r"\barith\.maxf\b"), "arith.maximumf", "arith.maxf renamed maximumf (llvm-project#65800)"),
    (re.compile(r"\barith\.minf\b"), "arith.minimumf", "arith.minf renamed minimumf (llvm-project#65800)"),
    (re.compile(r"\bllvm\.mlir\.null\b"), "llvm.mlir.zero",
     "llvm.mlir.null replaced by llvm.mlir.zero (llvm-project#67183)"),
)


def bridge_syntax(text: str) -> tuple[str, list[str]]:
    """``text`` with removed or renamed ops written as upstream replaced them, and why
    (empty when nothing changed). Each rewrite stays on its line: diagnostics and
    CHECK lines keep their line numbers."""
    reasons = []
    for pattern, replacement, why in SYNTAX:
        text, count = pattern.subn(replacement, text)
        if count:
            reasons.append(why)
    return text, reasons


def left_for_finish(op_names: set[str]) -> bool:
    """Whether what the pipeline left (op names other than builtin's and llvm's) is
    only ops that LLVM 22's convert-func-to-llvm no longer lowers."""
    dialects = {name.partition(".")[0] for name in op_names} - {"builtin", "llvm"}
    return bool(dialects) and dialects <= FINISH_DIALECTS
