"""Command-line options and ini settings (SPEC 10), resolved in one place."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

TARGETS = ("cpu", "cuda", "ttmetal", "ttnn")
GROUP = "mlir"


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup(GROUP, "MLIR snippets (pytest-mlir-snippets)")

    def option(name: str, ini: str | None = None, **kwargs: object) -> None:
        group.addoption(name, dest=name[2:].replace("-", "_"), **kwargs)
        if ini:
            parser.addini(ini, help=f"default for {name}: {kwargs.get('help', '')}")

    option("--mlir-target", "mlir_target", choices=TARGETS, default=None,
           help="compile and execute for this target (default: cpu)")
    option("--mlir-skip-exec", action="store_true", default=False,
           help="compile only: no execute items, no device opened")
    option("--mlir-pipeline", "mlir_pipeline", default=None, metavar="PIPELINE",
           help='replace the target\'s compile pipeline, e.g. "builtin.module(...)"')
    option("--mlir-timeout", "mlir_timeout", type=float, default=None, metavar="SECONDS",
           help="seconds per compile or execute call before the worker is killed (default 300)")
    option("--mlir-output-root", "mlir_output_root", default=None, metavar="DIR",
           help="root folder of artifacts (default: the rootdir)")
    option("--mlir-save-artifacts", action="store_true", default=False,
           help="keep the compiled IR under --mlir-output-root")
    option("--mlir-print-ir", action="store_true", default=False, help="print the compiled IR of each snippet")
    option("--mlir-opt-level", "mlir_opt_level", type=int, choices=range(4), default=None,
           help="LLVM optimization level of the JIT for snippet items (default 0: the items check MLIR's "
                "lowering, and -O0 code generation is a third faster; optimization runs use 3)")
    option("--mlir-cuda-chip", default=None, metavar="sm_NN",
           help="cuda target chip (default: the device's, else sm_80); the PTX version follows it")
    option("--mlir-sys-desc", default=None, metavar="PATH",
           help="tt-mlir system descriptor (default: $SYSTEM_DESC_PATH, else ttrt-artifacts/system_desc.ttsys)")
    option("--mlir-disable-eth-dispatch", action="store_true", default=False,
           help="ttmetal/ttnn: dispatch on worker cores instead of ethernet cores")
    option("--mlir-bench-warmup", type=int, default=5, metavar="N",
           help="optimization-run benchmarks: untimed calls before timing (default 5)")
    option("--mlir-bench-time", type=float, default=1.0, metavar="SECONDS",
           help="optimization-run benchmarks: time calls for at least this long, 20 calls at least (default 1.0)")
    option("--mlir-bench-settle", type=float, default=10.0, metavar="SECONDS",
           help="optimization-run benchmarks: while the CPU ran slowed (another tenant on a shared machine), "
                "time for up to this much longer to see it at its usual speed (default 10; 0: never)")
    option("--mlir-bench-layout", choices=("fixed", "random"), default="fixed",
           help="fixed (default): workers run without address-space randomization, so every run times "
                "the same memory layout; random: each worker gets its own, as programs usually do")
    option("--mlir-seed", type=int, default=0, help="seed of the generated inputs (default 0)")
    option("--mlir-dynamic-dim", type=int, default=4, help="size given to dynamic dimensions (default 4)")
    option("--mlir-atol", "mlir_atol", type=float, default=None,
           help="absolute tolerance (default by element type: f32 1e-4, f16 1e-2, bf16 3e-2)")
    option("--mlir-rtol", "mlir_rtol", type=float, default=None,
           help="relative tolerance (default by element type: f32 1e-3, f16 1e-2, bf16 3e-2)")
    option("--mlir-pcc", "mlir_pcc", type=float, default=None, help="minimum PCC (default 0.99)")
    option("--mlir-devices", default="", metavar="IDS", help="device ids, one per xdist worker, e.g. 0,1")
    option("--mlir-memory-limit", "mlir_memory_limit", default=None, metavar="SIZE",
           help="address-space limit of each sandbox worker, e.g. 8G (default: a share of the machine's memory)")
    option("--mlir-expectations", "mlir_expectations", default=None, metavar="FILE",
           help="expected status per item; expected failures become xfail, surprises fail")
    option("--mlir-update-expectations", action="store_true", default=False,
           help="rewrite the --mlir-expectations file from this run's outcomes")
    option("--mlir-run-crashers", action="store_true", default=False,
           help="also run the items the expectations say crash (skipped by default)")
    option("--mlir-no-cache", action="store_true", default=False,
           help="ignore the compile cache (compile verdicts kept in pytest's cache directory)")
    option("--mlir-json", default=None, metavar="PATH",
           help="write one JSON record per item (rebuild reports with `mlir-snippets report`)")
    parser.addini("mlir_snippet_files", "glob patterns of snippet files inside directories", type="args",
                  default=["*.mlir"])
    parser.addini("mlir_ignore_files", "file names never collected as snippet files", type="args",
                  default=["preprocessed.mlir"])


def parse_size(text: str) -> int:
    """``8G``, ``512M``, ``1.5GiB`` or a plain number of bytes."""
    m = re.fullmatch(r"\s*([\d.]+)\s*([kKmMgGtT]?)(i?[bB])?\s*", text)
    if not m:
        raise pytest.UsageError(f"--mlir-memory-limit: cannot read {text!r} (try 8G)")
    scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2).lower()]
    return int(float(m.group(1)) * scale)


def default_memory_limit(workers: int) -> int | None:
    """Three quarters of the machine's memory, shared among the xdist workers."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None
    return int(total * 0.75) // max(1, workers)


