"""The device fixture (issue 30): tests written in Python compile and run MLIR in the
plugin's sandbox. Real pytest runs (pytester, subprocesses), real MLIR, real workers.
(Not named test_python_api.py: examples/ has a test module of that name, which pytester's
in-process runs would find already imported.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

import pytest_mlir_snippets as mlir
import test_cuda
from pytest_mlir_snippets.items.failures import FAILURES, ItemFailure
from pytest_mlir_snippets.protocol import Kind
from test_termination import alive, cmdline, wait_until
from test_tt import no_client

DATA = Path(__file__).parent / "data" / "python_api"
# the fixtures of the CUDA driver's double (tests/test_cuda.py), as "double" and "fake_libcuda"
double, fake_libcuda = test_cuda.double, test_cuda.fake_libcuda
TAG = "MLIR_PYTHON_API_TEST"  # in the environment of the workers of one test's run, to find them


def tagged_workers(tag: str) -> list[int]:
    """Sandbox workers (alive) whose environment carries ``TAG=tag``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or "pytest_mlir_snippets.worker" not in cmdline(int(entry.name)):
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"{TAG}={tag}".encode() in environ and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


@pytest.fixture
def tagged(monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester) -> str:
    """A tag for the workers of this test's pytest runs, and the device-opened log."""
    tag = uuid.uuid4().hex
    monkeypatch.setenv(TAG, tag)
    monkeypatch.setenv("OPENED_LOG", str(pytester.path / "opened.log"))
    return tag


def test_the_kinds_are_public_and_the_classes_items_raise() -> None:
    public = {"compile-error": mlir.CompileError, "execute-error": mlir.ExecuteError,
              "golden-mismatch": mlir.GoldenMismatch, "crash": mlir.Crash, "timeout": mlir.Timeout,
              "contract-error": mlir.ContractError, "no-golden": mlir.NoGolden}
    assert public == FAILURES
    assert all(issubclass(cls, ItemFailure) and cls.kind == kind for kind, cls in public.items())
    assert issubclass(mlir.Unsupported, pytest.skip.Exception) and not issubclass(mlir.Unsupported, Exception)
    assert issubclass(mlir.GoldenMismatch, AssertionError)
    assert set(mlir.__all__) >= {"assert_close", "Compiled", *(c.__name__ for c in public.values())}


def test_assert_close_is_the_plugins_comparison() -> None:
    a = np.linspace(-1, 1, 16, dtype=np.float32)
    assert mlir.assert_close([a], a + 1e-6)["max_abs_err"] < 1e-5
    with pytest.raises(mlir.GoldenMismatch, match=r"result #0: max abs error 0\.5.*\nmetrics: max_abs_err=0\.5"):
        mlir.assert_close(a, a + np.float32(0.5))
    with pytest.raises(mlir.GoldenMismatch, match="exact match required"):
        mlir.assert_close(np.arange(4), np.arange(1, 5))
    with pytest.raises(AssertionError, match="1 result"):
        mlir.assert_close([a], [a, a])
    mlir.assert_close(a, a + np.float32(0.5), atol=0.6)


def test_the_worker_still_loads_no_pytest() -> None:
    """``import pytest_mlir_snippets`` in the worker must not load the pytest-side API."""
    code = "import sys, pytest_mlir_snippets\nprint('pytest' in sys.modules, 'numpy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]


def _records(path: Path) -> dict[str, dict[str, object]]:
    return {r["nodeid"]: r for r in json.loads(path.read_text())["items"]}


