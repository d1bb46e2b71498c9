"""StableHLO's ``check`` convention, captured as results of the function.

openxla's testdata checks its results inside the function:
``stablehlo.custom_call @check.expect_eq / @check.expect_almost_eq /
@check.expect_close (actual, expected)``, ``@check.eq`` (which also returns the
verdict as ``tensor<i1>``), and the check dialect's ops (``"check.expect_eq_const"``,
``"check.expect_almost_eq_const"`` with the expected value as an attribute, and
``check.expect_eq / expect_almost_eq / expect_close`` on two operands). Those
checks are the golden: each one's two values become results of the function
(its own results are dropped), the checks are erased, and after the run
``golden.checks`` compares the pairs as StableHLO's interpreter does.

IREE's ``check`` dialect (``tests/e2e``: ``expect_eq[_const]``, ``expect_almost_eq[_const]``
with its ``atol``/``rtol``, ``expect_true``, ``expect_false``, ``expect_all_true``) is captured
the same way, once ``mlirtext.ireeops`` has put the ops in generic form.

A check whose two values both reach it as given (a constant, an argument, a barrier around
one, the value an ``@inputs()`` callee returns: no op between) checks no computation: it is
marked ``vacuous`` (the judge does not count it, and a function whose every check is vacuous
computed nothing).

A check inside a region (``scf.if``, ``stablehlo.while``, ``tosa.cond_if``, a loop body) or
a callee compares its operands each time it runs, as IREE's check module does: it becomes a
call into the worker (``worker/lowering/checkcalls.py``), which keeps every execution's
pair; one that never runs compares nothing.

Runs on torch-mlir's bindings (``tir``) before the StableHLO legalization, or on
upstream's (``dialect="arith"``) for snippets in upstream dialects.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_mlir_snippets.golden.checks import Check
from pytest_mlir_snippets.protocol import Kind
from pytest_mlir_snippets.worker.core import SnippetFailure
from pytest_mlir_snippets.worker.lowering import checkcalls, mlirtools
from pytest_mlir_snippets.worker.lowering.fedvalues import FED

# custom_call targets and check ops -> (rule, tolerance, min ULP, max ULP); the interpreter's
# values (stablehlo-translate --interpret's fallback): check.eq compares floats within 1e-4
CUSTOM_CALLS = {
    "check.expect_eq": ("eq", 0.0, 0, 0),
    "check.expect_almost_eq": ("almost_eq", 1e-3, 0, 0),
    "check.expect_close": ("close", 0.0, 0, 3),
    "check.eq": ("eq_or_almost_eq", 1e-4, 0, 0),
}
CHECK_OPS = {
    "check.expect_eq": ("eq", 0.0, 0, 0),
    "check.expect_eq_const": ("eq", 0.0, 0, 0),
    "check.expect_almost_eq": ("almost_eq", 1e-4, 0, 0),  # the ops' default tolerance
    "check.expect_almost_eq_const": ("almost_eq", 1e-4, 0, 0),
    "check.expect_close": ("close", 0.0, 0, 1),
    # IREE's (tests/e2e): one operand, true is any non-zero integer
    "check.expect_true": ("nonzero", 0.0, 0, 0),
    "check.expect_all_true": ("nonzero", 0.0, 0, 0),
    "check.expect_false": ("zero", 0.0, 0, 0),
}
# the ops that make a constant and convert element types, per dialect of the module
DIALECT_OPS = {"stablehlo": ("stablehlo.constant", "stablehlo.convert", "stablehlo.convert"),
               "arith": ("arith.constant", "arith.extf", "arith.extsi")}
# ops that hand a value on as it was given: what they return is not computed
CONSTANTS = frozenset({"stablehlo.constant", "arith.constant", "tosa.const", "util.unfoldable_constant",
                       "torch.vtensor.literal"})
PASS_THROUGH = frozenset({"util.optimization_barrier", "stablehlo.optimization_barrier", "tensor.cast"})
_CALLS = frozenset({"func.call", "util.call"})
_READABLE = re.compile(r"^(?:f64|f32|f16|bf16|i1|u?i(?:8|16|32|64)|complex<f(?:32|64)>)$")
_PROPERTY = re.compile(r"\b(value|tolerance|atol|rtol|max_ulp_difference|min_ulp_difference) = |\b(bitwise)\b")


def uses_checks(module_text: str) -> bool:
    return "@check." in module_text or '"check.' in module_text or "check.expect_" in module_text


def is_check(op: Any) -> bool:
    """Whether ``op`` is one of the check ops captured here."""
    return _target(op) is not None


def _target(op: Any) -> str | None:
    if op.name == "stablehlo.custom_call":
        name = str(op.attributes["call_target_name"].value)
        return name if name in CUSTOM_CALLS else None
    return op.name if op.name in CHECK_OPS else None


def _properties(op: Any) -> dict[str, str]:
    """An unregistered op's properties (``<{value = ..., tolerance = ...}>``) as text,
    read from the op's own: the bindings show neither them nor (complex) dense values."""
    text = str(op)
    start = text.find("<{")
    if start < 0:
        return {}
    body = text[start + 2: text.rfind("}>")]
    marks = list(_PROPERTY.finditer(body))
    ends = [m.start() for m in marks[1:]] + [len(body)]
    return {m.group(1) or m.group(2): body[m.end(): end].strip().rstrip(",") for m, end in zip(marks, ends)}


