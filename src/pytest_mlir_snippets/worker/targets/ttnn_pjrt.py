"""The ``ttnn`` target's route for StableHLO: tt-mlir through tt-xla's PJRT plugin
(``tt_pjrt``). ``[compile]`` is tt-mlir's verdict, with the StableHLO sent, the TTIR, the
TTNN MLIR and the flatbuffer as artifacts. ``[execute]`` needs a card: without one it is
skipped, never run on the mock cluster (whose outputs are zeros); with one, the same
client runs it on seeded inputs, judged against the cpu target (StableHLO's interpreter,
else its lowering) in a child process.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from pytest_mlir_snippets.golden.inputs import DTYPES, TypeSpec, make_inputs
from pytest_mlir_snippets.protocol import CompileFacts, Kind, Options, Recorded
from pytest_mlir_snippets.worker.core import Compiled, Executed, Kept, Reference, SnippetFailure
from pytest_mlir_snippets.worker.judging.reference import OtherTarget
from pytest_mlir_snippets.worker.targets import tt_module, tt_pjrt

NO_CARD = "compiled for ttnn; running needs a Tenstorrent device"
_PJRT_TYPES = {"i1": "PRED", "i8": "S8", "i16": "S16", "i32": "S32", "i64": "S64", "ui8": "U8", "ui16": "U16",
               "ui32": "U32", "ui64": "U64", "f16": "F16", "bf16": "BF16", "f32": "F32", "f64": "F64"}


class PjrtRoute:
    """One PJRT client per worker process, started when the device is opened (the sandbox
    opens it before the first compile: ``Target.opens_before_compile``), else at the first compile."""

    def __init__(self) -> None:
        self._client: tt_pjrt.Client | None = None
        self._reference: OtherTarget | None = None  # the cpu target in a child process

    def client(self, options: Options) -> tt_pjrt.Client:
        if self._client is None:
            started = time.perf_counter()
            try:
                self._client = tt_pjrt.Client(tt_pjrt.given_descriptor(options.sys_desc))
            except tt_pjrt.PluginError as error:
                raise tt_pjrt.environment_failure(error) from None
            self.started_in = time.perf_counter() - started
        return self._client

    def compile(self, module: str, function: str, options: Options) -> Compiled:
        client = self.client(options)
        sent = tt_pjrt.as_main(tt_module.prepared(module, function), function)
        executable, artifacts = client.compile(sent)
        if options.save_artifacts or options.artifact_dir:
            folder = Path(options.artifact_dir or ".")
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "stablehlo.mlir").write_text(sent)
            (folder / "ttir.mlir").write_text(artifacts.ttir)
            (folder / "ttnn.mlir").write_text(artifacts.ttnn)
            (folder / "program.ttnn").write_bytes(artifacts.flatbuffer)
        args, results = tt_module.signature(sent)
        facts = CompileFacts(inputs=[str(a) for a in args], outputs=[str(r) for r in results],
                             reference="cpu target (StableHLO's interpreter, else its lowering)")
        return Compiled(artifacts.ttnn if options.print_ir else "", function, (args, results),
                        (executable, client), facts, Kept(source=module, route="pjrt"))

    def execute(self, compiled: Compiled, options: Options,
                golden: Recorded | None) -> Executed:
        executable, client = compiled.handle
        if not client.card:
            raise SnippetFailure(Kind.UNSUPPORTED, NO_CARD, environment=True, skip=True)
        from pytest_mlir_snippets.worker.judging.judge import judge_outputs

        specs = compiled.signature[0]
        inputs = make_inputs(specs, options.seed, options.dynamic_dim, options.input_range)
        device = client.client.devices()[0]
        import pypjrt

        buffers = [client.client.buffer_from_host(np.ascontiguousarray(value), _code(pypjrt, spec), value.shape,
                                                  device) for value, spec in zip(inputs, specs)]
        try:
            outputs = executable(*buffers)
        except Exception as error:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"the ttnn run failed: {error}") from None
        actual = [np.asarray(out.to_host()) for out in outputs]
        other = self._reference = self._reference or OtherTarget("cpu")
        source = compiled.kept.source

        def reference() -> Reference:
            return other.outputs(source, compiled.function, options, inputs)

        return judge_outputs(compiled, options, golden, inputs, actual, reference)


def _code(pypjrt: Any, spec: TypeSpec) -> int:
    name = _PJRT_TYPES.get(spec.element)
    if name is None or spec.element not in DTYPES:
        raise SnippetFailure(Kind.UNSUPPORTED, f"element type {spec.element} cannot be fed through PJRT here")
    return int(getattr(pypjrt.typing, name).code)
