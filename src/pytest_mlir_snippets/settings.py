"""Command-line options and ini settings (SPEC 10): one table, resolved in one place.

Each ``Option`` row gives the flag, its ini name (if any), its type and default and
the ``Settings`` field it fills. The command line beats the ini file, which beats the
default. What the sandbox worker is told (``protocol.Options``) is built from the
settings by field name (``request_options``), not copied field by field.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import pytest

from pytest_mlir_snippets import registry
from pytest_mlir_snippets.protocol import Options

TARGETS = registry.NAMES  # the registry's (registry.py)
GROUP = "mlir"
DEFAULT_TIMEOUT = 60.0  # seconds per sandbox call of a snippet item: a hung unit-test-sized snippet costs a minute
RUN_TIMEOUT = 600.0  # of an optimization-run item (a whole model compiled, timed), unless --mlir-timeout is given
DEVICE_KEY = "mlir_device_id"  # what the controller hands each xdist worker (pytest_configure_node)


@dataclass(frozen=True)
class Option:
    flag: str
    help: str
    ini: str | None = None
    default: Any = None
    type: Callable[[str], Any] | None = None  # None: a flag (store_true) when default is False, else text
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    check: Callable[[Any], bool] | None = None  # what a value must satisfy, beyond its type and choices
    must: str = ""  # what ``check`` asks, in words ("be positive")

    @property
    def dest(self) -> str:
        return self.flag[2:].replace("-", "_")

    @property
    def field(self) -> str:
        return self.dest.removeprefix("mlir_")


POSITIVE: dict[str, Any] = {"check": lambda v: v > 0, "must": "be positive"}
NOT_NEGATIVE: dict[str, Any] = {"check": lambda v: v >= 0, "must": "not be negative"}
# an option a target declares checked (``registry.Target.option_checks``): what a value must satisfy, else why not
OPTION_CHECKS: dict[str, tuple[Callable[[str], object], str]] = {
    "cuda_chip": (re.compile(r"sm_\d+[a-z]?").fullmatch, "--mlir-cuda-chip: {!r} is not a CUDA chip name like sm_80"),
    "sys_desc": (lambda v: Path(v).is_file(), "--mlir-sys-desc: no file at {} (`mlir-snippets sysdesc` writes one)")}

OPTIONS = (
    Option("--mlir-target", "compile and execute for this target (default: cpu)", "mlir_target", "cpu",
           choices=TARGETS),
    Option("--mlir-skip-exec", "compile only: no execute items, no device opened", default=False),
    Option("--mlir-pipeline", 'replace the target\'s compile pipeline, e.g. "builtin.module(...)"', "mlir_pipeline",
           metavar="PIPELINE"),
    Option("--mlir-timeout", f"seconds per compile or execute call before the worker is killed (default "
           f"{DEFAULT_TIMEOUT:g}; optimization-run items, a whole model benchmarked: {RUN_TIMEOUT:g}); "
           "pytest-timeout's time for an item (--timeout, PYTEST_TIMEOUT, ini, marker) bounds all its calls",
           "mlir_timeout", DEFAULT_TIMEOUT, float, metavar="SECONDS", **POSITIVE),
    Option("--mlir-output-root", "root folder of artifacts (default: the rootdir)", "mlir_output_root",
           metavar="DIR"),
    Option("--mlir-save-artifacts", "keep the compiled IR under --mlir-output-root", default=False),
    Option("--mlir-print-ir", "print the compiled IR of each snippet", default=False),
    Option("--mlir-opt-level", "LLVM optimization level of the JIT for snippet items (default 0: the items check "
           "MLIR's lowering, and -O0 code generation is a third faster; optimization runs use 3)",
           "mlir_opt_level", 0, int, choices=("0", "1", "2", "3")),
    Option("--mlir-cuda-chip", "cuda target chip (default: the device's, else sm_80), the PTX version follows it; "
           "iree-cuda: IREE's --iree-cuda-target (default sm_80)",
           metavar="sm_NN"),
    Option("--mlir-sys-desc", "tt-mlir system descriptor (default: $SYSTEM_DESC_PATH, else "
           "ttrt-artifacts/system_desc.ttsys)", metavar="PATH"),
    Option("--mlir-disable-eth-dispatch", "ttmetal/ttnn: dispatch on worker cores instead of ethernet cores",
           default=False),
    Option("--mlir-bench-warmup", "optimization-run benchmarks: untimed calls before timing (default 5)",
           default=5, type=int, metavar="N", **NOT_NEGATIVE),
    Option("--mlir-bench-time", "optimization-run benchmarks: time calls for this long, or less where the "
           "warm-up says 8 blocks of 32 calls per memory layout fit sooner; 20 calls at least (default 1.0)",
           default=1.0, type=float, metavar="SECONDS", **POSITIVE),
    Option("--mlir-bench-settle", "optimization-run benchmarks: while the CPU ran slowed (another tenant on a "
           "shared machine), time for up to this much longer to see it at its usual speed (default 10; 0: never)",
           default=10.0, type=float, metavar="SECONDS", **NOT_NEGATIVE),
    Option("--mlir-bench-layout", "fixed (default): workers run without address-space randomization, so every "
           "run times the same memory layout; random: each worker gets its own, as programs usually do",
           default="fixed", choices=("fixed", "random")),
    Option("--mlir-seed", "seed of the generated inputs (default 0)", default=0, type=int),
    Option("--mlir-dynamic-dim", "size given to dynamic dimensions (default 4)", default=4, type=int, **NOT_NEGATIVE),
    Option("--mlir-atol", "absolute tolerance (default by element type, torch.testing.assert_close's: f32 1e-5, "
           "f16 1e-5, bf16 1e-5, f64 1e-7; scaled down for small outputs)", "mlir_atol", type=float, **NOT_NEGATIVE),
    Option("--mlir-rtol", "relative tolerance (default by element type: f32 1.3e-6, f16 1e-3, bf16 1.6e-2, "
           "f64 1e-7)", "mlir_rtol", type=float, **NOT_NEGATIVE),
    Option("--mlir-pcc", "minimum PCC (default 0.99)", "mlir_pcc", 0.99, float, check=lambda v: -1 <= v <= 1,
           must="lie between -1 and 1"),
    Option("--mlir-bisect", "a golden-mismatch is compiled again with its pipeline cut after each pass (the rest "
           "lowered plainly) to name the pass its results diverge after", "mlir_bisect", default=False),
    Option("--mlir-bisect-timeout", "seconds for one item's bisection (default: the item's timeout)",
           "mlir_bisect_timeout", type=float, metavar="SECONDS", **POSITIVE),
    Option("--mlir-require-golden", "fail execute verdicts that compared nothing (golden none) or only the "
           "plugin's own lowering (golden self), as kind no-golden", "mlir_require_golden", default=False),
    Option("--mlir-lenient-shapes", "recorded outputs may differ from the results by unit dimensions (1x4 for 4)",
           default=False),
    Option("--mlir-strict", "unsupported items fail (a lit UNSUPPORTED line still skips), and a run where no item "
           "ran to an outcome (all skipped) exits non-zero (5)", "mlir_strict", default=False),
    Option("--mlir-devices", "device ids, one per xdist worker, e.g. 0,1", default="", metavar="IDS",
           check=lambda v: all(d.strip().isdigit() for d in str(v).split(",") if d.strip()),
           must="be device numbers separated by commas, e.g. 0,1"),
    Option("--mlir-memory-limit", "address-space limit of each sandbox worker, e.g. 8G (default: a share of the "
           "machine's memory)", "mlir_memory_limit", metavar="SIZE"),
    Option("--mlir-expectations", "expected status per item; expected failures become xfail, surprises fail",
           "mlir_expectations", metavar="FILE"),
    Option("--mlir-update-expectations", "rewrite the --mlir-expectations file from this run's outcomes",
           default=False),
    Option("--mlir-run-crashers", "also run the items the expectations say crash (skipped by default)",
           default=False),
    Option("--mlir-no-cache", "ignore the compile cache (compile verdicts kept in pytest's cache directory)",
           default=False),
    Option("--mlir-report-dir", "write the run reports (and optimization runs' tables) under DIR, in the inputs' "
           "folders relative to the rootdir (default: beside each input)", "mlir_report_dir", metavar="DIR"),
    Option("--mlir-json", "write one JSON record per item (rebuild reports with `mlir-snippets report`)",
           metavar="PATH"),
)


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup(GROUP, "MLIR snippets (pytest-mlir-snippets)")
    for opt in OPTIONS:
        kwargs: dict[str, Any] = {"dest": opt.dest, "help": opt.help}
        if opt.default is False:  # a flag (its ini line, if any, is read when it is not given: _value)
            kwargs.update(action="store_true", default=False)
        else:
            kwargs.update(default=None, type=opt.type or str)
            if opt.choices:
                kwargs["choices"] = [opt.type(c) for c in opt.choices] if opt.type else list(opt.choices)
            if opt.metavar:
                kwargs["metavar"] = opt.metavar
        group.addoption(opt.flag, **kwargs)
        if opt.ini and opt.default is False:
            parser.addini(opt.ini, help=f"default for {opt.flag}: {opt.help}", type="bool", default=False)
        elif opt.ini:
            parser.addini(opt.ini, help=f"default for {opt.flag}: {opt.help}")
    parser.addini("mlir_snippet_files", "glob patterns of snippet files inside directories", type="args",
                  default=["*.mlir"])
    parser.addini("mlir_ignore_files", "file names never collected as snippet files", type="args",
                  default=["preprocessed.mlir"])


@dataclass
class Settings:
    target: str = "cpu"
    target_given: bool = False  # on the command line or in the ini (an optimization run's own target yields)
    skip_exec: bool = False
    pipeline: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    timeout_given: bool = False  # on the command line or in the ini (optimization runs take RUN_TIMEOUT otherwise)
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
    require_golden: bool = False
    bisect: bool = False
    bisect_timeout: float | None = None  # None: the item's timeout
    lenient_shapes: bool = False
    strict: bool = False
    devices: list[int] = field(default_factory=list)
    device_id: int | None = None  # this process's device (--mlir-devices)
    memory_limit: int | None = None
    expectations: Path | None = None
    update_expectations: bool = False
    run_crashers: bool = False
    json: Path | None = None
    report_dir: Path | None = None  # where run reports go (None: beside each input)
    iree_compile_flags: list[str] = field(default_factory=list)  # from an IREE config JSON (--mlir-expectations)
    iree_run_flags: list[str] = field(default_factory=list)
    snippet_files: list[str] = field(default_factory=lambda: ["*.mlir"])
    ignore_files: list[str] = field(default_factory=lambda: ["preprocessed.mlir"])

    @classmethod
    def from_config(cls, config: pytest.Config) -> Settings:
        raw = {opt.field: _value(config, opt) for opt in OPTIONS}
        workerinput = getattr(config, "workerinput", None)
        devices = [int(d) for d in str(raw.pop("devices") or "").split(",") if d.strip()]
        memory = raw.pop("memory_limit")
        workers = int(workerinput.get("workercount", 1) or 1) if workerinput else 1
        expectations, json_path, root = raw.pop("expectations"), raw.pop("json"), raw.pop("output_root")
        report_dir = raw.pop("report_dir")
        for option in registry.TARGETS[raw["target"]].option_checks:  # the options the target declares checked
            if raw[option] and not OPTION_CHECKS[option][0](str(raw[option])):
                raise pytest.UsageError(OPTION_CHECKS[option][1].format(raw[option]))
        return cls(
            **raw,
            target_given=_given(config, "mlir_target"),
            timeout_given=_given(config, "mlir_timeout"),
            output_root=Path(str(root or config.rootpath)).resolve(),
            devices=devices,
            device_id=workerinput.get(DEVICE_KEY) if workerinput else device_for_worker(devices, None),
            memory_limit=parse_size(str(memory)) if memory else default_memory_limit(workers),
            expectations=_path(expectations, config, "mlir_expectations"),
            json=Path(str(json_path)) if json_path else None,
            report_dir=_path(report_dir, config, "mlir_report_dir"),
            snippet_files=list(config.getini("mlir_snippet_files")),
            ignore_files=list(config.getini("mlir_ignore_files")),
        )

    def request_options(self, **overrides: Any) -> Options:
        """What a sandbox worker is told: the settings' fields of the same names."""
        names = {f.name for f in fields(Options)} & {f.name for f in fields(self)}
        options = Options(**{name: getattr(self, name) for name in names})
        options.print_ir = self.print_ir or self.save_artifacts
        for name, value in overrides.items():
            setattr(options, name, value)
        return options