def _number(text: str | None, default: float) -> float:
    return default if text is None else float(text.split(":")[0].strip())


def _readable(value: Any, tir: Any, anchor: Any, dialect: str = "stablehlo") -> Any:
    """``value`` in an element type the JIT's caller reads: sub-byte integers widened to
    8 bits, other floats (f8...) to f32 (both exact)."""
    if not str(value.type).startswith("tensor<"):
        return value  # a scalar (IREE's expect_true): an integer the caller reads
    shaped = tir.RankedTensorType(value.type)
    element = str(shaped.element_type)
    if _READABLE.match(element):
        return value
    if re.fullmatch(r"u?i[1-7]", element):
        wide = "ui8" if element.startswith("u") else "i8"
    elif element.startswith(("f", "bf")):
        wide = "f32"
    else:
        raise SnippetFailure(Kind.UNSUPPORTED, f"a check on element type {element} cannot be read back")
    dims = "".join(f"{d}x" for d in shaped.shape)
    _, float_convert, int_convert = DIALECT_OPS[dialect]
    if dialect != "stablehlo" and wide == "ui8":
        wide = "i8"  # arith is signless
    with tir.InsertionPoint(anchor), anchor.location:
        convert = float_convert if wide == "f32" else int_convert
        return tir.Operation.create(convert, results=[tir.Type.parse(f"tensor<{dims}{wide}>")],
                                    operands=[value]).result


def as_given(value: Any, tir: Any, module: Any, seen: frozenset[str] = frozenset()) -> bool:
    """Whether ``value`` reaches its use with no op computing it: an argument, a constant,
    a barrier or cast around such, a callee's result that is one (openxla's ``@inputs()``)."""
    if isinstance(value, tir.BlockArgument):
        return isinstance(value.owner.owner, tir.OpView) and value.owner.owner.operation.name == "func.func"
    op = value.owner
    name = op.operation.name if hasattr(op, "operation") else op.name
    if name in CONSTANTS or FED in op.attributes:  # a constant, or the plugin's conversion of one fed
        return True
    if name in PASS_THROUGH:
        return all(as_given(v, tir, module, seen) for v in op.operands)
    if name in _CALLS:
        callee = str(op.attributes["callee"]).lstrip("@").strip('"')
        if callee in seen:
            return False
        try:
            body = mlirtools.find_function(module, callee).regions[0].blocks[0]
        except (SnippetFailure, IndexError):  # an external function: what it returns is computed elsewhere
            return False
        index = tir.OpResult(value).result_number
        ret = list(body.operations)[-1]
        return index < len(ret.operands) and as_given(ret.operands[index], tir, module, seen | {callee})
    return False


