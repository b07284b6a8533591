"""Count diffsci's coverage of JAX's differentiable NumPy/SciPy functions, and check gradients.

Usage::

    python tools/coverage_count.py            # a table per area and the totals
    python tools/coverage_count.py --json     # the same, machine-readable
    python tools/coverage_count.py --missing  # only the functions that are missing or disagree

What is counted.  Every public name of ``jax.numpy``, ``jax.numpy.linalg``, ``jax.numpy.fft``,
``jax.scipy.special``, ``jax.scipy.linalg``, ``jax.scipy.signal`` and every (distribution,
method) pair of ``jax.scipy.stats`` is either counted or excluded by one rule:

* automatically excluded: submodules, classes (dtypes, ``ufunc``, warnings) and values that are
  not callable (constants, ``newaxis``, the index helpers ``s_``, ``index_exp``, ``mgrid``,
  ``ogrid``) -- except ``r_`` and ``c_``, which concatenate values and are counted;
* excluded by name, in ``EXCLUDED`` below, each group with its reason: functions whose result is
  integer, boolean, a dtype or a shape; piecewise-constant functions (derivative zero wherever it
  exists); constructors whose inputs are only sizes or integers; input/output and printing.

Every other name counts as a differentiable function, including names new to a later JAX (so
the count can only grow conservatively).

What is checked.  A counted function *exists* when ``diffsci.numpy`` / ``diffsci.scipy`` has the
name (``diffsci.fft`` for ``jax.numpy.fft``).  Where a spec of the table-driven tests
(``tests/diffsci/specs_*.py``, ``test_numpy_grads``, ``test_scipy_special``,
``test_scipy_linalg``, ``test_fft``, ``test_stats_dists``; a few local ones below for what those
tables do not hold) can be evaluated by JAX -- the spec's function with the diffsci modules it
names replaced by JAX's -- the gradient of a random real projection of its output with respect
to every input (complex inputs as real and imaginary parts) is computed by ``ds.grad`` and by
``jax.grad`` in float64 and compared (rtol 1e-6).  A function *agrees* when at least one spec
ran under both and none disagreed; *values differ* when the two libraries compute different
values (a different convention, so gradients cannot be compared); *not compared* when it exists
but no spec runs under JAX.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import sys
import time
import types
import warnings
import zlib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_compilation_cache_dir",
                  os.path.join(os.path.expanduser("~"), ".cache", "diffsci-coverage-jax"))
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)

import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg  # noqa: E402
import jax.scipy.signal  # noqa: E402
import jax.scipy.special  # noqa: E402
import jax.scipy.stats  # noqa: E402
import numpy as np  # noqa: E402

import diffsci as ds  # noqa: E402
import diffsci.fft as dfft  # noqa: E402
import diffsci.numpy as dnp  # noqa: E402
import diffsci.scipy.linalg as dsl  # noqa: E402
import diffsci.scipy.signal as dsg  # noqa: E402
import diffsci.scipy.special as dss  # noqa: E402
import diffsci.scipy.stats as dst  # noqa: E402

RTOL = 1e-6
VERBOSE = False
FD_SIDE = "JAX differs (FD agrees with diffsci)"
NO_JAX_GRAD = "no JAX gradient (FD agrees with diffsci)"
MAX_SPECS = 3  # specs compared per function (JAX compiles each one)

# ---------------------------------------------------------------- the exclusion rule
_INTEGER_OR_BOOL = """
    all any allclose argmax argmin argpartition argsort argwhere array_equal array_equiv
    bitwise_and bitwise_count bitwise_invert bitwise_left_shift bitwise_not bitwise_or
    bitwise_right_shift bitwise_xor count_nonzero digitize equal flatnonzero gcd greater
    greater_equal invert isclose iscomplex iscomplexobj isfinite isin isinf isnan isneginf
    isposinf isreal isrealobj isscalar iterable lcm left_shift less less_equal lexsort
    logical_and logical_not logical_or logical_xor nanargmax nanargmin nonzero not_equal
    packbits right_shift searchsorted signbit unpackbits unravel_index ravel_multi_index
    diag_indices diag_indices_from tril_indices tril_indices_from triu_indices triu_indices_from
    mask_indices indices ix_ histogram_bin_edges bincount_unweighted matrix_rank
"""
_DTYPE_OR_SHAPE = """
    can_cast dtype finfo iinfo isdtype issubdtype promote_types result_type ndim shape size
    broadcast_shapes einsum_path astype_dtype
