"""NumPy functions wrapped as diffsci primitives (their rules live in ``_vjps*.py``).

Each line binds one NumPy function as a primitive: it runs the NumPy function
unchanged on plain values and records itself on traced ones.  Functions that
take a *sequence* of arrays (``concatenate``, ``stack``, ``einsum`` ...) are
primitives over ``*arrays`` so that every array is a traced positional
argument; their public wrappers (same signature as NumPy's) unpack the
sequence.  Functions built from these primitives live in ``_composite.py``.
Non-differentiable functions are one explicit list at the end.
"""

from __future__ import annotations

import builtins
import string
from collections import Counter

import numpy as np

from .._core import getval, is_tracer, nondifferentiable, primitive
from . import _util

# ---------------------------------------------------------------- arithmetic
add = primitive(np.add)
subtract = primitive(np.subtract)
multiply = primitive(np.multiply)
true_divide = primitive(np.true_divide)
divide = true_divide
power = primitive(np.power)
pow = power  # noqa: A001 - NumPy 2's alias
float_power = primitive(np.float_power)
negative = primitive(np.negative)
positive = primitive(np.positive)
remainder = primitive(np.remainder)
mod = remainder
fmod = primitive(np.fmod)

# ---------------------------------------------------------------- elementwise math
absolute = primitive(np.absolute)
abs = absolute  # noqa: A001 - NumPy's name
fabs = primitive(np.fabs)
sqrt = primitive(np.sqrt)
cbrt = primitive(np.cbrt)
square = primitive(np.square)
reciprocal = primitive(np.reciprocal)
exp = primitive(np.exp)
exp2 = primitive(np.exp2)
expm1 = primitive(np.expm1)
log = primitive(np.log)
log2 = primitive(np.log2)
log10 = primitive(np.log10)
log1p = primitive(np.log1p)
logaddexp = primitive(np.logaddexp)
logaddexp2 = primitive(np.logaddexp2)
sin = primitive(np.sin)
cos = primitive(np.cos)
tan = primitive(np.tan)
arcsin = asin = primitive(np.arcsin)
arccos = acos = primitive(np.arccos)
arctan = atan = primitive(np.arctan)
arctan2 = atan2 = primitive(np.arctan2)
hypot = primitive(np.hypot)
sinh = primitive(np.sinh)
cosh = primitive(np.cosh)
tanh = primitive(np.tanh)
arcsinh = asinh = primitive(np.arcsinh)
arccosh = acosh = primitive(np.arccosh)
arctanh = atanh = primitive(np.arctanh)
deg2rad = primitive(np.deg2rad)
radians = primitive(np.radians)
rad2deg = primitive(np.rad2deg)
degrees = primitive(np.degrees)
sinc = primitive(np.sinc)
maximum = primitive(np.maximum)
minimum = primitive(np.minimum)
fmax = primitive(np.fmax)
fmin = primitive(np.fmin)
real = primitive(np.real)
imag = primitive(np.imag)
conjugate = conj = primitive(np.conjugate)
angle = primitive(np.angle)
nan_to_num = primitive(np.nan_to_num)


def _clip(a, a_min, a_max):
    return np.clip(a, a_min, a_max)


_clip_p = primitive(_clip, name="clip")


def clip(a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue,  # noqa: A002
         max=np._NoValue, **kwargs):  # noqa: A002 - NumPy's keyword names
    """``numpy.clip``; ``a`` and the bounds (given either way) are all differentiable."""
    lo = a_min if min is np._NoValue else min
    hi = a_max if max is np._NoValue else max
    lo = None if lo is np._NoValue else lo
    hi = None if hi is np._NoValue else hi
    if out is not None or kwargs:
        return np.clip(getval(a), getval(lo), getval(hi), out=out, **kwargs)
    return _clip_p(a, lo, hi)


def _where(condition, x, y):
    return np.where(condition, x, y)


_where_p = primitive(_where, name="where")


def where(condition, x=None, y=None, /):
    """``numpy.where``; ``x`` and ``y`` are differentiable, ``condition`` is not."""
    if x is None and y is None:
        return np.nonzero(getval(condition))
    return _where_p(_util.condition(condition), x, y)


# ---------------------------------------------------------------- reductions
sum = primitive(np.sum)  # noqa: A001
mean = primitive(np.mean)
prod = primitive(np.prod)
amax = max = primitive(np.amax)  # noqa: A001
amin = min = primitive(np.amin)  # noqa: A001
std = primitive(np.std)
var = primitive(np.var)
cumsum = primitive(np.cumsum)
cumprod = primitive(np.cumprod)

