"""The Tenstorrent targets ``ttmetal`` and ``ttnn``, through tt-mlir's Python API.

tt-mlir is not on PyPI: users run inside a tt-mlir build environment
(``source env/activate``). The surface used, imported lazily in the worker:

- ``builder.base.builder_apis``: ``load_mlir_file(text, target="ttir")`` and
  ``compile_ttir_module_to_flatbuffer(module, builder, system_desc_path=,
  artifact_dir=, target=, save_artifacts=, print_ir=)`` -> (binary, goldens, intermediates);
- ``builder.base.builder_runtime.execute_fb(binary, input_output_goldens=,
  intermediate_goldens=, pcc=, atol=, rtol=, device=, save_artifacts=, artifact_dir=)``
  -> (golden report, output tensors);
- ``_ttmlir_runtime.runtime``: ``MeshDeviceOptions``, ``DispatchCoreType``,
  ``DeviceRuntime``, ``set_current_device_runtime``, ``open_mesh_device``,
  ``close_mesh_device``, ``set_fabric_config``/``FabricConfig``.

The golden report tt-mlir's execution returns is kept whole (item, run report) and
judged with ``--mlir-pcc``/``--mlir-atol``/``--mlir-rtol``. Failure stages follow
tt-mlir's own tests: compile -> compile-error, runtime -> execute-error, golden ->
golden-mismatch; its C-level output (L1 allocation messages) is in the item's details.
"""

from __future__ import annotations

import contextlib
import importlib
import json
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from pytest_mlir_snippets.protocol import CompileFacts, DeviceFacts, Golden, Kind, Options, Recorded, Verdict
from pytest_mlir_snippets.registry import Target
from pytest_mlir_snippets.worker.targets import tt_module
from pytest_mlir_snippets.worker.targets.base import Backend, Compiled, Executed, SnippetFailure
from pytest_mlir_snippets.worker.targets.tt_pjrt import given_descriptor

MODULES = ("_ttmlir_runtime", "builder.base.builder_apis", "builder.base.builder_runtime")
DEFAULT_SYS_DESC = "ttrt-artifacts/system_desc.ttsys"
HOW_TO_GET = ("run inside a tt-mlir build environment (`source env/activate` in a tt-mlir checkout built with "
              "its Python bindings and runtime), see https://docs.tenstorrent.com/tt-mlir/")


def system_descriptor(option: str | None) -> tuple[str, str]:
    """(path, where it came from): --mlir-sys-desc, else $SYSTEM_DESC_PATH, else ttrt's default."""
    return given_descriptor(option) or (DEFAULT_SYS_DESC, "the default of `ttrt query --save-artifacts`")


def judge(report: Mapping[str, Any], pcc: float, atol: float | None, rtol: float | None) -> tuple[
        dict[str, float], list[str]]:
    """Metrics (worst over outputs) and failures from tt-mlir's golden report:
    ``{program: {output: {index: {"actual_pcc"|"pcc", "atol", "rtol", ...}}}}``."""
    worst: dict[str, float] = {}
    failures = []
    judged = 0
    for program, outputs in report.items():
        for name, per_device in (outputs.items() if isinstance(outputs, Mapping) else []):
            for result in (per_device.values() if isinstance(per_device, Mapping) else [per_device]):
                if not isinstance(result, Mapping):
                    continue
                judged += 1
                got_pcc = _number(result, "actual_pcc", "pcc")
                got_atol = _number(result, "actual_atol", "atol")
                got_rtol = _number(result, "actual_rtol", "rtol")
                for key, value, keep in (("pcc", got_pcc, min), ("max_abs_err", got_atol, max),
                                         ("max_rel_err", got_rtol, max)):
                    if value is not None:
                        worst[key] = keep(worst.get(key, value), value)
                problems = []
                if got_pcc is not None and got_pcc < pcc:
                    problems.append(f"PCC {got_pcc:.6f} < {pcc}")
                if atol is not None and got_atol is not None and got_atol > atol:
                    problems.append(f"atol {got_atol:.3g} > {atol}")
                if rtol is not None and got_rtol is not None and got_rtol > rtol:
                    problems.append(f"rtol {got_rtol:.3g} > {rtol}")
                if str(result.get("result", "pass")).lower() not in ("pass", "passed", "true") and not problems:
                    problems.append(f"tt-mlir says {result.get('result')}")
                if problems:
                    failures.append(f"{program}/{name}: " + ", ".join(problems))
    if not judged:  # nothing in it says an output was compared: no pass can rest on it
        failures.append("the golden report judges no output (empty, or not in the form tt-mlir writes: "
                        "{program: {output: {device: {pcc, atol, rtol}}}})")
    return worst, failures


