"""The compiles a worker keeps, by ``CompileKey``, for the requests after the one that made
them (an [execute] runs its [compile]'s; an iteration's stages run its [compile]'s): a
failure is kept too, so a compile that failed or timed out is never made again. One memo
per key kind, each of ``SIZE`` entries, so snippet compiles never push a run's out."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from pytest_mlir_snippets.compilekey import CompileKey
from pytest_mlir_snippets.protocol import Stage
from pytest_mlir_snippets.worker.core import Compiled, SnippetFailure

SIZE = 64


class Memo:
    def __init__(self) -> None:
        self.kinds: dict[str, OrderedDict[CompileKey, Compiled | SnippetFailure]] = {}

    def get(self, key: CompileKey, compile_: Callable[[], Compiled]) -> Compiled:
        """``key``'s compile, made by ``compile_`` once (its failure raised again each time)."""
        memo = self.kinds.setdefault(key.kind, OrderedDict())
        cached = memo.get(key)
        if cached is None:
            try:
                cached = compile_()
            except SnippetFailure as failure:
                failure.stage = Stage.COMPILE.value
                cached = failure
            memo[key] = cached
            while len(memo) > SIZE:
                memo.popitem(last=False)
        else:
            memo.move_to_end(key)
        if isinstance(cached, SnippetFailure):
            raise cached
        return cached

    def clear(self) -> None:
        """Forget every compile (a backend whose device reset invalidates what it compiled)."""
        self.kinds.clear()
