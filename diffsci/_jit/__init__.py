"""``diffsci.jit``: trace a NumPy program once per signature and run it compiled by Numba.

See diffsci/ARCHITECTURE_JIT.md for the design (how a record becomes code, where the guards
live, what runs eagerly and why).
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import time
import warnings
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._core import Dual, Tracer
from .._tree import _dataclass_parts, tree_flatten, tree_unflatten
from . import _outer, _trace
from ._codegen import GuardFail
from ._compile import compile_program, numba_settings
from ._outer import is_dynamic as _is_dynamic
from ._outer import static_key as _static_key
from ._trace import CannotCompile
from ._unflatten import unflattener

__all__ = ["jit", "JitFunction", "JitWarning", "OPAQUE"]

_SPECIAL = ("special function without a Numba implementation (SciPy's ufunc is called)")
_LAPACK = "LAPACK through NumPy/SciPy (called as is; Numba would call the same routines)"
_TODO = "no rule yet (array op called as NumPy between compiled segments)"
#: The primitives without a code-generation rule, and why: the driver calls their plain
#: function between compiled segments ("opaque"; tests/diffsci/test_jit.py holds every
#: primitive to a rule or an entry here).
OPAQUE = {
    **dict.fromkeys((
        "beta", "beta_ppf", "betainc", "betainc_da", "betainc_daa", "betainc_dab",
        "betainc_db", "betainc_dba", "betainc_dbb", "betaincinv", "betaln", "binom", "entr",
        "erf", "erfc", "erfcinv", "erfcx", "erfinv", "exp1", "expi", "expit", "expn", "f_ppf",
        "gamma", "gamma_isf_ppf", "gamma_ppf", "gammainc", "gammainc_da", "gammainc_daa",
        "gammaincc", "gammainccinv", "gammaincinv", "gammaln", "hyp1f1", "hyp2f1", "i0",
        "i0e", "i1", "i1e", "iv", "ive", "j0", "j1", "jn", "jv", "k0", "k0e", "k1", "k1e",
        "kl_div", "kn", "kv", "kve", "log_expit", "log_ndtr", "logit", "ndtr", "ndtri", "poch",
        "polygamma", "psi", "rel_entr", "rgamma", "spence", "t_ppf", "truncnorm_ppf",
        "vonmises_ppf", "xlog1py", "xlogy", "y0", "y1", "yn", "yv", "zeta", "sinc"), _SPECIAL),
    **dict.fromkeys((
        "adjugate", "adjugate_derivative", "cholesky", "det", "eig", "eigh", "expm",
        "expm_frechet", "funm", "inv", "logm", "lu_factor", "norm", "pinv", "polar", "qr", "schur",
        "slogdet", "solve", "solve_sylvester", "solve_triangular", "sqrtm", "svd", "svdvals",
        "tridiag_solve"), _LAPACK),
    **dict.fromkeys(("fftn", "rfft", "irfft", "convolve", "lfilter"),
                    "FFT/convolution/filter kernels of NumPy and SciPy"),
    **dict.fromkeys((
        "angle", "bincount", "cumprod", "cumsum", "diagonal", "einsum", "flip",
        "heaviside", "nan_to_num", "pad", "roll", "std", "tensordot", "tile", "tril", "triu",
        "var"), _TODO),
}

_ndarray = np.ndarray


class JitWarning(UserWarning):
    """``diffsci.jit`` runs (part of) a function eagerly, or keeps re-tracing it."""


class _Eager:
    """A signature that runs eagerly (``reason`` says why)."""

    __slots__ = ("reason",)

    def __init__(self, reason):
        self.reason = reason


class Specialization:
    """One traced and compiled version of a function, valid while its guards hold."""

    def __init__(self, prog, compiled, externals, guards_labels):
        self.prog = prog
        self.compiled = compiled
        self.driver = compiled.driver
        self.out_tree = prog.out_tree
        self.unflatten = unflattener(prog.out_tree)
        self.outputs_conv = [_out_converter(prog.values[o.idx]) if isinstance(o, _trace.Ref)
                             else None for o in prog.outputs]
        self.labels = guards_labels
        self.checks = externals  # (getter, obj, kind, snapshot)
        self.calls = 0

    def check_externals(self):
        for getter, obj, kind, snap in self.checks:
            try:
                now = getter()
            except Exception:  # noqa: BLE001 - the name is gone: trace again
                return False
            if kind == "id":
                if now is not obj:
                    return False
            elif kind == "content":
                if now is not obj or now.shape != snap.shape or not np.array_equal(
                        now, snap, equal_nan=snap.dtype.kind in "fc"):  # NaN stays NaN
                    return False
            elif type(now) is not type(snap) or not (now == snap):
                return False
        return True

    def run(self, leaves):
        if self.checks and not self.check_externals():
            raise GuardFail(-2)
        res = self.driver(*leaves)
        out = [c(v) if c is not None else v for c, v in zip(self.outputs_conv, res)]
        self.calls += 1
        return self.unflatten(out)


def _out_converter(v):
    if isinstance(v, _ndarray):
        dt = v.dtype
        if v.ndim == 0:
            return lambda x, dt=dt: np.asarray(x, dt)
        return lambda x, dt=dt: x if x.dtype == dt else x.astype(dt)
    if isinstance(v, np.generic):
        t = type(v)
        return t
    if isinstance(v, float):
        return float
    if isinstance(v, complex):
        return complex
    return None


class _Entry:
    __slots__ = ("specs", "eager", "retraces", "warned", "last_guard")

    def __init__(self):
        self.specs = []
        self.eager = None
        self.retraces = 0
        self.warned = False
        self.last_guard = None


class JitFunction:
    """The function returned by :func:`jit` (``.eager`` is the original, ``.stats()`` the
    cache's state)."""

    def __init__(self, f: Callable[..., Any], static_argnums: tuple[int, ...],
                 static_argnames: tuple[str, ...], max_specializations: int,
                 check: bool, compile_all: bool = False) -> None:
        self.eager = f
        self.compile_all = compile_all
        self.static_argnums = static_argnums
        self.static_argnames = static_argnames
        self.max_specializations = max_specializations
        self.check = check
        self._cache = {}
        self._warned = set()
        self.compile_seconds = 0.0
        self.traces = 0
        self._derived = {}  # "vjp"/"jvp" -> the jitted rules used under outer transforms
        self._templates = {}  # the Templates of the calls under outer transforms, by key
        self._fast = {}  # keys computed by _outer.py -> cache entries (see _call_keyed)
        self._ext = f  # whose closures, globals and defaults are checked at call time
        self._name = _fname(f)
        # not f's __dict__: a function made by functools.wraps(jit(g)) (grad(jit(g))) carries
        # the JitFunction attributes of jit(g), which would replace these
        functools.update_wrapper(self, f, updated=())

    def __repr__(self):
        return f"<diffsci.jit of {getattr(self.eager, '__name__', self.eager)!r}>"

    def __get__(self, obj, objtype=None):  # methods: bind like a function
        return self if obj is None else functools.partial(self, obj)

    def stats(self):
        """``{"signatures", "specializations", "eager", "traces", "compile_seconds"}``."""
        return {
            "signatures": len(self._cache),
            "specializations": sum(len(e.specs) for e in self._cache.values()),
            "eager": sum(1 for e in self._cache.values() if e.eager is not None),
            "traces": self.traces,
            "compile_seconds": self.compile_seconds,
        }

    def _value_and_grad(self, argnums, has_aux):
        """``value_and_grad(jit(f))`` (and ``grad``, which calls it) as
        ``jit(value_and_grad(f))``: one compiled forward + reverse program, instead of the
        jitted call as one record of an eager tape whose VJP runs a second program that
        computes the forward pass again (what ``vjp``, ``jacobian`` and a ``jit(f)`` called
        inside a larger differentiated function still do, see _outer.py).  Same settings,
        the closures and globals checked are ``f``'s; one per (argnums, has_aux)."""
        from .._api import value_and_grad

        try:
            key = ("vg", argnums, bool(has_aux))
            hash(key)
        except TypeError:  # argnums a list: not kept (value_and_grad checks it per call)
            key = None
        d = self._derived.get(key) if key is not None else None
        if d is None:
            d = JitFunction(value_and_grad(self.eager, argnums, has_aux),
                            self.static_argnums, self.static_argnames,
                            self.max_specializations, self.check, self.compile_all)
            d._ext = self._ext
            d._name = f"value_and_grad of {self._name}"
            if key is not None:
                self._derived[key] = d
        return d

    def _warn_once(self, key, msg):
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(msg, JitWarning, stacklevel=3)

    # -- the signature of a call -------------------------------------------------------
    def _split(self, args, kwargs):
        """(key, dynamic leaves, rebuild) or None when a traced value is among the args."""
        nums = self.static_argnums
        if not kwargs and not nums:
            if all(type(a) is _ndarray for a in args):
                key = tuple((a.shape, a.dtype) for a in args)
                return key, list(args), None
        for k in nums:
            if k >= len(args):
                raise TypeError(f"{self!r}: static_argnums names argument {k}, but the call "
                                f"has {len(args)} positional argument(s)")
        if not nums and not self.static_argnames:
            dyn = []
            try:
                key = ("fast", _fast(args, dyn), _fast(kwargs, dyn) if kwargs else None)
            except _Slow:
                pass
            except _Traced:
                return None
            else:
                return key, dyn, _LAZY
        return self._split_slow(args, kwargs)

    def _split_slow(self, args, kwargs):
        nums = self.static_argnums
        statics = []
        for k in nums:
            statics.append(_static_key(args[k], f"argument {k} (in static_argnums)"))
        for n in self.static_argnames:
            if n in kwargs:
                statics.append((n, _static_key(kwargs[n], f"argument {n!r} "
                                                          f"(in static_argnames)")))
        dyn_args = tuple(a for k, a in enumerate(args) if k not in nums)
        dyn_kw = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        leaves, tree = tree_flatten((dyn_args, dyn_kw))
        key = [tree, tuple(statics)]
        dyn = []
        kinds = []
        for v in leaves:
            tv = type(v)
            if tv is _ndarray:
                kinds.append((v.shape, v.dtype))
                dyn.append(v)
            elif tv is float or tv is complex:
                kinds.append(tv)
                dyn.append(v)
            elif isinstance(v, np.generic) and v.dtype.kind in "fciu":
                kinds.append(("g", v.dtype))
                dyn.append(v)
            elif tv is Tracer or tv is Dual:
                return None
            else:
                kinds.append(("s", _static_key(v, "a non-array leaf of the arguments")))
        key.append(tuple(kinds))
        return tuple(key), dyn, (tree, leaves)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        split = self._split(args, kwargs)
        if split is None:  # under an outer transform: one record of it (see _outer.py)
            return _outer.call(self, args, kwargs)
        key, dyn, rebuild = split
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache[key] = _Entry()
        if entry.eager is not None:
            return self.eager(*args, **kwargs)
        for spec in entry.specs:
            try:
                return spec.run(dyn)
            except GuardFail as e:
                entry.last_guard = (spec, e.args[0])
        if entry.specs:
            entry.retraces += 1
            if len(entry.specs) >= self.max_specializations:
                spec, k = entry.last_guard
                self._warn_once(("retrace", key), (
                    f"diffsci.jit: {self._name} keeps re-tracing: "
                    f"{len(entry.specs)} specializations for one signature; the guard that "
                    f"failed last is {_guard_label(spec, k)}. Further calls with a new outcome "
                    f"run eagerly; make the value static (static_argnums) or the branch "
                    f"arithmetic (np.where) to compile it."))
                return self.eager(*args, **kwargs)
        return self._specialize(entry, key, args, kwargs, dyn, rebuild)

    def _call_keyed(self, fkey, dyn, args):
        """``self(*args)`` with the cache entry found by ``fkey``, a cheaper key the caller
        computed (the derived functions of _outer.py): ``dyn`` are the dynamic leaves in the
        order of ``_split``; on a miss the ordinary call decides and the entry is remembered."""
        entry = self._fast.get(fkey)
        if entry is not None and entry.eager is None:
            for spec in entry.specs:
                try:
                    return spec.run(dyn)
                except GuardFail as e:
                    entry.last_guard = (spec, e.args[0])
        res = self(*args)
        if entry is None:
            split = self._split(args, {})
            if split is not None and split[0] in self._cache:
                self._fast[fkey] = self._cache[split[0]]
        return res

    # -- tracing and compiling ---------------------------------------------------------
    def _specialize(self, entry, key, args, kwargs, dyn, rebuild):
        # Python's cyclic GC paused while tracing and compiling: a trace allocates enough
        # objects to set off full collections of the heap of NumPy, SciPy and Numba (50 ms of
        # the 80 ms of a first call with a warm disk cache, on a 1000-op program)
        paused = gc.isenabled()
        gc.disable()
        try:
            return self._specialize_paused(entry, key, args, kwargs, dyn, rebuild)
        finally:
            if paused:
                gc.enable()

    def _specialize_paused(self, entry, key, args, kwargs, dyn, rebuild):
        nums = self.static_argnums

        if rebuild is _LAZY:
            rebuild = self._split_slow(args, kwargs)[2]

        def call(tracers):
            if rebuild is None:
                return self.eager(*tracers)
            tree, leaves = rebuild
            it = iter(tracers)
            new = [next(it) if _is_dynamic(v) else v for v in leaves]
            dargs, dkw = tree_unflatten(tree, new)
            full = list(dargs)
            for k in sorted(nums):
                full.insert(k, args[k])
            kw = dict(dkw)
            for n in self.static_argnames:
                if n in kwargs:
                    kw[n] = kwargs[n]
            return self.eager(*full, **kw)

        t0 = time.perf_counter()
        self.traces += 1
        try:
            tr, out = _trace.trace(call, dyn)
        except Exception as e:  # noqa: BLE001
            # a failure of the traced run only (a limitation of tracing at two levels, such as
            # in-place writes under jit(grad(f))): the eager run decides; its errors are f's
            res = self.eager(*args, **kwargs)
            reason = f"tracing it failed ({_reason(e)}) where the eager call succeeds"
            entry.eager = _Eager(reason)
            self._warn_once(("eager", reason), (
                f"diffsci.jit: {self._name} runs eagerly for this signature: {reason}"))
            return res
        out_leaves, out_tree = tree_flatten(out)
        eager_out = tree_unflatten(out_tree, [_trace.getval(o) for o in out_leaves])
        try:
            prog = _trace.build(tr, out_leaves, out_tree, None)
            exts = _externals(self._ext)
            compiled = compile_program(prog, self._name, self.compile_all)
            spec = Specialization(prog, compiled, exts, None)
            with numba_settings():
                res = spec.run(dyn)  # compiles (or loads from Numba's cache)
        except (CannotCompile, GuardFail, Exception) as e:  # noqa: BLE001
            reason = _reason(e)
            entry.eager = _Eager(reason)
            self._warn_once(("eager", reason), (
                f"diffsci.jit: {self._name} runs eagerly for this signature: "
                f"{reason}"))
            self.compile_seconds += time.perf_counter() - t0
            return eager_out
        finally:
            tr.tape.records.clear()
        self.compile_seconds += time.perf_counter() - t0
        if self.check:
            bad = _mismatch(res, eager_out)
            if bad:
                entry.eager = _Eager(f"compiled result differs from eager: {bad}")
                self._warn_once(("mismatch", key), (
                    f"diffsci.jit: {self._name} runs eagerly for this signature: the "
                    f"compiled code computed {bad} (please report this as a bug)."))
                return eager_out
            bad = self._twin(prog, call, dyn, key) or self._probe(spec, call, dyn, key)
            if bad:
                entry.eager = _Eager(bad)
                self._warn_once(("probe", key), (
                    f"diffsci.jit: {self._name} runs eagerly for this signature: {bad}"))
                return eager_out
        entry.specs.insert(0, spec)
        return res

    def _probe(self, spec, call, dyn, key):
        """Run the new specialization on a second input and compare it with eager mode.

        The first-call comparison cannot see a value that plain code computed from the inputs
        while tracing (a sorting permutation, a sign mask, a LAPACK result inside a rule) and
        that the program then holds as a constant: at the traced input it is right by
        construction.  Three probes permute each float array's entries and scale them by
        1 ± 5 % (domains defined entrywise are kept), by 0.25–4 (other exponents) and by ±0.5–2
        (other signs); a probe whose guards reject it, or whose eager run fails or is not
        finite, proves nothing and is skipped.  A check, not a proof: the functions known to
        compute such values are given rules that recompute them in the compiled code.
        Returns the reason to run eagerly, or None.
        """
        rng = _probe_rng(key)
        # entrywise domains kept (1 ± 5 %), magnitudes changed (exponents), signs changed
        for scale in ((0.95, 1.05, False), (0.25, 4.0, False), (0.5, 2.0, True)):
            probe = _probe_input(dyn, rng, scale, permute=True, integers=False)
            if probe is None:
                return None
            bad = self._probe_one(spec, call, probe)
            if bad:
                return (f"the compiled code is right at the traced input but computed {bad} "
                        f"at a second input: a value computed from the inputs by plain code "
                        f"while tracing was kept as a constant (please report this as a bug)")
        return None

    @staticmethod
    def _twin(prog, call, dyn, key):
        """Trace the function again at second inputs and compare the programs (see
        ``_trace.twin_difference``): a constant computed from the inputs by plain code while
        tracing differs between them, whatever the numbers it leads to.  The second inputs:
        every array's entries permuted (integer and boolean ones too) and scaled by 1 ± 5 %;
        if its guards came out differently (another path, nothing to compare) or tracing
        failed there, the entries scaled by 1 ± 1e-7 in place (most guards then hold); then
        permuted with other signs.  The first input on the same path decides (one trace more
        per specialization, usually).  Returns the reason to run eagerly, or None."""
        rng = _probe_rng(key)
        for scale, permute in (((0.95, 1.05, False), True), ((1 - 1e-7, 1 + 1e-7, False), False),
                               ((0.5, 2.0, True), True)):
            probe = _probe_input(dyn, rng, scale, permute=permute, integers=permute)
            if probe is None:
                return None
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    tr, out = _trace.trace(call, probe)
                    try:
                        out_leaves, out_tree = tree_flatten(out)
                        other = _trace.build(tr, out_leaves, out_tree, None)
                    finally:
                        tr.tape.records.clear()
            except Exception:  # noqa: BLE001 - the second input left f's domain
                continue
            what = _trace.twin_difference(prog, other)
            if what is not None:
                return (f"traced again at a second input, the program differs ({what}): a "
                        f"value computed from the inputs by plain code while tracing would be "
                        f"kept as a constant")
            if _trace.same_path(prog, other):
                return None  # compared on one path: the next inputs are for skipped ones
        return None

    @staticmethod
    def _probe_one(spec, call, probe):
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                want = call(probe)
                if not all(np.all(np.isfinite(np.asarray(x))) for x in tree_flatten(want)[0]
                           if isinstance(x, (np.ndarray, np.generic, float, complex))):
                    return None
                with numba_settings():
                    got = spec.run(probe)
        except Exception:  # noqa: BLE001 - a guard rejected the probe, or it left f's domain
            return None
        return _mismatch(got, want)


def _probe_rng(key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()) if key is not None else 0)


