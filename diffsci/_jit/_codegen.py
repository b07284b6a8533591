"""Code generation for ``diffsci.jit``: a traced :class:`~._trace.Program` as Numba source.

Each record becomes one line ``v12 = <expression>`` of a Numba function, with its inputs by
name (records), literal (Python and NumPy scalars, 0-d arrays) or as a parameter (other
constant arrays, passed by reference at call time).  Values of shape ``()`` are Numba scalars.

* Elementwise records (ufuncs and operators) used once by another elementwise record are
  inlined into it: ``v3 = np.exp(np.sin(v1) * 1.01 + 0.1)``.  Numba's array-expression pass
  compiles one such statement into a single loop, without temporaries.  Inlining stops at a
  depth of :data:`MAX_DEPTH` (CPython's parser caps nested parentheses).
* Reductions, reshapes, transposes, basic indexing (and its adjoint ``scatter_add``),
  concatenation, ``where`` and matrix products (``np.dot``: BLAS) have rules; so have the
  guards that compare or convert scalars and arrays.
* A record without a rule (or a rule that does not apply to its arguments: a batched matmul,
  a reduction over several axes with ``keepdims``) is *opaque*: the program is cut there and
  the driver calls the primitive's plain NumPy function between two compiled segments.
* A guard is a test in the generated code: ``if not (v7 > 0.5): raise GuardFail(3)``.

``rules()`` lists the primitives with a rule (the coverage test in tests/diffsci/test_jit.py
holds the rest to the documented opaque path).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from ._trace import Ref

MAX_DEPTH = 24


class GuardFail(Exception):  # noqa: N818 - raised by compiled code, caught by the driver
    """A guard came out differently from the trace (its index is ``args[0]``)."""


class Opaque(Exception):  # noqa: N818
    """This record has no code-generation rule for these arguments."""


# ---------------------------------------------------------------------------
# Literals and value descriptions
# ---------------------------------------------------------------------------
def shape_of(v):
    return getattr(v, "shape", ())


def dtype_of(v):
    dt = getattr(v, "dtype", None)
    return dt if dt is not None else np.result_type(v)


_NP_NAMES = {np.dtype(t): f"np.{t}" for t in (
    "float64", "float32", "complex128", "complex64", "int64", "int32", "int16", "int8",
    "uint64", "uint32", "uint16", "uint8", "bool_")}


def dtype_name(dt):
    name = _NP_NAMES.get(np.dtype(dt))
    if name is None:
        raise Opaque(f"dtype {dt}")
    return name


def _float_lit(x):
    x = float(x)
    if math.isnan(x):
        return "np.nan"
    if math.isinf(x):
        return "np.inf" if x > 0 else "(-np.inf)"
    return repr(x)


def scalar_literal(v, weak_dtype=None):
    """Source for a scalar constant: Python scalars are weak (take ``weak_dtype``), NumPy
    scalars and 0-d arrays keep their dtype (as under NumPy 2's promotion rules)."""
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    if isinstance(v, int) and not isinstance(v, bool):
        return repr(v)
    if isinstance(v, float):
        if weak_dtype is not None and np.dtype(weak_dtype).kind == "f" \
                and np.dtype(weak_dtype) != np.float64:
            return f"{dtype_name(weak_dtype)}({_float_lit(v)})"
        return _float_lit(v)
    if isinstance(v, complex):
        return f"complex({_float_lit(v.real)}, {_float_lit(v.imag)})"
    if isinstance(v, np.ndarray):
        v = v[()]
    dt = np.dtype(v.dtype)
    if dt.kind == "f":
        return f"{dtype_name(dt)}({_float_lit(v)})"
    if dt.kind in "iu":
        return f"{dtype_name(dt)}({int(v)})"
    if dt.kind == "b":
        return "True" if v else "False"
    if dt.kind == "c":
        return f"{dtype_name(dt)}(complex({_float_lit(v.real)}, {_float_lit(v.imag)}))"
    raise Opaque(f"constant of dtype {dt}")


def is_scalar_const(v):
    return isinstance(v, (bool, int, float, complex, np.generic)) or (
        isinstance(v, np.ndarray) and v.ndim == 0)


# ---------------------------------------------------------------------------
# Rules: fun -> gen(ctx, node) returning (expression, elementwise)
# ---------------------------------------------------------------------------
_RULES = {}


def rule(*funs):
    def deco(gen):
        for f in funs:
            if f is not None:
                _RULES[f] = gen
        return gen

    return deco


def rules():
    """The functions (primitives' ``fun``) that have a code-generation rule."""
    return {**_RULES, **SCALAR_RULES}


_BINOPS = {np.add: "+", np.subtract: "-", np.multiply: "*", np.true_divide: "/"}

# Ufuncs Numba compiles (scalars and arrays); tested one by one in test_jit.
UFUNCS_1 = ["sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
            "arcsinh", "arccosh", "arctanh", "exp", "exp2", "expm1", "log", "log2", "log10",
            "log1p", "sqrt", "square", "cbrt", "reciprocal", "absolute", "fabs", "negative",
            "positive", "deg2rad", "rad2deg", "degrees", "radians", "conjugate", "sign",
            "floor", "ceil", "trunc", "rint", "isnan", "logical_not"]
UFUNCS_2 = ["add", "subtract", "multiply", "true_divide", "power", "maximum", "minimum",
            "fmax", "fmin", "hypot", "arctan2", "logaddexp", "logaddexp2", "remainder",
            "fmod", "floor_divide", "float_power", "copysign", "nextafter", "greater",
            "greater_equal", "less", "less_equal", "equal", "not_equal", "logical_and",
            "logical_or", "logical_xor"]


# Scalar forms of the elementwise functions (inside fused loops and on scalars).
_MATH = {np.sin: "math.sin", np.cos: "math.cos", np.exp: "math.exp", np.tanh: "math.tanh",
         np.sinh: "math.sinh", np.cosh: "math.cosh", np.arctan: "math.atan",
         np.expm1: "math.expm1"}


def _ufunc_scalar(node, ops):
    f = node.fun
    if node.kwargs:
        raise Opaque("ufunc keywords")
    if len(ops) != f.nin:
        raise Opaque("ufunc arity")
    if f.nin == 2 and f in _BINOPS:
        return f"({ops[0]} {_BINOPS[f]} {ops[1]})"
    if f is np.negative:
        return f"(-{ops[0]})"
    if f is np.positive:
        return ops[0]
    if f is np.conjugate and dtype_of(node.value).kind != "c":
        return ops[0]
    if f in _MATH and np.dtype(dtype_of(node.value)) == np.float64:
        return f"{_MATH[f]}({ops[0]})"
    return f"np.{f.__name__}({', '.join(ops)})"


#: fun -> scalar rule ``(node, operand expressions) -> expression`` for elementwise records
SCALAR_RULES = {}
for _n in UFUNCS_1 + UFUNCS_2:
    if hasattr(np, _n):
        SCALAR_RULES[getattr(np, _n)] = _ufunc_scalar


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(int(a) % ndim for a in axis))
    return (int(axis) % ndim,)


