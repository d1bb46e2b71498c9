"""Recorded golden data beside a snippet file (SPEC 4).

- a sidecar ``<stem>.<function>.npz`` holding ``input_0``.. and ``output_0``.., and
  optionally ``reference``: a string naming where the outputs came from (``mlir-snippets
  record-goldens`` writes it), shown in the verdict's reference;
- IREE's test layout: ``model.mlir`` beside ``run_module_io_flags.txt`` with
  ``--input=SHAPExTYPE=@file.bin`` and ``--expected_output=...`` lines (raw
  little-endian data, i1 one byte per element; values may also be inline).

Recorded data is data: numpy reads it with ``allow_pickle=False``, so a file that holds
pickles (a pickled object, an object array) is a RecordedDataError, never unpickled.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import difflib
import re
import zipfile
from pathlib import Path

import numpy as np

from pytest_mlir_snippets.golden.compare import Tolerance
from pytest_mlir_snippets.golden.inputs import DTYPES
from pytest_mlir_snippets.paths import IREE_FLAGS, sidecar_name
from pytest_mlir_snippets.protocol import Golden, Recorded, Thresholds

_FLAG = re.compile(r"^--(input|expected_output)=(.+)$")


class RecordedDataError(ValueError):
    """The recorded data cannot be read (a missing file, a size that does not match)."""


def load_recorded(path: Path, function: str, functions_in_file: int) -> Recorded | None:
    """Recorded inputs and outputs for ``function``, or None when there are none."""
    sidecar = path.with_name(sidecar_name(path, function))
    if sidecar.is_file():
        inputs, outputs, reference = read_sidecar(sidecar)
        source = f"{sidecar.name}, from {reference}" if reference else sidecar.name
        return Recorded(inputs, outputs or None, f"recorded outputs ({source})")
    flags = path.with_name(IREE_FLAGS)
    if flags.is_file() and functions_in_file == 1:
        inputs, outputs = parse_iree_flags(flags)
        rule = iree_thresholds(flags)
        return Recorded(inputs, outputs or None, f"recorded outputs ({IREE_FLAGS})", Golden.RECORDED,
                        Thresholds(rule.source, rule.types))
    return None


# iree-run-module's defaults for --expected_output (runtime/src/iree/tooling/comparison.cc):
# an absolute threshold per float type, no relative part
IREE_THRESHOLDS = {"f16": 1e-3, "f32": 1e-4, "f64": 1e-4}
_THRESHOLD = re.compile(r"^--expected_(f16|f32|f64)_threshold=([0-9.eE+-]+)f?$")
_NUMPY = {"f16": "float16", "f32": "float32", "f64": "float64"}


def iree_thresholds(flags: Path) -> Tolerance:
    """The rule iree-run-module applies to ``flags``' expected outputs: its thresholds, as
    the file sets them or by default (other types: the plugin's defaults)."""
    found = dict(IREE_THRESHOLDS)
    for line in flags.read_text().splitlines():
        m = _THRESHOLD.match(line.strip())
        if m:
            found[m.group(1)] = float(m.group(2))
    spelled = ", ".join(f"{k} {v:g}" for k, v in found.items())
    return Tolerance(atol=None, rtol=None, source=f"iree-run-module's --expected_*_threshold ({spelled}, absolute)",
                     scaled=False, types=tuple((_NUMPY[k], v, 0.0) for k, v in found.items()))


def read_sidecar(sidecar: Path) -> tuple[list[np.ndarray], list[np.ndarray], str]:
    """(inputs, outputs, where the outputs came from or "") of an ``.npz`` sidecar; plain
    arrays only, pickles are never loaded."""
    try:
        archive = np.load(sidecar, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as error:
        raise _unreadable(sidecar.name, "", error) from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise RecordedDataError(f"{sidecar.name} is a single .npy array, not an .npz archive (input_0, output_0, ..)")
    with archive:
        names = _sidecar_keys(sidecar.name, list(archive.files))
        arrays = {}
        for name in names + ([REFERENCE] if REFERENCE in archive.files else []):
            try:
                arrays[name] = archive[name]
            except (ValueError, OSError, EOFError, zipfile.BadZipFile) as error:
                raise _unreadable(sidecar.name, name, error) from None
    return ([v for k, v in arrays.items() if k.startswith("input_")],
            [v for k, v in arrays.items() if k.startswith("output_")], _reference(sidecar.name, arrays.get(REFERENCE)))


_KEY = re.compile(r"^(input|output)_(0|[1-9][0-9]*)$")
REFERENCE = "reference"  # the sidecar's optional key: where its outputs came from, a string


def _reference(file: str, value: np.ndarray | None) -> str:
    """The ``reference`` key's string ("": none); anything but one string is an error."""
    if value is None:
        return ""
    if value.dtype.kind != "U" or value.ndim != 0:
        raise RecordedDataError(f"{file}: {REFERENCE} is a {value.dtype} array of shape {value.shape}, not one "
                                "string (where the outputs came from)")
    return str(value)


def _sidecar_keys(file: str, keys: list[str]) -> list[str]:
    """The archive's keys in order (inputs, then outputs); any other key, or a gap in the
    numbering, is an error naming the keys found and expected."""
    numbered: dict[str, list[int]] = {"input": [], "output": []}
    unknown = []
    keys = [key for key in keys if key != REFERENCE]
    for key in keys:
        m = _KEY.match(key)
        if m:
            numbered[m.group(1)].append(int(m.group(2)))
        else:
            unknown.append(key)
    expected = [f"{side}_{i}" for side in numbered for i in range(len(numbered[side]))]
    if unknown or sorted(expected) != sorted(keys):
        what = f"unknown key(s) {', '.join(unknown)}" if unknown else "numbering with a gap"
        raise RecordedDataError(f"{file}: {what}: found {', '.join(sorted(keys)) or 'no key'}; expected "
                                f"input_0, input_1, .. and output_0, output_1, .. numbered from 0 without gaps "
                                f"(and optionally {REFERENCE})")
    return expected


def _unreadable(file: str, name: str, error: Exception) -> RecordedDataError:
    where = f"{file}: {name}" if name else file
    if isinstance(error, ValueError) and "allow_pickle" in str(error):  # numpy refused to unpickle
        what = "an array of Python objects" if name else "a pickle, not an .npz archive of arrays"
        return RecordedDataError(f"{where} is {what} (pickled data): it is not loaded, pickles can run code; "
                                 "record plain numeric arrays")
    return RecordedDataError(f"cannot read {where}: {error}")


# iree-run-module's flags that say nothing about the data compared (where and how it runs,
# what it prints): taken as it takes them. Any other line is an error, as it is there.
_OTHER_FLAGS = frozenset({"device", "device_allocator", "function", "module", "output", "output_max_element_count",
                          "print_max_element_count", "print_statistics", "trace_execution"})
_DATA_FLAGS = ("input", "expected_output", "expected_f16_threshold", "expected_f32_threshold",
               "expected_f64_threshold")


def _check_flag(line: str) -> None:
    """A flagfile line that is not an iree-run-module flag the plugin follows (or one that
    leaves the data alone): a RecordedDataError naming the flag, never a line skipped."""
    if not line.startswith("--"):
        raise RecordedDataError(f"{line!r} is not a flag (iree-run-module's flagfile holds --name=value lines)")
    name = line[2:].split("=", 1)[0]
    if name in ("input", "expected_output"):  # _FLAG did not match: no value
        raise RecordedDataError(f"--{name} gives no buffer: {line!r}")
    if name in _DATA_FLAGS or name in _OTHER_FLAGS or name.startswith("task_"):
        if name.endswith("_threshold") and not _THRESHOLD.match(line):
            raise RecordedDataError(f"--{name} is not a number: {line!r}")
        return
    if name == "parameters":
        raise RecordedDataError(f"--{name}: parameters loaded at run time are not supported (the recorded outputs "
                                "would not be this function's)")
    near = difflib.get_close_matches(name, [*_DATA_FLAGS, *_OTHER_FLAGS], n=1)
    hint = f" (did you mean --{near[0]}?)" if near else ""
    raise RecordedDataError(f"unknown flag --{name} in {line!r}: iree-run-module rejects it{hint}")


def parse_iree_flags(flags: Path) -> tuple[list[np.ndarray], list[np.ndarray]]:
    inputs: list[np.ndarray] = []
    outputs: list[np.ndarray] = []
    for number, line in enumerate(flags.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _FLAG.match(line)
        if not m:
            try:
                _check_flag(line)
            except RecordedDataError as error:
                raise RecordedDataError(f"{flags}:{number}: {error}") from None
            continue
        try:
            value = buffer(m.group(2), flags.parent)
        except RecordedDataError as error:
            raise RecordedDataError(f"{flags}:{number}: {error}") from None
        (inputs if m.group(1) == "input" else outputs).append(value)
    return inputs, outputs


def buffer(spec: str, folder: Path) -> np.ndarray:
    """``3x4xf32=@input_0.bin``, ``f32=1.5`` or ``2xi32=1 2`` as an array."""
    type_part, _, value = spec.partition("=")
    *dims, element = type_part.split("x")
    if element not in DTYPES:
        raise RecordedDataError(f"element type {element!r} is not supported")
    dtype = DTYPES[element]
    try:
        shape = tuple(int(d) for d in dims)
    except ValueError:
        raise RecordedDataError(f"cannot read the shape of {type_part!r}") from None
    count = int(np.prod(shape)) if shape else 1
    if value.startswith("@"):
        file = folder / value[1:]
        try:
            raw = file.read_bytes()
        except OSError as error:
            raise RecordedDataError(f"cannot read {file.name}: {error.strerror}") from None
        if len(raw) != count * dtype.itemsize:
            raise RecordedDataError(f"{file.name} has {len(raw)} bytes, {type_part} needs {count * dtype.itemsize}")
        data = np.frombuffer(raw, dtype=np.uint8 if element == "i1" else dtype.newbyteorder("<"))
    else:
        numbers = [float(v) for v in re.split(r"[\s,\[\]]+", value) if v]
        if len(numbers) == 1 and count > 1:
            numbers *= count  # a splat
        if len(numbers) != count:
            raise RecordedDataError(f"{len(numbers)} inline value(s) for {type_part}")
        data = np.array(numbers)
    return np.array(data.astype(dtype).reshape(shape), order="C")


SPECIALIZABLE_ELEMENTS = 64


def specializable(inputs: list[np.ndarray]) -> dict[int, np.ndarray]:
    """Recorded inputs a backend may bake into the function when it does not compile
    as written: small integer or boolean tensors (axes, shapes, pads, indices)."""
    return {i: np.asarray(v) for i, v in enumerate(inputs)
            if np.asarray(v).dtype.kind in "iub" and np.asarray(v).size <= SPECIALIZABLE_ELEMENTS}
