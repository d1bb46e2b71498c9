"""The functions of the JAX corpus (scripts/jax_corpus.py writes them), by category.

A case's ``make(seed)`` returns its arguments; argument specs are ``"f32[4,8]"``-like
strings: floats standard normal, ``spd`` a symmetric positive definite matrix, ``hpd`` a
Hermitian positive definite one, signed integers in [-8, 8], ``u8`` in [0, 255], ``bool``
random, ``idx<n>`` indices in [0, n), ``key[]`` a typed PRNG key.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

_DTYPES = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16, "i8": np.int8, "i32": np.int32,
           "u8": np.uint8, "u32": np.uint32, "bool": np.bool_, "c64": np.complex64, "spd": np.float32,
           "hpd": np.complex64}


def _array(spec: str, rng: np.random.RandomState) -> Any:
    m = re.fullmatch(r"(idx(\d+)|\w+)\[([\d,]*)\]", spec)
    assert m, spec
    kind, bound, dims = ("idx" if m.group(2) else m.group(1)), m.group(2), m.group(3)
    shape = tuple(int(d) for d in dims.split(",") if d)
    if kind == "key":
        return jax.random.key(rng.randint(0, 1000))
    if kind == "idx":
        return rng.randint(0, int(bound), shape).astype(np.int32)
    dtype = _DTYPES[kind]
    if kind == "hpd":  # Hermitian positive definite
        a = (rng.randn(*shape) + 1j * rng.randn(*shape)).astype(np.complex64)
        return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(np.complex64)
    if kind == "spd":
        a = rng.randn(*shape).astype(np.float32)
        return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1], dtype=np.float32)).astype(np.float32)
    if kind == "bool":
        return rng.rand(*shape) < 0.5
    if kind == "u8":
        return rng.randint(0, 256, shape).astype(np.uint8)
    if kind == "u32":
        return rng.randint(0, 2**31, shape).astype(np.uint32)
    if kind in ("i8", "i32"):
        return rng.randint(-8, 9, shape).astype(dtype)
    if kind == "c64":
        return (rng.randn(*shape) + 1j * rng.randn(*shape)).astype(np.complex64)
    return rng.randn(*shape).astype(np.float32).astype(dtype)


@dataclass(frozen=True)
class Case:
    name: str
    category: str
    fn: Callable[..., Any]
    specs: tuple[str, ...]
    export: bool = False
    symbolic: tuple[str | None, ...] | None = None

    def make(self, seed: int) -> list[Any]:
        rng = np.random.RandomState(seed)
        return [_array(s, rng) for s in self.specs]


CASES: list[Case] = []


def add(category: str, name: str, fn: Callable[..., Any], *specs: str, export: bool = False,
        symbolic: tuple[str | None, ...] | None = None) -> None:
    CASES.append(Case(name, category, fn, specs, export or symbolic is not None, symbolic))


# --- jax.numpy: elementwise, reductions, shapes, indexing --------------------------------
_UNARY = {"abs": jnp.abs, "exp": jnp.exp, "log1p_abs": lambda x: jnp.log1p(jnp.abs(x)), "sin": jnp.sin,
          "cos": jnp.cos, "tanh": jnp.tanh, "sqrt_abs": lambda x: jnp.sqrt(jnp.abs(x)), "floor": jnp.floor,
          "round": jnp.round, "sign": jnp.sign, "arctan": jnp.arctan, "expm1": jnp.expm1,
          "reciprocal": lambda x: 1.0 / (x + 3.0), "square": jnp.square, "cbrt": jnp.cbrt, "erf": jax.scipy.special.erf,
          "sinh": jnp.sinh, "arcsinh": jnp.arcsinh, "logaddexp": lambda x: jnp.logaddexp(x, 2 * x)}
for _n, _f in _UNARY.items():
    add("jnp", f"jnp_{_n}", _f, "f32[3,5]")
_BINARY = {"add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "div": jnp.divide, "max": jnp.maximum,
           "pow_abs": lambda x, y: jnp.power(jnp.abs(x), y), "arctan2": jnp.arctan2, "hypot": jnp.hypot,
           "where": lambda x, y: jnp.where(x > y, x, y * 2), "fmod": jnp.fmod, "copysign": jnp.copysign}
for _n, _f in _BINARY.items():
    add("jnp", f"jnp_{_n}", _f, "f32[4,6]", "f32[4,6]")
add("jnp", "jnp_broadcast_add", lambda x, y: x + y, "f32[4,1,3]", "f32[5,1]")
add("jnp", "jnp_sum_axis", lambda x: jnp.sum(x, axis=1), "f32[4,6,3]")
add("jnp", "jnp_mean_keepdims", lambda x: jnp.mean(x, axis=(0, 2), keepdims=True), "f32[4,6,3]")
add("jnp", "jnp_prod", lambda x: jnp.prod(x, axis=0), "f32[3,4]")
add("jnp", "jnp_max_min", lambda x: (jnp.max(x, axis=1), jnp.min(x)), "f32[5,7]")
add("jnp", "jnp_argmax", lambda x: jnp.argmax(x, axis=1), "f32[5,7]")
add("jnp", "jnp_argmin", lambda x: jnp.argmin(x, axis=0), "f32[5,7]")
add("jnp", "jnp_var_std", lambda x: (jnp.var(x, axis=0), jnp.std(x)), "f32[6,4]")
add("jnp", "jnp_cumsum", lambda x: jnp.cumsum(x, axis=1), "f32[3,8]")
add("jnp", "jnp_cumprod", lambda x: jnp.cumprod(x, axis=0), "f32[5,3]")
add("jnp", "jnp_logsumexp", lambda x: jax.scipy.special.logsumexp(x, axis=-1), "f32[4,9]")
add("jnp", "jnp_transpose", lambda x: jnp.transpose(x, (2, 0, 1)), "f32[2,3,4]")
add("jnp", "jnp_reshape_concat", lambda x, y: jnp.concatenate([x.reshape(6, 2), y], axis=0), "f32[3,4]", "f32[2,2]")
add("jnp", "jnp_stack_split", lambda x: jnp.stack(jnp.split(x, 3, axis=1), axis=0), "f32[2,9]")
add("jnp", "jnp_pad", lambda x: jnp.pad(x, ((1, 2), (0, 3)), mode="constant", constant_values=1.5), "f32[3,3]")
add("jnp", "jnp_pad_reflect", lambda x: jnp.pad(x, ((2, 1),), mode="reflect"), "f32[6]")
add("jnp", "jnp_flip_roll", lambda x: jnp.roll(jnp.flip(x, 0), 2, axis=1), "f32[4,5]")
add("jnp", "jnp_tile_repeat", lambda x: (jnp.tile(x, (2, 1)), jnp.repeat(x, 2, axis=1)), "f32[2,3]")
add("jnp", "jnp_slice_step", lambda x: x[::2, 1:-1], "f32[7,6]")
add("jnp", "jnp_tril_triu", lambda x: jnp.tril(x) - jnp.triu(x, 1), "f32[5,5]")
add("jnp", "jnp_outer_einsum", lambda x, y: jnp.einsum("i,j->ij", x, y), "f32[4]", "f32[5]")
add("jnp", "jnp_einsum_batch", lambda x, y: jnp.einsum("bij,bjk->bik", x, y), "f32[2,3,4]", "f32[2,4,5]")
add("jnp", "jnp_matmul", jnp.matmul, "f32[8,16]", "f32[16,4]")
add("jnp", "jnp_clip", lambda x: jnp.clip(x, -0.5, 0.7), "f32[10]")
add("jnp", "jnp_isfinite", lambda x: jnp.isfinite(x / (x - x[0])), "f32[6]")
add("jnp", "jnp_nan_to_num", lambda x: jnp.nan_to_num(jnp.log(x)), "f32[8]")
add("jnp", "jnp_linspace_arange", lambda x: x * jnp.linspace(0, 1, 5) + jnp.arange(5), "f32[5]")
add("jnp", "jnp_diff", lambda x: jnp.diff(x, axis=0), "f32[6,3]")
add("jnp", "jnp_any_all", lambda x: (jnp.any(x > 1.0, axis=0), jnp.all(x > -2.0)), "f32[4,5]")
add("jnp", "jnp_take_along", lambda x, i: jnp.take_along_axis(x, i, axis=1), "f32[3,6]", "idx6[3,2]")
add("jnp", "jnp_polyval", lambda x: jnp.polyval(jnp.array([1.0, -2.0, 0.5]), x), "f32[7]")
add("jnp", "jnp_interp", lambda x: jnp.interp(x, jnp.array([-1.0, 0.0, 2.0]), jnp.array([0.0, 1.0, 3.0])), "f32[8]")
add("jnp", "jnp_fft_real", lambda x: jnp.abs(jnp.fft.rfft(x)), "f32[16]")

# --- lax ---------------------------------------------------------------------------------
add("lax", "lax_dot_general", lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))),
    "f32[2,3,4]", "f32[2,4,5]")
add("lax", "lax_reduce_window_max", lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 1), "VALID"),
    "f32[5,5]")
add("lax", "lax_reduce_window_sum", lambda x: lax.reduce_window(x, 0.0, lax.add, (3,), (2,), "SAME"), "f32[9]")
add("lax", "lax_dynamic_slice", lambda x, i: lax.dynamic_slice(x, (i[0], 1), (2, 3)), "f32[6,5]", "idx4[1]")
add("lax", "lax_dynamic_update_slice", lambda x, u, i: lax.dynamic_update_slice(x, u, (i[0], 0)),
    "f32[6,4]", "f32[2,4]", "idx5[1]")
add("lax", "lax_scan_cumsum", lambda x: lax.scan(lambda c, v: (c + v, c * v), 0.0, x), "f32[8]")
add("lax", "lax_fori_loop", lambda x: lax.fori_loop(0, 5, lambda i, v: v * 0.9 + jnp.sin(v), x), "f32[4]")
add("lax", "lax_while_loop", lambda x: lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 1.1), (0, x)),
    "f32[3]")
add("lax", "lax_cond", lambda p, x: lax.cond(p[0] > 0, jnp.sin, jnp.cos, x), "f32[1]", "f32[4]")
add("lax", "lax_switch", lambda i, x: lax.switch(i[0], [jnp.sin, jnp.cos, jnp.tanh], x), "idx3[1]", "f32[4]")
add("lax", "lax_select_n", lambda p, x, y: lax.select(p, x, y), "bool[5]", "f32[5]", "f32[5]")
add("lax", "lax_rsqrt", lambda x: lax.rsqrt(jnp.abs(x) + 0.1), "f32[6]")
add("lax", "lax_integer_pow", lambda x: lax.integer_pow(x, 3), "f32[6]")
add("lax", "lax_rem_int", lambda x, y: lax.rem(x, jnp.where(y == 0, 3, y)), "i32[8]", "i32[8]")
add("lax", "lax_shift_ops", lambda x: (lax.shift_left(x, 2), lax.shift_right_arithmetic(x, 1),
                                       lax.shift_right_logical(x, 1)), "i32[6]")
add("lax", "lax_clz", lax.clz, "u32[8]")
add("lax", "lax_population_count", lax.population_count, "u32[8]")
add("lax", "lax_clz_i32", lambda x: lax.clz(x), "i32[8]")
add("lax", "lax_bitcast", lambda x: lax.bitcast_convert_type(x, jnp.int32), "f32[5]")
add("lax", "lax_reduce_precision", lambda x: lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10), "f32[8]")
add("lax", "lax_iota_broadcast", lambda x: x + lax.broadcasted_iota(jnp.float32, (3, 4), 1), "f32[3,4]")
add("lax", "lax_cumax", lambda x: lax.cummax(x, axis=0), "f32[7]")
add("lax", "lax_top_k", lambda x: lax.top_k(x, 3), "f32[2,8]")
add("lax", "lax_erf_inv", lambda x: lax.erf_inv(jnp.tanh(x) * 0.9), "f32[6]")
add("lax", "lax_lgamma_digamma", lambda x: (lax.lgamma(jnp.abs(x) + 0.5), lax.digamma(jnp.abs(x) + 0.5)), "f32[6]")
add("lax", "lax_checkpoint", jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)) * 2), "f32[5]")
add("lax", "lax_grad_checkpoint", jax.grad(lambda x: jnp.sum(jax.checkpoint(lambda v: jnp.sin(v) ** 2)(x))),
    "f32[6]")
add("lax", "lax_optimization_barrier", lambda x, y: lax.optimization_barrier((x * 2, y + 1)), "f32[3]", "f32[3]")
add("lax", "lax_grad_tanh", jax.grad(lambda x: jnp.sum(jnp.tanh(x) ** 2)), "f32[7]")
add("lax", "lax_vmap_dot", jax.vmap(jnp.dot), "f32[4,3]", "f32[4,3]")
add("lax", "lax_jvp", lambda x, t: jax.jvp(jnp.sin, (x,), (t,)), "f32[5]", "f32[5]")

# --- jax.nn ------------------------------------------------------------------------------
_NN = {"relu": jax.nn.relu, "gelu": jax.nn.gelu, "gelu_exact": lambda x: jax.nn.gelu(x, approximate=False),
       "silu": jax.nn.silu, "sigmoid": jax.nn.sigmoid, "softplus": jax.nn.softplus, "elu": jax.nn.elu,
       "leaky_relu": jax.nn.leaky_relu, "softmax": jax.nn.softmax, "log_softmax": jax.nn.log_softmax,
       "relu6": jax.nn.relu6, "hard_tanh": jax.nn.hard_tanh, "celu": jax.nn.celu, "selu": jax.nn.selu,
       "mish": jax.nn.mish, "standardize": jax.nn.standardize, "glu": jax.nn.glu}
for _n, _f in _NN.items():
    add("nn", f"nn_{_n}", _f, "f32[4,8]")
add("nn", "nn_one_hot", lambda i: jax.nn.one_hot(i, 5), "idx5[6]")
add("nn", "nn_logsumexp_grad", jax.grad(lambda x: jax.nn.logsumexp(x)), "f32[9]")

# --- jax.random (keys made inside from a seed; typed keys and raw keys) ------------------
add("random", "random_normal_key", lambda s: jax.random.normal(jax.random.key(s[0]), (3, 4)), "idx1000[1]")
add("random", "random_uniform_prngkey", lambda s: jax.random.uniform(jax.random.PRNGKey(s[0]), (5,)), "idx1000[1]")
add("random", "random_split_bits", lambda s: jax.random.bits(jax.random.split(jax.random.key(s[0]))[1], (4,)),
    "idx1000[1]")
add("random", "random_randint", lambda s: jax.random.randint(jax.random.key(s[0]), (6,), 0, 10), "idx1000[1]")
add("random", "random_bernoulli", lambda s: jax.random.bernoulli(jax.random.key(s[0]), 0.3, (8,)), "idx1000[1]")
add("random", "random_permutation", lambda s: jax.random.permutation(jax.random.key(s[0]), 8), "idx1000[1]")
add("random", "random_dropout", lambda s, x: jnp.where(jax.random.bernoulli(jax.random.key(s[0]), 0.8, x.shape),
                                                       x / 0.8, 0.0), "idx1000[1]", "f32[4,4]")
add("random", "random_key_data", lambda s: jax.random.key_data(jax.random.fold_in(jax.random.key(s[0]), 7)),
    "idx1000[1]")
add("random", "random_truncated_normal", lambda s: jax.random.truncated_normal(jax.random.key(s[0]), -1.0, 1.0, (5,)),
    "idx1000[1]")
add("random", "random_gumbel", lambda s: jax.random.gumbel(jax.random.key(s[0]), (4,)), "idx1000[1]")
add("random", "random_typed_key_arg", lambda k: jax.random.normal(k, (3, 2)), "key[]")
add("random", "random_typed_key_split", lambda k: jax.random.uniform(jax.random.split(k, 3)[2], (4,)), "key[]")
add("random", "random_from_raw_key", lambda k: jax.random.normal(jax.random.wrap_key_data(k), (4,)), "u32[2]")

# --- linear algebra (JAX's CPU lowering: LAPACK custom calls) -----------------------------
add("linalg", "linalg_cholesky", jnp.linalg.cholesky, "spd[4,4]")
add("linalg", "linalg_cholesky_batched", jnp.linalg.cholesky, "spd[2,3,3]")
add("linalg", "linalg_qr", lambda x: jnp.linalg.qr(x), "f32[5,3]")
add("linalg", "linalg_qr_r", lambda x: jnp.linalg.qr(x, mode="r"), "f32[4,4]")
add("linalg", "linalg_svd_values", lambda x: jnp.linalg.svd(x, compute_uv=False), "f32[5,3]")
add("linalg", "linalg_svd_reconstruct",
    lambda x: (lambda u, s, vt: (u * s) @ vt)(*jnp.linalg.svd(x, full_matrices=False)), "f32[4,3]")
add("linalg", "linalg_eigh_values", lambda x: jnp.linalg.eigh(x)[0], "spd[4,4]")
add("linalg", "linalg_eigh_reconstruct", lambda x: (lambda w, v: (v * w) @ v.T)(*jnp.linalg.eigh(x)), "spd[4,4]")
add("linalg", "linalg_solve", jnp.linalg.solve, "spd[4,4]", "f32[4,2]")
add("linalg", "linalg_inv", jnp.linalg.inv, "spd[4,4]")
add("linalg", "linalg_slogdet", lambda x: jnp.linalg.slogdet(x), "f32[4,4]")
add("linalg", "linalg_det", jnp.linalg.det, "f32[3,3]")
add("linalg", "linalg_triangular_solve", lambda a, b: lax.linalg.triangular_solve(jnp.tril(a) + 4 * jnp.eye(4), b,
                                                                                  left_side=True, lower=True),
    "f32[4,4]", "f32[4,3]")
add("linalg", "linalg_solve_triangular_upper", lambda a, b: jax.scipy.linalg.solve_triangular(
    jnp.triu(a) + 4 * jnp.eye(3), b, lower=False), "f32[3,3]", "f32[3]")
add("linalg", "linalg_lu", lambda x: jax.scipy.linalg.lu(x), "f32[4,4]")
add("linalg", "linalg_norm", lambda x: (jnp.linalg.norm(x), jnp.linalg.norm(x, axis=1)), "f32[4,5]")
add("linalg", "linalg_pinv", jnp.linalg.pinv, "f32[4,3]")
add("linalg", "linalg_lstsq", lambda a, b: jnp.linalg.lstsq(a, b)[0], "f32[5,3]", "f32[5]")
add("linalg", "linalg_cho_solve", lambda a, b: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(a), b),
    "spd[3,3]", "f32[3,2]")
add("linalg", "linalg_cholesky_c64", jnp.linalg.cholesky, "hpd[3,3]")
add("linalg", "linalg_eigh_c64", lambda x: (lambda w, v: (v * w) @ jnp.conj(v.T))(*jnp.linalg.eigh(x)), "hpd[3,3]")
add("linalg", "linalg_qr_c64", lambda x: (lambda q, r: q @ r)(*jnp.linalg.qr(x)), "c64[4,3]")
add("linalg", "linalg_svd_c64", lambda x: jnp.linalg.svd(x, compute_uv=False), "c64[3,4]")
add("linalg", "linalg_solve_c64", jnp.linalg.solve, "hpd[3,3]", "c64[3,2]")
add("linalg", "linalg_matrix_power", lambda x: jnp.linalg.matrix_power(x, 3), "f32[3,3]")

# --- sort, scatter/gather ----------------------------------------------------------------
add("sort", "sort_1d", jnp.sort, "f32[10]")
add("sort", "sort_axis0", lambda x: jnp.sort(x, axis=0), "f32[6,3]")
add("sort", "sort_argsort", jnp.argsort, "f32[9]")
add("sort", "sort_int_descending", lambda x: -jnp.sort(-x), "i32[12]")
add("sort", "sort_lexsort_keys", lambda a, b: lax.sort((a, b), num_keys=1), "i32[8]", "f32[8]")
add("sort", "sort_median", lambda x: jnp.median(x, axis=1), "f32[3,7]")
add("sort", "sort_unique_size", lambda x: jnp.unique(x, size=6, fill_value=-1), "i32[10]")
add("sort", "sort_searchsorted", lambda a, v: jnp.searchsorted(jnp.sort(a), v), "f32[8]", "f32[5]")
add("gather", "gather_take", lambda x, i: jnp.take(x, i, axis=0), "f32[6,3]", "idx6[4]")
add("gather", "gather_fancy_index", lambda x, i, j: x[i, j], "f32[5,6]", "idx5[4]", "idx6[4]")
add("gather", "gather_embedding", lambda t, i: t[i], "f32[10,4]", "idx10[2,3]")
add("gather", "scatter_set", lambda x, i, v: x.at[i].set(v), "f32[8]", "idx8[3]", "f32[3]")
add("gather", "scatter_add", lambda x, i, v: x.at[i].add(v), "f32[6,2]", "idx6[5]", "f32[5,2]")
add("gather", "scatter_max", lambda x, i, v: x.at[i].max(v), "f32[6]", "idx6[4]", "f32[4]")
add("gather", "scatter_mul", lambda x, i, v: x.at[i].multiply(v), "f32[5]", "idx5[3]", "f32[3]")
add("gather", "segment_sum", lambda d, s: jax.ops.segment_sum(d, s, num_segments=4), "f32[8]", "idx4[8]")
add("gather", "gather_where_mask", lambda x: jnp.where(x > 0, x, 0).sum(), "f32[12]")

# --- convolution, pooling, attention, small models ----------------------------------------
add("conv", "conv_2d_nchw", lambda x, w: lax.conv(x, w, (1, 1), "SAME"), "f32[1,2,6,6]", "f32[3,2,3,3]")
add("conv", "conv_2d_stride_valid", lambda x, w: lax.conv(x, w, (2, 2), "VALID"), "f32[2,3,7,7]", "f32[4,3,3,3]")
add("conv", "conv_nhwc", lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                                               dimension_numbers=("NHWC", "HWIO", "NHWC")),
    "f32[1,5,5,2]", "f32[3,3,2,4]")
add("conv", "conv_1d_dilated", lambda x, w: lax.conv_general_dilated(x, w, (1,), "VALID", rhs_dilation=(2,)),
    "f32[1,2,10]", "f32[3,2,3]")
add("conv", "conv_grouped", lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=2),
    "f32[1,4,5,5]", "f32[4,2,3,3]")
add("conv", "conv_transpose", lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME",
                                                              dimension_numbers=("NHWC", "HWIO", "NHWC")),
    "f32[1,3,3,2]", "f32[3,3,2,2]")
add("conv", "conv_depthwise", lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=3),
    "f32[1,3,6,6]", "f32[3,1,3,3]")
add("conv", "pool_avg", lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 1, 2, 2), (1, 1, 2, 2), "VALID") / 4,
    "f32[1,2,6,6]")
add("conv", "pool_max_grad", jax.grad(lambda x: jnp.sum(lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 2),
                                                                           "VALID") ** 2)), "f32[4,4]")
add("conv", "conv_grad_input", jax.grad(lambda x, w: jnp.sum(lax.conv(x, w, (1, 1), "SAME") ** 2)),
    "f32[1,2,5,5]", "f32[2,2,3,3]")


def _attention(q: Any, k: Any, v: Any) -> Any:
    return jax.nn.softmax(q @ jnp.swapaxes(k, -1, -2) / jnp.sqrt(q.shape[-1]), axis=-1) @ v


def _causal_attention(q: Any, k: Any, v: Any) -> Any:
    s = q @ k.T / jnp.sqrt(q.shape[-1])
    mask = jnp.tril(jnp.ones(s.shape, bool))
    return jax.nn.softmax(jnp.where(mask, s, -1e9), axis=-1) @ v


def _layer_norm(x: Any, g: Any, b: Any) -> Any:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * g + b


def _mlp(x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
    return jax.nn.relu(x @ w1 + b1) @ w2 + b2


add("attention", "attention_sdpa", _attention, "f32[2,4,8]", "f32[2,6,8]", "f32[2,6,8]")
add("attention", "attention_causal", _causal_attention, "f32[5,4]", "f32[5,4]", "f32[5,4]")
add("attention", "attention_jax_nn", lambda q, k, v: jax.nn.dot_product_attention(q, k, v),
    "f32[1,4,2,8]", "f32[1,4,2,8]", "f32[1,4,2,8]")
add("attention", "attention_multihead", lambda x, w: _attention(*(jnp.einsum("td,hde->hte", x, w[i])
                                                                  for i in range(3))),
    "f32[6,8]", "f32[3,2,8,4]")
add("model", "model_mlp", _mlp, "f32[4,8]", "f32[8,16]", "f32[16]", "f32[16,3]", "f32[3]")
add("model", "model_mlp_grad", jax.grad(lambda w1, x: jnp.sum(jnp.tanh(x @ w1) ** 2)), "f32[6,5]", "f32[3,6]")
add("model", "model_layer_norm", _layer_norm, "f32[3,16]", "f32[16]", "f32[16]")
add("model", "model_rms_norm", lambda x, g: x * lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6) * g,
    "f32[4,8]", "f32[8]")
add("model", "model_transformer_block", lambda x, w, g: _layer_norm(x + _attention(x @ w, x, x), g, 0.0),
    "f32[5,8]", "f32[8,8]", "f32[8]")
add("model", "model_cross_entropy", lambda logits, y: -jnp.mean(jnp.sum(jax.nn.log_softmax(logits)
                                                                        * jax.nn.one_hot(y, 5), -1)),
    "f32[4,5]", "idx5[4]")
add("model", "model_sgd_step", lambda w, x: w - 0.1 * jax.grad(lambda w: jnp.mean((x @ w) ** 2))(w),
    "f32[4,2]", "f32[6,4]")
add("model", "model_batchnorm", lambda x: (x - x.mean(0)) / jnp.sqrt(x.var(0) + 1e-5), "f32[8,3]")

# --- element types -------------------------------------------------------------------------
for _t in ("f16", "bf16"):
    add("dtype", f"{_t}_add_mul", lambda x, y: (x + y) * y, f"{_t}[16]", f"{_t}[16]")
    add("dtype", f"{_t}_chain", lambda x: jnp.tanh(x * 1.7 + 0.3) * x - x / 3, f"{_t}[4,8]")
    add("dtype", f"{_t}_matmul", jnp.matmul, f"{_t}[16,64]", f"{_t}[64,8]")
    add("dtype", f"{_t}_conv", lambda x, w: lax.conv(x, w, (1, 1), "SAME"), f"{_t}[1,4,6,6]", f"{_t}[4,4,3,3]")
    add("dtype", f"{_t}_softmax", jax.nn.softmax, f"{_t}[3,10]")
    add("dtype", f"{_t}_sum", lambda x: jnp.sum(x, axis=1), f"{_t}[4,32]")
    add("dtype", f"{_t}_layer_norm", _layer_norm, f"{_t}[2,16]", f"{_t}[16]", f"{_t}[16]")
    add("dtype", f"{_t}_to_f32", lambda x: x.astype(jnp.float32) * 3, f"{_t}[6]")
    add("dtype", f"{_t}_mlp", _mlp, f"{_t}[2,8]", f"{_t}[8,16]", f"{_t}[16]", f"{_t}[16,4]", f"{_t}[4]")
add("dtype", "i8_add_mul", lambda x, y: x * y + x, "i8[12]", "i8[12]")
add("dtype", "i8_matmul_i32", lambda x, y: jnp.matmul(x, y, preferred_element_type=jnp.int32), "i8[4,8]", "i8[8,3]")
add("dtype", "i8_to_f32_scale", lambda x: x.astype(jnp.float32) * 0.25, "i8[10]")
add("dtype", "i32_reduce_max", lambda x: jnp.max(x, axis=0), "i32[5,4]")
add("dtype", "i32_floor_divide", lambda x, y: jnp.floor_divide(x, jnp.where(y == 0, 2, y)), "i32[9]", "i32[9]")
add("dtype", "i32_bitwise", lambda x, y: (x & y, x | y, x ^ y, ~x), "i32[6]", "i32[6]")
add("dtype", "u8_add_wrap", lambda x, y: x + y, "u8[16]", "u8[16]")
add("dtype", "u8_to_f32_normalize", lambda x: x.astype(jnp.float32) / 255.0 - 0.5, "u8[3,4]")
add("dtype", "u8_max_shift", lambda x: jnp.maximum(x >> 2, x // 3), "u8[10]")
add("dtype", "bool_logic", lambda a, b: (a & b, a | ~b, a ^ b), "bool[8]", "bool[8]")
add("dtype", "bool_count", lambda a: jnp.sum(a, dtype=jnp.int32), "bool[3,5]")
add("dtype", "bool_select_cast", lambda a, x: jnp.where(a, x, -x).astype(jnp.int32), "bool[6]", "f32[6]")
add("dtype", "c64_mul_add", lambda x, y: x * y + x, "c64[6]", "c64[6]")
add("dtype", "c64_abs_angle", lambda x: (jnp.abs(x), jnp.angle(x)), "c64[5]")
add("dtype", "c64_exp_conj", lambda x: jnp.exp(x) * jnp.conj(x), "c64[4]")
add("dtype", "c64_matmul", jnp.matmul, "c64[3,4]", "c64[4,2]")
add("dtype", "c64_fft", jnp.fft.fft, "c64[8]")
add("dtype", "c64_from_parts", lambda re, im: lax.complex(re, im) ** 2, "f32[5]", "f32[5]")

# --- jax.export, symbolic shapes --------------------------------------------------------------
add("export", "export_mlp", _mlp, "f32[4,8]", "f32[8,16]", "f32[16]", "f32[16,3]", "f32[3]", export=True)
add("export", "export_layer_norm", _layer_norm, "f32[3,16]", "f32[16]", "f32[16]", export=True)
add("export", "export_softmax", jax.nn.softmax, "f32[3,7]", export=True)
add("export", "export_sort", jnp.sort, "f32[9]", export=True)
add("export", "export_conv", lambda x, w: lax.conv(x, w, (1, 1), "SAME"), "f32[1,2,5,5]", "f32[3,2,3,3]", export=True)
add("export", "export_scatter_add", lambda x, i, v: x.at[i].add(v), "f32[6]", "idx6[3]", "f32[3]", export=True)
add("poly", "poly_sin_mul", lambda x: jnp.sin(x) * 2, "f32[4,4]", symbolic=("b, 4",))
add("poly", "poly_sum_rows", lambda x: jnp.sum(x, axis=1), "f32[4,6]", symbolic=("b, 6",))
add("poly", "poly_matmul", lambda x, w: x @ w, "f32[4,8]", "f32[8,3]", symbolic=("b, 8", None))
add("poly", "poly_mlp", _mlp, "f32[4,8]", "f32[8,16]", "f32[16]", "f32[16,3]", "f32[3]",
    symbolic=("b, 8", None, None, None, None))
add("poly", "poly_softmax", jax.nn.softmax, "f32[4,5]", symbolic=("b, n",))
add("poly", "poly_layer_norm", _layer_norm, "f32[4,16]", "f32[16]", "f32[16]", symbolic=("b, 16", None, None))
add("poly", "poly_broadcast_add", lambda x, y: x + y, "f32[4,3]", "f32[4,3]", symbolic=("b, 3", "b, 3"))
add("poly", "poly_concat", lambda x: jnp.concatenate([x, x * 2], axis=0), "f32[4,2]", symbolic=("b, 2",))
add("poly", "poly_mean_2d", lambda x: jnp.mean(x, axis=0), "f32[4,4]", symbolic=("b, m",))
add("poly", "poly_reshape", lambda x: x.reshape(-1), "f32[4,3]", symbolic=("b, 3",))
add("poly", "poly_cumsum", lambda x: jnp.cumsum(x), "f32[4]", symbolic=("b",))
add("poly", "poly_batch_even", lambda x: x.reshape(2, -1).sum(0), "f32[4,3]", symbolic=("2*b, 3",))