def _reduction(fname):
    def gen(ctx, node):
        x = node.args[0]
        kw = dict(node.kwargs)
        if len(node.args) > 1:
            raise Opaque("positional reduction options")
        if kw.pop("dtype", None) not in (None, dtype_of(node.value)) or kw.pop("out", None) \
                is not None or kw.pop("where", True) is not True:
            raise Opaque("reduction dtype/out/where")
        if "initial" in kw:
            raise Opaque("reduction initial")
        axis = kw.pop("axis", None)
        keep = kw.pop("keepdims", False)
        if fname in ("std", "var"):
            raise Opaque(fname)
        if kw:
            raise Opaque(f"reduction keywords {sorted(kw)}")
        a = ctx.arg(node, 0)
        ish = ctx.shape(x)
        osh = shape_of(node.value)
        if ish == ():
            return a, False
        axes = _axes(axis, len(ish))
        from ._compile import reduction_kernel

        dt = dtype_of(node.value)
        if fname == "mean":
            n = int(np.prod([ish[k] for k in axes])) if axes else 1
            if dt.kind != "f":
                raise Opaque("mean of integers")
            return f"({reduction_kernel(ctx, 'sum', a, ish, axes, osh, dt)} / {n})", False
        if dtype_of(ctx.value(x)) != dt:
            raise Opaque("reduction with a dtype change")
        return reduction_kernel(ctx, fname, a, ish, axes, osh if keep or osh == () else osh,
                                dt), False

    return gen