def _number(result: Mapping[str, Any], *keys: str) -> float | None:
    for key in keys:
        if isinstance(result.get(key), int | float):
            return float(result[key])
    return None


class TTBackend(Backend):
    runtime_name = ""  # DeviceRuntime member: "TTMetal" or "TTNN"

    def __init__(self) -> None:
        self.device: Any = None
        self._api: SimpleNamespace | None = None
        self._device_options: tuple[int | None, bool] = (None, False)

    def missing(self) -> str | None:
        absent = []
        for name in MODULES:
            try:
                importlib.import_module(name)
            except ImportError:
                absent.append(name)
        if absent:
            return f"tt-mlir is not available (missing modules: {', '.join(absent)}): {HOW_TO_GET}"
        return None

    @property
    def api(self) -> SimpleNamespace:
        if self._api is None:
            apis = importlib.import_module("builder.base.builder_apis")
            runtime = importlib.import_module("builder.base.builder_runtime")
            self._api = SimpleNamespace(load=apis.load_mlir_file, compile=apis.compile_ttir_module_to_flatbuffer,
                                        execute=runtime.execute_fb,
                                        runtime=importlib.import_module("_ttmlir_runtime").runtime)
        return self._api

    # ------------------------------------------------------------------ compile
    def compile(self, module: str, function: str, options: Options,
                constants: Mapping[int, np.ndarray] | None = None) -> Compiled:
        path, source = system_descriptor(options.sys_desc)
        if not Path(path).is_file():
            raise SnippetFailure(Kind.UNSUPPORTED, f"no system descriptor at {path} (from {source}): run "
                                 "`mlir-snippets sysdesc` (ttrt query --save-artifacts) or pass --mlir-sys-desc",
                                 environment=True)
        artifacts = options.artifact_dir or "."
        try:
            parsed, builder = self.api.load(module, target="ttir")
            binary, goldens, intermediates = self.api.compile(
                parsed, builder, system_desc_path=path, artifact_dir=artifacts, target=self.name,
                save_artifacts=options.save_artifacts, print_ir=options.print_ir)
        except Exception as error:
            raise SnippetFailure(Kind.COMPILE_ERROR, f"tt-mlir compile ({self.name}) failed: "
                                 f"{type(error).__name__}: {error}") from None
        return Compiled("", function, None, (binary, goldens, intermediates),
                        CompileFacts(reference="tt-mlir builder goldens"))

    # ------------------------------------------------------------------ device
    def open_device(self, device_id: int | None) -> DeviceFacts:
        runtime = self.api.runtime
        options = runtime.MeshDeviceOptions()
        if self._device_options[1]:
            options.dispatch_core_type = runtime.DispatchCoreType.WORKER
        options.mesh_shape = (1, 1)
        if device_id is not None:
            options.device_ids = [device_id]
        runtime.set_current_device_runtime(getattr(runtime.DeviceRuntime, self.runtime_name))
        self.device = runtime.open_mesh_device(options)
        self._device_options = (device_id, self._device_options[1])
        return DeviceFacts(f"{self.name} mesh 1x1", device_id)

    def configure(self, options: Options) -> None:  # --mlir-disable-eth-dispatch
        self._device_options = (self._device_options[0], options.disable_eth_dispatch)

    def close_device(self) -> None:
        if self.device is not None:
            runtime = self.api.runtime
            runtime.close_mesh_device(self.device)
            runtime.set_fabric_config(runtime.FabricConfig.DISABLED)
            self.device = None

    def reset(self) -> None:
        """After a runtime failure: close and reopen, as tt-mlir's own runner does."""
        self.close_device()
        self.open_device(self._device_options[0])

    # ------------------------------------------------------------------ execute
    def execute(self, compiled: Compiled, options: Options,
                golden: Recorded | None) -> Executed:
        binary, goldens, intermediates = compiled.handle
        try:
            report, _ = self.api.execute(binary, input_output_goldens=goldens, intermediate_goldens=intermediates,
                                         pcc=options.pcc, atol=options.atol or 1e-08, rtol=options.rtol or 1e-05,
                                         device=self.device, save_artifacts=options.save_artifacts,
                                         artifact_dir=options.artifact_dir or ".")
        except Exception as error:
            golden_stage = type(error).__name__ == "TTBuilderGoldenException"
            raise SnippetFailure(Kind.GOLDEN_MISMATCH if golden_stage else Kind.EXECUTE_ERROR,
                                 f"tt-mlir {'golden check' if golden_stage else 'runtime'} failed: "
                                 f"{type(error).__name__}: {error}") from None
        report = json.loads(json.dumps(report, default=str))  # plain data for reports
        metrics, failures = judge(report, options.pcc, options.atol, options.rtol)
        verdict = Verdict(Golden.TT, "tt-mlir builder goldens", golden_report=report)
        if failures:
            raise SnippetFailure(Kind.GOLDEN_MISMATCH, "golden report: " + "; ".join(failures), metrics=metrics,
                                 verdict=verdict)
        return Executed(metrics, verdict)


