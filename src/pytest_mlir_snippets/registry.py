"""The targets, registered once: name -> backend, optimization-run stages, packages.

``--mlir-target``'s choices (``settings``), the worker's backend loader
(``worker/targets``), the stages of an optimization run (``model.layout``) and the
target names lit-style ``// XFAIL:`` lines may name (``items.litcommand``) all read this
table. Pure data (and a look-up of the packages): no import, so that the pytest process
and the worker can both read it.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from dataclasses import dataclass

# an optimization run's stages, in order (SPEC 6)
CPU_RUN = ("contract", "compile", "correctness", "benchmark")
CUDA_RUN = ("contract", "compile", "host_ops", "launch", "correctness", "benchmark")


@dataclass(frozen=True)
class Target:
    name: str
    backend: str  # "module:Class" of its Backend, relative to ``worker/targets``
    run_stages: tuple[str, ...] = ()  # the stages of an optimization run on it; (): it has none
    packages: tuple[str, ...] = ()  # Python modules it needs beyond the base install
    extra: str = ""  # the pip extra that brings them ("": none, or not on PyPI)

    def absent(self) -> list[str]:
        """Its packages this Python does not have (looked up, not imported)."""
        import importlib.util

        def found(name: str) -> bool:
            try:
                return importlib.util.find_spec(name) is not None
            except ModuleNotFoundError:  # a parent package is missing: find_spec raises for it
                return False

        return [name for name in self.packages if not found(name)]


TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("cpu", "cpu:CpuBackend", CPU_RUN),
    Target("cuda", "cuda:CudaBackend", CUDA_RUN, ("cuda.bindings.driver",), "cuda"),
    Target("ttmetal", "tt:TTMetalBackend", packages=("_ttmlir_runtime", "builder.base.builder_apis")),
    Target("ttnn", "tt:TTNNBackend", packages=("_ttmlir_runtime", "builder.base.builder_apis")),
    Target("iree-cpu", "iree:IreeCpuBackend", packages=("iree.compiler", "iree.runtime"), extra="iree"),
    Target("iree-cuda", "iree:IreeCudaBackend", packages=("iree.compiler", "iree.runtime"), extra="iree"),
)}
NAMES = tuple(TARGETS)