"""
_PIECEWISE_CONSTANT = """
    ceil fix floor floor_divide rint round around sign trunc heaviside spacing nextafter
    sort_complex_keys
"""
_SIZE_CONSTRUCTORS = """
    arange empty empty_like eye identity ones ones_like zeros zeros_like tri bartlett blackman
    hamming hanning kaiser fftfreq rfftfreq dft hadamard helmert hilbert invhilbert pascal
    invpascal bernoulli_numbers
"""
_IO_AND_PRINTING = """
    array_repr array_str get_printoptions printoptions set_printoptions load save savez
    fromfile frombuffer fromstring fromiter from_dlpack frompyfunc
"""
EXCLUDED = {
    "integer or boolean result": _INTEGER_OR_BOOL.split(),
    "dtype or shape": _DTYPE_OR_SHAPE.split(),
    "piecewise constant": _PIECEWISE_CONSTANT.split(),
    "constructor of sizes only": _SIZE_CONSTRUCTORS.split(),
    "input/output, printing": _IO_AND_PRINTING.split(),
}
# per-area names excluded for the reasons above (a name may mean different things in two areas)
AREA_EXCLUDED = {
    "jax.scipy.special": {"bernoulli": "constructor of sizes only"},  # Bernoulli numbers of n
    "jax.scipy.stats": {"mode": "piecewise constant", "rankdata": "piecewise constant",
                        "bernoulli.ppf": "piecewise constant"},
}
# the NumPy/SciPy namespace each area mirrors: a name JAX adds to it is not counted
REFERENCE = {"jax.numpy": "numpy", "jax.numpy.linalg": "numpy.linalg", "jax.numpy.fft": "numpy.fft",
             "jax.scipy.special": "scipy.special", "jax.scipy.linalg": "scipy.linalg",
             "jax.scipy.signal": "scipy.signal", "jax.scipy.stats": "scipy.stats"}
INDEXERS = {"r_", "c_"}  # objects indexed with values: concatenation, differentiable


def _exclusion(area, name, obj):
    """The reason ``name`` is not counted, or None when it is a differentiable function."""
    if isinstance(obj, types.ModuleType):
        return "submodule"
    if isinstance(obj, type):
        return "class or dtype"
    if name in INDEXERS:
        return None
    if not callable(obj):
        return "not callable"
    if name in AREA_EXCLUDED.get(area, {}):
        return AREA_EXCLUDED[area][name]
    if "." not in name and not hasattr(importlib.import_module(REFERENCE[area]), name):
        return "JAX's own name (not in NumPy/SciPy)"
    for reason, names in EXCLUDED.items():
        if name in names:
            return reason
    return None


# ---------------------------------------------------------------- the specs
def _load_specs():
    """{(area, name): [spec]} from the test tables, each spec with .fun and .args samplers."""
    import importlib

    tn = importlib.import_module("tests.diffsci.test_numpy_grads")  # pulls in specs_*.py
    tsp = importlib.import_module("tests.diffsci.test_scipy_special")
    tsl = importlib.import_module("tests.diffsci.test_scipy_linalg")
    tff = importlib.import_module("tests.diffsci.test_fft")
    out = {}
    for s in tn.SPECS:
        name = tn.ALIASES.get(s.name, s.name)
        area = "jax.numpy"
        if name.startswith("linalg."):
            area, name = "jax.numpy.linalg", name[len("linalg."):]
        out.setdefault((area, name), []).append(s)
    for alias, name in tn.ALIASES.items():  # an alias is counted by its own name
        if not alias.startswith("linalg.") and ("jax.numpy", alias) not in out:
            out[("jax.numpy", alias)] = out.get(("jax.numpy", name), [])
    for area, mod in (("jax.scipy.special", tsp), ("jax.scipy.linalg", tsl),
                      ("jax.numpy.fft", tff)):
        for s in mod.SPECS:
            out.setdefault((area, s.name), []).append(s)
    for s in LOCAL_SPECS:
        out.setdefault((s.area, s.name), []).append(s)
    return out


class _LocalSpec:
    """A spec the tables do not hold; ``jfun`` is JAX's spelling where its API differs."""

    def __init__(self, area, name, fun, args, jfun=None):
        self.area, self.name, self.fun, self.args, self.jfun = area, name, fun, args, jfun


def _n(*shape):
    return lambda r: r.standard_normal(shape)