def xdist_worker(config: pytest.Config) -> tuple[str | None, int]:
    """(this process's xdist worker id, the number of workers); (None, 1) without xdist."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        return None, 1
    return str(workerinput.get("workerid")), int(workerinput.get("workercount", 1) or 1)


@dataclass
class Settings:
    target: str = "cpu"
    skip_exec: bool = False
    pipeline: str | None = None
    timeout: float = 300.0
    output_root: Path = Path(".")
    save_artifacts: bool = False
    print_ir: bool = False
    seed: int = 0
    dynamic_dim: int = 4
    opt_level: int = 0
    bench_warmup: int = 5
    bench_time: float = 1.0
    bench_settle: float = 10.0
    bench_layout: str = "fixed"
    cuda_chip: str | None = None
    sys_desc: str | None = None
    disable_eth_dispatch: bool = False
    no_cache: bool = False
    atol: float | None = None
    rtol: float | None = None
    pcc: float = 0.99
    devices: list[int] = field(default_factory=list)
    memory_limit: int | None = None
    worker: str | None = None  # the xdist worker id (gw0, gw1, ...) of this process
    expectations: Path | None = None
    update_expectations: bool = False
    run_crashers: bool = False
    snippet_files: list[str] = field(default_factory=lambda: ["*.mlir"])
    ignore_files: list[str] = field(default_factory=lambda: ["preprocessed.mlir"])

    @classmethod
    def from_config(cls, config: pytest.Config) -> Settings:
        """CLI beats ini beats default; pytest-timeout's timeout caps ours."""

        def pick(name: str, ini: str | None, default: object, convert: type = str) -> object:
            value = config.getoption(name)
            if value is None and ini is not None:
                raw = config.getini(ini)
                value = convert(raw) if raw not in (None, "", []) else None
            return default if value is None else value

        timeout = within(float(pick("mlir_timeout", "mlir_timeout", 300.0, float)),  # type: ignore[arg-type]
                         _pytest_timeout(config))
        memory = pick("mlir_memory_limit", "mlir_memory_limit", None)
        devices = [int(d) for d in str(config.getoption("mlir_devices") or "").split(",") if d.strip()]
        root = pick("mlir_output_root", "mlir_output_root", str(config.rootpath))
        return cls(
            target=str(pick("mlir_target", "mlir_target", "cpu")),
            skip_exec=bool(config.getoption("mlir_skip_exec")),
            pipeline=pick("mlir_pipeline", "mlir_pipeline", None),  # type: ignore[arg-type]
            timeout=timeout,
            output_root=Path(str(root)).resolve(),
            save_artifacts=bool(config.getoption("mlir_save_artifacts")),
            print_ir=bool(config.getoption("mlir_print_ir")),
            seed=int(config.getoption("mlir_seed")),
            dynamic_dim=int(config.getoption("mlir_dynamic_dim")),
            opt_level=int(str(pick("mlir_opt_level", "mlir_opt_level", 0, int))),
            bench_warmup=int(config.getoption("mlir_bench_warmup")),
            cuda_chip=config.getoption("mlir_cuda_chip"),
            sys_desc=config.getoption("mlir_sys_desc"),
            no_cache=bool(config.getoption("mlir_no_cache")),
            disable_eth_dispatch=bool(config.getoption("mlir_disable_eth_dispatch")),
            bench_time=float(config.getoption("mlir_bench_time")),
            bench_settle=float(config.getoption("mlir_bench_settle")),
            bench_layout=str(config.getoption("mlir_bench_layout")),
            atol=pick("mlir_atol", "mlir_atol", None, float),  # type: ignore[arg-type]
            rtol=pick("mlir_rtol", "mlir_rtol", None, float),  # type: ignore[arg-type]
            pcc=float(pick("mlir_pcc", "mlir_pcc", 0.99, float)),  # type: ignore[arg-type]
            devices=devices,
            memory_limit=parse_size(str(memory)) if memory else default_memory_limit(xdist_worker(config)[1]),
            worker=xdist_worker(config)[0],
            expectations=_path(pick("mlir_expectations", "mlir_expectations", None), config),
            update_expectations=bool(config.getoption("mlir_update_expectations")),
            run_crashers=bool(config.getoption("mlir_run_crashers")),
            snippet_files=list(config.getini("mlir_snippet_files")),
            ignore_files=list(config.getini("mlir_ignore_files")),
        )


def _path(value: object, config: pytest.Config) -> Path | None:
    """A path from the command line (relative to where pytest runs) or ini (to the rootdir)."""
    if not value:
        return None
    path = Path(str(value))
    from_cli = config.getoption("mlir_expectations") is not None
    return (path if path.is_absolute() else (Path.cwd() if from_cli else config.rootpath) / path).resolve()


def within(ours: float, outer: float | None) -> float:
    """Our per-call timeout, made to expire before pytest-timeout's ``outer`` one, so
    that a hang becomes a ``timeout`` outcome instead of pytest-timeout ending the run."""
    if not outer:
        return ours
    return min(ours, max(outer * 0.9, outer - 5.0))


def item_timeout(item: pytest.Item, settings: Settings) -> float:
    """The timeout for one item: ours, within a ``@pytest.mark.timeout`` on it."""
    marker = item.get_closest_marker("timeout")
    if marker is None:
        return settings.timeout
    value = marker.kwargs.get("timeout", marker.args[0] if marker.args else None)
    try:
        seconds = float(value) if value is not None else 0.0
    except (TypeError, ValueError):
        return settings.timeout
    return within(settings.timeout, seconds if seconds > 0 else None)


def _pytest_timeout(config: pytest.Config) -> float | None:
    """pytest-timeout's global timeout (CLI or ini), when that plugin is active."""
    try:
        value = config.getoption("timeout")
    except ValueError:
        return None
    if value is None:
        try:
            value = config.getini("timeout")
        except ValueError:
            return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if seconds > 0 else None