# ---------------------------------------------------------------- shapes
reshape = primitive(np.reshape)
ravel = primitive(np.ravel)
transpose = permute_dims = primitive(np.transpose)
moveaxis = primitive(np.moveaxis)
swapaxes = primitive(np.swapaxes)
expand_dims = primitive(np.expand_dims)
squeeze = primitive(np.squeeze)
broadcast_to = primitive(np.broadcast_to)
flip = primitive(np.flip)
roll = primitive(np.roll)
tile = primitive(np.tile)
triu = primitive(np.triu)
tril = primitive(np.tril)
copy = primitive(np.copy)
_pad_p = primitive(np.pad, name="pad")  # constant/empty modes; the gathering modes compose getitem
_atleast_1d_p = primitive(np.atleast_1d, name="atleast_1d")
_atleast_2d_p = primitive(np.atleast_2d, name="atleast_2d")
_atleast_3d_p = primitive(np.atleast_3d, name="atleast_3d")


def _astype(x, dtype, copy=True):
    return np.asarray(x).astype(dtype, copy=copy)


_astype_p = primitive(_astype, name="astype")


def astype(x, dtype, /, *, copy=True, device=None):
    """``numpy.astype``: a cast.  Casting to an integer or boolean dtype cuts the gradient
    (the result is a plain array; under diffsci.jit a record, recomputed by the compiled
    code); float/complex casts are differentiable."""
    if np.dtype(dtype).kind not in "fc":
        return _util.value_mask(_plain_cast, x, np.dtype(dtype), copy)
    return _astype_p(x, dtype=dtype, copy=copy)


def _plain_cast(x, dtype, copy):
    return np.astype(np.asarray(x), dtype, copy=copy)


def _atleast(prim, arys):
    res = tuple(prim(a) for a in arys)
    return res[0] if len(res) == 1 else res


def atleast_1d(*arys):
    return _atleast(_atleast_1d_p, arys)


def atleast_2d(*arys):
    return _atleast(_atleast_2d_p, arys)


def atleast_3d(*arys):
    return _atleast(_atleast_3d_p, arys)


# ---- primitives over a sequence of arrays: rules are made per argument on demand
_VARIADIC_RULES = {}  # primitive -> factory(argnum) -> rule; filled by the rule tables


def _call_variadic(prim, arrays, **kwargs):
    """Call ``prim(*arrays)`` after making sure it has a rule for every array."""
    vjps = prim.vjps
    if len(arrays) > len(vjps):
        make = _VARIADIC_RULES[prim]
        for i in range(len(vjps), len(arrays)):
            vjps[i] = make(i)
    return prim(*arrays, **kwargs)


def _concatenate(*arrays, axis=0, dtype=None, casting="same_kind"):
    return np.concatenate(arrays, axis=axis, dtype=dtype, casting=casting)


def _stack(*arrays, axis=0, dtype=None, casting="same_kind"):
    return np.stack(arrays, axis=axis, dtype=dtype, casting=casting)


_concatenate_p = primitive(_concatenate, name="concatenate")
_stack_p = primitive(_stack, name="stack")


def concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    if out is not None:
        return np.concatenate([getval(a) for a in arrays], axis, out, dtype=dtype,
                              casting=casting)
    return _call_variadic(_concatenate_p, tuple(arrays), axis=axis, dtype=dtype, casting=casting)


concat = concatenate


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    if out is not None:
        return np.stack([getval(a) for a in arrays], axis, out, dtype=dtype, casting=casting)
    return _call_variadic(_stack_p, tuple(arrays), axis=axis, dtype=dtype, casting=casting)


def _getitem(x, idx):
    return x[idx]


getitem = primitive(_getitem, name="getitem")


def _scatter_add(base, values, idx=None):
    out = base.copy()
    np.add.at(out, idx, values)
    return out


# ``base`` with ``values`` added at ``idx`` (duplicates accumulate); the adjoint of getitem.
scatter_add = primitive(_scatter_add, name="scatter_add")

# ---------------------------------------------------------------- products
matmul = primitive(np.matmul)
dot = primitive(np.dot)
tensordot = primitive(np.tensordot)


def _einsum(*operands, subscripts, **kwargs):
    return np.einsum(subscripts, *operands, **kwargs)


_einsum_p = primitive(_einsum, name="einsum")