def _written(write, x, *args):
    y = x * 1.0
    write(y, *args)
    return y


_MASK = np.array([[1, 0, 1], [0, 0, 1]], bool)


# Functions the test tables do not hold in the Spec form (signal has its own tests of SciPy's
# dense Jacobians; numpy.linalg functions tested under other names).
LOCAL_SPECS = [
    _LocalSpec("jax.scipy.signal", "convolve", lambda a, v: dsg.convolve(a, v), (_n(6), _n(3))),
    _LocalSpec("jax.scipy.signal", "correlate", lambda a, v: dsg.correlate(a, v, "same"),
               (_n(6), _n(3))),
    _LocalSpec("jax.scipy.signal", "fftconvolve", lambda a, v: dsg.fftconvolve(a, v),
               (_n(5, 4), _n(2, 3))),
    _LocalSpec("jax.scipy.signal", "convolve2d", lambda a, v: dsg.convolve2d(a, v, "valid"),
               (_n(5, 4), _n(2, 3))),
    _LocalSpec("jax.scipy.signal", "correlate2d", lambda a, v: dsg.correlate2d(a, v),
               (_n(4, 4), _n(2, 3))),
    _LocalSpec("jax.scipy.signal", "detrend", lambda x: dsg.detrend(x), (_n(2, 8),)),
    _LocalSpec("jax.scipy.signal", "detrend", lambda x: dsg.detrend(x, 0, "constant"),
               (_n(5, 3),)),
    _LocalSpec("jax.scipy.linalg", "eigh_tridiagonal",
               lambda d, e: dsl.eigh_tridiagonal(d, e, eigvals_only=True),
               (lambda r: np.arange(4.0) * 1.5 + r.uniform(-0.1, 0.1, 4), _n(3)),
               lambda d, e: jax.scipy.linalg.eigh_tridiagonal(d, e, eigvals_only=True)),
    _LocalSpec("jax.scipy.signal", "welch", lambda x: dsg.welch(x, nperseg=8)[1], (_n(2, 30),),
               lambda x: jax.scipy.signal.welch(x, nperseg=8)[1]),
    _LocalSpec("jax.scipy.signal", "csd", lambda x, y: dsg.csd(x, y, nperseg=8)[1],
               (_n(2, 30), _n(2, 30)), lambda x, y: jax.scipy.signal.csd(x, y, nperseg=8)[1]),
    _LocalSpec("jax.scipy.signal", "stft", lambda x: dsg.stft(x, nperseg=8)[2], (_n(2, 30),),
               lambda x: jax.scipy.signal.stft(x, nperseg=8)[2]),
    _LocalSpec("jax.scipy.signal", "istft", lambda z: dsg.istft(z, nperseg=8)[1],
               (lambda r: _n(2, 5, 6)(r) + 1j * _n(2, 5, 6)(r),),
               lambda z: jax.scipy.signal.istft(z, nperseg=8)[1]),
    # JAX's spelling differs: conditions and axes as arrays/keywords
    _LocalSpec("jax.numpy", "compress", lambda x: dnp.compress([True, False, True], x, axis=1),
               (_n(2, 3),), lambda x: jnp.compress(jnp.array([True, False, True]), x, axis=1)),
    _LocalSpec("jax.numpy", "permute_dims", lambda x: dnp.permute_dims(x, (1, 2, 0)),
               (_n(2, 3, 4),), lambda x: jnp.permute_dims(x, (1, 2, 0))),
    _LocalSpec("jax.numpy.linalg", "tensordot", lambda a, b: dnp.linalg.tensordot(a, b, axes=1),
               (_n(2, 3), _n(3, 2)), lambda a, b: jnp.linalg.tensordot(a, b, axes=1)),
    # NumPy writes in place, JAX returns the written copy (inplace=False)
    _LocalSpec("jax.numpy", "fill_diagonal", lambda x, v: _written(dnp.fill_diagonal, x, v),
               (_n(3, 3), _n(3)), lambda x, v: jnp.fill_diagonal(x, v, inplace=False)),
    _LocalSpec("jax.numpy", "put", lambda x, v: _written(dnp.put, x, [0, 4, 5], v),
               (_n(2, 3), _n(3)), lambda x, v: jnp.put(x, jnp.array([0, 4, 5]), v, inplace=False)),
    _LocalSpec("jax.numpy", "place", lambda x, v: _written(dnp.place, x, _MASK, v),
               (_n(2, 3), _n(3)), lambda x, v: jnp.place(x, _MASK, v, inplace=False)),
    _LocalSpec("jax.numpy", "put_along_axis",
               lambda x, v: _written(dnp.put_along_axis, x, np.array([[2], [0]]), v, 1),
               (_n(2, 3), _n(2, 1)),
               lambda x, v: jnp.put_along_axis(x, jnp.array([[2], [0]]), v, 1, inplace=False)),
]

