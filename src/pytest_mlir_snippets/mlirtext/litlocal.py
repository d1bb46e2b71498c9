"""Upstream's per-folder ``lit.local.cfg`` files, applied as lit applies them.

MLIR's integration test folders mark themselves unsupported where the machine or the
build lacks something (``if not config.mlir_run_amx_tests: config.unsupported = True``)
and add substitutions and features. lit runs every ``lit.local.cfg`` from the suite's
root (the folder with ``lit.cfg.py``) down to the test's folder; so does this, with a
``config`` that holds what upstream's ``lit.site.cfg.py`` gives a build on this host with
the pip wheels (``SITE``, documented in docs/integration-tests.md): integration tests on,
no emulators, no GPU or vendor runners, the wheels' folders. Options it does not name are
False (a build without them). A file that fails to run is reported and skipped over.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import functools
import importlib.util
import platform
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NAME = "lit.local.cfg"
SUITE_ROOTS = ("lit.cfg.py", "lit.site.cfg.py", "lit.cfg")
# upstream's lit.site.cfg.py.in, as a build of this host with the wheels would fill it in
SITE: dict[str, Any] = {
    "mlir_include_integration_tests": True,  # MLIR_INCLUDE_INTEGRATION_TESTS: the tests are here to run
    "mlir_run_arm_sve_tests": False, "mlir_run_arm_sme_tests": False,  # need an AArch64 host or emulator
    "mlir_run_amx_tests": False, "mlir_run_x86vector_tests": False,  # opt-in CMake options, off by default
    "mlir_run_riscv_vector_tests": False, "mlir_run_cuda_tensor_core_tests": False,
    "mlir_run_cuda_sm80_tests": False, "mlir_run_cuda_sm80_lt_tests": False, "mlir_run_cuda_sm90_tests": False,
    "enable_cuda_runner": False, "enable_rocm_runner": False, "enable_sycl_runner": False,
    "enable_levelzero_runner": False, "enable_spirv_cpu_runner": False, "enable_vulkan_runner": False,
    "arm_emulator_executable": "", "arm_emulator_options": "", "arm_emulator_lli_executable": "",
    "arm_emulator_utils_lib_dir": "", "riscv_emulator_lli_executable": "", "riscv_emulator_utils_lib_dir": "",
    "riscv_vector_emulator_executable": "", "riscv_vector_emulator_options": "", "intel_sde_executable": "",
    "enable_bindings_python": True, "mlir_enable_execution_engine": True,
}


def tool_dirs() -> tuple[Path | None, Path | None]:
    """(the mlir wheel's folder, the llvm wheel's folder): their ``bin`` and ``lib``."""
    found: list[Path | None] = []
    for name in ("mlir", "llvm"):
        spec = importlib.util.find_spec(name)
        paths = list(spec.submodule_search_locations or []) if spec else []
        found.append(next((Path(p) for p in paths if (Path(p) / "bin").is_dir()), None))
    return found[0], found[1]



def tool_path(name: str) -> Path | None:
    """An installed tool: the wheels' own folders first, then this Python's scripts, then PATH."""
    for folder in (*(d / "bin" for d in tool_dirs() if d is not None), Path(sys.executable).parent):
        if (folder / name).is_file():
            return folder / name
    found = shutil.which(name)
    return Path(found) if found else None


class _Config:
    """The part of lit's ``TestingConfig`` local configs use; unknown options are False."""

    def __init__(self, features: frozenset[str]) -> None:
        self.available_features: set[str] = set(features)
        self.substitutions: list[tuple[str, str]] = []
        self.unsupported = False
        self.environment: dict[str, str] = {}
        self.suffixes: set[str] = {".mlir"}
        self.excludes: list[str] = []
        self.root = self
        self.host_arch = platform.machine()
        self.host_os = platform.system()
        self.target_triple = f"{platform.machine()}-unknown-linux-gnu"
        self.shlibext = ".so"
        mlir, llvm = tool_dirs()
        self.mlir_lib_dir = str(mlir / "lib") if mlir else ""
        self.mlir_tools_dir = str(mlir / "bin") if mlir else ""
        self.llvm_tools_dir = str(llvm / "bin") if llvm else self.mlir_tools_dir
        self.llvm_lib_dir = str(llvm / "lib") if llvm else self.mlir_lib_dir

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return SITE.get(name, False)  # False: a build option the wheels were not built with


class _LitConfig:
    params: dict[str, str] = {}  # noqa: RUF012 - read only

    def note(self, message: str) -> None:
        pass

    warning = note

    def fatal(self, message: str) -> None:
        raise RuntimeError(message)


@dataclass
class LocalConfig:
    unsupported: str = ""  # the lit.local.cfg that marks the folder unsupported
    substitutions: list[tuple[str, str]] = field(default_factory=list)
    features: frozenset[str] = frozenset()
    problems: list[str] = field(default_factory=list)


def local_config(test: Path, features: frozenset[str]) -> LocalConfig:
    return _local_config(test.resolve().parent, features)


@functools.cache
def _local_config(folder: Path, features: frozenset[str]) -> LocalConfig:
    files = []
    for parent in (folder, *folder.parents):
        if (parent / NAME).is_file():
            files.append(parent / NAME)
        if any((parent / root).is_file() for root in SUITE_ROOTS):
            break
    config, result = _Config(features), LocalConfig()
    for path in reversed(files):  # the suite's root first
        try:
            code = compile(path.read_text(), str(path), "exec")
            exec(code, {"config": config, "lit_config": _LitConfig(), "__file__": str(path)})
        except Exception as error:  # a config for another lit or another build: lit would stop there too
            result.problems.append(f"{path}: {type(error).__name__}: {error}")
            result.unsupported = result.unsupported or f"{path} (it does not run here: {type(error).__name__})"
            continue
        if config.unsupported and not result.unsupported:
            result.unsupported = str(path)
    result.substitutions = [(str(a), str(b)) for a, b in config.substitutions]
    result.features = frozenset(config.available_features)
    return result
