"""The targets, registered once: name -> backend, optimization-run stages, packages, and
what each declares about itself (the dialects it takes, its references, its reproducer,
the device it needs, the options checked for it).

``--mlir-target``'s choices (``settings``), the worker's backend loader
(``worker/targets``), the stages of an optimization run (``model.layout``) and the
target names lit-style ``// XFAIL:`` lines may name (``items.litcommand``) all read this
table; code outside ``worker/targets/`` asks a target's features here, never its name.
Pure data (and a look-up of the packages): no import, so that the pytest process
and the worker can both read it.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from dataclasses import dataclass

# an optimization run's stages, in order (SPEC 6)
CPU_RUN = ("contract", "compile", "correctness", "benchmark")
CUDA_RUN = ("contract", "compile", "host_ops", "launch", "correctness", "benchmark")

# upstream MLIR's dialects (what the cpu and cuda targets' bindings register)
UPSTREAM = frozenset({
    "acc", "affine", "amdgpu", "amx", "arith", "arm_neon", "arm_sme", "arm_sve", "async", "bufferization", "builtin",
    "cf", "complex", "dlti", "emitc", "func", "gpu", "index", "irdl", "linalg", "llvm", "math", "memref", "mesh",
    "ml_program", "mpi", "nvgpu", "nvvm", "omp", "pdl", "pdl_interp", "polynomial", "ptr", "quant", "rocdl", "scf",
    "shape", "shard", "smt", "sparse_tensor", "spirv", "tensor", "tosa", "transform", "ub", "vcix", "vector", "wasmssa",
    "x86vector", "xegpu", "xevm"})
# front ends the cpu and cuda targets lower to linalg first (worker/lowering/frontend.py)
FRONT_ENDS = frozenset({"stablehlo", "chlo", "vhlo", "mhlo", "sdy", "torch", "torch_c", "onnx", "tm_tensor", "check"})
# tt-mlir's (ttmetal, ttnn), with what its front end takes
TT = frozenset({"ttir", "ttnn", "ttcore", "tt", "ttkernel", "ttmetal", "d2m", "emitpy", "sdy", "stablehlo", "chlo",
                "func", "builtin", "arith", "tensor", "linalg", "scf", "cf", "math", "memref", "emitc", "llvm"})
# what IREE takes as input, its own dialects included
IREE_INPUT = frozenset({
    "builtin", "func", "arith", "math", "tensor", "linalg", "scf", "cf", "complex", "vector", "affine", "index",
    "ub", "shape", "quant", "ml_program", "tosa", "stablehlo", "chlo", "torch", "torch_c", "tm_tensor", "util",
    "flow", "hal", "stream", "iree_linalg_ext", "iree_tensor_ext", "iree_encoding", "check"})
IREE = IREE_INPUT | {"iree_codegen", "iree_gpu", "iree_vector_ext", "iree_input", "io_parameters", "vm", "vmvx",
                     "hal_inline", "hal_loader"}
TT_PACKAGES = ("_ttmlir_runtime", "builder.base.builder_apis")
IREE_PACKAGES = ("iree.compiler", "iree.runtime")


@dataclass(frozen=True)
class Target:
    name: str
    backend: str  # "package.module:Class" of its Backend, relative to ``worker/`` (``targets.cpu:CpuBackend``)
    run_stages: tuple[str, ...] = ()  # the stages of an optimization run on it; (): it has none
    run_starter: str = ""  # its optimization runs' first schedule and pipeline (``tools/new_iteration.py``)
    packages: tuple[str, ...] = ()  # Python modules it needs beyond the base install
    extra: str = ""  # the pip extra that brings them ("": none, or not on PyPI)
    dialects: frozenset[str] = frozenset()  # the dialects it takes (``worker/dialects.py``)
    # its references, best first, by name of a source in ``worker/judging/goldens.py``; (): it is
    # judged otherwise (tt-mlir's own golden report)
    golden_references: tuple[str, ...] = ()
    # "package.module:function" (relative to ``worker/``) that writes a failed execute's
    # reproducer (``triage/execrepro.py``: the cpu target's driver module for mlir-runner,
    # iree-cpu's commands of IREE's tools); "": it writes none
    reproducer: str = ""
    # "package.module:function" (relative to ``worker/``) of its ``--mlir-bisect`` where that
    # is not its Backend's ``bisect`` (iree-cpu's, by ``--compile-to`` phase with IREE's tools)
    bisection: str = ""
    takes_pipeline: bool = False  # whether ``--mlir-pipeline`` replaces its compile's pipeline
    # whether the code it runs may call back into the worker's Python (checks in a region or
    # a callee, ``interpreter.run_parallel``'s programs run as calls)
    calls_back: bool = False
    needs_cuda_device: bool = False  # whether its executes need a CUDA GPU (none here: they skip)
    # whether its device is opened before a worker's first compile too, where what its compiles
    # need starts (tt-xla's PJRT client): that start-up is then no item's compile time; an
    # open that fails there is left to the first execute
    opens_before_compile: bool = False
    option_checks: tuple[str, ...] = ()  # the options ``settings`` checks for it (``OPTION_CHECKS``)
    iree_backend: str = ""  # IREE's name of its backend in IREE's CMake test suites ("": not an IREE target)
    run_ir: str = "gpu.mlir"  # the file (in ``vN/``) an iteration's [compile] writes its final IR to
    # "package.module:function" (relative to ``worker/``) that says whether it can work here
    # where its packages do not tell alone (``mlir-snippets doctor``); "": its packages tell
    availability: str = ""

    @property
    def onnx_device(self) -> str:
        """The device ONNX's backend API names for it (``prepare``'s ``device``)."""
        return "CUDA" if self.needs_cuda_device else "CPU"

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
    Target("cpu", "targets.cpu:CpuBackend", CPU_RUN, run_starter="loops", run_ir="llvm.mlir",
           dialects=UPSTREAM | FRONT_ENDS,
           golden_references=("pytorch", "interpreter", "iree_cpu", "own_plain"),
           reproducer="triage.cpu_driver:driver", takes_pipeline=True, calls_back=True),
    Target("cuda", "targets.cuda:CudaBackend", CUDA_RUN, "matmul-nvvm", ("cuda.bindings.driver",), "cuda",
           dialects=UPSTREAM | FRONT_ENDS, golden_references=("pytorch", "interpreter", "plain_cpu"),
           takes_pipeline=True, needs_cuda_device=True, option_checks=("cuda_chip",)),
    Target("ttmetal", "targets.tt:TTMetalBackend", packages=TT_PACKAGES, dialects=TT, option_checks=("sys_desc",),
           availability="targets.tt:availability"),
    Target("ttnn", "targets.tt:TTNNBackend", packages=TT_PACKAGES, dialects=TT, option_checks=("sys_desc",),
           availability="targets.tt:availability", opens_before_compile=True),
    Target("iree-cpu", "targets.iree:IreeCpuBackend", packages=IREE_PACKAGES, extra="iree", dialects=IREE,
           golden_references=("cpu_worker",), reproducer="triage.iree_driver:driver",
           bisection="triage.iree_bisect:bisect", iree_backend="llvm-cpu"),
    Target("iree-cuda", "targets.iree:IreeCudaBackend", packages=IREE_PACKAGES, extra="iree", dialects=IREE,
           golden_references=("cpu_worker",), needs_cuda_device=True, iree_backend="cuda"),
)}
NAMES = tuple(TARGETS)
