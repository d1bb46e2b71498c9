"""A fixed sample of the JAX corpus (tests/data/jax, scripts/jax_corpus.py) on the cpu
target: passes per category, on JAX's recorded outputs. The whole corpus runs in
``scripts/conformance.py --suite "JAX corpus"``."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parent / "data" / "jax"
SAMPLE = [
    "jnp_logsumexp", "jnp_einsum_batch", "jnp_take_along", "lax_scan_cumsum", "lax_top_k", "nn_gelu", "nn_softmax",
    "random_normal_key", "random_typed_key_split", "linalg_inv", "linalg_slogdet", "linalg_eigh_values",
    "sort_argsort", "scatter_add", "gather_embedding", "conv_grouped", "attention_causal", "model_layer_norm",
    "model_mlp_grad", "bf16_layer_norm", "f16_matmul", "c64_fft", "u8_add_wrap", "export_conv", "poly_softmax",
]
# what each category of the sample passes; poly_softmax has two symbolic dimensions recorded
# at different sizes, which the compile refines to
EXPECTED = {"jnp": 3, "lax": 2, "nn": 2, "random": 2, "linalg": 3, "sort": 1, "gather": 2, "conv": 1, "attention": 1,
            "model": 2, "dtype": 4, "export": 1, "poly": 1}


def test_a_sample_of_the_jax_corpus_passes_per_category(pytester: pytest.Pytester, run_items) -> None:
    categories = json.loads((CORPUS / "corpus.json").read_text())
    for name in SAMPLE:
        shutil.copy(CORPUS / f"{name}.mlir", pytester.path)
        shutil.copy(CORPUS / f"{name}.main.npz", pytester.path)
    _, props = run_items("-p", "no:randomly")
    failed = {node.split(".mlir::")[0] for node, p in props.items() if p.get("mlir_kind", p["outcome"]) != "pass"
              and p["outcome"] != "skipped"}
    passed = Counter(categories[name] for name in SAMPLE if name not in failed)
    assert dict(passed) == {k: v for k, v in EXPECTED.items() if v}, sorted(failed)
    assert {p["mlir_golden"] for node, p in props.items() if node.endswith("[execute]")
            and p.get("mlir_kind") == "pass"} == {"recorded"}