def _directly_in(op: Any, function: str) -> bool:
    parent = op.parent
    return bool(parent.name == "func.func" and str(parent.attributes["sym_name"].value) == function)


def capture(module: Any, tir: Any, function: str, dialect: str = "stablehlo") -> list[Check]:
    """Rewrite ``function``'s checks into results (see the module's docstring); the
    checks, in order, with the results they compare. No checks: nothing changes.
    ``dialect``: whose constants and conversions the rewrite makes (``DIALECT_OPS``)."""
    constant_op = DIALECT_OPS[dialect][0]
    func = mlirtools.find_function(module, function)
    found = mlirtools.ops_where(module, tir, lambda op: _target(op) is not None)
    if not found:
        return []
    block = func.regions[0].blocks[0]
    ret = list(block.operations)[-1]
    checks: list[Check] = []
    results: list[Any] = []
    for op in found:
        name = _target(op) or ""
        rule, tolerance, min_ulp, max_ulp = (CUSTOM_CALLS if op.name == "stablehlo.custom_call" else CHECK_OPS)[name]
        props = _properties(op) if op.name != "stablehlo.custom_call" else {}
        for name in op.attributes if op.name != "stablehlo.custom_call" else ():  # "check.expect_close"(..) {..}
            if _PROPERTY.fullmatch(f"{name} = ") and name not in props:
                props[name] = str(op.attributes[name])
        operands = list(op.operands)
        if "value" in props:  # *_const: the expected value is an attribute
            with op.location:
                constant = tir.Operation.parse(f'"{constant_op}"() <{{value = {props["value"]}}}> : () -> '
                                               f'{operands[0].type}')
            tir.InsertionPoint(op).insert(constant)
            operands.append(constant.result)
        if rule in ("nonzero", "zero") and len(operands) == 1:
            operands.append(operands[0])  # judged on the first alone; the pair keeps the layout
        if len(operands) != 2:
            raise SnippetFailure(Kind.UNSUPPORTED, f"{name} with {len(operands)} operand(s)")
        if "bitwise" in props:  # IREE's expect_eq (mlirtext/ireeops.py): the bytes are compared
            rule = "bits"
        tolerance = _number(props.get("atol", props.get("tolerance")), tolerance)
        rtol = _number(props.get("rtol"), 0.0)
        min_ulp = int(_number(props.get("min_ulp_difference"), min_ulp))
        max_ulp = int(_number(props.get("max_ulp_difference"), max_ulp))
        kind = operands[0].type
        element = str(tir.RankedTensorType(kind).element_type) if str(kind).startswith("tensor<") else str(kind)
        line, column = mlirtools.location_of(str(op.location))
        check = Check(len(checks), name, rule, element, line, column, tolerance, min_ulp, max_ulp, len(results), rtol,
                      vacuous=_directly_in(op, function) and all(as_given(v, tir, module) for v in operands))
        if _directly_in(op, function):
            checks.append(check)
            results += [_readable(v, tir, ret, dialect) for v in operands]
        else:  # in a region (or a callee): a call where it stands, made each time it runs
            checks.append(checkcalls.call_instead(module, tir, op, check, [_readable(v, tir, op, dialect)
                                                                           for v in operands]))
        for verdict in op.results:  # check.eq's tensor<i1>: true (the verdict is taken after the run)
            with tir.InsertionPoint(op), op.location:
                true = tir.Operation.create(constant_op, results=[verdict.type],
                                            attributes={"value": tir.Attribute.parse("dense<true> : tensor<i1>")})
            verdict.replace_all_uses_with(true.result)
    for op in found:
        op.erase()
    with tir.InsertionPoint(ret), ret.location:
        tir.Operation.create(ret.name, operands=results)
    ret.erase()
    inputs = list(tir.FunctionType(func.attributes["function_type"].value).inputs)
    func.attributes["function_type"] = tir.TypeAttr.get(tir.FunctionType.get(inputs, [v.type for v in results]))
    if "res_attrs" in func.attributes:
        del func.attributes["res_attrs"]
    return checks