def einsum(*operands, out=None, **kwargs):
    """``numpy.einsum`` (any subscripts: implicit output, ``...``, repeated labels,
    the interleaved operand/sublist form); every operand is differentiable."""
    if isinstance(operands[0], str):
        subscripts, ops = operands[0], operands[1:]
    else:
        subscripts, ops = _sublists_to_subscripts(operands)
    if out is not None or not builtins.any(is_tracer(op) for op in ops):
        return np.einsum(subscripts, *[getval(op) for op in ops], out=out, **kwargs)
    explicit = einsum_explicit(subscripts, [np.ndim(op) for op in ops])
    return _call_variadic(_einsum_p, tuple(ops), subscripts=explicit, **kwargs)


def einsum_explicit(subscripts, ndims):
    """Rewrite einsum ``subscripts`` with an explicit output and no ``...``.

    ``"...ij,j"`` for operands of ndim (3, 1) becomes ``"Aij,j->Ai"``: the
    broadcast dimensions get unused letters, right-aligned as NumPy aligns
    them, and an implicit output is made explicit (ellipsis dimensions first,
    then the labels seen exactly once, in character order, as NumPy does).
    """
    s = subscripts.replace(" ", "")
    ins, arrow, out = s.partition("->")
    terms = ins.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"einsum: {len(terms)} operand subscripts for {len(ndims)} operands")
    used = {c for c in s if c.isalpha()}
    free = [c for c in string.ascii_letters if c not in used]
    n_ell = builtins.max([nd - (len(t) - 3) for t, nd in zip(terms, ndims) if "..." in t],
                         default=0)
    ell = "".join(free[:n_ell])
    terms = [t.replace("...", ell[n_ell - (nd - (len(t) - 3)):]) if "..." in t else t
             for t, nd in zip(terms, ndims)]
    if arrow:
        out = out.replace("...", ell)
    else:
        counts = Counter("".join(t for t in ins.split(",")).replace(".", ""))
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1))
    return ",".join(terms) + "->" + out


def _sublists_to_subscripts(args):
    """The interleaved form einsum(op0, sub0, op1, sub1, ..., [subout]) as a string."""
    def letters(sub):
        return "".join("..." if s is Ellipsis else string.ascii_letters[s] for s in sub)

    ops, subs = args[0::2], args[1::2]
    out = None
    if len(args) % 2 == 1:
        ops, out = ops[:-1], args[-1]
    s = ",".join(letters(sub) for sub in subs)
    return (s + "->" + letters(out) if out is not None else s), ops


# ---------------------------------------------------------------- constants
# Array constructors return plain arrays; traced arguments are stripped (their
# values only set shapes).  Constructors whose *values* depend on their
# arguments (linspace, full, full_like, arange) differentiate through them
# instead: see _composite.py.

# ---------------------------------------------------------------- non-differentiable
# Functions whose derivative is zero almost everywhere, or whose results are
# not floats: they accept traced values and return plain ones.
_NONDIFFERENTIABLE = [
    "floor", "ceil", "round", "around", "rint", "trunc", "fix", "floor_divide", "sign",
    "signbit", "spacing",
    "argmax", "argmin", "argsort", "argpartition", "argwhere", "nonzero", "flatnonzero",
    "searchsorted", "digitize", "lexsort", "isin", "unravel_index", "ravel_multi_index",
    "indices", "diag_indices",
    "tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from", "ix_",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "isfinite", "isinf", "isnan", "isneginf", "isposinf", "isclose", "allclose",
    "array_equal", "array_equiv", "iscomplex", "isreal", "iscomplexobj", "isrealobj",
    "isscalar", "logical_and", "logical_or", "logical_not", "logical_xor", "all", "any",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "invert", "left_shift",
    "right_shift", "gcd", "lcm",
    "shape", "ndim", "size", "result_type", "can_cast", "min_scalar_type", "common_type",
    "broadcast_shapes", "may_share_memory", "shares_memory", "count_nonzero",
    "zeros", "ones", "empty", "eye", "identity", "tri", "zeros_like", "ones_like",
    "empty_like",
]
_nd = {n: nondifferentiable(getattr(np, n)) for n in _NONDIFFERENTIABLE if hasattr(np, n)}
globals().update(_nd)

__all__ = sorted(
    n for n, v in globals().items()
    if not n.startswith("_") and callable(v) and n not in {
        "annotations", "builtins", "string", "Counter", "np", "is_tracer", "getval",
        "nondifferentiable", "primitive", "einsum_explicit"}
)
