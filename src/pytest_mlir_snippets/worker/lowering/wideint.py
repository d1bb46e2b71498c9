"""An equivalent of upstream's ``-test-arith-emulate-wide-int`` (``mlir/test/lib/Dialect/
Arith/TestEmulateWideInt.cpp``), which the wheels' mlir-opt lacks.

The test pass emulates wide integer arithmetic (``i16`` as ``vector<2xi8>`` with
``widest-int-supported=8``) in the functions whose name starts with ``function-prefix``
(default ``emulate_``), keeping their signatures: bit casts at the boundary. Here the
public ``arith-emulate-wide-int`` pass converts those functions (alone, in a module of
their own) to ``NAME__emulated``, whose signatures it changes, and ``NAME`` becomes a
wrapper with the original signature: each argument bit cast to the emulated type
(``iN`` to ``vector<2xiN/2>``; ``vector<SxiN>`` to ``vector<Sx2xiN/2>``, low half first,
as the emulation lays them out), the call, the results cast back. Callers are untouched.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pytest_mlir_snippets.protocol import Kind
from pytest_mlir_snippets.worker.core import SnippetFailure


def emulate_wide_int(options: str) -> Callable[[Any], None]:
    """The module rewrite for ``-test-arith-emulate-wide-int=OPTIONS``."""
    widest = re.search(r"widest-int-supported=(\d+)", options)
    prefix = re.search(r"function-prefix=(\S+)", options)
    bits, start = (int(widest.group(1)) if widest else 32), (prefix.group(1) if prefix else "emulate_")

    def test_arith_emulate_wide_int(module: Any) -> None:
        _emulate(module, bits, start)

    return test_arith_emulate_wide_int


def _emulate(module: Any, bits: int, prefix: str) -> None:
    from mlir import ir, passmanager

    funcs = [op for op in module.body.operations if op.operation.name == "func.func" and len(op.regions[0].blocks)
             and ir.StringAttr(op.attributes["sym_name"]).value.startswith(prefix)]
    if not funcs:
        return
    try:
        scratch = ir.Module.parse("module {\n" + "\n".join(str(f) for f in funcs) + "\n}")
        passmanager.PassManager.parse(f"builtin.module(arith-emulate-wide-int{{widest-int-supported={bits}}})").run(
            scratch.operation)
    except Exception as error:
        raise SnippetFailure(Kind.COMPILE_ERROR, "-test-arith-emulate-wide-int (arith-emulate-wide-int on the "
                             f"{prefix}* functions) failed: {error}") from None
    wrappers = []
    for original, emulated in zip(funcs, list(scratch.body.operations), strict=True):
        name = ir.StringAttr(original.attributes["sym_name"]).value
        narrow = ir.FunctionType(ir.TypeAttr(emulated.attributes["function_type"]).value)
        wrappers.append(_wrapper(name, ir.FunctionType(ir.TypeAttr(original.attributes["function_type"]).value),
                                 narrow, "sym_visibility" in original.attributes))
        wrappers.append(f"func.func private @{name}__emulated{_declared(narrow)}")  # for parsing the wrapper alone
        emulated.attributes["sym_name"] = ir.StringAttr.get(f"{name}__emulated")
        emulated.attributes["sym_visibility"] = ir.StringAttr.get("private")
        emulated.detach_from_parent()
        module.body.append(emulated)
        original.erase()
    parsed = ir.Module.parse("module {\n" + "\n".join(wrappers) + "\n}")  # kept alive while its ops move over
    for wrapper in list(parsed.body.operations):
        if ir.StringAttr(wrapper.attributes["sym_name"]).value.endswith("__emulated"):
            continue  # the declaration: the definition moved over already
        wrapper.detach_from_parent()
        module.body.append(wrapper)


def _declared(function_type: Any) -> str:
    return (f"({', '.join(map(str, function_type.inputs))}) -> "
            f"({', '.join(map(str, function_type.results))})")


def _wrapper(name: str, wide: Any, emulated: Any, private: bool) -> str:
    lines, args = [], []
    for i, (a, b) in enumerate(zip(wide.inputs, emulated.inputs, strict=True)):
        lines += _cast(f"%a{i}", f"%c{i}", str(a), str(b), narrow=True)
        args.append(f"%c{i}" if str(a) != str(b) else f"%a{i}")
    call_types = _declared(emulated)
    results = [f"%r{i}" for i in range(len(emulated.results))]
    lines.append(f"{', '.join(results) + ' = ' if results else ''}func.call @{name}__emulated({', '.join(args)})"
                 f" : {call_types}")
    outs = []
    for i, (a, b) in enumerate(zip(wide.results, emulated.results, strict=True)):
        lines += _cast(f"%r{i}", f"%o{i}", str(a), str(b), narrow=False)
        outs.append(f"%o{i}" if str(a) != str(b) else f"%r{i}")
    signature = ", ".join(f"%a{i}: {t}" for i, t in enumerate(wide.inputs))
    result_types = ", ".join(map(str, wide.results))
    ret = f"return {', '.join(outs)} : {result_types}" if outs else "return"
    body = "\n    ".join([*lines, ret])
    return (f"func.func {'private ' if private else ''}@{name}({signature}) -> ({result_types}) {{\n    {body}\n}}")


_INT = re.compile(r"^i(\d+)$")
_VECTOR = re.compile(r"^vector<(\d+)xi(\d+)>$")


def _cast(value: str, out: str, wide: str, emulated: str, narrow: bool) -> list[str]:
    """Ops that bit cast ``value`` between the wide type and the emulated one (``narrow``:
    wide to emulated), the result named ``out``; [] where the types are the same."""
    if wide == emulated:
        return []
    scalar, vector = _INT.match(wide), _VECTOR.match(wide)
    if scalar:
        one = f"vector<1x{wide}>"
        if narrow:
            return [f"{out}_v = vector.broadcast {value} : {wide} to {one}",
                    f"{out} = vector.bitcast {out}_v : {one} to {emulated}"]
        return [f"{out}_v = vector.bitcast {value} : {emulated} to {one}",
                f"{out} = vector.extract {out}_v[0] : {wide} from {one}"]
    if vector:
        size, width = int(vector.group(1)), int(vector.group(2))
        flat = f"vector<{2 * size}xi{width // 2}>"
        if narrow:
            return [f"{out}_v = vector.bitcast {value} : {wide} to {flat}",
                    f"{out} = vector.shape_cast {out}_v : {flat} to {emulated}"]
        return [f"{out}_v = vector.shape_cast {value} : {emulated} to {flat}",
                f"{out} = vector.bitcast {out}_v : {flat} to {wide}"]
    raise SnippetFailure(Kind.COMPILE_ERROR, f"-test-arith-emulate-wide-int: the plugin's equivalent cannot keep a "
                         f"{wide} argument or result (emulated as {emulated}) in the signature")
