"""The ``iree-cpu`` and ``iree-cuda`` targets: IREE's compiler and runtime from PyPI
(``iree-base-compiler``, ``iree-base-runtime``: the ``[iree]`` extra).

Compile runs IREE's compiler in this process (``iree_compiler.Compiler``): the
target's flags (``llvm-cpu`` for the host CPU; ``cuda`` for ``--mlir-cuda-chip``,
else sm_80), then an IREE config's ``iree_compile_flags``. ``iree-cuda`` compiles on
any machine. Execute opens the driver's device once per worker (``local-task``,
``cuda``; a config's ``--device=`` wins), runs the entry on the snippet's inputs
(recorded, else generated) and judges the results as the cpu target does: recorded
outputs, else the cpu target's own lowering of the snippet (a differential check
between two compilers), or StableHLO's interpreter. A snippet with IREE's ``check`` ops
is judged on what IREE's check module (``iree_check.py``, in Python) received.
With ``--mlir-save-artifacts`` the item keeps ``model.vmfb`` and the
``iree-compile`` / ``iree-run-module`` commands that reproduce it outside pytest.
"""

from __future__ import annotations

import base64
import io
import re
import shlex
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from pytest_mlir_snippets.golden.inputs import make_inputs
from pytest_mlir_snippets.mlirtext.ireeops import CheckSite, IreeSyntaxError, rewrite
from pytest_mlir_snippets.protocol import CompileFacts, DeviceFacts, Golden, Kind, Options, Recorded
from pytest_mlir_snippets.registry import TARGETS
from pytest_mlir_snippets.worker.judging.goldens import Goldens
from pytest_mlir_snippets.worker.judging.judge import judge_outputs, recorded
from pytest_mlir_snippets.worker.targets.base import Backend, Compiled, Executed, Kept, Reference, SnippetFailure
from pytest_mlir_snippets.worker.targets.iree_check import EXPORTS, as_checks
from pytest_mlir_snippets.worker.targets.iree_commands import (
    DEVICE_FLAGS,
    IGNORED,
    KEEP_ABI,
    compile_commands,
    expected_output,
)
from pytest_mlir_snippets.worker.targets.iree_compiler import Compiler
from pytest_mlir_snippets.worker.targets.iree_runtime import Program, Runtime, sort_run_flags

_CHECK_IMPORT = re.compile(rb"check\.(expect_[a-z_]+)")  # an import of IREE's check module, in a .vmfb
_SCRIPT = '#!/bin/sh\n# made by pytest-mlir-snippets: {what} as the item did\ncd "$(dirname "$0")"\n'


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _npy(value: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(value), allow_pickle=False)
    return buffer.getvalue()


