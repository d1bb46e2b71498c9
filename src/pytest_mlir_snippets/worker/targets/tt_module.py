"""The module the ``ttnn`` target sends to tt-xla's PJRT plugin (``ttnn_pjrt``), and its
entry's signature.

- ``takes_plugin``: which modules go there (StableHLO and chlo, without TTIR or TTNN ops).
- ``prepared``: chlo ops decomposed into StableHLO (tt-mlir's StableHLO-to-TTIR
  conversion legalizes few of them: ``chlo.square``, ``chlo.erf``, ``chlo.erf_inv``, ...) and a
  dynamic entry refined to static shapes (the plugin refuses dynamic dimensions), as the cpu
  target does (``shlo/refine.py``: the recorded inputs' shapes, else ``--mlir-dynamic-dim``);
  with torch-mlir's bindings (the ``frontends`` extra) where they are installed, else the
  module is sent as it is (Shardy's annotations are dropped from a module that is rewritten:
  one device). A module that needs neither is sent unchanged, so that tt-mlir's
  diagnostics keep the snippet's lines.
- ``signature``: the entry's argument and result types, read from its header with the
  scanner collection uses (``mlirtext/scanner.py``), whatever attributes and locations
  (``loc("x")``, ``{jax.result_info = "..."}``) it carries.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_mlir_snippets.golden.inputs import TypeSpec
from pytest_mlir_snippets.mlirtext.scanner import Scan
from pytest_mlir_snippets.mlirtext.symbols import SplitError
from pytest_mlir_snippets.protocol import Kind
from pytest_mlir_snippets.worker.core import SnippetFailure

_TENSOR = re.compile(r"tensor<(?P<dims>(?:[0-9?]+x)*)(?P<element>\w+)[,>]")
_STRING = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')
_CHLO = re.compile(r"\bchlo\.")
_PLUGIN_INPUT = re.compile(r"\b(?:stablehlo|chlo)\.")
_DYNAMIC = re.compile(r"tensor<(?:[0-9]+x)*\?|tensor<\*|stablehlo\.(?:get_dimension_size|dynamic_)")
_PAIRS = {"(": ")", "<": ">", "[": "]", "{": "}"}
CHLO_TO_STABLEHLO = "builtin.module(func.func(chlo-legalize-to-stablehlo))"
INLINE = "builtin.module(inline{default-pipeline=})"  # a dynamic callee is refined with its caller


def takes_plugin(module: str) -> bool:
    """Whether ``module`` goes through tt-xla's PJRT plugin: StableHLO or its companion chlo
    (JAX's ``chlo.erf``, ``chlo.square``, ...), with no TTIR or TTNN op (those are the builder's)."""
    return _PLUGIN_INPUT.search(module) is not None and "ttir." not in module and "ttnn." not in module


def signature(module: str, name: str = "main") -> tuple[list[TypeSpec], list[TypeSpec]]:
    """The argument and result types (ranked tensors) of function ``name`` in ``module``."""
    header = _header(module, name)
    if header is None:
        raise SnippetFailure(Kind.COMPILE_ERROR, f"no @{name} in the module sent to the plugin")
    text = _STRING.sub('""', header)  # a string (a location's name, an attribute) hides no bracket
    start = text.find("(", text.find("@"))
    end = _closing(text, start)
    arguments = [_type_after_colon(a) for a in _split(text[start + 1:end])]
    rest = text[end + 1:].lstrip()
    results: list[str] = []
    if rest.startswith("->"):
        rest = rest[2:].lstrip()
        if rest.startswith("("):
            results = [r.strip() for r in _split(rest[1:_closing(rest, 0)])]
        else:
            results = [rest]
    return _specs(arguments), _specs(results)


def _header(module: str, name: str) -> str | None:
    """The text of ``func.func @name``'s header (up to its body), found at any module depth."""
    try:
        scan = Scan(module)
    except SplitError:
        return None
    stack = list(scan.top.children)
    while stack:
        op = stack.pop()
        if op.is_function and op.symbol == name:
            return module[op.start:op.header_end]
        stack.extend(op.children)
    return None


