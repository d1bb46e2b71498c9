"""An ``mlir-opt`` command line as pass pipelines run in process through the bindings,
with equivalents of upstream's test passes the wheels lack.

``mlir-opt -a -b=x=1 --pass-pipeline=P`` becomes the steps ``a``, ``b{x=1}``, ``P``,
each flag's options kept. A pass anchored on ``func.func`` (``tosa-to-linalg``,
``convert-vector-to-scf``, ...) is nested under ``func.func`` as mlir-opt's implicit
nesting does. Upstream's ``-test-*`` passes (``mlir/test/lib``, not in the wheels):

- ``-test-lower-to-llvm``: the fixed list of public passes of upstream's
  ``mlir/test/lib/Dialect/LLVM/TestLowerToLLVM.cpp``, plus ``convert-cf-to-llvm`` and
  ``convert-ub-to-llvm`` (LLVM 22's ``convert-func-to-llvm`` no longer lowers ``cf``);
- ``-test-transform-dialect-erase-schedule``: erases the transform ops (the schedule);
- ``-test-transform-dialect-interpreter``: its one top-level transform op applied to the
  module by the public transform interpreter;
- ``-test-cf-assert``: ``cf.assert`` lowered to a call that ``puts`` the message when the
  condition is false and goes on (upstream's lowering with ``abortOnFailure=false``);
- ``-test-arith-emulate-wide-int``: the public ``arith-emulate-wide-int`` on the
  ``emulate_*`` functions, their signatures kept (``wideint.py``);
- ``-test-linalg-transform-patterns=test-linalg-to-vector-patterns``: the public
  ``transform.apply_patterns.linalg.pad_vectorization`` where the test pass's other
  pattern sets have nothing to match (``linalgvector.py``);
- any other ``-test-*`` flag is a compile-error naming it.

Passes other LLVM versions had (``-arith-bufferize``, ``-naive-convert-vector-to-llvm``,
...) become what upstream replaced them with (``legacy.py``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from pytest_mlir_snippets.protocol import Kind
from pytest_mlir_snippets.worker.core import SnippetFailure

# TestLowerToLLVM.cpp's buildTestLowerToLLVM, in its order
TEST_LOWER_TO_LLVM = (
    "func.func(convert-vector-to-scf), func.func(convert-linalg-to-loops), lower-affine, convert-scf-to-cf,"
    " canonicalize, cse, convert-vector-to-llvm{{reassociate-fp-reductions={reassociate}}},"
    " func.func(convert-math-to-llvm), expand-strided-metadata, lower-affine, finalize-memref-to-llvm,"
    " convert-func-to-llvm, convert-cf-to-llvm, convert-arith-to-llvm, convert-index-to-llvm,"
    " convert-ub-to-llvm, reconcile-unrealized-casts"
)
ADDED = ("convert-cf-to-llvm", "convert-ub-to-llvm")  # in TEST_LOWER_TO_LLVM, not in TestLowerToLLVM.cpp
# mlir-opt options that are not passes and change nothing here
IGNORED = frozenset({"o", "split-input-file", "verify-each", "allow-unregistered-dialect", "verify-diagnostics"})

Step = str | Callable[[Any], None]  # a pipeline text, or a rewrite of the module in Python


def steps(args: list[str], notes: list[str] | None = None) -> list[Step]:
    """The steps of one mlir-opt command line (its arguments but the input file);
    ``notes`` gets the passes of other LLVM versions replaced (``legacy.py``)."""
    from pytest_mlir_snippets.worker.lowering.legacy import modernize

    found: list[Step] = []
    for arg in modernize(args, lambda name: _anchor(name) != "", notes):
        flag = arg.lstrip("-")
        name, _, value = flag.partition("=")
        if name == "pass-pipeline":
            found.append(value.strip("'\""))
        elif name in IGNORED or name.startswith("mlir-") or not arg.startswith("-"):
            continue
        elif name == "test-lower-to-llvm":
            reassociate = "true" if "reassociate-fp-reductions=1" in value or "=true" in value else "false"
            found.append(f"builtin.module({TEST_LOWER_TO_LLVM.format(reassociate=reassociate)})")
            if notes is not None:  # the passes it adds to upstream's list, said on the record
                notes.append(f"-test-lower-to-llvm: upstream's TestLowerToLLVM passes, plus {', '.join(ADDED)} "
                             "(LLVM 22's convert-func-to-llvm no longer lowers cf and ub)")
        elif name == "test-transform-dialect-erase-schedule":
            found.append(erase_schedule)
        elif name == "test-transform-dialect-interpreter" and value.strip("'\"") in ("", "enable-expensive-checks"):
            found.append(interpret_schedule)
        elif name == "test-cf-assert":
            found.append(cf_assert_without_abort)
        elif name == "test-arith-emulate-wide-int":
            from pytest_mlir_snippets.worker.lowering.wideint import emulate_wide_int

            found.append(emulate_wide_int(" ".join(value.split())))
        elif name == "test-linalg-transform-patterns" and value.strip("'\"") == "test-linalg-to-vector-patterns":
            from pytest_mlir_snippets.worker.lowering.linalgvector import linalg_to_vector_patterns

            found.append(linalg_to_vector_patterns)
        elif name.startswith("test-"):
            raise SnippetFailure(Kind.COMPILE_ERROR,
                                 f"mlir-opt flag {arg}: upstream's test pass '{name}' is not in the wheels' "
                                 "mlir-opt, and the plugin has no equivalent of it")
        elif not _anchor(name):
            raise SnippetFailure(Kind.COMPILE_ERROR,
                                 f"mlir-opt flag {arg}: '{name}' is not a pass or pass pipeline of the wheels' MLIR "
                                 "(the file may be written for an older or newer LLVM)")
        else:
            options = " ".join(value.split())
            found.append(f"builtin.module({nested(name, '{' + options + '}' if options else '')})")
    return found


@functools.cache
def _anchor(name: str) -> str:
    """Where pass ``name`` runs: ``builtin.module``, the op it is restricted to (an
    op-anchored pass: ``lower-vector-mask`` on ``func.func``), or ``func.func`` when the
    pass manager cannot schedule it on a module (mlir-opt's implicit nesting); "" when no
    such pass is registered."""
    from mlir import ir, passmanager

    with ir.Context() as ctx, ir.Location.unknown():
        handler = ctx.attach_diagnostic_handler(lambda d: True)
        try:
            passmanager.PassManager.parse(f"builtin.module({name})").run(ir.Module.parse("").operation)
        except Exception as error:  # a pass that cannot run here says so when it is run
            if "does not refer to a registered pass" in str(error):
                return ""
            restricted = re.search(r"restricted to '([\w.]+)'", str(error))  # an op-anchored pass
            if restricted:
                return restricted.group(1)
            return "func.func" if "unable to schedule" in str(error) else "builtin.module"
        finally:
            handler.detach()
    return "builtin.module"


def nested(name: str, options: str) -> str:
    """``name{options}`` where mlir-opt would nest it, without the ``builtin.module(...)`` around."""
    text = name + options
    anchor = _anchor(name)
    return text if anchor == "builtin.module" else f"{anchor}({text})"


def erase_schedule(module: Any) -> None:
    """``-test-transform-dialect-erase-schedule``: erase every transform op, as upstream's
    TestTransformDialectEraseSchedulePass (a pre-order walk that erases transform ops)."""
    from mlir import ir

    from pytest_mlir_snippets.worker.lowering import mlirtools

    found = mlirtools.ops_where(module, ir, lambda op: op.name.startswith("transform."))
    tops = [op for op in found if not _inside(op, found)]
    for op in tops:
        op.erase()


def interpret_schedule(module: Any) -> None:
    """``-test-transform-dialect-interpreter`` (upstream's TestTransformDialectInterpreter,
    replaced by the public ``transform-interpreter``): the one top-level transform op
    of the module (a ``transform.sequence``, or the ``@__transform_main`` named sequence)
    applied with the module as payload root, by the public interpreter's Python entry."""
    from mlir import ir
    from mlir.dialects.transform import interpreter

    from pytest_mlir_snippets.worker.lowering import mlirtools

    every = mlirtools.ops_where(module, ir, lambda op: op.name.startswith("transform."))
    tops = [op for op in every if not _inside(op, every) and (  # named sequences but the entry are a library
        op.name != "transform.named_sequence" or op.attributes["sym_name"].value == "__transform_main")]
    if len(tops) != 1:
        raise SnippetFailure(Kind.COMPILE_ERROR, "-test-transform-dialect-interpreter: the module has "
                             f"{len(tops)} top-level transform ops; the pass applies exactly one")
    container = tops[0].parent
    while container is not None and container.name != "builtin.module":
        container = container.parent
    interpreter.apply_named_sequence(module.operation, tops[0], container if container is not None else module)


def _inside(op: Any, ops: list[Any]) -> bool:
    parent = op.parent
    while parent is not None:
        if any(parent == o for o in ops):
            return True
        parent = parent.parent
    return False


_HELPER = """module {{
  llvm.func @puts(!llvm.ptr)
  llvm.mlir.global private constant @{name}_msg({msg}) {{addr_space = 0 : i32}} : !llvm.array<{size} x i8>
  llvm.func @{name}(%ok: i1) {{
    llvm.cond_br %ok, ^done, ^fail
  ^fail:
    %p = llvm.mlir.addressof @{name}_msg : !llvm.ptr
    llvm.call @puts(%p) : (!llvm.ptr) -> ()
    llvm.br ^done
  ^done:
    llvm.return
  }}
}}"""


def cf_assert_without_abort(module: Any) -> None:
    """``-test-cf-assert``: each ``cf.assert %c, "msg"`` becomes a call of a helper that
    ``puts`` the message when ``%c`` is false and returns (upstream's TestCFAssert pass
    lowers cf.assert with ``abortOnFailure=false``: message printed, no abort)."""
    from mlir import ir

    from pytest_mlir_snippets.worker.lowering import mlirtools

    asserts = mlirtools.ops_where(module, ir, lambda op: op.name == "cf.assert")
    if not asserts:
        return
    have_puts = any(op.operation.name == "llvm.func" and op.attributes["sym_name"].value == "puts"
                    for op in module.body.operations)
    helpers = []
    for i, op in enumerate(asserts):
        name = f"__lit_cf_assert_{i}"
        message = ir.StringAttr(op.attributes["msg"]).value + "\0"
        helpers.append(_HELPER.format(name=name, msg=ir.StringAttr.get(message), size=len(message.encode())))
        with ir.InsertionPoint(op), op.location:
            ir.Operation.create("llvm.call", results=[], operands=[op.operands[0]],
                                attributes={"callee": ir.FlatSymbolRefAttr.get(name),
                                            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0]),
                                            "op_bundle_sizes": ir.DenseI32ArrayAttr.get([])})
        op.erase()
    for text in helpers:
        parsed = ir.Module.parse(text)  # kept alive while its ops move over
        for helper in list(parsed.body.operations):
            if helper.operation.name == "llvm.func" and helper.attributes["sym_name"].value == "puts":
                if have_puts:
                    continue
                have_puts = True
            helper.detach_from_parent()
            module.body.append(helper)
