"""A function whose arguments or results are vectors (``@vdot(%a: vector<16xf32>, ...)``),
fed and read through memory the plugin owns: the function is renamed and made private, and
an entry of its name takes a memref for each vector argument (``vector.transfer_read``
into the vector) and gives a new buffer for each vector result (``vector.transfer_write``),
calling it. Runs, references and drivers then see memrefs, which they feed and read as
any other; the target's pipeline lowers the entry with the function.

A scalable vector (``vector<[4]xf32>``) has no size known before the run: not rewritten,
its type stays one the target cannot feed.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from typing import Any

SUFFIX = "__vector_entry"  # the renamed function's name: <name>__vector_entry


def wrap(module: Any, func: Any, ir: Any) -> tuple[Any, Any]:
    """(``module``, ``func``: its ``func.func`` op), or, when ``func`` takes or gives
    fixed-size vectors, the module parsed again with the entry that replaces it under its
    name, and that entry."""
    ftype = func.type
    vectors = [t for t in [*ftype.inputs, *ftype.results] if isinstance(t, ir.VectorType)]
    if not vectors or any(ir.VectorType(t).scalable for t in vectors) or not len(func.regions[0].blocks):
        return module, func
    name = func.attributes["sym_name"].value
    inner = name + SUFFIX
    func.attributes["sym_name"] = ir.StringAttr.get(inner)
    func.attributes["sym_visibility"] = ir.StringAttr.get("private")
    text = str(module).rstrip()
    assert text.endswith("}")
    entry = _entry_text(name, inner, [str(t) for t in ftype.inputs], [str(t) for t in ftype.results])
    again = ir.Module.parse(text[:-1] + entry + "}\n")
    found = next(op for op in again.body.operations
                 if op.operation.name == "func.func" and op.attributes["sym_name"].value == name)
    return again, found


def _memref(vector: str) -> str:
    return "memref<" + vector[len("vector<"):]


def _zero(element: str) -> str:
    if element.startswith(("f", "bf", "tf")):
        return f"arith.constant 0.0 : {element}"
    return f"arith.constant {'false' if element == 'i1' else '0'} : {element}"


def _entry_text(name: str, inner: str, inputs: list[str], results: list[str]) -> str:
    """The entry's text: each vector argument read from a memref, each vector result written to a new one."""
    body = ["  %c0 = arith.constant 0 : index"]
    args, operands = [], []
    for i, kind in enumerate(inputs):
        if not kind.startswith("vector<"):
            args.append(f"%a{i}: {kind}")
            operands.append(f"%a{i}")
            continue
        shape, element = _shape(kind)
        args.append(f"%a{i}: {_memref(kind)}")
        body += [f"  %p{i} = {_zero(element)}",
                 f"  %v{i} = vector.transfer_read %a{i}[{', '.join(['%c0'] * len(shape))}], %p{i} "
                 f"{{in_bounds = [{', '.join(['true'] * len(shape))}]}} : {_memref(kind)}, {kind}"]
        operands.append(f"%v{i}")
    got = f"%r:{len(results)}" if len(results) > 1 else "%r"
    call = f"func.call @{inner}({', '.join(operands)}) : ({', '.join(inputs)}) -> ({', '.join(results)})"
    body.append(f"  {got} = {call}" if results else f"  {call}")
    returned = []
    for k, kind in enumerate(results):
        value = f"%r#{k}" if len(results) > 1 else "%r"
        if not kind.startswith("vector<"):
            returned.append(value)
            continue
        shape = _shape(kind)[0]
        body += [f"  %m{k} = memref.alloc() : {_memref(kind)}",
                 f"  vector.transfer_write {value}, %m{k}[{', '.join(['%c0'] * len(shape))}] "
                 f"{{in_bounds = [{', '.join(['true'] * len(shape))}]}} : {kind}, {_memref(kind)}"]
        returned.append(f"%m{k}")
    shown = [_memref(t) if t.startswith("vector<") else t for t in results]
    body.append(f"  return {', '.join(returned)} : {', '.join(shown)}" if results else "  return")
    return (f"func.func @{name}({', '.join(args)}) -> ({', '.join(shown)}) {{\n" + "\n".join(body) + "\n}\n")


def _shape(vector: str) -> tuple[list[int], str]:
    """The dimensions and element type of a fixed-size vector type's text."""
    *dims, element = vector[len("vector<"):-1].split("x")
    return [int(d) for d in dims], element
