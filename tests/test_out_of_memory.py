"""A worker that runs out of memory under ``--mlir-memory-limit`` is said to, whatever
signal ended it (a failed allocation often ends in SIGSEGV, saying nothing)."""

from __future__ import annotations

import resource

import pytest

from pytest_mlir_snippets import children
from pytest_mlir_snippets.triage import reproducer

# 10 MiB buffers, each written (ten times over: the worker's address space, read every
# 0.1 s, is seen near the limit before the end) and kept (the snippet frees its own: none
# of these), until an allocation fails and the write through its null pointer ends the
# worker. 160 of them (1.6 GiB) pass the limit below whatever the worker's own address
# space; the crash's reproducer is run under the same limit (it fails there again).
HOG = """func.func @hog(%x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 160 : index
  %reps = arith.constant 10 : index
  %spare = memref.alloc() : memref<4xf32>
  memref.dealloc %spare : memref<4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> f32 {
    %m = memref.alloc() : memref<2621440xf32>
    scf.for %j = %c0 to %reps step %c1 {
      linalg.fill ins(%x : f32) outs(%m : memref<2621440xf32>)
    }
    %v = memref.load %m[%i] : memref<2621440xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  return %r : f32
}
"""


@pytest.mark.slow
def test_a_worker_out_of_memory_is_named_so(pytester: pytest.Pytester) -> None:
    (pytester.path / "hog.mlir").write_text(HOG)
    result = pytester.runpytest("-p", "no:cacheprovider", "--mlir-memory-limit=1500M")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["the sandbox worker ran out of memory under --mlir-memory-limit 1.46 GiB "
                                 "(its address space reached *); killed by SIGSEGV"])


def test_out_of_memory_in_words() -> None:
    limit = 4 * 2**30
    assert children.out_of_memory("LLVM ERROR: out of memory\nAllocation failed\n", None, limit) == (
        "ran out of memory under --mlir-memory-limit 4 GiB (LLVM ERROR: out of memory)")
    assert children.out_of_memory("", int(0.95 * limit), limit).endswith("(its address space reached 3.8 GiB)")
    assert children.out_of_memory("", limit // 2, limit) == ""  # far from the limit: some other crash
    assert children.out_of_memory("LLVM ERROR: out of memory", None, None) == ""  # no limit: no RLIMIT_AS to blame


def test_the_reproducers_rerun_keeps_the_memory_limit(tmp_path) -> None:
    """The native stack of a crash comes from its reproducer's run, under the worker's
    address-space limit: one out of memory would otherwise allocate without bound."""
    script = tmp_path / "reproduce.sh"
    script.write_text("echo 'Stack dump:' >&2\n"
                      "python3 -c 'import resource, sys; print(resource.getrlimit(resource.RLIMIT_AS)[0], "
                      "file=sys.stderr)'\n")
    limit = 3 * 2**30
    assert reproducer.native_stack(script, 30, limit).splitlines() == ["Stack dump:", str(limit)]
    inherited = resource.getrlimit(resource.RLIMIT_AS)[0]  # without a limit: this process's own
    assert reproducer.native_stack(script, 30).splitlines() == ["Stack dump:", str(inherited)]