def _probe_input(dyn, rng, scale, permute, integers):
    """The dynamic leaves ``dyn`` changed for a probe (None if there is nothing to change):
    float and complex arrays and numbers scaled by factors drawn from ``scale`` (lo, hi,
    random signs), arrays permuted if ``permute``, integer and boolean arrays permuted too if
    ``integers``."""
    probe, changed = [], False
    for v in dyn:
        if isinstance(v, np.ndarray) and v.size and (
                v.dtype.kind in "fc" or integers and v.dtype.kind in "biu" and v.size > 1):
            w = v
            if permute:
                flat = v.ravel()
                w = flat[rng.permutation(v.size)]
                if np.array_equal(w, flat):  # (two entries: one permutation in two is this)
                    w = np.roll(flat, 1)
                w = w.reshape(v.shape)
            if v.dtype.kind in "fc":
                f = rng.uniform(scale[0], scale[1], v.shape)
                if scale[2]:
                    f = f * rng.choice((-1.0, 1.0), v.shape)
                w = (w * f).astype(v.dtype)
            probe.append(w)
            changed = True
        elif isinstance(v, (float, complex, np.floating, np.complexfloating)):
            probe.append(type(v)(v * rng.uniform(scale[0], scale[1])))
            changed = True
        else:
            probe.append(v)
    return probe if changed else None


