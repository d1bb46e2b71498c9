"""Tests without the corpus (issue 45): ``scripts/get_corpus.py`` fetches it (here from a
local fixture repository, the way it fetches the public ones: a shallow, sparse fetch of a
pinned ref), and without it the tests that need it skip at collection, saying how to get it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import get_corpus  # noqa: E402  (a script, not a package)


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def upstream(tmp_path: Path) -> tuple[Path, str]:
    """A repository laid out as openxla/stablehlo is, with one commit; (its path, the commit)."""
    repo = tmp_path / "stablehlo"
    for path, text in {"stablehlo/testdata/abs_float32_2.mlir": "// testdata\n",
                       "stablehlo/testdata/dynamic/pad.mlir": "// dynamic\n",
                       "stablehlo/tests/interpret/add.mlir": "// interpret\n",
                       "stablehlo/dialect/Base.td": "// not fetched\n"}.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    _git("init", "-q", "-b", "main", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "add", ".", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one", cwd=repo)
    _git("config", "uploadpack.allowAnySHA1InWant", "true", cwd=repo)  # as the public hosts allow
    return repo, _git("rev-parse", "HEAD", cwd=repo)


def test_a_part_is_fetched_at_its_pinned_commit_in_the_corpus_layout(tmp_path: Path,
                                                                      upstream: tuple[Path, str]) -> None:
    repo, commit = upstream
    dest = tmp_path / "corpus"
    code = get_corpus.main([str(dest), "--only", "stablehlo-testdata", "--only", "stablehlo-interpret",
                            "--source", f"stablehlo-testdata=file://{repo}@{commit}",
                            "--source", f"stablehlo-interpret=file://{repo}@main"])
    assert code == 0
    found = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert found == ["stablehlo-interpret/add.mlir", "stablehlo-testdata/abs_float32_2.mlir",
                     "stablehlo-testdata/dynamic/pad.mlir"]
    # a part that is there is kept; a missing path is one line and exit 1, with nothing left half-written
    (repo / "stablehlo" / "testdata").rename(repo / "moved")
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two", cwd=repo)
    assert get_corpus.main([str(dest), "--only", "stablehlo-testdata",
                            "--source", f"stablehlo-testdata=file://{repo}@main"]) == 0
    assert get_corpus.main([str(dest), "--only", "stablehlo-testdata", "--force",
                            "--source", f"stablehlo-testdata=file://{repo}@main"]) == 1
    assert (dest / "stablehlo-testdata" / "abs_float32_2.mlir").exists()  # the old part stays whole
    assert sorted(p.name for p in dest.iterdir()) == ["stablehlo-interpret", "stablehlo-testdata"]


def test_every_part_is_pinned() -> None:
    for name, part in get_corpus.PARTS.items():
        assert len(part.ref) == 40 or part.ref.startswith("llvmorg-"), name  # a commit, or a release tag
    with pytest.raises(ValueError, match="expected NAME=URL@REF"):
        get_corpus.parse_source("iree-e2e=somewhere")
    with pytest.raises(ValueError, match="no part named"):
        get_corpus.parse_source("nope=file:///x@main")


@pytest.mark.slow
def test_without_the_corpus_its_tests_skip_at_collection_and_say_how_to_get_it(tmp_path: Path) -> None:
    env = dict(os.environ, MLIR_SNIPPETS_CORPUS=str(tmp_path / "absent"))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                           "tests/test_splitter.py", "tests/test_iree_e2e.py", "-k", "corpus or openxla"],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    out = done.stdout
    assert done.returncode == 0, out[-3000:]
    assert "python scripts/get_corpus.py" in out and "MLIR_SNIPPETS_CORPUS" in out
    reasons = [line for line in out.splitlines() if line.startswith("SKIPPED")]
    assert reasons and all("the corpus is not at" in line for line in reasons), reasons


@pytest.mark.slow
def test_without_the_corpus_the_summary_says_how_many_skipped_and_how_to_get_it(tmp_path: Path) -> None:
    """Without ``-rs`` too: one line in the terminal summary counts the skips and names the command."""
    env = dict(os.environ, MLIR_SNIPPETS_CORPUS=str(tmp_path / "absent"))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_splitter.py",
                           "-k", "corpus"], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-3000:]
    skipped = int(done.stdout.strip().splitlines()[-1].split(" skipped")[0].split()[-1])
    lines = [line for line in done.stdout.splitlines() if "skipped for want of the corpus" in line]
    assert lines == [f"{skipped} test(s) skipped for want of the corpus: the corpus is not at {tmp_path / 'absent'}: "
                     "`python scripts/get_corpus.py` fetches it there (or set MLIR_SNIPPETS_CORPUS to a copy)"], lines