_SWAPS = [
    {"dnp": jnp, "dla": jnp.linalg, "S": jax.scipy.special, "L": jax.scipy.linalg,
     "F": jnp.fft, "dsg": jax.scipy.signal},
]
_SWAPS.append({**_SWAPS[0], "np": jnp})


def _jax_versions(spec, area, name, dmod, jmod):
    """Candidate JAX versions of ``spec.fun``: the same code with JAX's modules in its globals."""
    fun = spec.fun
    if getattr(spec, "jfun", None) is not None:
        return [spec.jfun]
    if fun is getattr(dmod, name, None):
        return [getattr(jmod, name)]
    if not isinstance(fun, types.FunctionType):
        return []
    out = []
    for swap in _SWAPS:
        g = dict(fun.__globals__)
        g.update({k: v for k, v in swap.items() if k in fun.__code__.co_names})
        f = types.FunctionType(fun.__code__, g, fun.__name__, fun.__defaults__, fun.__closure__)
        f.__kwdefaults__ = fun.__kwdefaults__
        out.append(f)
    return out


# ---------------------------------------------------------------- one comparison
def _leaves(y):
    if isinstance(y, (tuple, list)):
        return [z for item in y for z in _leaves(item)]
    return [y]


def _real_args(args):
    """Inputs as real arrays (complex ones split in two) and a function rebuilding them."""
    flat, kinds = [], []
    for a in args:
        a = np.asarray(a)
        if np.iscomplexobj(a):
            flat += [a.real.copy(), a.imag.copy()]
            kinds.append(2)
        else:
            flat.append(np.asarray(a, float))
            kinds.append(1)

    def rebuild(xs):
        out, i = [], 0
        for k in kinds:
            out.append(xs[i] + 1j * xs[i + 1] if k == 2 else xs[i])
            i += k
        return out
    return flat, rebuild


def compare(fun_ds, fun_jax, args, seed):
    """'agree', 'disagree', 'values differ' or 'jax failed: ...' for one sample point."""
    flat, rebuild = _real_args(args)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        y = _leaves(fun_ds(*rebuild(flat)))
        xj = [jnp.asarray(x) for x in flat]
        try:  # compiled once: JAX's eager mode compiles every operation by itself
            yj = _leaves(jax.jit(lambda *xs: fun_jax(*rebuild(list(xs))))(*xj))
            jit = True
        except Exception:  # noqa: BLE001  value-dependent shapes: eager
            jit = False
            try:
                yj = _leaves(fun_jax(*rebuild(xj)))
            except Exception as e:  # noqa: BLE001  JAX cannot run this spec: not compared
                return f"jax failed: {type(e).__name__}"
        if len(yj) != len(y) or any(np.shape(a) != np.shape(b) for a, b in zip(y, yj)):
            return "values differ"
        for a, b in zip(y, yj):
            a, b = np.asarray(a), np.asarray(b)
            if not np.allclose(a, b, rtol=RTOL, atol=RTOL * 1e-3 * (1 + np.nanmax(np.abs(a),
                                                                                  initial=0)),
                               equal_nan=True):
                return "values differ"
        r = np.random.default_rng(seed)
        w = [(r.standard_normal(np.shape(a)), r.standard_normal(np.shape(a))) for a in y]

        def loss(lib, f):
            def L(*xs):
                tot = 0.0
                for leaf, (wr, wi) in zip(_leaves(f(*rebuild(list(xs)))), w):
                    tot = tot + lib.sum(lib.real(leaf) * wr) + lib.sum(lib.imag(leaf) * wi)
                return tot
            return L
        argnums = tuple(range(len(flat)))
        gd = ds.grad(loss(dnp, fun_ds), argnums=argnums)(*flat)
        gfun = jax.grad(loss(jnp, fun_jax), argnums=argnums)
        try:
            gj = jax.jit(gfun)(*xj) if jit else gfun(*xj)
        except Exception:  # noqa: BLE001
            try:
                gj = gfun(*xj)
            except Exception:  # noqa: BLE001  JAX computes the values but has no gradient
                return _referee(loss(dnp, fun_ds), flat, gd, None, seed)
        for a, b in zip(gd, gj):
            a, b = np.asarray(a, float), np.asarray(b, float)
            scale = max(1.0, float(np.nanmax(np.abs(b), initial=0)))
            if not np.allclose(a, b, rtol=RTOL, atol=RTOL * 1e-3 * scale, equal_nan=True):
                if VERBOSE:
                    print(f"  diffsci {np.ravel(a)[:6]}\n  jax     {np.ravel(b)[:6]}",
                          file=sys.stderr)
                return _referee(loss(dnp, fun_ds), flat, gd, gj, seed)
    return "agree"