def opaque_reason(prim):
    """Why ``prim`` has no code-generation rule (None if it has one or is undocumented)."""
    from ._codegen import rules

    if prim.fun in rules():
        return None
    if prim.__name__ in OPAQUE:
        return OPAQUE[prim.__name__]
    if prim.__name__.startswith("jit_plain_"):
        return ("a plain function of values recorded by diffsci.extend.value_mask (an index, "
                "a count, a sorting permutation): NumPy, called at every call")
    mod = getattr(prim.fun, "__module__", None) or ""
    if isinstance(prim.fun, np.ufunc) and prim.fun.__name__ not in dir(np) or \
            mod.startswith(("scipy.special", "diffsci.scipy._special", "diffsci.scipy.special")):
        return _SPECIAL
    return None


class _Slow(Exception):  # noqa: N818 - the fast signature does not handle this argument
    pass


class _Traced(Exception):  # noqa: N818 - an argument is traced by an outer transform
    pass


_LAZY = object()  # the pytree of the arguments, flattened only when tracing
_DATACLASS = {}  # type -> whether it is a plain dataclass (no registered flattening)


def _fast(x, dyn):
    """A hashable signature of ``x`` (structure, shapes, dtypes, static values) appending the
    dynamic leaves to ``dyn`` in ``tree_flatten``'s order; raises _Slow where it cannot."""
    t = type(x)
    if t is _ndarray:
        dyn.append(x)
        return (x.shape, x.dtype)
    if t is float or t is complex:
        dyn.append(x)
        return t
    if t is tuple or t is list:
        out = [t]
        for v in x:  # array leaves inline: no call per leaf
            if type(v) is _ndarray:
                dyn.append(v)
                out.append((v.shape, v.dtype))
            else:
                out.append(_fast(v, dyn))
        return tuple(out)
    if t is dict:
        return (dict, tuple(x), *[_fast(v, dyn) for v in x.values()])
    if x is None:
        return None
    if t is int or t is bool or t is str:
        return (t, x)
    if t is Tracer or t is Dual:
        raise _Traced
    if isinstance(x, np.generic):
        if x.dtype.kind in "fciu":
            dyn.append(x)
            return ("g", x.dtype)
        return (t, x)
    plain = _DATACLASS.get(t)
    if plain is None:
        from .._tree import _registry

        plain = _DATACLASS[t] = (dataclasses.is_dataclass(t) and t not in _registry
                                 and not issubclass(t, tuple))
    if plain:
        names, static = _dataclass_parts(x)
        try:
            hash(tuple(static))
        except TypeError:
            raise _Slow from None
        return (t, tuple(static), *[_fast(getattr(x, n), dyn) for n in names])
    raise _Slow


