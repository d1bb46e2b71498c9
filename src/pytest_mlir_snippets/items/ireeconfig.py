"""An iree-test-suites config JSON as an expectations file (``--mlir-expectations cfg.json``).

The format is IREE's (``onnx_ops/configs/onnx_ops_cpu_llvm_sync.json``)::

    {"config_name": "cpu_llvm_sync",
     "iree_compile_flags": ["--iree-hal-target-backends=llvm-cpu"],
     "iree_run_module_flags": ["--device=local-sync"],
     "skip_compile_tests": [...], "skip_run_tests": [...],
     "expected_compile_failures": ["onnx/node/generated/test_acos"],
     "expected_run_failures": ["onnx/node/generated/test_add_uint8"]}

A test name is an IREE test folder (``<folder>/model.mlir`` beside
``run_module_io_flags.txt``), relative to the suite's root: the folder above
``configs/`` when the config lives there, else the config's own folder. A name
stands for the test folder whose path ends with it, else for a folder of its last
part's name, so a flat copy of the tests (``copy/test_acos``) still matches
``onnx/node/generated/test_acos``; new names are written relative to the root.

Items that are not IREE tests (snippet files, optimization runs) have no place in IREE's
lists: their expected outcomes go under one key of the plugin's own, which IREE's runner
(reading its keys with ``.get``) ignores: ``"pytest_mlir_snippets": {"<file>::<uid>[<stage>]":
"<kind>"}``, the file relative to the config's folder, as an expectations file's lines.

IREE's runner has one item per test; here a test's function has ``[compile]`` and
``[execute]``. An expected compile failure is "any failure" of ``[compile]`` (its
``[execute]`` then skips, "compile failed"); an expected run failure is "any
failure" of ``[execute]``; ``skip_compile_tests`` skips both, ``skip_run_tests``
the execute. ``--mlir-update-expectations`` rewrites both failure lists from the run,
as IREE's ``update_config_xfails.py`` does from a report log, and keeps every other
key (and the order of keys) as it was.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pytest_mlir_snippets.items.expectations import STATUSES, Expectations
from pytest_mlir_snippets.model.record import ItemRecord
from pytest_mlir_snippets.paths import write_atomic
from pytest_mlir_snippets.protocol import Stage

REQUIRED = ("config_name", "iree_compile_flags", "iree_run_module_flags")  # as IREE's runner checks them
OWN = "pytest_mlir_snippets"  # the plugin's key: expected outcomes of items that are not IREE tests
LISTS = ("skip_compile_tests", "skip_run_tests", "expected_compile_failures", "expected_run_failures")
FAILURE_KINDS = frozenset({"compile-error", "execute-error", "golden-mismatch", "crash", "timeout"})
IREE_FLAGS = "run_module_io_flags.txt"
FAILURES = {Stage.COMPILE: "expected_compile_failures", Stage.EXECUTE: "expected_run_failures"}  # a stage's list


class ConfigError(ValueError):
    pass


def _relaxed_json(text: str) -> Any:
    """JSON, or the JSON5 that IREE's configs may use (comments, trailing commas)."""
    try:
        return json.loads(text)
    except ValueError:
        stripped = re.sub(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", text, flags=re.S)
        return json.loads(re.sub(r",(\s*[\]}])", r"\1", stripped))


@dataclass
class IreeConfig:
    path: Path
    data: dict[str, Any]
    lists: dict[str, list[str]] = field(default_factory=dict)
    others: Expectations | None = None  # the items that are not IREE tests (``OWN``)

    @classmethod
    def load(cls, path: Path) -> IreeConfig:
        try:
            data = _relaxed_json(path.read_text())
        except (OSError, ValueError) as error:
            raise ConfigError(f"{path}: not an IREE config JSON ({error})") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: an IREE config is a JSON object")
        for key in REQUIRED:
            if key not in data:
                raise ConfigError(f"{path}: config file is missing a '{key}' field")
        for key in (*REQUIRED[1:], *LISTS):
            value = data.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{path}: '{key}' must be a list of strings")
        own = data.get(OWN, {})
        if not isinstance(own, dict) or not all(isinstance(v, str) and v in STATUSES for v in own.values()):
            raise ConfigError(f"{path}: '{OWN}' must map items to statuses among {', '.join(STATUSES)}")
        return cls(path, data, {key: list(data.get(key, [])) for key in LISTS}, Expectations(path, dict(own)))

    @classmethod
    def empty(cls, path: Path) -> IreeConfig:
        """A new config (``--mlir-update-expectations`` of a file not yet there): named
        after the file, no flags, empty lists."""
        data: dict[str, Any] = {"config_name": path.stem, "iree_compile_flags": [], "iree_run_module_flags": [],
                                **{key: [] for key in LISTS}}
        return cls(path, data, {key: [] for key in LISTS}, Expectations(path, {}))

    # ---------------------------------------------------------------- flags
    @property
    def compile_flags(self) -> list[str]:
        return list(self.data["iree_compile_flags"])

    @property
    def run_flags(self) -> list[str]:
        return list(self.data["iree_run_module_flags"])

    # --------------------------------------------------------------- names
    @property
    def root(self) -> Path:
        """The folder the test names are relative to."""
        folder = self.path.parent
        return folder.parent if folder.name == "configs" else folder

    @staticmethod
    def is_test_file(file: Path) -> bool:
        return file.name == "model.mlir" or (file.parent / IREE_FLAGS).is_file()

    def _listed(self, key: str, folder: Path) -> str | None:
        """The name in list ``key`` that stands for ``folder``: one its path ends with, else
        one whose last part is the folder's name (a copy of the tests laid out otherwise)."""
        parts = folder.resolve().parts
        fallback = None
        for name in self.lists[key]:
            tail = PurePosixPath(name).parts
            if tail and parts[-len(tail):] == tail:
                return name
            if tail and tail[-1] == folder.name and fallback is None:
                fallback = name
        return fallback

    def name_for(self, folder: Path) -> str:
        """A new entry's name: the folder relative to the suite's root, else its own name."""
        try:
            return folder.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return folder.name

    # -------------------------------------------------------- expectations
    def status_of(self, file: Path, name: str, stage: Stage) -> str | None:
        """"fail" (any failure) for the stage the config expects to fail, else None."""
        if not self.is_test_file(file):
            return self.others.status_of(file, name, stage) if self.others else None
        key = FAILURES.get(stage)
        return "fail" if key and self._listed(key, file.parent) else None

    def skip_reason(self, file: Path, name: str, stage: Stage) -> str | None:
        if stage not in FAILURES or not self.is_test_file(file):
            return None
        keys = ("skip_compile_tests",) + (("skip_run_tests",) if stage == Stage.EXECUTE else ())
        for key in keys:
            if self._listed(key, file.parent):
                return f"{key} in {self.path.name}"
        return None

    def reason(self, stage: str) -> str:
        key = FAILURES.get(Stage(stage))
        if key is None:
            return f"expected to fail ({OWN} in {self.path.name})"
        return f"expected to fail at {stage} ({key} in {self.path.name})"

    def update(self, records: list[ItemRecord], rootpath: Path) -> None:
        """Both failure lists from this run, and the plugin's key for the other items; what it
        did not decide keeps its entries."""
        others = [r for r in records if not self.is_test_file(rootpath / r.file)]
        if self.others is not None:
            self.others.adopt(others, rootpath)
        for record in records:
            key = FAILURES.get(record.stage)
            file = rootpath / record.file
            if key is None or not self.is_test_file(file):
                continue
            failed = record.kind in FAILURE_KINDS
            if not failed and record.kind != "pass":
                continue  # skipped, unsupported, not run: nothing learnt
            listed = self._listed(key, file.parent)
            if failed and listed is None:
                self.lists[key].append(self.name_for(file.parent))
            elif not failed and listed is not None:
                self.lists[key].remove(listed)
        data = dict(self.data)
        for key in ("expected_compile_failures", "expected_run_failures"):
            data[key] = sorted(set(self.lists[key]))
        data.pop(OWN, None)
        if self.others is not None and self.others.entries:
            data[OWN] = dict(sorted(self.others.entries.items()))
        write_atomic(self.path, json.dumps(data, indent=2) + "\n")
