"""A failed execute's reproducer on iree-cpu (``Op.DRIVER``): IREE's own tools, nothing else.

``iree-compile`` compiles the snippet with the item's flags (the commands of the target's
``iree-compile.sh``), then ``iree-run-module`` runs the entry on the item's inputs, saved
as ``.npy``, and compares its results with the item's golden, saved as typed raw bytes
(``--expected_output=2x3xf32=@expected_output_0.bin``: IREE's own comparison, in its
``approximate`` mode at the item's tolerance): a wrong result makes it report the
mismatch and exit non-zero, a crash kills it by its signal. A crashed item's golden was
never computed: its run compares nothing.

The answer's ``info``: ``files`` (name -> base64: ``snippet.mlir``, the inputs' ``.npy``,
the golden's ``.bin``),
``commands`` (each an argv, tools by the absolute path of their executable:
``mlirtext/native.py``), ``golden`` (what the run is compared with).
"""

from __future__ import annotations

import base64

import numpy as np

from pytest_mlir_snippets.golden.compare import Tolerance
from pytest_mlir_snippets.mlirtext.native import native_tool
from pytest_mlir_snippets.protocol import Driver, DriverFacts, Kind, Response
from pytest_mlir_snippets.worker.core import Compiled, SnippetFailure
from pytest_mlir_snippets.worker.judging.judge import expected_outputs, run_inputs, tolerance_rule
from pytest_mlir_snippets.worker.targets.iree import IreeBackend
from pytest_mlir_snippets.worker.targets.iree_commands import compile_commands

VMFB = "reproduce.vmfb"
# iree-run-module's absolute tolerance flag per element type (its rtol is one for all)
_THRESHOLDS = {"float16": "f16", "float32": "f32", "float64": "f64", "bfloat16": "bf16"}


def driver(backend: IreeBackend, compiled: Compiled, request: Driver) -> Response:
    """The commands that compile and run ``request``'s function as its item did; with
    ``compare`` False (the item crashed), a run that compares nothing."""
    if compiled.kept.check_sites or compiled.kept.check_imports:
        raise SnippetFailure(Kind.UNSUPPORTED, "no reproducer for a snippet with check ops: IREE's check "
                             "module, which iree-run-module lacks, is their golden")
    options, golden = request.options, request.recorded
    inputs = run_inputs(compiled, options, golden)
    expected: list[np.ndarray] = []
    basis = "none (the call must return)"
    if request.compare:
        expected, basis = expected_outputs(compiled, options, golden, inputs, backend.reference)
    backend.ready(options.device_id)  # a crashed item's reproducer is made in a fresh worker
    scalars = [i for i, spec in enumerate(compiled.signature[1]) if spec.kind == "scalar"]
    if expected and scalars:
        raise SnippetFailure(Kind.UNSUPPORTED, f"no reproducer: result #{scalars[0]} is a scalar, which "
                             "iree-run-module cannot compare ('variant types mismatch')")
    extra = thresholds(tolerance_rule(compiled, options, golden), expected)
    files, run = backend.run_files(compiled, inputs, expected, VMFB, native_tool("iree-run-module"), extra)
    files["snippet.mlir"] = base64.b64encode(request.module.encode()).decode("ascii")
    commands = compile_commands(backend.flags(options), compiled.facts.iree_route or "none", VMFB, native_tool)
    return Response(Kind.PASS, files=files, driver=DriverFacts(basis, commands=[*commands, run]))


def thresholds(rule: Tolerance, expected: list[np.ndarray]) -> tuple[str, ...]:
    """``iree-run-module``'s tolerance flags for ``rule`` on ``expected``: each float type's
    atol, the largest rtol. IREE has no ULP mode: an allowance of n ULP widens the atol by
    n spacings of the largest expected magnitude."""
    atols: dict[str, float] = {}
    rtol = 0.0
    for value in map(np.asarray, expected):
        name = _THRESHOLDS.get(value.dtype.name)
        if name is None:  # integers and booleans: compared exactly
            continue
        wide = np.asarray(value, np.float64)
        atol, r = rule.resolve(value.dtype, wide)
        finite = np.abs(wide[np.isfinite(wide)])
        if rule.ulp and finite.size:
            atol += rule.ulp * float(np.spacing(finite.max().astype(value.dtype)))
        atols[name] = max(atols.get(name, 0.0), atol)
        rtol = max(rtol, r)
    flags = [f"--expected_{name}_threshold={atol:.9g}" for name, atol in sorted(atols.items())]
    return (*flags, f"--expected_rtol={rtol:.9g}") if atols else ()