def _fname(f):
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)


def _guard_label(spec, k):
    if k == -1:
        return "the shape of a value computed by an opaque primitive"
    if k == -2:
        return "an array or number read from the closure, the globals or the defaults"
    return spec.prog.guards[k].label


def _reason(e):
    if isinstance(e, CannotCompile):
        return str(e)
    if isinstance(e, GuardFail):
        return "a guard failed on the inputs it was traced with (internal error)"
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0] if msg else ''}"[:300]


def _mismatch(res, ref):
    a, ta = tree_flatten(res)
    b, tb = tree_flatten(ref)
    if ta != tb:
        return f"an output of structure {ta!r} instead of {tb!r}"
    for k, (x, y) in enumerate(zip(a, b)):
        if not isinstance(y, (np.ndarray, np.generic, float, complex, int)):
            continue
        xa, ya = np.asarray(x), np.asarray(y)
        if xa.shape != ya.shape or xa.dtype != ya.dtype:
            return f"output {k} as {xa.dtype}{xa.shape} instead of {ya.dtype}{ya.shape}"
        if xa.dtype.kind in "fc":
            tol = 1e-9 if xa.dtype.itemsize >= 8 * (2 if xa.dtype.kind == "c" else 1) else 1e-4
            scale = np.maximum(np.abs(ya), 1.0)
            err = np.abs(xa - ya)
            ok = (err <= tol * scale) | (np.isnan(xa) & np.isnan(ya)) | (xa == ya)
            if not np.all(ok):
                return f"output {k} off by {np.nanmax(err / scale):.3g} (relative)"
        elif not np.array_equal(xa, ya):
            return f"output {k} different"
    return None