def _referee(loss_ds, flat, gd, gj, seed):
    """Where the gradients differ: which one central differences of diffsci's plain values
    (NumPy's computation) side with, along a random direction."""
    r = np.random.default_rng(seed + 1)
    v = [r.standard_normal(np.shape(x)) for x in flat]
    h = 1e-5

    def at(t):
        return float(np.real(loss_ds(*[x + t * d for x, d in zip(flat, v)])))
    fd = (8 * (at(h) - at(-h)) - (at(2 * h) - at(-2 * h))) / (12 * h)
    ours = sum(float(np.sum(np.asarray(g, float) * d)) for g, d in zip(gd, v))
    tol = 1e-6 * max(1.0, abs(fd))
    if gj is None:
        return NO_JAX_GRAD if abs(ours - fd) <= tol else "disagree"
    theirs = sum(float(np.sum(np.nan_to_num(np.asarray(g, float), nan=1e300) * d))
                 for g, d in zip(gj, v))
    if abs(ours - fd) <= tol and not abs(theirs - fd) <= tol:
        return FD_SIDE
    return "disagree"


def _spec_status(specs, area, name, dmod, jmod):
    results = []
    for k, spec in enumerate(specs[:MAX_SPECS]):
        seed = zlib.crc32(f"{area}.{name}.{k}".encode())
        r = np.random.default_rng(seed)
        try:
            args = [s(r) for s in spec.args]
        except Exception:  # noqa: BLE001
            continue
        best = None
        for fj in _jax_versions(spec, area, name, dmod, jmod):
            try:
                res = compare(spec.fun, fj, args, seed)
            except Exception as e:  # noqa: BLE001  the diffsci side failed: a real failure
                res = f"diffsci failed: {type(e).__name__}: {e}"[:120]
            if not res.startswith("jax failed"):
                best = res
                break
            best = best or res
        if best is not None:
            results.append(best)
    if any(r.startswith("diffsci failed") or r == "disagree" for r in results):
        return "disagree", results
    if "agree" in results:
        return "agree", results
    if FD_SIDE in results:
        return FD_SIDE, results
    if NO_JAX_GRAD in results:
        return NO_JAX_GRAD, results
    if "values differ" in results:
        return "values differ", results
    return "not compared", results


# ---------------------------------------------------------------- stats
def _stats_specs():
    import importlib

    td = importlib.import_module("tests.diffsci.test_stats_dists")

    def U(lo, hi):
        return lambda r, n: r.uniform(lo, hi, n)
    cont = {s.name: s for s in td.CONT}
    cont["norm"] = td.CSpec("norm", (), U(-3.0, 3.0))
    return td, cont, {s.name: s for s in td.DISC}


def _stats_calls(td, cont, disc, dist, method, jf):
    """(diffsci function, jax function, args) for one (distribution, method), or None."""
    dd = getattr(dst, dist, None)
    if dd is None or not hasattr(dd, method):
        return None
    fd = getattr(dd, method)
    rng = np.random.default_rng(zlib.crc32(f"{dist}.{method}".encode()))
    nparams = len(inspect.signature(jf).parameters)
    if dist in cont:
        spec = cont[dist]
        x, *shapes, loc, scale = td._cont_args(spec, rng, method)
        args = (x, *shapes, loc, scale)[:nparams]
        if nparams < 2 + len(shapes):  # no loc/scale in JAX's signature: standard form
            args = (spec.z(rng, 3), *shapes) if method not in td.PROB else args
        return fd, jf, args
    if (dist, method) == ("poisson", "entropy"):
        return fd, jf, (rng.uniform(0.5, 6.0, 3),)
    if dist in disc:
        spec = disc[dist]
        k = spec.k(rng, 3)
        c = tuple(s(rng, 3) for s in spec.cont)
        plain = spec.plain
        return (lambda *c: fd(k, *plain, *c)), (lambda *c: jf(k, *plain, *c)), c
    if dist == "multivariate_normal":
        b = rng.standard_normal((3, 3))
        cov = b @ b.T + 3 * np.eye(3)
        return fd, jf, (rng.standard_normal((4, 3)), rng.standard_normal(3), cov)
    if dist == "dirichlet":
        x = rng.dirichlet(np.ones(3))
        return fd, jf, (x, rng.uniform(0.5, 3.0, 3))
    if dist == "multinomial":
        x = np.array([2, 1, 3])  # JAX's multinomial takes integer counts
        p0 = rng.dirichlet(np.ones(3))
        return (lambda p: fd(x, 6, p)), (lambda p: jf(x, 6, p)), (p0,)
    return None


