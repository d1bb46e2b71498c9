"""JAX's LAPACK custom calls (``stablehlo.custom_call @lapack_spotrf_ffi`` ..., what its
CPU lowering of ``jnp.linalg`` emits) as calls, at run time, into LAPACK as scipy
provides it (``lapack_run.py``), the library JAX's CPU kernels call themselves.

Each call becomes, where it stands: its operands as buffers (``bufferization.to_buffer``),
a fresh buffer per result (``memref.alloc``), a call to a declared external function
(``llvm.emit_c_interface``) that reads the operands and writes the results, and the
results as tensors again (``bufferization.to_tensor``). The callee's name says all the
run-time side needs (``lapack_run.callee_name``), so the JIT resolves it to a Python
callback with no state kept between compile and run. A custom call with another target
is left for the legalization, whose message names the target.

Runs on torch-mlir's bindings (``tir``), before ``stablehlo-legalize-to-linalg``.
"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.worker.lowering import mlirtools
from pytest_mlir_snippets.worker.lowering.shlo.lapack_run import ROUTINES, callee_name, parse_target


def _target(op: Any, tir: Any) -> str:
    return str(tir.StringAttr(op.attributes["call_target_name"]).value)


def _attrs(op: Any, tir: Any) -> dict[str, str]:
    """The call's ``mhlo.backend_config`` (``uplo = 76 : ui8``) as characters."""
    if "mhlo.backend_config" not in op.attributes:
        return {}
    config = tir.DictAttr(op.attributes["mhlo.backend_config"])
    found = {}
    for i in range(len(config)):
        named = config[i]
        found[named.name] = chr(tir.IntegerAttr(named.attr).value)
    return found


def _batch_dims(op: Any, tir: Any) -> int:
    if "mhlo.frontend_attributes" not in op.attributes:
        return 0
    frontend = tir.DictAttr(op.attributes["mhlo.frontend_attributes"])
    return int(tir.StringAttr(frontend["num_batch_dims"]).value) if "num_batch_dims" in frontend else 0


def _lowerable(op: Any, tir: Any) -> bool:
    if op.name != "stablehlo.custom_call":
        return False
    parsed = parse_target(_target(op, tir))
    return parsed is not None and parsed[1] in ROUTINES and all(
        tir.RankedTensorType(v.type).has_static_shape for v in [*op.operands, *op.results])


def lower_all(module: Any, tir: Any) -> int:
    """Every LAPACK custom call of static shapes as a call into the worker; how many."""
    found = mlirtools.ops_where(module, tir, lambda op: _lowerable(op, tir))
    for op in found:
        _call_instead(module, op, tir)
    return len(found)


def _memref(tensor_type: Any, tir: Any) -> Any:
    shaped = tir.RankedTensorType(tensor_type)
    return tir.MemRefType.get(list(shaped.shape), shaped.element_type)


def _call_instead(module: Any, op: Any, tir: Any) -> None:
    ins = [v.type for v in op.operands]
    outs = [r.type for r in op.results]
    name = callee_name(_target(op, tir), _batch_dims(op, tir), _attrs(op, tir),
                       [str(t) for t in ins], [str(t) for t in outs])
    buffers = [_memref(t, tir) for t in [*ins, *outs]]
    if not mlirtools.ops_where(module, tir, lambda o: o.name == "func.func" and "sym_name" in o.attributes
                               and tir.StringAttr(o.attributes["sym_name"]).value == name):
        mlirtools.declare_external(module, tir, name, buffers, [])
    with tir.InsertionPoint(op), op.location:
        read = [tir.Operation.create("bufferization.to_buffer", results=[_memref(v.type, tir)], operands=[v],
                                     attributes={"read_only": tir.UnitAttr.get()}).result for v in op.operands]
        written = [tir.Operation.create("memref.alloc", results=[_memref(t, tir)],
                                        attributes={"operandSegmentSizes": tir.DenseI32ArrayAttr.get([0, 0])}).result
                   for t in outs]
        tir.Operation.create("func.call", operands=[*read, *written],
                             attributes={"callee": tir.FlatSymbolRefAttr.get(name)})
        results = [tir.Operation.create("bufferization.to_tensor", results=[t], operands=[m],
                                        attributes={"restrict": tir.UnitAttr.get(), "writable": tir.UnitAttr.get()})
                   .result for t, m in zip(outs, written)]
    for old, new in zip(op.results, results):
        old.replace_all_uses_with(new)
    op.erase()