def _externals(f):
    """The call-time checks of what ``f`` reads from outside (see ``_trace.externals``)."""
    found = _trace.externals(f)
    if not found:
        return []
    # Every closed-over array is compared with its snapshot, also those the program reads by
    # reference: the trace cannot tell whether plain NumPy code in f also read one (``x * w +
    # np.sum(w)`` reads w by reference and folds np.sum(w) into a constant), and a changed
    # content with a stale constant would be a silent wrong result.  A change re-traces.
    checks = []
    seen = set()
    for getter, obj in found:
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, np.ndarray):
            checks.append((getter, obj, "content", obj.copy()))
        elif isinstance(obj, (bool, int, float, complex, np.generic)):
            checks.append((getter, obj, "value", obj))
    return checks


def jit(f: Callable[..., Any] | None = None, *,
        static_argnums: int | Sequence[int] = (), static_argnames: str | Sequence[str] = (),
        max_specializations: int = 8,
        check: bool = True,
        compile_all: bool = False) -> JitFunction | Callable[[Callable[..., Any]], JitFunction]:
    """Compile ``f`` with Numba: trace it once per signature, then run the compiled code.

    ``jit(f)(*args)`` returns what ``f(*args)`` returns.  The first call with a new
    *signature* (the pytree structure of the arguments, the shapes and dtypes of their
    arrays, the values of static arguments and of Python ``int``/``bool`` leaves) traces
    ``f`` on diffsci's tape, generates code for the recorded primitives and compiles it;
    later calls run the compiled code.  Transforms compose in both orders: inside,
    ``jit(value_and_grad(loss))`` compiles the forward and the reverse pass as one program
    (the rules of the backward sweep are recorded like any other computation), and
    ``jit(jvp(...))`` the tangent pass; outside, ``grad(jit(f))``, ``vjp(jit(f), ...)``,
    ``jvp(jit(f), ...)`` and ``hessian(jit(f))`` record the call as one operation whose
    derivative rules are compiled too (the VJP is the fused forward + reverse program of
    ``jit(value_and_grad)``, which computes the forward pass again; the JVP that of
    ``jit(jvp)``; each order of a higher derivative compiles its own program).

    Python control flow stays Python.  Every decision the trace took on a value (``if x >
    0``, ``int(n)``, ``x.item()``, ``np.floor``, a loop that stops when a term is small) is a
    *guard*, re-checked by every call where it was taken; when one comes out differently,
    ``f`` is traced again and a second specialization is cached (at most
    ``max_specializations`` per signature; then the new outcomes run eagerly, with one
    :class:`JitWarning` naming the guard).  What cannot be compiled (in-place writes,
    ``custom_vjp`` records, a dtype Numba lacks) runs eagerly, with one warning saying why;
    primitives without a code-generation rule are called from the compiled program as plain
    NumPy ("opaque").  Arrays and numbers read from closures and globals are checked at call
    time: one changed in place or rebound makes ``f`` re-trace, so a stale value is never
    used (pass data that changes on every call as an argument instead).

    Args:
        f: the function (of arrays, numbers and pytrees of them).
        static_argnums: positions of arguments that key the cache by value (hashable)
            instead of being traced.
        static_argnames: the same for keyword arguments.
        max_specializations: bound of the cache per signature (guards that keep failing).
        check: on each new specialization, compare the compiled result with the traced
            (eager) one, trace the function again at a second input and require the same
            program (a constant computed from the inputs by plain code differs), and call
            it at three second inputs against eager mode; any difference runs the signature
            eagerly, with one warning.  ``False`` skips these (one trace and three eager
            calls fewer per specialization); diffsci's own functions need none of them.
        compile_all: compile every part of the program with Numba at the first call.  By
            default a long stretch of kernel calls (an unrolled loop: Numba takes tens of
            milliseconds per call it compiles) first runs as Python calling the compiled
            kernels, and is compiled once the time spent in it reaches the estimated time
            to compile it; ``True`` pays that compile time up front for the fastest calls
            from the start (benchmarks of the steady state).

    Returns:
        A :class:`JitFunction` (call it like ``f``).

    Raises:
        TypeError: ``f`` is not callable, static_argnums are not ints, or a static argument
            is not hashable.

    Example:
        >>> import diffsci as ds, numpy as np
        >>> vg = ds.jit(ds.value_and_grad(lambda x: np.sum(np.sin(x) ** 2)))
        >>> v, g = vg(np.array([0.5, 1.0]))
        >>> bool(np.allclose(g, 2 * np.sin([0.5, 1.0]) * np.cos([0.5, 1.0])))
        True
    """
    if f is None:
        return lambda g: jit(g, static_argnums=static_argnums, static_argnames=static_argnames,
                             max_specializations=max_specializations, check=check,
                             compile_all=compile_all)
    if not callable(f):
        raise TypeError(f"jit: expected a function, got {type(f).__name__} {f!r:.60}")
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    for k in static_argnums:
        if not isinstance(k, int) or isinstance(k, bool) or k < 0:
            raise TypeError(f"jit: static_argnums must hold non-negative ints, got {k!r} in "
                            f"{static_argnums!r}")
    for n in static_argnames:
        if not isinstance(n, str):
            raise TypeError(f"jit: static_argnames must hold strings, got {n!r}")
    if not isinstance(max_specializations, int) or max_specializations < 1:
        raise ValueError(f"jit: max_specializations must be a positive int, got "
                         f"{max_specializations!r}")
    if not isinstance(compile_all, bool):
        raise TypeError(f"jit: compile_all must be True or False, got {compile_all!r}")
    return JitFunction(f, tuple(static_argnums), tuple(static_argnames), max_specializations,
                       check, compile_all)