STATS_FUNCTIONS = {  # (diffsci function, JAX function, sampler of the arguments)
    "sem": (lambda x: dst.sem(x), lambda x: jax.scipy.stats.sem(x),
            lambda r: (r.standard_normal((5, 3)),)),
    "gaussian_kde": (lambda x, p: dst.gaussian_kde(x).evaluate(p),
                     lambda x, p: jax.scipy.stats.gaussian_kde(x).evaluate(p),
                     lambda r: (r.standard_normal((2, 9)), r.standard_normal((2, 4)))),
}


def count_stats(td, cont, disc):
    rows = []
    for dist in sorted(n for n in dir(jax.scipy.stats) if not n.startswith("_")):
        obj = getattr(jax.scipy.stats, dist)
        if not isinstance(obj, types.ModuleType):  # functions: gaussian_kde (a class), sem, ...
            reason = _exclusion("jax.scipy.stats", dist, obj)
            if reason == "class or dtype" and dist == "gaussian_kde":
                reason = None  # a class of differentiable methods: counted as one
            exists = hasattr(dst, dist)
            if exists and not reason and dist in STATS_FUNCTIONS:
                fd, fj, make = STATS_FUNCTIONS[dist]
                res = compare(fd, fj, make(np.random.default_rng(zlib.crc32(dist.encode()))),
                              zlib.crc32(dist.encode()))
                rows.append(_row("jax.scipy.stats", dist, None, True, res if res in (
                    "agree", FD_SIDE, NO_JAX_GRAD, "values differ") else "not compared"
                    if res.startswith("jax failed") else "disagree", [res]))
                continue
            rows.append(_row("jax.scipy.stats", dist, reason, exists,
                             "not compared" if exists else "missing", []))
            continue
        for method in sorted(m for m in dir(obj) if not m.startswith("_")):
            jf = getattr(obj, method)
            if not callable(jf) or isinstance(jf, type) or getattr(jf, "__module__", "") \
                    and not jf.__module__.startswith("jax"):
                continue
            name = f"{dist}.{method}"
            reason = _exclusion("jax.scipy.stats", name, jf)
            if reason:
                rows.append(_row("jax.scipy.stats", name, reason, True, "excluded", []))
                continue
            call = _stats_calls(td, cont, disc, dist, method, jf)
            if call is None:
                exists = hasattr(getattr(dst, dist, None), method)
                rows.append(_row("jax.scipy.stats", name, None, exists,
                                 "not compared" if exists else "missing", []))
                continue
            fd, fjx, args = call
            try:
                res = compare(fd, fjx, args, zlib.crc32(name.encode()))
            except Exception as e:  # noqa: BLE001
                res = f"diffsci failed: {type(e).__name__}: {e}"[:120]
            status = {"agree": "agree", "values differ": "values differ", FD_SIDE: FD_SIDE,
                      NO_JAX_GRAD: NO_JAX_GRAD}.get(
                res, "not compared" if res.startswith("jax failed") else "disagree")
            rows.append(_row("jax.scipy.stats", name, None, True, status, [res]))
    return rows


# ---------------------------------------------------------------- the count
AREAS = [
    ("jax.numpy", jnp, dnp),
    ("jax.numpy.linalg", jnp.linalg, dnp.linalg),
    ("jax.numpy.fft", jnp.fft, dfft),
    ("jax.scipy.special", jax.scipy.special, dss),
    ("jax.scipy.linalg", jax.scipy.linalg, dsl),
    ("jax.scipy.signal", jax.scipy.signal, dsg),
]