class _NodeView:
    __slots__ = ("idx", "prim", "fun", "args", "kwargs", "value")

    def __init__(self, node, kwargs):
        for k in self.__slots__:
            setattr(self, k, getattr(node, k))
        self.kwargs = kwargs


def _with_kwargs(node, kwargs):
    return _NodeView(node, kwargs)


rule(np.sum)(_reduction("sum"))
rule(np.mean)(_reduction("mean"))
rule(np.prod)(_reduction("prod"))
rule(np.amax, np.max)(_reduction("max"))
rule(np.amin, np.min)(_reduction("min"))


def reshape_expr(ctx, a, ish, osh, dtype):
    """``a`` (shape ``ish``) with shape ``osh`` (same elements in C order)."""
    if ish == osh:
        return a
    if osh == ():
        return f"np.ascontiguousarray({a}).ravel()[0]" if ish != () else a
    if ish == ():
        return f"np.full({osh!r}, {a})"
    return f"np.ascontiguousarray({a}).reshape({osh!r})"


@rule(np.reshape, np.ravel, np.squeeze, np.expand_dims, np.atleast_1d, np.atleast_2d,
      np.atleast_3d)
def _reshape_gen(ctx, node):
    if node.fun is np.reshape or node.fun is np.ravel:
        order = node.kwargs.get("order", "C")
        if len(node.args) > 2 or order != "C":
            raise Opaque("reshape order")
    x = node.args[0]
    return reshape_expr(ctx, ctx.arg(node, 0), ctx.shape(x), shape_of(node.value),
                        dtype_of(node.value)), False


def _perm_gen(perm_of):
    def gen(ctx, node):
        x = node.args[0]
        ish = ctx.shape(x)
        a = ctx.arg(node, 0)
        perm = perm_of(node, len(ish))
        if perm == tuple(range(len(ish))):
            return a, False
        if len(ish) == 2:
            return f"{a}.T", False
        return f"np.transpose({a}, {perm!r})", False

    return gen


def _transpose_perm(node, nd):
    axes = node.args[1] if len(node.args) > 1 else node.kwargs.get("axes")
    if axes is None:
        return tuple(reversed(range(nd)))
    return tuple(int(a) % nd for a in axes)


def _swap_perm(node, nd):
    a1, a2 = (list(node.args[1:3]) + [node.kwargs.get("axis1"), node.kwargs.get("axis2")])[:2] \
        if len(node.args) >= 3 else (node.kwargs.get("axis1"), node.kwargs.get("axis2"))
    p = list(range(nd))
    a1, a2 = int(a1) % nd, int(a2) % nd
    p[a1], p[a2] = p[a2], p[a1]
    return tuple(p)