@pytest.mark.slow
@pytest.mark.parametrize("workers", [[], ["-n", "2", "--mlir-devices", "0,1"]], ids=["serial", "xdist"])
def test_the_issue_file(pytester: pytest.Pytester, copy_into, tagged: str, workers: list[str]) -> None:
    copy_into(DATA / "test_device_api.py")
    copy_into(DATA / "conftest.py")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--mlir-json=records.json", "-rA", *workers)
    result.assert_outcomes(passed=6, xfailed=1)
    # every test's worker is gone with the run
    assert wait_until(lambda: not tagged_workers(tagged), 5), tagged_workers(tagged)
    # opened once per process, and again after each crash or hang that killed the worker
    opened = [line.split() for line in (pytester.path / "opened.log").read_text().splitlines()]
    assert {target for _, target, _ in opened} == {"cpu"}
    # the first open (one per xdist worker), after the wild load, after the spin (and after
    # the expected crash, when another test follows it in its process)
    assert (len(opened) == 3) if not workers else (3 <= len(opened) <= 5), opened
    devices = {device for _, _, device in opened}
    assert devices == {"None"} if not workers else devices <= {"0", "1"}, opened
    records = _records(pytester.path / "records.json")
    add = records["test_device_api.py::test_add[1.0]"]
    assert (add["stage"], add["function"], add["kind"], add["golden"], add["outcome"]) == (
        "call", "test_add[1.0]", "pass", None, "passed")
    assert [(c["call"], c["kind"]) for c in add["info"]["calls"]] == [("compile", "pass"), ("run", "pass")]
    crash = records["test_device_api.py::test_expected_crash"]
    assert (crash["kind"], crash["outcome"], crash["failure_stage"]) == ("crash", "xfailed", "run")
    assert "SIGSEGV" in crash["message"]
    bad = records["test_device_api.py::test_bad_ir_is_a_compile_error_at_line_2"]
    assert bad["kind"] == "pass" and bad["info"]["calls"][0]["kind"] == "compile-error"
    assert any(d.startswith("<mlir>:2:") for d in bad["diagnostics"]), bad["diagnostics"]
    hang = records["test_device_api.py::test_spin_is_a_timeout_and_the_next_call_works"]
    assert [c["kind"] for c in hang["info"]["calls"]] == ["pass", "timeout", "pass", "pass"]
    wild = records["test_device_api.py::test_wild_load_is_a_crash_and_the_next_call_works"]
    assert [(c["call"], c["kind"]) for c in wild["info"]["calls"]] == [
        ("compile", "pass"), ("compile", "pass"), ("run", "crash"), ("run", "pass")]
    assert "test_device_api.py::test_target" not in records  # no device: not an MLIR test
    report = (pytester.path / "test_device_api-run-report.txt").read_text()
    assert "test_expected_crash" in report and "crash (expected)" in report