class IreeBackend(Backend):
    """What both IREE targets share; a subclass gives the device flags and the driver."""

    driver = "local-task"

    def __init__(self) -> None:
        self._compiler: Compiler | None = None
        self._runtime: Runtime | None = None
        self._run_flags = sort_run_flags([])
        self._goldens = Goldens()  # the references of its runs: a cpu worker of its own (goldens.cpu_worker)

    def missing(self) -> str | None:
        absent = TARGETS[self.name].absent()
        if absent:
            return (f"IREE is not installed ({', '.join(absent)} missing): install pytest-mlir-snippets[iree] "
                    "(iree-base-compiler, iree-base-runtime)")
        return None

    def target_flags(self, options: Options) -> list[str]:
        raise NotImplementedError

    def flags(self, options: Options) -> list[str]:
        """The target's flags, then the config's: a flag the config gives replaces the
        target's. A config that names its device (an iree-test-suites config) is taken
        verbatim, as IREE's own runner takes it: none of the target's flags (no host CPU:
        IREE's default, generic), and IREE's own input route (``verbatim``)."""
        own = options.iree_compile_flags
        if self.verbatim(options):
            return list(own)
        given = {f.split("=", 1)[0] for f in own}
        kept = [f for f in [*self.target_flags(options), *KEEP_ABI] if f.split("=", 1)[0] not in given]
        return [*kept, *own]

    @staticmethod
    def verbatim(options: Options) -> bool:
        """Whether the config's flags name the device, and so are the whole compile command."""
        return any(f.split("=", 1)[0] in DEVICE_FLAGS for f in options.iree_compile_flags)

    # ------------------------------------------------------------------ compile
    def compile(self, module: str, function: str, options: Options,
                constants: Mapping[int, np.ndarray] | None = None) -> Compiled:
        if options.pipeline:
            raise SnippetFailure(Kind.UNSUPPORTED, f"--mlir-pipeline does not apply to target {self.name}: give "
                                 "iree-compile flags in an IREE config (--mlir-expectations config.json)",
                                 environment=True)
        if self._compiler is None:
            self._compiler = Compiler()
        flags = self.flags(options)
        out = self._compiler.compile(module, function, flags, self.name, keep_ir=options.print_ir,
                                     shorter_route=not self.verbatim(options), analyze=not options.skip_exec)
        try:
            sites = rewrite(module)[1] if "check.expect_" in module else []
        except IreeSyntaxError:
            sites = []  # the calls are judged all the same, without their lines
        args, results = out.signature
        facts = CompileFacts(front_end="stablehlo" if out.input_type == "stablehlo" else out.input_type,
                             inputs=[str(s) for s in args], outputs=[str(s) for s in results],
                             input_specs=[(s.dims, s.element) for s in args], iree_route=out.route,
                             fed_inputs=out.barred.fed)
        kept = Kept(source=module, vmfb_bytes=len(out.vmfb), runtime=out.runtime,  # runtime: execute's ``computed``
                    vacuous_checks=out.barred.vacuous,
                    check_sites=[(s.name, s.line, s.column) for s in sites],
                    check_imports=sorted({m.decode() for m in _CHECK_IMPORT.findall(out.vmfb)}))  # what the VM links
        files = {"model.vmfb": _b64(out.vmfb), "iree-compile.sh": _b64(self._compile_command(flags, out.route).encode())
                 } if options.save_artifacts else {}
        return Compiled(out.ir, function, (args, results), Program(out.vmfb), facts, kept, files=files)

    @staticmethod
    def _compile_command(flags: list[str], route: str) -> str:
        """The shell commands that compile ``snippet.mlir`` as this item did."""
        lines = compile_commands(flags, route, "model.vmfb")
        return _SCRIPT.format(what="compiles snippet.mlir") + "".join(shlex.join(line) + "\n" for line in lines)

    # ------------------------------------------------------------------ execute
    def execute(self, compiled: Compiled, options: Options,
                golden: Recorded | None) -> Executed:
        args = compiled.signature[0]
        inputs = recorded(golden.inputs, args, "input", options.lenient_shapes) if golden else make_inputs(
            args, options.seed, options.dynamic_dim, options.input_range)
        actual = self.run(compiled, inputs, options)
        runtime = self._started()
        called = runtime.check is not None and runtime.check.calls
        if compiled.kept.check_sites or compiled.kept.check_imports or called:
            # IREE's check ops: what the check module received is judged
            actual = self._checked(compiled, runtime)
        try:
            executed = judge_outputs(compiled, options, golden, inputs, actual,
                                     lambda: self.reference(compiled, options, inputs))
        except SnippetFailure as failure:
            if options.save_artifacts:
                failure.files = self._run_files(compiled, inputs, golden)
            raise
        if options.save_artifacts:
            executed.files = self._run_files(compiled, inputs, golden)
        return executed

    def run(self, compiled: Compiled, inputs: list[np.ndarray], options: Options) -> list[np.ndarray]:
        args, results = compiled.signature
        actual = self._started().call(compiled.handle, compiled.function, inputs, args, results)
        if len(actual) != len(results):
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"the call returned {len(actual)} value(s), the function "
                                 f"has {len(results)} result(s)")
        return actual

    @staticmethod
    def _checked(compiled: Compiled, runtime: Runtime) -> list[np.ndarray]:
        """The check calls of the run as checks on results (``iree_check.as_checks``); a
        snippet with check ops whose module called none is an error, never a pass."""
        unknown = [name for name in compiled.kept.check_imports if name not in EXPORTS]
        if unknown:  # an optional import left unresolved: its calls would be skipped silently
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"the module imports check.{', check.'.join(unknown)}, which "
                                 "the plugin's check module does not provide: those checks cannot be judged")
        calls = runtime.check.calls if runtime.check is not None else []
        sites = [CheckSite(*site) for site in compiled.kept.check_sites]
        if not calls:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"the snippet has {len(sites)} check op(s) but the module made "
                                 "no call to the check module (an unresolved check import)")
        checks, results = as_checks(calls, sites, compiled.kept.vacuous_checks)
        compiled.kept.checks = checks
        return results

    def reference(self, compiled: Compiled, options: Options, inputs: list[np.ndarray]) -> Reference:
        """What a run of ``compiled`` on ``inputs`` is judged against when nothing is recorded."""
        return self._goldens.reference(self.name, compiled, options, inputs)

    def reference_for(self, module: str, function: str, options: Options, inputs: list[np.ndarray]) -> Reference:
        """This target's outputs for a cpu worker's differential check (the device opened
        at the first one)."""
        compiled = self.compile(module, function, replace(options, skip_exec=True))  # no ``computed`` to decide
        self.ready(options.device_id)
        return Reference(self.run(compiled, inputs, options), f"{self.name} target (IREE {_iree_version()})",
                         Golden.differential(self.name))

    def _run_files(self, compiled: Compiled, inputs: list[np.ndarray], golden: Recorded | None) -> dict[
            str, str]:
        """The inputs (and recorded outputs) as ``.npy`` files and the ``iree-run-module`` command."""
        outputs = golden.outputs if golden else None
        files, command = self.run_files(compiled, inputs, outputs or [], "model.vmfb")
        text = _SCRIPT.format(what="runs model.vmfb") + shlex.join(command) + "\n"
        files["iree-run-module.sh"] = _b64(text.encode())
        return files

    def run_files(self, compiled: Compiled, inputs: list[np.ndarray], outputs: list[np.ndarray], vmfb: str,
                  tool: str = "iree-run-module", extra: tuple[str, ...] = ()) -> tuple[dict[str, str], list[str]]:
        """``inputs`` as ``.npy`` files and the expected ``outputs`` as typed raw bytes
        (``iree_commands.expected_output``), base64, and the ``iree-run-module`` command
        (``tool``, then ``extra`` flags) that runs ``vmfb`` on them; a scalar result is
        ``(ignored)``."""
        files = {f"input_{i}.npy": _b64(_npy(v)) for i, v in enumerate(inputs)}
        expected = []
        for i, (value, spec) in enumerate(zip(outputs, compiled.signature[1])):
            if spec.kind == "scalar":
                expected.append(IGNORED)
                continue
            name, data, flag = expected_output(i, value)
            files[name] = _b64(data)
            expected.append(flag)
        runtime = self._started()
        device = runtime.driver_name + (f"://{runtime.path}" if runtime.path else "")
        command = [tool, f"--module={vmfb}", f"--device={device}", f"--function={compiled.function}",
                   *self._run_flags.runtime, *extra, *(f"--input=@input_{i}.npy" for i in range(len(inputs))),
                   *expected]
        return files, command

    # ------------------------------------------------------------------ device
    def configure(self, options: Options) -> None:
        self._run_flags = sort_run_flags(options.iree_run_flags)

    def ready(self, device_id: int | None) -> None:
        """The device open, opened now in a worker that has not run anything."""
        if self._runtime is None or self._runtime.device is None:
            self.open_device(device_id)

    def _started(self) -> Runtime:
        if self._runtime is None or self._runtime.device is None:
            raise SnippetFailure(Kind.EXECUTE_ERROR, "the IREE device is not open")
        return self._runtime

    def open_device(self, device_id: int | None) -> DeviceFacts:
        if self._runtime is None:
            self._runtime = Runtime(self._run_flags.device or self.driver, self._run_flags.runtime)
        facts = self._runtime.open(device_id)
        facts.ignored_run_flags = [*facts.ignored_run_flags, *self._run_flags.ignored]
        return facts

    def probe(self) -> None:
        self._started().probe()

    def reset(self) -> None:
        """After a failed run: a fresh device (compiled programs get a new context for it)."""
        if self._runtime is not None and self._runtime.device is not None:
            self._runtime.close()
            self._runtime.open(self._runtime.device_id)

    def close_device(self) -> None:
        if self._runtime is not None:
            self._runtime.close()
        self._goldens.close()


def _iree_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("iree-base-compiler")
    except PackageNotFoundError:
        return "?"


class IreeCpuBackend(IreeBackend):
    name = "iree-cpu"
    driver = "local-task"

    def target_flags(self, options: Options) -> list[str]:
        own_cpu = any(f.startswith("--iree-llvmcpu-target-cpu") for f in options.iree_compile_flags)
        return ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
                *([] if own_cpu else ["--iree-llvmcpu-target-cpu=host"])]


class IreeCudaBackend(IreeBackend):
    name = "iree-cuda"
    driver = "cuda"

    def target_flags(self, options: Options) -> list[str]:
        """``--mlir-cuda-chip``, else sm_80: IREE embeds PTX, which the driver compiles for the
        GPU it runs on (IREE 3.13 knows chips up to sm_89: sm_90 is 'missing GPU target')."""
        return ["--iree-hal-target-device=cuda", f"--iree-cuda-target={options.cuda_chip or 'sm_80'}"]

