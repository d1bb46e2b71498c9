"""What makes two compiles the same: one ``CompileKey`` for the disk cache
(``sandbox/cache.py``), the worker's memo (``worker/loop.py``) and the benchmark
history (``model/history.py``).

Every field is something that changes what a compile produces: the texts compiled
(as digests), the entry function, the target and the options a backend compiles
with, and the recorded inputs a compile may bake in. Both sides import this module:
no MLIR, no pytest, no numpy here (the specialized constants come in as arrays,
read through their ``dtype``, ``shape`` and ``tobytes``).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from pytest_mlir_snippets.protocol import IterationRequest, LitRequest

if TYPE_CHECKING:
    from pytest_mlir_snippets.protocol import FunctionRequest, Options


class KeyKind:
    """What a compile is of (``CompileKey.kind``): the worker keeps one memo per kind
    (plain strings: a key's digest is made per item, an enum's repr costs more than the rest)."""

    SNIPPET = "snippet"  # a split module through the target's compile
    ITERATION = "iteration"  # an optimization run's model through its schedule and pass_pipeline.txt


@dataclass(frozen=True)
class CompileKey:
    kind: str  # a KeyKind
    module: str  # sha256 of the module's text
    function: str  # the entry function
    target: str
    pipeline: str  # sha256 of --mlir-pipeline ("": none given)
    schedule: str  # sha256 of an iteration's transform.mlir ("": not an iteration)
    pass_pipeline: str  # sha256 of an iteration's pass_pipeline.txt ("": not an iteration)
    attachments: str  # sha256 of the request's other texts (a lit RUN command's stages; "": none)
    opt_level: int
    dynamic_dim: int
    skip_exec: bool
    print_ir: bool
    save_artifacts: bool
    cuda_chip: str
    sys_desc: str
    iree_compile_flags: tuple[str, ...]
    constants: str  # sha256 of the recorded inputs baked in and of their shapes ("": none)

    def digest(self) -> str:
        """The key as a sha256 hex string (files and JSON keep it)."""
        return _sha(repr(tuple(self.__dict__.values())))


def compile_key(kind: str, module: str, function: str, options: Options, *, schedule: str | None = None,
                pass_pipeline: str | None = None, attachments: Mapping[str, str] | None = None,
                constants: Mapping[int, Any] | None = None, shapes: Sequence[tuple[int, ...]] = ()) -> CompileKey:
    """The key of a compile of ``function`` in ``module`` with ``options``; ``constants``:
    the recorded inputs it may bake in, by argument index (numpy arrays); ``shapes``: the
    recorded inputs' shapes, which a dynamic entry is refined to (``shlo/refine.py``)."""
    o = options
    baked = ""
    if constants or shapes:
        digest = hashlib.sha256(repr(tuple(shapes)).encode() if shapes else b"")
        for index, value in sorted((constants or {}).items()):
            digest.update(f"{index}:{value.dtype.str}:{value.shape}:".encode() + value.tobytes())
        baked = digest.hexdigest()
    key = object.__new__(CompileKey)  # the frozen __init__'s work without its call per field: a key per item
    key.__dict__.update(zip(_FIELDS, (
        kind, _sha(module), function, o.target, _sha(o.pipeline), _sha(schedule), _sha(pass_pipeline),
        _sha(repr(sorted(attachments.items()))) if attachments else "", o.opt_level, o.dynamic_dim, o.skip_exec,
        o.print_ir, o.save_artifacts, o.cuda_chip or "", o.sys_desc or "", tuple(o.iree_compile_flags), baked)))
    return key


def request_key(request: FunctionRequest, constants: Mapping[int, Any] | None = None) -> CompileKey:
    """The key of the compile ``request`` asks for or runs: an iteration's (its schedule and
    pass pipeline; its recorded data is compared with, never baked in), else the module's,
    with a lit RUN command's stages, the recorded inputs it may bake in (``constants``,
    when the caller has them already) and, for a module with dynamic dimensions, the
    recorded inputs' shapes."""
    if isinstance(request, IterationRequest):
        return compile_key(KeyKind.ITERATION, request.module, request.function, request.options,
                           schedule=request.schedule, pass_pipeline=request.pipeline)
    stages = {"lit": json.dumps(request.command.to_json(), sort_keys=True)} if isinstance(request, LitRequest) else None
    if constants is None and request.recorded:  # recorded data (numpy): imported only when a request has some
        from pytest_mlir_snippets.golden.recorded import specializable

        constants = specializable(request.recorded.inputs)
    shapes = tuple(tuple(getattr(value, "shape", ())) for value in request.recorded.inputs) \
        if request.recorded and _DYNAMIC.search(request.module) else ()
    return compile_key(KeyKind.SNIPPET, request.module, request.function, request.options, attachments=stages,
                       constants=constants, shapes=shapes)


_FIELDS = tuple(f.name for f in fields(CompileKey))
_DYNAMIC = re.compile(r"tensor<(?:\d+x)*\?")  # a dynamic dimension: refined to the recorded shapes


def _sha(text: str | None) -> str:
    return "" if text is None else hashlib.sha256(text.encode()).hexdigest()