def _value(config: pytest.Config, opt: Option) -> Any:
    """The command line's value, else the ini file's, else the default; a value that
    cannot be used is a usage error (one line, exit 4) before anything runs."""
    value = config.getoption(opt.dest)
    where = opt.flag
    if value is False and opt.ini is not None:  # a flag: the ini's true/false
        try:
            return bool(config.getini(opt.ini))
        except (ValueError, pytest.UsageError) as error:  # pytest's own words: "invalid truth value 'maybe'"
            raise pytest.UsageError(f"{opt.ini} (ini): {error} (true or false)") from None
    if value is None and opt.ini is not None:
        raw = config.getini(opt.ini)
        where = f"{opt.ini} (ini)"
        try:
            value = (opt.type or str)(raw) if raw not in (None, "", []) else None
        except ValueError:
            raise pytest.UsageError(f"{where}: {raw!r} is not {_kind(opt)}") from None
        if value is not None and opt.choices and str(raw) not in opt.choices:
            raise pytest.UsageError(f"{where}: {raw!r} is not one of {', '.join(opt.choices)}")
    if value is not None and opt.check is not None and not opt.check(value):
        raise pytest.UsageError(f"{where}: {value!r} must {opt.must}")
    return opt.default if value is None else value


def _given(config: pytest.Config, name: str) -> bool:
    """Whether option ``--NAME`` (ini ``NAME``) was set, on the command line or in the ini."""
    return config.getoption(name) is not None or bool(config.getini(name))


def _kind(opt: Option) -> str:
    return "a whole number" if opt.type is int else "a number" if opt.type is float else "valid"


def device_for_worker(devices: list[int], worker: str | None) -> int | None:
    """``--mlir-devices 0,1``: xdist worker gwN gets devices[N % len(devices)]."""
    if not devices:
        return None
    index = int(worker[2:]) if worker and worker.startswith("gw") and worker[2:].isdigit() else 0
    return devices[index % len(devices)]


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


def _path(value: object, config: pytest.Config, dest: str) -> Path | None:
    """A path from the command line (relative to where pytest runs) or ini (to the rootdir)."""
    if not value:
        return None
    path = Path(str(value))
    from_cli = config.getoption(dest) is not None
    return (path if path.is_absolute() else (Path.cwd() if from_cli else config.rootpath) / path).resolve()