class TTMetalBackend(TTBackend):
    name = "ttmetal"
    runtime_name = "TTMetal"

    def missing(self) -> str | None:
        why = super().missing()
        if why is not None and _pjrt_plugin() is None:
            return ("this tt-xla build has no TTMetal (D2M) pipeline: the tt extra's PJRT plugin compiles for ttnn "
                    f"only; ttmetal needs tt-mlir's builder: {HOW_TO_GET}")
        return why


class TTNNBackend(TTBackend):
    """StableHLO (and chlo) through tt-xla's PJRT plugin where it is installed (``ttnn_pjrt``); TTIR
    and TTNN input (StableHLO among TTIR ops too: libtt crashes on it), and StableHLO
    without the plugin, through tt-mlir's builder."""

    name = "ttnn"
    runtime_name = "TTNN"

    def __init__(self) -> None:
        super().__init__()
        self._route: Any = None
        self._builder = self._plugin = False  # which routes this machine has: ``missing`` finds out, once
        self._options = Options(target=self.name)

    def missing(self) -> str | None:
        builder = super().missing()
        plugin = _pjrt_plugin()
        self._builder, self._plugin = builder is None, plugin is None
        if builder is None or plugin is None:
            return None  # StableHLO goes through the plugin; other input says what it lacks
        return f"{builder}; for StableHLO input: {plugin}"

    def compile(self, module: str, function: str, options: Options,
                constants: Mapping[int, np.ndarray] | None = None) -> Compiled:
        if self._plugin and tt_module.takes_plugin(module):
            self._start_route()
            compiled: Compiled = self._route.compile(module, function, options)
            return compiled
        if not self._builder:
            raise SnippetFailure(Kind.UNSUPPORTED, f"TTIR and TTNN input go through tt-mlir's builder, which is not "
                                 f"here: {HOW_TO_GET}", environment=True)
        return super().compile(module, function, options, constants)

    def execute(self, compiled: Compiled, options: Options,
                golden: Recorded | None) -> Executed:
        if compiled.kept.route == "pjrt":
            result: Executed = self._route.execute(compiled, options, golden)
            return result
        return super().execute(compiled, options, golden)

    def configure(self, options: Options) -> None:
        super().configure(options)
        self._options = options  # the system descriptor the PJRT client starts with

    def open_device(self, device_id: int | None) -> DeviceFacts:
        if not self._builder:  # the PJRT client opens its own device: started here, before any item's compile
            self._start_route()
            return DeviceFacts("ttnn through tt-xla's PJRT plugin", device_id)
        return super().open_device(device_id)

    def _start_route(self) -> None:
        """The PJRT client started (and the plugin fetched into the cache, the first time):
        about 2 s, and libtt's first unpack of its runtime files, which no compile's timeout
        should pay; what stops it is said by the first compile that needs it."""
        if self._route is None:
            from pytest_mlir_snippets.worker.targets.ttnn_pjrt import PjrtRoute

            self._route = PjrtRoute()
        with contextlib.suppress(SnippetFailure):
            self._route.client(self._options)

    def close_device(self) -> None:
        if self._builder:
            super().close_device()


def _pjrt_plugin() -> str | None:
    """None when tt-xla's PJRT plugin is usable here, else why not."""
    from pytest_mlir_snippets.worker.targets.tt_pjrt import PluginError, plugin_library  # hashes libtt.so

    try:
        plugin_library()
    except PluginError as error:
        return str(error)
    return None


def availability(target: Target) -> str:
    """``mlir-snippets doctor``'s state of a tt-mlir target: available by tt-mlir's builder or by
    tt-xla's PJRT plugin (StableHLO; ttmetal's D2M pipeline is not in the plugin), or why not."""
    builder, why_not = not target.absent(), _pjrt_plugin()
    if why_not is not None:
        return "available (tt-mlir's builder)" if builder else f"no tt-mlir: {why_not}"
    if builder:
        return "available (tt-mlir's builder; StableHLO through tt-xla's PJRT plugin)"
    return ("available for StableHLO (tt-xla's PJRT plugin; compile-only without a card)" if target.name == "ttnn"
            else "no TTMetal (D2M) pipeline in the tt extra's plugin; needs tt-mlir's builder")