def _row(area, name, reason, exists, status, results):
    return {"area": area, "name": name, "excluded": reason, "exists": bool(exists),
            "status": "excluded" if reason else status, "results": results}


def count():
    specs = _load_specs()
    rows = []
    for area, jmod, dmod in AREAS:
        for name in sorted(n for n in dir(jmod) if not n.startswith("_")):
            reason = _exclusion(area, name, getattr(jmod, name))
            if reason is not None:
                if reason != "submodule":
                    rows.append(_row(area, name, reason, hasattr(dmod, name), "excluded", []))
                continue
            if not hasattr(dmod, name):
                rows.append(_row(area, name, None, False, "missing", []))
                continue
            t0 = time.perf_counter()
            status, results = _spec_status(specs.get((area, name), []), area, name, dmod, jmod)
            if VERBOSE:
                print(f"{area}.{name}: {status} {time.perf_counter() - t0:.2f}s", file=sys.stderr,
                      flush=True)
            rows.append(_row(area, name, None, True, status, results))
    rows += count_stats(*_stats_specs())
    return rows


def totals(rows):
    out = {}
    for area in [a for a, _, _ in AREAS] + ["jax.scipy.stats", "all"]:
        rs = [r for r in rows if (area == "all" or r["area"] == area) and not r["excluded"]]
        t = {"counted": len(rs), "exists": sum(r["exists"] for r in rs)}
        for s in ("agree", FD_SIDE, NO_JAX_GRAD, "disagree", "values differ", "not compared",
                  "missing"):
            t[s] = sum(r["status"] == s for r in rs)
        t["excluded"] = sum(1 for r in rows if (area == "all" or r["area"] == area)
                            and r["excluded"])
        t["exists %"] = round(100 * t["exists"] / max(t["counted"], 1), 1)
        t["agree %"] = round(100 * t["agree"] / max(t["counted"], 1), 1)
        t["agree or FD %"] = round(100 * (t["agree"] + t[FD_SIDE] + t[NO_JAX_GRAD])
                                   / max(t["counted"], 1), 1)
        out[area] = t
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", action="store_true", help="print rows and totals as JSON")
    p.add_argument("--missing", action="store_true",
                   help="list only what is missing, disagrees or was not compared")
    p.add_argument("--verbose", action="store_true", help="time each function (stderr)")
    a = p.parse_args(argv)
    global VERBOSE
    VERBOSE = a.verbose
    rows = count()
    tot = totals(rows)
    if a.json:
        print(json.dumps({"jax": jax.__version__, "rows": rows, "totals": tot}, indent=1))
        return 0
    show = [r for r in rows if not r["excluded"]
            and (not a.missing or r["status"] != "agree")]
    width = max(len(r["name"]) for r in show) if show else 10
    for r in show:
        detail = "; ".join(sorted(set(x for x in r["results"] if x != r["status"])))
        print(f"{r['area']:<18} {r['name']:<{width}}  {r['status']:<13} {detail}"[:160])
    print(f"\nstatus {FD_SIDE!r} is 'FD: diffsci' below, {NO_JAX_GRAD!r} 'no JAX grad'.\n")
    hdr = ["counted", "exists", "agree", FD_SIDE, NO_JAX_GRAD, "disagree", "values differ",
           "not compared", "missing", "excluded", "exists %", "agree %", "agree or FD %"]
    short = {FD_SIDE: "FD: diffsci", NO_JAX_GRAD: "no JAX grad", "values differ": "val differ"}
    print(f"{'area':<18} " + " ".join(f"{short.get(h, h):>12}" for h in hdr))
    for area, t in tot.items():
        print(f"{area:<18} " + " ".join(f"{t[h]:>12}" for h in hdr))
    t = tot["all"]
    print(f"\njax {jax.__version__}: {t['exists']} of {t['counted']} differentiable functions "
          f"({t['exists %']} %) exist in diffsci; gradients checked against jax.grad: "
          f"{t['agree']} agree ({t['agree %']} %), {t[FD_SIDE]} differ from JAX's where central "
          f"differences side with diffsci, {t[NO_JAX_GRAD]} have no JAX gradient but agree with "
          f"central differences (together {t['agree or FD %']} %), {t['disagree']} "
          f"disagree, {t['values differ']} compute other values than JAX, {t['not compared']} "
          f"not compared, {t['missing']} missing.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
