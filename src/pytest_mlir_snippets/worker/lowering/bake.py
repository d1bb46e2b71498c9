"""Recorded inputs baked into a torch function as literals, for a function that does not
lower with them as arguments (ONNX tests give axes, shapes and pads as inputs, which
torch-mlir's conversions need constant). ``frontend.legalize`` decides which."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering import mlirtools

_VTENSOR = re.compile(r"^!torch\.vtensor<\[([\d,]*)\],((?:s|u)?i\d+)>$")


def bake_inputs(module_text: str, function: str, constants: Mapping[int, np.ndarray], ctx: Any,
                tir: Any) -> tuple[str, str]:
    """The module with each statically shaped integer argument in ``constants``
    replaced by a ``torch.vtensor.literal`` of its value, and a line saying which
    (``ctx``: a context of torch-mlir's bindings ``tir`` with the torch dialect)."""
    baked = []
    with ctx, tir.Location.unknown():
        module = tir.Module.parse(module_text)
        block = mlirtools.find_function(module, function).regions[0].blocks[0]
        for index, value in sorted(constants.items()):
            if index >= len(block.arguments):
                continue
            arg = block.arguments[index]
            m = _VTENSOR.match(str(arg.type))
            shape = tuple(int(d) for d in m.group(1).split(",") if d) if m else None
            if m is None or shape != value.shape:
                continue
            element = m.group(2)
            data = json.dumps(value.astype(bool if element == "i1" else np.int64).tolist())
            dims = "".join(f"{d}x" for d in shape)
            attr = tir.Attribute.parse(f"dense<{data}> : tensor<{dims}{element}>")
            with tir.InsertionPoint.at_block_begin(block):
                literal = tir.Operation.create("torch.vtensor.literal", results=[arg.type], attributes={"value": attr})
            arg.replace_all_uses_with(literal.results[0])
            baked.append(f"input #{index} = {data}")
        return mlirtools.spell_out_booleans(module.operation.get_asm(enable_debug_info=True)), "; ".join(baked)


__all__ = ["bake_inputs"]
