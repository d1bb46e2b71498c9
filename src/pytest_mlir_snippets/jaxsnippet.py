"""A JAX function written as a snippet with its golden, in one call.

``write_jax_snippet(fn, *args, path=...)`` writes ``path`` (``.mlir``: the StableHLO JAX
lowers ``fn`` to for ``args``) and the recorded-data sidecar beside it
(``<stem>.main.npz``: ``input_0``.. the arguments, ``output_0``.. JAX's outputs, its
pytree flattened), which the plugin compares the compiled function with (golden
``recorded``). JAX is imported when called, never by the plugin itself.

- ``export=False`` (default): ``jax.jit(fn, keep_unused=True).lower(*args).as_text()``;
  every argument stays an argument, so the sidecar's inputs are the module's.
- ``export=True``: ``jax.export.export(jax.jit(fn))`` as JAX serializes a program; with
  ``symbolic`` (one shape string per argument, e.g. ``"b, 4"``, None for a concrete
  one) the module takes dynamic dimensions and checks them with JAX's
  ``@shape_assertion``; the sidecar's inputs are ``args``, whose shapes give the sizes.

bf16 data is stored as its raw 16-bit pattern (``uint16``), as the plugin reads it; a
typed PRNG key (``jax.random.key``) as its key data (``uint32``).
Outputs are computed by JAX on its CPU backend.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pytest_mlir_snippets.paths import sidecar_name

ENTRY = "main"  # the public function JAX's lowering and export name


def stablehlo_text(fn: Callable[..., Any], *args: Any, export: bool = False,
                   symbolic: Sequence[str | None] | None = None) -> str:
    """The StableHLO module JAX lowers ``fn`` to for ``args`` (see the module's docstring)."""
    import jax

    if not export:
        if symbolic is not None:
            raise ValueError("symbolic shapes need export=True (jax.export)")
        return str(jax.jit(fn, keep_unused=True).lower(*args).as_text())
    specs = list(args)
    if symbolic is not None:
        if len(symbolic) != len(args):
            raise ValueError(f"{len(symbolic)} symbolic shape(s) for {len(args)} argument(s)")
        scope = jax.export.SymbolicScope()
        struct: Any = jax.ShapeDtypeStruct
        specs = [a if shape is None else
                 struct(jax.export.symbolic_shape(shape, scope=scope), np.asarray(a).dtype)
                 for a, shape in zip(args, symbolic)]
    exported = jax.export.export(jax.jit(fn, keep_unused=True))(*specs)
    return str(exported.mlir_module())


def jax_outputs(fn: Callable[..., Any], *args: Any) -> list[np.ndarray]:
    """``fn``'s outputs for ``args`` on JAX's CPU backend, its pytree flattened."""
    import jax

    cpu = jax.devices("cpu")[0]
    with jax.default_device(cpu):
        result = jax.jit(fn, keep_unused=True)(*args)
    return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(result)]


def storable(value: Any) -> np.ndarray:
    """``value`` as an array the plugin reads from a sidecar (bf16 as its raw ``uint16``, a
    typed PRNG key as its key data, which the lowered function takes)."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None and "key<" in str(dtype):
        import jax

        value = jax.random.key_data(value)
    array = np.asarray(value)
    if array.dtype.name == "bfloat16":
        return array.view(np.uint16)
    return array


def write_jax_snippet(fn: Callable[..., Any], *args: Any, path: str | Path, export: bool = False,
                      symbolic: Sequence[str | None] | None = None) -> tuple[Path, Path]:
    """Write ``fn`` lowered for ``args`` to ``path`` and its golden beside it; returns
    (the ``.mlir`` file, the ``.npz`` sidecar)."""
    path = Path(path)
    if path.suffix != ".mlir":
        raise ValueError(f"{path.name}: a snippet file ends in .mlir")
    text = stablehlo_text(fn, *args, export=export, symbolic=symbolic)
    outputs = jax_outputs(fn, *args)
    arrays = {f"input_{i}": storable(a) for i, a in enumerate(args)}
    arrays.update({f"output_{i}": storable(o) for i, o in enumerate(outputs)})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text.endswith("\n") else text + "\n")
    sidecar = path.with_name(sidecar_name(path, ENTRY))
    write_npz(sidecar, arrays)
    return path, sidecar


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """An ``.npz`` archive of ``arrays`` (compressed), the same bytes for the same arrays:
    numpy's own writer stamps each member with the time of writing."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, array in arrays.items():
            member = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            member.compress_type = zipfile.ZIP_DEFLATED
            with archive.open(member, "w") as stream:
                np.lib.format.write_array(stream, np.array(array, order="C"), allow_pickle=False)