def _move_perm(node, nd):
    src = node.args[1] if len(node.args) > 1 else node.kwargs["source"]
    dst = node.args[2] if len(node.args) > 2 else node.kwargs["destination"]
    src = [int(s) % nd for s in np.atleast_1d(src)]
    dst = [int(d) % nd for d in np.atleast_1d(dst)]
    order = [n for n in range(nd) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return tuple(order)


rule(np.transpose)(_perm_gen(_transpose_perm))
rule(np.swapaxes)(_perm_gen(_swap_perm))
rule(np.moveaxis)(_perm_gen(_move_perm))


def _index_source(ctx, idx, shape):
    """Source of a basic index (ints, slices, None, Ellipsis), or Opaque."""
    items = idx if isinstance(idx, tuple) else (idx,)
    out = []
    for it in items:
        if it is None:
            out.append("None")
        elif it is Ellipsis:
            out.append("...")
        elif isinstance(it, slice):
            parts = [("" if p is None else repr(int(p))) for p in (it.start, it.stop, it.step)]
            out.append(":".join(parts[:2]) + (f":{parts[2]}" if parts[2] else ""))
        elif isinstance(it, (int, np.integer)) and not isinstance(it, (bool, np.bool_)):
            out.append(repr(int(it)))
        else:
            raise Opaque("advanced index")
    if out.count("...") > 1:
        raise Opaque("index with several ellipses")
    return ", ".join(out) if out else "..."


@rule(__import__("diffsci.numpy._wrap", fromlist=["_getitem"])._getitem)
def _getitem_gen(ctx, node):
    x, idx = node.args
    if isinstance(idx, Ref):
        raise Opaque("traced index")
    if ctx.shape(x) == ():
        raise Opaque("index of a scalar")
    src = _index_source(ctx, idx, ctx.shape(x))
    e = f"{ctx.arg(node, 0)}[{src}]"
    if shape_of(node.value) != () and ctx.shape(x) != ():
        pass
    return e, False


@rule(__import__("diffsci.numpy._wrap", fromlist=["_scatter_add"])._scatter_add)
def _scatter_gen(ctx, node):
    base, values = node.args[:2]
    idx = node.args[2] if len(node.args) > 2 else node.kwargs.get("idx")
    bsh = ctx.shape(base)
    if bsh == ():
        raise Opaque("scatter into a scalar")
    src = _index_source(ctx, idx, bsh)
    out = ctx.fresh()
    b = ctx.arg(node, 0)
    v = ctx.arg(node, 1)
    ctx.emit(f"{out} = {b}.copy()")
    ctx.emit(f"{out}[{src}] += {v}")
    return out, False


_w = __import__("diffsci.numpy._wrap", fromlist=["_where"])


def _where_scalar(node, ops):
    return f"({ops[1]} if {ops[0]} else {ops[2]})"


def _clip_scalar(node, ops):
    e = ops[0]
    if node.args[1] is not None:
        e = f"np.maximum({e}, {ops[1]})"
    if node.args[2] is not None:
        e = f"np.minimum({e}, {ops[2]})"
    return e


def _identity_scalar(node, ops):
    return ops[0]


def _astype_scalar(node, ops):
    dt = np.dtype(node.kwargs.get("dtype", node.args[1] if len(node.args) > 1 else None))
    return f"{dtype_name(dt)}({ops[0]})"


def _real_scalar(node, ops):
    return f"{ops[0]}.real" if node.in_kinds[:1] == ("c",) else ops[0]


def _imag_scalar(node, ops):
    if node.in_kinds[:1] != ("c",):
        raise Opaque("imag of a real value")
    return f"{ops[0]}.imag"


SCALAR_RULES[np.real] = _real_scalar
SCALAR_RULES[np.imag] = _imag_scalar
SCALAR_RULES[_w._where] = _where_scalar
SCALAR_RULES[_w._clip] = _clip_scalar
SCALAR_RULES[np.copy] = _identity_scalar
SCALAR_RULES[np.broadcast_to] = _identity_scalar
SCALAR_RULES[_w._astype] = _astype_scalar


def _concat_like(stack):
    def gen(ctx, node):
        kw = node.kwargs
        if kw.get("dtype") is not None or kw.get("casting", "same_kind") != "same_kind":
            raise Opaque("concatenate dtype")
        axis = kw.get("axis", 0)
        dts = {np.dtype(dtype_of(ctx.value(a))) for a in node.args}
        if len(dts) != 1 or not node.args:
            raise Opaque("concatenate of mixed dtypes")
        shapes = [ctx.shape(a) for a in node.args]
        args = [ctx.arg(node, k) for k in range(len(node.args))]
        if stack and all(s == () for s in shapes) and axis == 0:
            return f"np.array([{', '.join(args)}])", False
        if any(s == () for s in shapes) or axis is None:
            raise Opaque("concatenate of scalars")
        nd = len(shapes[0]) + (1 if stack else 0)
        args = [f"np.ascontiguousarray({x})" for x in args]
        fn = "stack" if stack else "concatenate"
        return f"np.{fn}(({', '.join(args)},), axis={int(axis) % nd})", False

    return gen


_w = __import__("diffsci.numpy._wrap", fromlist=["_concatenate"])
rule(_w._concatenate)(_concat_like(False))
rule(_w._stack)(_concat_like(True))


@rule(np.matmul, np.dot)
def _matmul_gen(ctx, node):
    if node.kwargs or len(node.args) != 2:
        raise Opaque("matmul keywords")
    sa, sb = (ctx.shape(a) for a in node.args)
    if sa == () or sb == ():
        raise Opaque("matmul of a scalar")
    if len(sa) > 2 or len(sb) > 2:
        raise Opaque("batched matmul")
    dts = {dtype_of(ctx.value(x)) for x in node.args}
    if len(dts) != 1 or next(iter(dts)).kind not in "fc":
        raise Opaque("matmul of mixed or integer dtypes")
    from ._compile import SMALL_MATMUL, matmul_kernel

    if int(np.prod(sa)) * (sb[-1] if len(sb) == 2 else 1) <= SMALL_MATMUL:
        return matmul_kernel(ctx, ctx.arg(node, 0), ctx.arg(node, 1), sa, sb,
                             dtype_of(node.value)), False
    return f"np.dot({ctx.contig(node, 0)}, {ctx.contig(node, 1)})", False


_hook = __import__("diffsci._api", fromlist=["_hook"])._hook
SCALAR_RULES[_hook.fun] = _identity_scalar


def _sigmoid_scalar(node, ops):
    if dtype_of(node.value) != np.float64:
        raise Opaque("sigmoid in another dtype than float64")
    return f"_sigmoid_s({ops[0]})"


def _select_scalar(node, ops):
    from ._masks import scalar_source

    return scalar_source(node.fun, ops, f"{dtype_name(dtype_of(node.value))}(0)")


def _register_selections():
    from ._masks import SELECT

    for p in SELECT.values():
        SCALAR_RULES[p.fun] = _select_scalar


_register_selections()

try:
    from ..nn import _activations as _act

    SCALAR_RULES[_act._sigmoid] = _sigmoid_scalar
except ImportError:  # pragma: no cover
    pass


# ---------------------------------------------------------------------------
# Guards
# ---------------------------------------------------------------------------
_CMP = {np.greater: ">", np.greater_equal: ">=", np.less: "<", np.less_equal: "<=",
        np.equal: "==", np.not_equal: "!="}


def guard_source(ctx, g, k):
    """The compiled test of guard ``g`` (number ``k``), or Opaque (checked in Python)."""
    shapes = [ctx.shape(a) for a in g.args]
    args = []
    for a in g.args:
        if isinstance(a, Ref):
            args.append(ctx.ref(a))
        elif is_scalar_const(a):
            args.append(scalar_literal(a))
        else:
            raise Opaque("guard on a constant array")
    obs = g.observed
    fail = f"raise GuardFail({k})"
    if g.kwargs:
        raise Opaque("guard keywords")
    if g.fun in _CMP and len(args) == 2:
        if all(s == () for s in shapes):
            want = bool(obs)
            test = f"({args[0]} {_CMP[g.fun]} {args[1]})"
            return f"if {'not ' if want else ''}{test}: {fail}"
        c = ctx.const_array(np.asarray(obs))
        return f"if not np.array_equal(({args[0]} {_CMP[g.fun]} {args[1]}), {c}): {fail}"
    if len(args) == 1 and shapes[0] == () and isinstance(g.args[0], Ref):
        a = args[0]
        dt = dtype_of(ctx.value(g.args[0]))
        if g.fun is bool:
            return f"if {'not ' if obs else ''}({a} != 0): {fail}"
        if dt.kind in "fiub" and g.fun in (int, _guard_funs()["item"], _guard_funs()["index"]):
            if g.fun is int:
                return f"if int({a}) != {int(obs)}: {fail}"
            if dt.kind == "f" and isinstance(obs, float) and math.isnan(obs):
                raise Opaque("nan")
            return f"if not ({a} == {scalar_literal(obs)}): {fail}"
    if g.fun in _GUARD_NONDIFF and all(s == () for s in shapes) and np.ndim(obs) == 0:
        e = _GUARD_NONDIFF[g.fun].format(*args)
        return f"if not ({e} == {scalar_literal(obs)}): {fail}"
    raise Opaque("guard")


def _guard_funs():
    from . import _trace

    return {"item": _trace._item, "index": _trace._index}


_GUARD_NONDIFF = {np.floor: "np.floor({0})", np.ceil: "np.ceil({0})",
                  np.sign: "np.sign({0})", np.trunc: "np.trunc({0})",
                  np.rint: "np.rint({0})", np.isnan: "np.isnan({0})",
                  np.isfinite: "np.isfinite({0})", np.isinf: "np.isinf({0})"}

# Helpers the generated code calls (defined once, in every generated module).
PRELUDE = """\
import math

import numba
import numpy as np

from diffsci._jit._codegen import GuardFail
from diffsci._jit._helpers import _sigmoid_s
"""

#: Elementwise functions whose later positional arguments are static (shape, dtype).
DATA_ARGS = {np.broadcast_to: 1, _w._astype: 1}

__all__ = ["GuardFail", "Opaque", "rules", "guard_source", "operator"]


# ---------------------------------------------------------------------------
# diffsci.nn's fused dense layer: one loop kernel (product, bias, activation)
# ---------------------------------------------------------------------------
_DENSE_ACT = {"identity": "{0}", "tanh": "math.tanh({0})", "sigmoid": "_sigmoid_s({0})"}


def _dense_gen(ctx, node):
    from ._compile import SMALL_MATMUL, _kernel

    act = node.kwargs.get("activation")
    if act not in _DENSE_ACT or len(node.args) not in (2, 3):
        raise Opaque(f"dense with activation {act!r}")
    sx, sw = ctx.shape(node.args[0]), ctx.shape(node.args[1])
    dt = np.dtype(dtype_of(node.value))
    if len(sx) != 2 or len(sw) != 2 or dt != np.float64 or \
            any(dtype_of(ctx.value(a)) != dt for a in node.args):
        raise Opaque("dense of other shapes or dtypes")
    m, k = sx
    n = sw[1]
    if m * k * n > 16 * SMALL_MATMUL:
        raise Opaque("large dense layer (NumPy's BLAS)")
    has_b = len(node.args) == 3
    if has_b and ctx.shape(node.args[2]) != (n,):
        raise Opaque("dense bias shape")
    lines = [f"    out = np.empty(({m}, {n}), np.float64)",
             "    i = 0", f"    while i < {m}:", "        j = 0", f"        while j < {n}:",
             "            acc = 0.0", "            p = 0", f"            while p < {k}:",
             "                acc += x[i, p] * w[p, j]", "                p += 1"]
    if has_b:
        lines.append("            acc = acc + b[j]")
    lines += [f"            out[i, j] = {_DENSE_ACT[act].format('acc')}", "            j += 1",
              "        i += 1", "    return out"]
    params = ["x", "w", "b"] if has_b else ["x", "w"]
    name = _kernel(ctx, params, lines)
    return f"{name}({', '.join(ctx.arg(node, q) for q in range(len(params)))})", False


try:
    from ..nn import _fused as _nnf

    _RULES[_nnf._fwd] = _dense_gen
except ImportError:  # pragma: no cover
    pass