def test_failures_read_as_snippet_items_show_them(pytester: pytest.Pytester, copy_into) -> None:
    """A failed Python test shows MLIR's diagnostics at source lines, and the run report
    (and the combined one) lists it with its kind; snippet items' failures are the same
    public classes."""
    pytester.makepyfile(test_fails="""
        import numpy as np
        import pytest_mlir_snippets as mlir

        def test_bad_ir(mlir_device):
            mlir_device.compile('''func.func @bad(%a: tensor<4xf32>) -> tensor<4xf32> {
          %0 = arith.addf %a, %a : tensor<4xi32>
          return %0 : tensor<4xf32>
        }''')

        def test_mismatch(mlir_device):
            ones = np.ones(4, np.float32)
            out = mlir_device.run(mlir_device.compile('''func.func @neg(%a: tensor<4xf32>) -> tensor<4xf32> {
          %0 = arith.negf %a : tensor<4xf32>
          return %0 : tensor<4xf32>
        }'''), ones)
            mlir.assert_close(out, [ones])
    """)
    pytester.makefile(".mlir", ops="func.func @add_0(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                      "  %0 = arith.addf %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")
    # snippet items raise the same classes: xfail(raises=pytest_mlir_snippets.Crash) holds them
    wild = (DATA / "test_device_api.py").read_text().split('WILD_LOAD = """', 1)[1].split('"""', 1)[0]
    pytester.makefile(".mlir", faults=wild + "func.func @bad(%a: i32) -> i32 {\n  return %b : i32\n}\n")
    pytester.makeconftest("""
        import pytest
        import pytest_mlir_snippets as mlir

        def pytest_collection_modifyitems(items):
            for item in items:
                kind = {"wild_load[execute]": mlir.Crash, "bad[compile]": mlir.CompileError}.get(item.name)
                if kind is not None:
                    item.add_marker(pytest.mark.xfail(raises=kind, strict=True))
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    # ops.mlir 2 passed, faults.mlir: wild_load[compile] passed, 2 xfailed, bad[execute] skipped (compile failed)
    result.assert_outcomes(passed=3, failed=2, xfailed=2, skipped=1)
    result.stdout.fnmatch_lines(["E *pytest_mlir_snippets.CompileError: compile-error: @bad (<mlir>:1) [[]compile[]]",
                                 "E *<mlir>:2:*: error: use of value '%a' expects different type*",
                                 "E *pytest_mlir_snippets.GoldenMismatch: results differ (tolerance: atol 1e-05*): "
                                 "result #0: max abs error 2*",
                                 "E *metrics: max_abs_err=2, max_rel_err=2*"])
    assert "api/device.py" not in result.stdout.str()  # the plugin's frames are hidden
    combined = (pytester.path / "mlir-snippets-combined-report.txt").read_text()
    assert "test_fails.py::test_bad_ir: compile-error" in combined
    assert "test_fails.py::test_mismatch: golden-mismatch" in combined


def test_every_target_of_the_machine(pytester: pytest.Pytester, copy_into, monkeypatch: pytest.MonkeyPatch) -> None:
    """cpu and iree-cpu compile and run; cuda compiles to PTX and skips the run without a
    GPU; tt skips naming why; bf16 through ml_dtypes; modules built with the bindings."""
    no_client(pytester, monkeypatch)  # the tt test's module is no StableHLO: the client is not needed
    copy_into(DATA / "test_targets.py")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rs")
    cuda = any(Path(p, "libcuda.so.1").exists() for p in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64"))
    if cuda:  # a machine with a GPU runs the cuda test to the end
        result.assert_outcomes(passed=5, skipped=1)
    else:
        result.assert_outcomes(passed=4, skipped=2)
        result.stdout.fnmatch_lines(["SKIPPED * no CUDA device: *"])
    result.stdout.re_match_lines([r"SKIPPED .* Unsupported: (tt-mlir is not available|TTIR and TTNN input go through "
                                  r"tt-mlir's builder, which is not here)"])


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_sigterm_leaves_no_worker(pytester: pytest.Pytester, tagged: str, workers: list[str]) -> None:
    """pytest cancelled (SIGTERM) while Python tests' runs spin: their workers go too."""
    pytester.makepyfile(test_spin=f"""
        import pytest

        @pytest.mark.parametrize("start", [0, 1])
        def test_spin(mlir_device, start):
            mlir_device.run(mlir_device.compile({_spin()!r}), start, timeout=600)
    """)
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_spin.py", *workers],
                            cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=os.environ)
    try:
        assert wait_until(lambda: len(tagged_workers(tagged)) == (2 if workers else 1), 90), "no sandbox worker"
        wait_until(lambda: False, 1.0)  # compiled, and spinning in the run
        assert tagged_workers(tagged) and proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        out = proc.communicate(timeout=30)[0].decode()
        assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
        assert wait_until(lambda: not tagged_workers(tagged), 5), tagged_workers(tagged)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_pytest_timeouts_time_bounds_the_calls(pytester: pytest.Pytester) -> None:
    """A call's default timeout is what is left of pytest-timeout's time for the test:
    a hang is a ``Timeout`` of the call, before pytest-timeout's timer ends the test."""
    pytester.makepyfile(test_bounded=f"""
        import pytest
        import pytest_mlir_snippets as mlir

        @pytest.mark.timeout(5)
        def test_spin(mlir_device):
            spin = mlir_device.compile({_spin()!r})
            with pytest.raises(mlir.Timeout, match="no answer within"):
                mlir_device.run(spin, 0)
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "+++ Timeout +++" not in result.stdout.str()


def _spin() -> str:
    return (DATA / "test_device_api.py").read_text().split('SPIN = """', 1)[1].split('"""', 1)[0]


def test_a_kind_without_its_own_class_still_fails() -> None:
    assert set(FAILURES) == {k.value for k in Kind} - {"pass", "unsupported"}


def test_cuda_runs_through_the_driver(pytester: pytest.Pytester, double: Path) -> None:
    """With a CUDA device (the double of the driver, tests/test_cuda.py): ``run`` opens it in
    the worker, loads the kernels, launches them and returns the results (the double runs
    no kernel: only their shape and type are checked)."""
    pytester.makepyfile(test_gpu=f'''
        import numpy as np

        def test_run(mlir_device):
            compiled = mlir_device.compile({test_cuda.ADD_CONSTANT!r})
            assert ".target sm_90" in compiled.artifacts["kernels.ptx"]
            (out,) = mlir_device.run(compiled, np.ones(4, np.float32))
            assert out.shape == (4,) and out.dtype == np.float32
    ''')
    result = pytester.runpytest_subprocess("--mlir-target=cuda", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    log = double.read_text().split()
    assert "launch" in log and "add_constant_kernel" in log
