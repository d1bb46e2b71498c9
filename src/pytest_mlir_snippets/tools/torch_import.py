"""``mlir-snippets import-torch MODULE:FACTORY OUTDIR``: a PyTorch model as
``model_linalg.mlir`` (through torch-mlir's ``fx.export_and_import``,
linalg-on-tensors), with what it takes to check it against PyTorch:

- ``reference.py``: rebuilds the model (same weights) and its inputs (a ``.py``
  source is copied beside it as ``reference_model.py``);
- ``reference_state.pt``: the weights and the example inputs (tensors only: ``reference.py``
  reads it with ``weights_only=True``, which runs no pickled code);
- ``model_linalg.<func>.npz``: the inputs and PyTorch's outputs, so that
  ``pytest OUTDIR/model_linalg.mlir`` checks the cpu lowering against eager PyTorch.

``FACTORY`` is a callable returning ``(torch.nn.Module, tuple_of_example_inputs)``;
``MODULE`` is an importable module or a path to a ``.py`` file. A model returning a tuple
(``nn.LSTM``'s ``(output, (h, c))``) has its outputs flattened in the order of the function's
results. A model torch-mlir cannot import is a ``TorchImportError`` naming the op, in one
line, and writes nothing.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REFERENCE = '''"""The PyTorch reference of model_linalg.mlir (written by mlir-snippets import-torch)."""

from pathlib import Path

import torch

SOURCE = {source!r}
FACTORY = {factory!r}


def load():
    """(model with the exported weights, example inputs)."""
    import importlib
    import importlib.util

    if SOURCE.endswith(".py"):
        spec = importlib.util.spec_from_file_location("reference_source", Path(__file__).with_name(SOURCE))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(SOURCE)
    model, _ = getattr(module, FACTORY)()
    state = torch.load(Path(__file__).with_name("reference_state.pt"), weights_only=True)  # tensors, no pickles run
    model.load_state_dict(state["weights"])
    return model.eval(), tuple(state["inputs"])
'''


class TorchImportError(ValueError):
    """torch-mlir could not import the model: the first error it gave, one line."""


def load_factory(target: str) -> tuple[Any, str, str]:
    source, _, factory = target.rpartition(":")
    if not source or not factory:
        raise ValueError(f"expected MODULE:FACTORY, got {target!r}")
    if source.endswith(".py"):
        path = Path(source).resolve()
        if not path.is_file():
            raise ValueError(f"{source}: no such file")
        spec = importlib.util.spec_from_file_location("import_torch_source", path)
        if spec is None or spec.loader is None:
            raise ValueError(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        source = str(path)
    else:
        module = importlib.import_module(source)
    return getattr(module, factory), source, factory


def export(factory: Any, func_name: str = "forward") -> tuple[Any, Any, tuple[Any, ...], Any]:
    """(the linalg-on-tensors module, the model, its inputs, its outputs) of ``factory()``."""
    import torch
    from torch_mlir import fx  # type: ignore[attr-defined, unused-ignore]

    model, inputs = factory()
    model = model.eval()
    inputs = tuple(inputs)
    with torch.no_grad(), warnings.catch_warnings():
        # torch.export's own deprecations (FutureWarning: LeafSpec) say nothing about the user's model
        warnings.simplefilter("ignore", FutureWarning)
        # nor its note on the recurrent layers' own weights (nn.LSTM's _flat_weights)
        warnings.filterwarnings("ignore", message="The tensor attributes self._flat_weights", category=UserWarning)
        outputs = model(*inputs)
        with _native_stderr() as said:
            try:
                exported = fx.export_and_import(model, *inputs, output_type="linalg-on-tensors",
                                                func_name=func_name)
            except Exception as error:  # torch.export's and torch-mlir's errors, all types
                raise TorchImportError(_first_error(said(), error)) from None
    return exported, model, inputs, outputs


def flat_outputs(outputs: Any) -> list[Any]:
    """The model's outputs as the imported function returns them: nested tuples, lists and
    dicts flattened in order (torch.export's order), non-tensors left out."""
    import torch
    from torch.utils import _pytree

    return [leaf for leaf in _pytree.tree_leaves(outputs) if isinstance(leaf, torch.Tensor)]


@contextmanager
def _native_stderr() -> Iterator[Any]:
    """File descriptor 2 into a temporary file for the block (MLIR prints its diagnostics
    there, from C++); yields a function returning what was written. What was written is
    passed on to stderr after the block unless the block raised."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)

        def said() -> str:
            sys.stderr.flush()
            capture.seek(0)
            return capture.read().decode("utf-8", "replace")

        raised = True
        try:
            yield said
            raised = False
        finally:
            text = said()
            os.dup2(saved, 2)
            os.close(saved)
            if not raised and text:
                sys.stderr.write(text)


def _first_error(stderr: str, error: Exception) -> str:
    """The first ``error:`` line MLIR printed (``loc(...): error: 'math.absf' op ...``),
    else the exception's first line."""
    for line in stderr.splitlines():
        if "error:" in line:
            return "torch-mlir: " + line.split("error:", 1)[1].strip() + _located(line)
    message = next((line for line in str(error).splitlines() if line.strip()), "")
    return f"{type(error).__name__}: {message}"


def _located(line: str) -> str:
    """`` (at FILE:LINE)`` from a diagnostic's ``loc("FILE":LINE:COL)``, else nothing."""
    if not line.startswith("loc("):
        return ""
    where = line[4:].split(")", 1)[0].replace('"', "")
    return f" (at {where})"


def import_torch(target: str, outdir: Path, func_name: str = "forward") -> Path:
    """Write ``model_linalg.mlir`` and the reference files; returns the .mlir path. The
    model is written last: a folder with it has PyTorch's outputs beside it."""
    factory, source, factory_name = load_factory(target)  # a wrong MODULE:FACTORY says so before torch loads
    import numpy as np
    import torch

    exported, model, inputs, outputs = export(factory, func_name)
    arrays = {f"input_{i}": t.detach().numpy() for i, t in enumerate(inputs)}
    arrays |= {f"output_{i}": t.detach().numpy() for i, t in enumerate(flat_outputs(outputs))}
    outdir.mkdir(parents=True, exist_ok=True)
    np.savez(outdir / f"model_linalg.{func_name}.npz", **arrays)
    torch.save({"weights": model.state_dict(), "inputs": list(inputs)}, outdir / "reference_state.pt")
    if source.endswith(".py"):  # a copy beside reference.py: the run folder stands alone
        copy = outdir / "reference_model.py"
        if Path(source).resolve() != copy.resolve():
            shutil.copyfile(source, copy)
        source = copy.name
    (outdir / "reference.py").write_text(REFERENCE.format(source=source, factory=factory_name))
    mlir_path = outdir / "model_linalg.mlir"
    mlir_path.write_text(str(exported))
    return mlir_path