def _closing(text: str, start: int) -> int:
    """The offset of the bracket closing the one at ``start``."""
    depth = []
    for i in range(start, len(text)):
        char = text[i]
        if char in _PAIRS and not (char == "<" and i and text[i - 1] == "-"):
            depth.append(_PAIRS[char])
        elif depth and char == depth[-1] and not (char == ">" and text[i - 1] == "-"):
            depth.pop()
            if not depth:
                return i
    return len(text)


def _split(text: str) -> list[str]:
    """``text`` split at the commas outside brackets."""
    parts, depth, last = [], 0, 0
    for i, char in enumerate(text):
        if char in "(<[{":
            depth += 1
        elif char in ")>]}" and not (char == ">" and i and text[i - 1] == "-"):
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[last:i])
            last = i + 1
    tail = text[last:].strip()
    return [p for p in parts if p.strip()] + ([tail] if tail else [])


def _type_after_colon(argument: str) -> str:
    return argument.split(":", 1)[1].strip() if ":" in argument else argument.strip()


def _specs(types: list[str]) -> list[TypeSpec]:
    specs = []
    for text in types:
        m = _TENSOR.match(text)
        if m:
            specs.append(TypeSpec("tensor", m.group("element"),
                                  tuple(None if d == "?" else int(d) for d in m.group("dims").split("x")[:-1])))
    return specs


def prepared(module: str, function: str) -> str:
    """``module`` as tt-mlir takes it: chlo decomposed, a dynamic ``function`` refined."""
    chlo, dynamic = bool(_CHLO.search(module)), bool(_DYNAMIC.search(module))
    if not chlo and not dynamic:
        return module
    from pytest_mlir_snippets.worker.lowering import frontend, mlirtools
    from pytest_mlir_snippets.worker.lowering.shlo import jaxops

    try:
        ctx = frontend._torch_mlir_context()
    except SnippetFailure:  # without the frontends extra: tt-mlir says what it cannot take
        return module
    tir, tpm = frontend._torch_mlir["ir"], frontend._torch_mlir["pm"]
    ctx.allow_unregistered_dialects = True
    with ctx, tir.Location.unknown(), mlirtools.collecting(ctx, "ttnn") as diags:
        try:
            parsed = tir.Module.parse(jaxops.sharding_in_generic_form(module))
        except Exception:  # the plugin's parser says what is wrong, at the snippet's line
            return module
        if "sdy." in module:
            jaxops.drop_sharding(parsed, tir)  # Shardy's annotations: one device
        if chlo:
            mlirtools.run_passes(parsed, CHLO_TO_STABLEHLO, tpm.PassManager.parse, diags, "chlo decomposition")
        if dynamic:
            mlirtools.run_passes(parsed, INLINE, tpm.PassManager.parse, diags, "inlining")
            _refine(parsed, tir, tpm, function, diags)
        return str(parsed.operation.get_asm(enable_debug_info=True))


def _refine(module: Any, tir: Any, tpm: Any, function: str, diags: Any) -> None:
    from pytest_mlir_snippets.worker.lowering import mlirtools
    from pytest_mlir_snippets.worker.lowering.shlo import refine

    func = mlirtools.find_function(module, function)
    if not refine.needs_refinement(module, func, tir):
        return
    size = refine.DYNAMIC_DIM.get()
    shapes = refine.concrete_shapes(func, tir, size)
    sizes = refine.dimension_sizes(func, tir, size)
    try:
        left = refine.refine(module, tir, function, sizes, shapes, tpm.PassManager.parse, diags)
    except ValueError as error:
        raise SnippetFailure(Kind.COMPILE_ERROR, str(error)) from None
    if left:
        raise SnippetFailure(Kind.COMPILE_ERROR, f"shape refinement left {len(left)} op(s) with dynamic shapes: "
                             f"'{left[0].name}' {left[0].results[0].type}")
