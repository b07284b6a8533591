"""From a traced :class:`~._trace.Program` to a callable: Numba segments and a Python driver.

The program's records are walked in order (dead records, those no output or guard needs, are
skipped).  Records with a rule go into the current *segment*, a Numba function; a record
without one (opaque) or a guard without a compiled test ends the segment, and the *driver* (a
small generated Python function) calls the primitive's plain function there, then the next
segment.  The segments' source is written to a file named by its hash under the cache folder,
so that Numba's ``cache=True`` keeps the machine code across processes.
"""

from __future__ import annotations

import bisect
import hashlib
import marshal
import os
import re
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np

from . import _codegen as cg
from ._codegen import GuardFail, Opaque, dtype_of, shape_of
from ._trace import Ref


def cache_dir():
    d = os.environ.get("DIFFSCI_JIT_CACHE")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                ".cache")
        d = os.path.join(base, "diffsci", "jit")
    try:
        os.makedirs(d, exist_ok=True)
    except OSError:
        d = tempfile.mkdtemp(prefix="diffsci-jit-")
    return d


class _Segment:
    def __init__(self, k):
        self.k = k
        self.lines = []
        self.inputs = []  # names read, defined outside
        self.outputs = []  # names defined here, read later
        self.defined = set()
        self.records = 0  # records computed here, and the elements of their values
        self.elements = 0
        self.python_now = False  # runs as Python (set when the module is written)
        self.numba_src = None  # ... and its Numba source, to compile it later (_Tiered)
        self.flat_lines = None  # its statements before chunking, when they run as Python

    def count(self, node):
        self.records += 1
        v = node.value  # (not np.size: its first call in a process took 60 ms here)
        self.elements += v.size if isinstance(v, np.ndarray) else 1

    @property
    def python(self):
        """Whether this segment runs as Python calling its kernels (see PYTHON_SEGMENT and
        SEGMENT_CALLS)."""
        return BACKEND != "python" and self.records and (
            self.large_arrays or sum(1 for ln in self.lines if "k_" in ln) > SEGMENT_CALLS
            or len(self.inputs) + len(self.outputs) > SEGMENT_ARGS
            or self.flat_lines is not None)

    @property
    def large_arrays(self):
        return self.elements >= PYTHON_SEGMENT * self.records


#: A segment whose records hold this many elements on average runs as Python: each of its
#: statements calls a compiled kernel (an outlined statement, a fused loop) from Python.  The
#: kernels are shared by every time step and layer and compiled once; Numba would compile the
#: segment itself with every kernel it calls linked in again (an unrolled LSTM of batch 204:
#: 11 s for 4 steps), to save a microsecond of dispatch per statement on statements that take
#: tens of microseconds.
PYTHON_SEGMENT = 2048

#: A segment that calls kernels from more than this many statements (after chunking, see
#: ``_chunk_segment``) runs as Python too: Numba takes 30-60 ms to type and lower one call of
#: a compiled function (64 s for an unrolled recurrence of 2,400 calls), Python a
#: microsecond or two per call to dispatch it.
SEGMENT_CALLS = 48

#: ... and so does a segment that takes and returns more values than this: Numba's wrapper of
#: a function of hundreds of arguments takes minutes to build (the trebuchet's backward pass
#: reads 700 values of its forward pass).
SEGMENT_ARGS = 96

#: ... and so does a segment whose chunks (``_chunk_segment``) pass more values than this in
#: one call: it runs as Python calling its kernels unchunked, and its chunked form is compiled
#: later (``_Tiered``).  Numba's time for a function grows faster than linearly in the arrays
#: it takes and returns (measured here: one returning 40 arrays 1.7 s, 120 arrays 11 s), and
#: a chunk of an unrolled loop whose residuals cross into the backward pass passes hundreds
#: (the gallery's neural SDE, 116 Euler steps: 47 s to compile at the first call, 4 s with its
#: segment as Python).
CHUNK_VALUES = 64


class Compiled:
    """What compiling a program gives: the driver, its statistics and its source."""

    def __init__(self, driver, source, driver_source, n_segments, n_opaque, opaque_names,
                 kernels=(), n_python=0, tiers=()):
        self.driver = driver
        self.source = source
        self.driver_source = driver_source
        self.n_segments = n_segments
        self.n_opaque = n_opaque
        self.opaque_names = opaque_names
        self.kernels = tuple(kernels)  # the names of the kernels the segments call
        self.n_python = n_python  # segments that run as Python calling compiled kernels
        self.tiers = list(tiers)  # those of them compiled once they have run long enough


class _Ctx:
    """The emitter the rules write through (see ``_codegen``)."""

    def __init__(self, prog):
        self.prog = prog
        self.values = prog.values
        self.consts = []  # driver-level constant objects, by name c<k>
        self.const_ids = {}
        self.where = {}  # name -> segment number or "d" (driver)
        self.seg = None
        self.segments = []
        self.node_dtype = None
        self.tmp = 0
        self.layout_c = {}
        self.kernels = {}  # name -> source of the fused loop kernels

    # -- values -----------------------------------------------------------------
    def value(self, a):
        return self.values[a.idx] if isinstance(a, Ref) else a

    def shape(self, a):
        return shape_of(self.value(a))

    def fresh(self):
        self.tmp += 1
        return f"t{self.tmp}"

    def emit(self, line, indent=1):
        self.seg.lines.append("    " * indent + line)

    def use(self, name):
        """Record that the current segment reads ``name``."""
        w = self.where.get(name)
        if w is None or w == self.seg.k:
            return name
        if name not in self.seg.inputs:
            self.seg.inputs.append(name)
        if w != "d":
            src = self.segments[w]
            if name not in src.outputs:
                src.outputs.append(name)
        return name

    def ref(self, r):
        return self.use(f"v{r.idx}")

    def arg(self, node, k):
        a = node.args[k]
        if isinstance(a, Ref):
            return self.ref(a)
        return self.const(a, self.node_dtype)

    def contig(self, node, k):
        e = self.arg(node, k)
        a = node.args[k]
        if isinstance(a, Ref) and self.layout_c.get(a.idx):
            return e
        return f"np.ascontiguousarray({e})"

    def const(self, v, weak=None):
        if cg.is_scalar_const(v):
            return cg.scalar_literal(v, weak)
        if isinstance(v, np.ndarray):
            return self.const_array(v)
        raise Opaque(f"constant of type {type(v).__name__}")

    def const_array(self, v):
        name = self.const_ids.get(id(v))
        if name is None:
            # equal constants are one (the generated code never writes into a constant): an
            # unrolled loop makes a zero array, a one-hot, per step, which would otherwise
            # each be an argument of the segments that read them
            key = None
            if v.nbytes <= 1 << 20 and v.dtype.kind in "biufc":
                key = (v.shape, v.dtype.str, hashlib.sha1(np.ascontiguousarray(v)).digest())
                name = self.const_ids.get(key)
            if name is None:
                name = f"c{len(self.consts)}"
                self.consts.append(v)
                self.where[name] = "d"
                if key is not None:
                    self.const_ids[key] = name
            self.const_ids[id(v)] = name
        return self.use(name) if self.seg is not None else name

    # -- segments -----------------------------------------------------------------
    def open_segment(self):
        self.seg = _Segment(len(self.segments))
        self.segments.append(self.seg)

    def mark(self):
        return (len(self.seg.lines), dict(self.where), list(self.seg.inputs),
                [list(s.outputs) for s in self.segments], self.tmp, len(self.consts),
                dict(self.const_ids))

    def undo(self, mark):
        (n_lines, where, seg_in, outs, tmp, n_consts, cids) = mark
        del self.seg.lines[n_lines:]
        self.where, self.seg.inputs, self.tmp = where, seg_in, tmp
        for s, o in zip(self.segments, outs):
            s.outputs = o
        del self.consts[n_consts:]
        self.const_ids = cids


class _Group:
    """Elementwise records of one output shape, fused into one loop nest (or, for shape
    ``()``, scalar statements)."""

    def __init__(self, shape):
        self.shape = shape
        self.members = []  # (node, scalar rule)
        self.ids = set()


#: A fused loop of more than this many statements is cut (at its repeats) into loops of
#: their own, the values crossing a cut stored: Numba's compile time grows faster than
#: linearly with a function's length, and the loops of repeated steps are one kernel.
GROUP_LINES = 160


def _flush_group(ctx, grp, uses):
    """Emit ``grp``: arrays for the members used outside it, one loop nest over its shape."""
    if grp is None or not grp.members:
        return
    if grp.shape != () and len(grp.members) > GROUP_LINES:
        keys = [hash((id(n.fun), shape_of(n.value), dtype_of(n.value),
                      tuple(_arg_key(a) for a in n.args))) for n, _ in grp.members]
        for a, b in _repeat_spans(keys, GROUP_LINES):
            part = _Group(grp.shape)
            part.members = grp.members[a:b]
            part.ids = {n.idx for n, _ in part.members}
            _flush_group(ctx, part, uses)
        return
    inner = {}
    for node, _ in grp.members:
        for a in node.args:
            if isinstance(a, Ref) and a.idx in grp.ids:
                inner[a.idx] = inner.get(a.idx, 0) + 1
    shape = grp.shape
    d = len(shape)
    out_of_group = [n for n, _ in grp.members if uses.get(n.idx, 0) > inner.get(n.idx, 0)]
    if d == 0:
        for node, srule in grp.members:
            nd = cg.DATA_ARGS.get(node.fun, len(node.args))
            ops = [("None" if a is None else ctx.arg(node, k))
                   if not (isinstance(a, Ref) and a.idx in grp.ids)
                   else f"v{a.idx}" for k, a in enumerate(node.args[:nd])]
            ctx.node_dtype = dtype_of(node.value)
            ctx.emit(f"v{node.idx} = {_cast(srule(node, ops), node.value)}")
            ctx.where[f"v{node.idx}"] = ctx.seg.k
        return
    # the loop nest is a kernel of its own, named by the hash of its source: the same
    # computation on the same shapes (an LSTM's time steps, its layers) compiles once
    params = {}  # outside operand source -> canonical parameter name

    def param(src):
        p = params.get(src)
        if p is None:
            p = params[src] = f"a{len(params)}"
        return p

    # Many outputs of one dtype share one buffer (one allocation; the segment takes views).
    dts = {np.dtype(dtype_of(n.value)) for n in out_of_group}
    stacked = len(out_of_group) > 4 and len(dts) == 1
    outs = {}
    for k, node in enumerate(out_of_group):
        outs[node.idx] = f"o[{k}, " if stacked else f"o{k}["
    ix = ", ".join(f"i{j}" for j in range(d))
    body = []
    loads = {}
    local = {}

    def operand(node, k):
        a = node.args[k]
        if isinstance(a, Ref) and a.idx in grp.ids:
            return local[a.idx]
        v = ctx.value(a)
        sh = shape_of(v)
        if sh == ():
            e = ctx.arg(node, k)
            # a float constant is an argument too (a time, a step size: the same loop for
            # every step of an integrator); integers stay literal (exponents)
            return param(e) if isinstance(a, Ref) or _is_float_const(a) else e
        key = a.idx if isinstance(a, Ref) else ("c", id(a))
        name = loads.get(key)
        if name is None:
            base = param(ctx.arg(node, k))
            off = d - len(sh)
            idx = ", ".join("0" if (n == 1 and shape[off + j] != 1) else f"i{off + j}"
                            for j, n in enumerate(sh))
            name = f"l{len(loads)}"
            loads[key] = name
            body.append(f"{name} = {base}[{idx}]")
        return name

    for node, srule in grp.members:
        ctx.node_dtype = dtype_of(node.value)
        nd = cg.DATA_ARGS.get(node.fun, len(node.args))
        ops = [operand(node, k) if node.args[k] is not None else "None"
               for k in range(nd)]
        local[node.idx] = f"s{len(local)}"
        body.append(f"{local[node.idx]} = {srule(node, ops)}")
        if node.idx in outs:
            body.append(f"{outs[node.idx]}{ix}] = {local[node.idx]}")
    lines = []
    if stacked:
        lines.append(f"    o = np.empty({(len(out_of_group),) + tuple(shape)!r}, "
                     f"{cg.dtype_name(dts.pop())})")
    else:
        for node in out_of_group:
            lines.append(f"    {outs[node.idx][:-1]} = np.empty({shape!r}, "
                         f"{cg.dtype_name(dtype_of(node.value))})")
    # while loops: Numba compiles them faster than ``for i in range(n)``
    for j in range(d):
        lines.append("    " * (1 + j) + f"i{j} = 0")
        lines.append("    " * (1 + j) + f"while i{j} < {shape[j]}:")
    lines.extend("    " * (1 + d) + line for line in body)
    for j in reversed(range(d)):
        lines.append("    " * (2 + j) + f"i{j} += 1")
    if stacked:
        lines.append("    return o")
    else:
        rets = ", ".join(o[:-1] for o in outs.values()) + ("," if len(outs) == 1 else "")
        lines.append(f"    return ({rets})")
    kname = _kernel(ctx, list(params.values()), lines)
    if stacked:
        buf = ctx.fresh()
        ctx.emit(f"{buf} = {kname}({', '.join(params)})")
        for k, node in enumerate(out_of_group):
            ctx.emit(f"v{node.idx} = {buf}[{k}]")
    else:
        lhs = ", ".join(f"v{node.idx}" for node in out_of_group) + (
            "," if len(out_of_group) == 1 else "")
        ctx.emit(f"{lhs} = {kname}({', '.join(params)})")
    for node in out_of_group:
        ctx.where[f"v{node.idx}"] = ctx.seg.k
        ctx.layout_c[node.idx] = True


def _arg_key(a):
    """What an argument contributes to the key of a record in ``_repeat_spans``."""
    if isinstance(a, Ref):
        return None
    try:
        return (type(a), hash(a))
    except TypeError:  # an array, a list: by identity (equal ones may not be shared)
        return id(a)


def _is_float_const(a):
    return isinstance(a, (float, np.floating)) or (
        isinstance(a, np.ndarray) and a.shape == () and a.dtype.kind == "f")


def _kernel(ctx, params, lines):
    """Register a kernel (a Numba function of ``params`` with body ``lines``); its name.
    A kernel may call kernels registered before it (their modules are imported)."""
    kbody = "\n".join(lines)
    kname = "k_" + hashlib.sha1((kbody + ",".join(params)).encode()).hexdigest()[:16]
    imports = "".join(f"from {_kernel_module(k)} import {k}\n"
                      for k in dict.fromkeys(_KERNEL_NAME.findall(kbody)))
    ctx.kernels[kname] = (f"{cg.PRELUDE}{imports}\n\n"
                          f"@numba.njit(cache=True, error_model=\"numpy\")\n"
                          f"def {kname}({', '.join(params)}):\n{kbody}\n")
    return kname


def _kernel_module(kname):
    return f"diffsci_jit{'py' if BACKEND == 'python' else ''}_{kname}"


_KERNEL_NAME = re.compile(r"\bk_[0-9a-f]{16}\b")
_VALUE_NAME = re.compile(r"\b[vct]\d+\b")
_BARE_CALL = re.compile(r"^    \w+ = k_[0-9a-f]{16}\((?:[vct]\d+(?:, )?)*\)$")
_SUBSCRIPT = re.compile(r"(?<=[\w\])])\[[^\[\]()]*\]")  # a subscript without calls or nesting
_SUBSCRIPT_INT = re.compile(r"(?<=[\[,: ])-?\d+(?=[\],: ])")
_ASSIGNED = re.compile(r"^    ([\w, ]+?) = ")
_LITERAL = re.compile(r"\bn(\d+)\b")  # a literal taken out of a statement


def _outline(ctx, start, vname):
    """Make the statements of one record (``ctx.seg.lines[start:]``, defining ``vname``) a
    kernel of their own, its values renamed by order of appearance, and call it.

    The same statement on other values (every time step of an unrolled loop reads other
    records) is then one shared function, compiled once per Numba type signature, and the
    segment holds calls only: Numba's cost of compiling a segment is dominated by its array
    statements (an ``np.dot`` binding, a slice, an in-place add: 50-100 ms each on this
    machine), which an unrolled loop otherwise repeats for every step (see
    diffsci/ARCHITECTURE_JIT.md).  The integers of its subscripts (``x[3]``,
    ``x[..., 48:96]``) are arguments too: one kernel for every step of a loop that indexes
    its inputs."""
    block = ctx.seg.lines[start:]
    if len(block) == 1 and _BARE_CALL.match(block[0]):
        return
    ctx.seg.lines[start:] = [_as_kernel(ctx, [_subscript_ints(ln) for ln in block], [vname])]


def _subscript_ints(line):
    """``line`` with the integers of its subscripts taken out (``n<k>``), and them."""
    ints = []

    def int_param(m):
        ints.append(m.group(0))
        return f"n{len(ints) - 1}"

    return _SUBSCRIPT.sub(lambda m: _SUBSCRIPT_INT.sub(int_param, m.group(0)), line), ints


def _as_kernel(ctx, block, outs):
    """The statements ``block`` (each ``(source, literals)``, the literals taken out of the
    source as ``n0, n1, ...``) as one kernel returning ``outs``, and the statement calling
    it.  Values are renamed by order of appearance: those the block assigns become locals,
    the others parameters, and the literals parameters after them; so the same statements
    on other values and literals are the same kernel."""
    local = set()
    for src, _ in block:
        m = _ASSIGNED.match(src)
        if m and "[" not in m.group(1):
            local.update(_VALUE_NAME.findall(m.group(1)))
    rename, params, lits, body = {}, [], [], []
    for src, ls in block:
        for name in _VALUE_NAME.findall(src):
            if name not in rename:
                if name in local:
                    rename[name] = f"b{len(rename)}"
                else:
                    rename[name] = f"a{len(params)}"
                    params.append(name)
        base = len(lits)
        src = _LITERAL.sub(lambda m: f"m{base + int(m.group(1))}", src)
        lits.extend(ls)
        body.append(_VALUE_NAME.sub(lambda m: rename[m.group(0)], src))
    if len(outs) == 1:
        body.append(f"    return {rename[outs[0]]}")
    else:
        body.append(f"    return ({''.join(rename[o] + ', ' for o in outs)})")
    kname = _kernel(ctx, [rename[q] for q in params] + [f"m{k}" for k in range(len(lits))],
                    body)
    call = f"{kname}({', '.join(params + lits)})"
    if not outs:
        return f"    {call}"
    return f"    {', '.join(outs)}{',' if len(outs) > 1 else ''} = {call}"


def _loops(shape, body, depth=1, names="i"):
    """``while`` loops over ``shape`` around ``body`` (lines), indices ``i0, i1, ...``."""
    d = len(shape)
    lines = []
    for j in range(d):
        lines.append("    " * (depth + j) + f"{names}{j} = 0")
        lines.append("    " * (depth + j) + f"while {names}{j} < {shape[j]}:")
    lines.extend("    " * (depth + d) + b for b in body)
    for j in reversed(range(d)):
        lines.append("    " * (depth + 1 + j) + f"{names}{j} += 1")
    return lines


def reduction_kernel(ctx, fname, src, ishape, axes, oshape, dtype):
    """A loop kernel for ``np.<fname>(src, axis=axes)`` with the reduced shape ``oshape``
    (keepdims or not: the output is filled with the reduced shape's strides)."""
    dn = cg.dtype_name(dtype)
    kept = [j for j in range(len(ishape)) if j not in axes]
    init = {"sum": "0", "prod": "1", "max": "-np.inf", "min": "np.inf"}[fname]
    if np.dtype(dtype).kind != "f" and fname in ("max", "min"):
        raise Opaque("integer max/min")
    ix = ", ".join(f"i{j}" for j in range(len(ishape)))
    if fname == "sum":
        upd = "acc[{o}] += x[{i}]"
    elif fname == "prod":
        upd = "acc[{o}] *= x[{i}]"
    else:  # NaN propagates as in NumPy
        op = ">" if fname == "max" else "<"
        upd = ("v = x[{i}]\nif v != v or acc[{o}] != acc[{o}]:\n    acc[{o}] = np.nan\n"
               f"elif v {op} acc[{{o}}]:\n    acc[{{o}}] = v")
    o = ", ".join(f"i{j}" for j in kept) if kept else "0"
    body = upd.format(o=o, i=ix).split("\n")
    ashape = tuple(ishape[j] for j in kept) or (1,)
    lines = [f"    acc = np.full({ashape!r}, {init}, {dn})"]
    lines += _loops(ishape, body)
    if oshape == ():
        lines.append("    return acc[0]")
    else:
        lines.append(f"    return acc.reshape({oshape!r})")
    return f"{_kernel(ctx, ['x'], lines)}({src})"


#: Above this many multiply-adds a matrix product calls BLAS (np.dot); below, a loop kernel
#: (no call overhead, and Numba compiles it faster than its np.dot binding).
SMALL_MATMUL = 4096


def matmul_kernel(ctx, a, b, sa, sb, dtype):
    dn = cg.dtype_name(dtype)
    m = sa[0] if len(sa) == 2 else None
    n = sb[1] if len(sb) == 2 else None
    k = sa[-1]
    ai = "a[i0, p]" if m is not None else "a[p]"
    bi = "b[p, i1]" if n is not None else "b[p]"
    if m is not None and n is not None:
        oshape, o = (m, n), "i0, i1"
    elif m is not None:
        oshape, o, bi = (m,), "i0", "b[p]"
    elif n is not None:
        oshape, o, ai, bi = (n,), "i1", "a[p]", "b[p, i1]"
    else:
        oshape, o = (), None
    lines = []
    if oshape == ():
        lines.append(f"    acc = {dn}(0)")
        lines += ["    p = 0", f"    while p < {k}:", f"        acc += {ai} * {bi}",
                  "        p += 1", "    return acc"]
    else:
        lines.append(f"    out = np.zeros({oshape!r}, {dn})")
        loops = [("i0", m), ("i1", n)]
        depth = 1
        for name, size in loops:
            if size is None:
                continue
            lines += ["    " * depth + f"{name} = 0", "    " * depth + f"while {name} < {size}:"]
            depth += 1
        lines += ["    " * depth + f"acc = {dn}(0)", "    " * depth + "p = 0",
                  "    " * depth + f"while p < {k}:",
                  "    " * (depth + 1) + f"acc += {ai} * {bi}",
                  "    " * (depth + 1) + "p += 1",
                  "    " * depth + f"out[{o}] = acc"]
        for name, size in reversed(loops):
            if size is None:
                continue
            lines.append("    " * depth + f"{name} += 1")
            depth -= 1
        lines.append("    return out")
    return f"{_kernel(ctx, ['a', 'b'], lines)}({a}, {b})"


def _live(prog):
    live = set()
    for o in prog.outputs:
        if isinstance(o, Ref):
            live.add(o.idx)
    for g in prog.guards:
        live.update(a.idx for a in g.args if isinstance(a, Ref))
    for node in reversed(prog.nodes):
        if node.idx in live:
            live.update(a.idx for a in node.args if isinstance(a, Ref))
    return live


def _uses(prog, live):
    uses = {}
    for node in prog.nodes:
        if node.idx in live:
            for a in node.args:
                if isinstance(a, Ref):
                    uses[a.idx] = uses.get(a.idx, 0) + 1
    for g in prog.guards:
        for a in g.args:
            if isinstance(a, Ref):
                uses[a.idx] = uses.get(a.idx, 0) + 2
    for o in prog.outputs:
        if isinstance(o, Ref):
            uses[o.idx] = uses.get(o.idx, 0) + 2
    return uses


def _depends(refs, grp):
    return grp is not None and any(isinstance(a, Ref) and a.idx in grp.ids for a in refs)


def compile_program(prog, name="f", compile_all=False):
    """Generate, write and load the code of ``prog``; returns a :class:`Compiled`."""
    ctx = _Ctx(prog)
    live = _live(prog)
    uses = _uses(prog, live)
    inputs = [f"v{i}" for i in range(prog.n_inputs)]
    for n in inputs:
        ctx.where[n] = "d"
    driver = []  # driver lines (Python) and segments
    dglobals = {"GuardFail": GuardFail, "np": np}
    opaque_names = []
    ctx.open_segment()
    guards = sorted(enumerate(prog.guards), key=lambda kg: kg[1].pos)
    gi = 0
    items = []
    for node in prog.nodes:
        while gi < len(guards) and guards[gi][1].pos <= node.idx:
            items.append(("g",) + guards[gi])
            gi += 1
        if node.idx in live:
            items.append(("n", node))
    items.extend(("g",) + kg for kg in guards[gi:])
    grp = None

    def close_segment():
        seg = ctx.seg
        if seg.lines:
            driver.append(("seg", seg))
        ctx.open_segment()

    for item in items:
        if item[0] == "g":
            _, k, g = item
            if _depends(g.args, grp):
                _flush_group(ctx, grp, uses)
                grp = None
            try:
                cg.guard_source(_Probe(ctx), g, k)
                ctx.emit(cg.guard_source(ctx, g, k))
            except Opaque:
                _flush_group(ctx, grp, uses)
                grp = None
                close_segment()
                args = _driver_args(ctx, dglobals, g.args)
                dglobals[f"_g{k}"] = g.fun
                dglobals[f"_o{k}"] = g.observed
                kw = "".join(f", {key}=_gk{k}[{key!r}]" for key in g.kwargs)
                dglobals[f"_gk{k}"] = g.kwargs
                driver.append(("py", f"if not _same(_g{k}({', '.join(args)}{kw}), _o{k}): "
                                     f"raise GuardFail({k})"))
            continue
        node = item[1]
        v = node.value
        srule = cg.SCALAR_RULES.get(node.fun)
        if srule is not None and _scalar_ok(ctx, node, srule):
            sh = shape_of(v)
            if grp is None or grp.shape != sh:
                _flush_group(ctx, grp, uses)
                grp = _Group(sh)
            grp.members.append((node, srule))
            grp.ids.add(node.idx)
            ctx.seg.count(node)
            continue
        gen = cg._RULES.get(node.fun)
        vname = f"v{node.idx}"
        if gen is not None:
            if _depends(node.args, grp):
                _flush_group(ctx, grp, uses)
                grp = None
            mark = ctx.mark()
            start = len(ctx.seg.lines)
            ctx.node_dtype = dtype_of(v)
            try:
                expr, _elem = gen(ctx, node)
            except Opaque:
                ctx.undo(mark)
            else:
                cexpr = _cast(expr, v)
                ctx.emit(f"{vname} = {cexpr}")
                if cexpr == expr:  # (a kernel would return a float32 scalar as a float)
                    _outline(ctx, start, vname)
                ctx.seg.count(node)
                ctx.where[vname] = ctx.seg.k
                ctx.layout_c[node.idx] = node.fun in (np.matmul, np.dot, np.sum, np.prod,
                                                      np.mean, cg._w._concatenate,
                                                      cg._w._stack, cg._w._scatter_add)
                continue
        # opaque: the driver calls the primitive's plain function
        _flush_group(ctx, grp, uses)
        grp = None
        close_segment()
        opaque_names.append(node.prim.__name__)
        args = _driver_args(ctx, dglobals, node.args)
        dglobals[f"_f{node.idx}"] = node.fun
        dglobals[f"_k{node.idx}"] = node.kwargs
        kw = f", **_k{node.idx}" if node.kwargs else ""
        driver.append(("py", f"{vname} = _f{node.idx}({', '.join(args)}{kw})"))
        if isinstance(v, list):  # the outputs of a custom_vjp call (picked by later nodes)
            pass
        elif shape_of(v) == ():
            dglobals[f"_t{node.idx}"] = np.dtype(dtype_of(v)).type
            driver.append(("py", f"{vname} = _scalar({vname}, _t{node.idx})"))
        else:
            dglobals[f"_s{node.idx}"] = (shape_of(v), np.dtype(dtype_of(v)))
            driver.append(("py", f"if not _fits({vname}, _s{node.idx}): raise GuardFail(-1)"))
        ctx.where[vname] = "d"
    _flush_group(ctx, grp, uses)
    outs = []
    for k, o in enumerate(prog.outputs):
        if isinstance(o, Ref):
            outs.append(_driver_ref(ctx, o))
        else:
            dglobals[f"_out{k}"] = o
            outs.append(f"_copy(_out{k})")
    seg = ctx.seg
    if seg.lines:
        driver.append(("seg", seg))
    for kind, s in driver:
        if kind == "seg" and not s.large_arrays:
            flat = list(s.lines)
            _chunk_segment(ctx, s)
            known = set(flat)
            if max((len(_VALUE_NAME.findall(ln)) for ln in s.lines if ln not in known),
                   default=0) > CHUNK_VALUES:
                s.flat_lines = flat
    # the module of segments
    src = [cg.PRELUDE]
    for kname, ksrc in ctx.kernels.items():
        kmod = _kernel_module(kname)
        _load(ksrc, kname, modname=kmod)
        src.append(f"from {kmod} import {kname}\n")
    pysrc = list(src)
    base = len(src)
    for kind, s in driver:
        if kind != "seg":
            continue
        params = ", ".join(s.inputs)
        rets = ", ".join(s.outputs)
        ret = f"\n    return ({rets}{',' if len(s.outputs) == 1 else ''})\n"
        seg_src = f"def seg{s.k}({params}):\n" + "\n".join(s.lines) + ret
        s.python_now = s.python and not (compile_all and not s.large_arrays)
        if s.python_now:
            flat = s.lines if s.flat_lines is None else s.flat_lines
            pysrc.append(f"\n\ndef seg{s.k}({params}):\n" + "\n".join(flat) + ret)
            # compiled later; a segment run unchunked for its wide chunks has a bounded
            # compile (its chunks are short) and tiers up however many values it passes
            if not s.large_arrays and (_values(s) <= TIER_MAX_VALUES or s.flat_lines):
                s.numba_src = ("".join(src[:base]) + "\n\n@numba.njit(cache=True, "
                               f"error_model=\"numpy\")\n{seg_src}")
        else:
            src.append(f"\n\n@numba.njit(cache=True, error_model=\"numpy\")\n{seg_src}")
    source = "".join(src)
    mod = _load(source, name)
    pymod = (_load("".join(pysrc), name, python=True)
             if any(kind == "seg" and s.python_now for kind, s in driver) else None)
    tiers = []
    dlines = [f"def driver({', '.join(inputs)}):"]
    for i in range(prog.n_inputs):
        v = prog.input_values[i]
        if shape_of(v) == ():
            dglobals[f"_t{i}"] = np.dtype(dtype_of(v)).type
            dlines.append(f"    v{i} = _scalar(v{i}, _t{i})")
    for k, c in enumerate(ctx.consts):
        dglobals[f"c{k}"] = c
    for kind, s in driver:
        if kind == "py":
            dlines.append("    " + s)
        else:
            fn = getattr(pymod if s.python_now else mod, f"seg{s.k}")
            if s.numba_src is not None:
                fn = _Tiered(fn, s, name, dglobals)
                tiers.append(fn)
            dglobals[f"seg{s.k}"] = fn
            lhs = ", ".join(s.outputs) + ("," if len(s.outputs) == 1 else "")
            call = f"seg{s.k}({', '.join(s.inputs)})"
            dlines.append(f"    {lhs} = {call}" if s.outputs else f"    {call}")
    dlines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    dsrc = "\n".join(dlines) + "\n"
    dglobals.update(_scalar=_scalar, _fits=_fits, _same=_same, _copy=_copy)
    exec(compile(dsrc, f"<diffsci.jit driver of {name}>", "exec"), dglobals)  # noqa: S102
    n_seg = sum(1 for kind, _ in driver if kind == "seg")
    n_py = sum(1 for kind, s in driver if kind == "seg" and s.python_now)
    return Compiled(dglobals["driver"], source + "".join(pysrc[base:]), dsrc, n_seg,
                    len(opaque_names), opaque_names, list(ctx.kernels), n_py, tiers)


#: Estimated seconds Numba takes per value that a statement calling a kernel passes or
#: receives (measured: 5-15 ms on this machine; see SEGMENT_CALLS).
COMPILE_S_PER_VALUE = 0.01

#: A Python segment whose calls pass more values than this (``_values``) is never compiled:
#: Numba's time grows faster than linearly there (a segment of the trebuchet's backward pass,
#: 2,466 values with 700 arguments, had not compiled after 10 minutes), so the estimate would
#: not bound it.
TIER_MAX_VALUES = 1500


def _values(seg):
    """The values ``seg`` and the kernel calls in it pass and receive (its compile cost)."""
    return len(seg.inputs) + len(seg.outputs) + sum(
        len(_VALUE_NAME.findall(ln)) for ln in seg.lines if "k_" in ln)


class _Tiered:
    """A long segment that runs as Python (its kernels compiled) until the time spent in it
    reaches the estimated time Numba takes to compile it; then it is compiled (at most twice
    the time of the better choice made in hindsight, whatever the number of calls).  A segment
    that Numba fails to compile stays Python."""

    def __init__(self, fn, seg, name, dglobals):
        self.fn = fn
        self.key = f"seg{seg.k}"
        self.src = seg.numba_src
        self.name = name
        self.dglobals = dglobals
        self.budget = COMPILE_S_PER_VALUE * _values(seg)
        self.spent = 0.0
        self.state = "python"  # -> "compiled" or "failed"

    def __call__(self, *args):
        if self.spent >= self.budget:
            return self.compile_now(args)
        t0 = time.perf_counter()
        out = self.fn(*args)
        self.spent += time.perf_counter() - t0
        return out

    def compile_now(self, args):
        """Compile the segment and run it on ``args`` (it replaces this wrapper)."""
        try:
            fn = getattr(_load(self.src, self.name), self.key)
            with numba_settings():
                out = fn(*args)
        except GuardFail:
            raise
        except Exception:  # noqa: BLE001 - Numba could not compile it: it stays Python
            self.state, self.budget = "failed", np.inf
            self.dglobals[self.key] = self.fn
            return self.fn(*args)
        self.state = "compiled"
        self.dglobals[self.key] = fn
        return out


#: A compiled segment longer than this many statements is cut into functions (chunks).
CHUNK_LINES = 160
_CALL_LINE = re.compile(r"^    [\w, ]+ = k_[0-9a-f]{16}\(.*\)$")
_CALL_INT = re.compile(r"(?<=[(, ])-?\d+(?=[,)])")
_FLOAT_LIT = re.compile(r"(?<![\w.])(?:\d+\.\d+(?:e[+-]?\d+)?|\d+(?:\.\d*)?e[+-]?\d+)(?![\w.])")


def _canonical(line):
    """``line`` with the integer arguments of a kernel call and its float literals taken
    out (``n<k>``), and them."""
    lits = []

    def lit(m):
        lits.append(m.group(0))
        return f"n{len(lits) - 1}"

    if _CALL_LINE.match(line):
        line = _CALL_INT.sub(lit, line)
    return _FLOAT_LIT.sub(lit, line), lits


def _chunk_segment(ctx, seg):
    """Cut a long compiled segment into functions of at most ``CHUNK_LINES`` statements,
    aligned on its repeats: the statements of every step of an unrolled loop are the same up
    to the names of their values, the integers their kernel calls take (indices) and their
    float literals (a time), and such a step becomes one function, compiled once and called
    once per step.  Numba's compile time grows faster than linearly in a function's length
    (an unrolled 160-step recurrence: 64 s as one function, see diffsci/ARCHITECTURE_JIT.md);
    chunks keep every function short and compile each repeated step once."""
    lines = seg.lines
    n = len(lines)
    if n <= CHUNK_LINES or any(not ln.startswith("    ") or ln.startswith("     ")
                               for ln in lines):
        return
    canon = [_canonical(ln) for ln in lines]
    keys = [hash(_VALUE_NAME.sub("_", c)) for c, _ in canon]
    spans = _repeat_spans(keys, CHUNK_LINES)
    later = {}  # name -> last line that reads it (n: read after the segment)
    for k, ln in enumerate(lines):
        m = _ASSIGNED.match(ln)
        rhs = ln[m.end():] if m else ln
        for name in _VALUE_NAME.findall(rhs):
            later[name] = k
        if m and "[" in m.group(1):  # (an in-place write reads its target)
            for name in _VALUE_NAME.findall(m.group(1)):
                later[name] = k
    for name in seg.outputs:
        later[name] = n
    new = []
    for a, b in spans:
        if b - a < 2:
            new.extend(lines[a:b])
            continue
        new.append(_chunk(ctx, lines, canon, a, b, later))
    seg.lines = new


def _chunk(ctx, lines, canon, a, b, later):
    """Lines ``a:b`` of a segment as one kernel; it returns the values read after it."""
    outs = []
    for k in range(a, b):
        m = _ASSIGNED.match(lines[k])
        if m and "[" not in m.group(1):
            outs.extend(nm for nm in _VALUE_NAME.findall(m.group(1)) if later.get(nm, -1) >= b)
    return _as_kernel(ctx, canon[a:b], list(dict.fromkeys(outs)))


def _repeat_spans(keys, limit):
    """Cut ``range(len(keys))`` into spans of at most ``limit``: a stretch that repeats
    (``keys[i:i+p] == keys[i+p:i+2p] == ...``, found by a rolling hash) is cut at multiples of
    its period (the same steps in every span but the last), the rest into equal pieces."""

    n = len(keys)
    mod, base = (1 << 61) - 1, 1_000_003
    pre, pw = [0] * (n + 1), [1] * (n + 1)
    for k, x in enumerate(keys):
        pre[k + 1] = (pre[k] * base + (int(x) & 0xFFFFFFFFFFFF)) % mod
        pw[k + 1] = pw[k] * base % mod

    def h(i, j):
        return (pre[j] - pre[i] * pw[j - i]) % mod

    where = {}
    for k, x in enumerate(keys):
        where.setdefault(x, []).append(k)
    spans, i, misc = [], 0, 0

    def flush(a, b):
        m = -(-(b - a) // limit)
        for q in range(m):
            lo, hi = a + (b - a) * q // m, a + (b - a) * (q + 1) // m
            if hi > lo:
                spans.append((lo, hi))

    while i < n:
        best = None
        occ = where[keys[i]]
        j0 = bisect.bisect_right(occ, i)
        for j in occ[j0:j0 + 8]:
            p = j - i
            if p > limit:
                break
            if p < 4:
                continue
            r = 1
            while i + (r + 1) * p <= n and h(i + r * p, i + (r + 1) * p) == h(i, i + p):
                r += 1
            if r >= 2 and (best is None or r * p > best[0] * best[1]):
                best = (r, p)
        if best is None:
            i += 1
            continue
        flush(misc, i)
        r, p = best
        q = max(1, limit // p)  # as many steps per span as fit: fewer, longer calls
        for k in range(0, r, q):
            spans.append((i + k * p, i + min(k + q, r) * p))
        i += r * p
        misc = i
    flush(misc, n)
    return spans


def _scalar_ok(ctx, node, srule):
    """Whether ``node`` can go into a fused loop (operands broadcast, constants literal)."""
    nd = cg.DATA_ARGS.get(node.fun, len(node.args))
    for a in node.args[:nd]:
        if isinstance(a, Ref):
            continue
        if a is None and node.fun is cg._w._clip:
            continue
        if not (cg.is_scalar_const(a) or isinstance(a, np.ndarray)):
            return False
        if isinstance(a, np.ndarray) and a.dtype.kind not in "fciub":
            return False
    if node.fun is np.broadcast_to or node.fun is cg._w._astype:
        return True
    if node.kwargs:
        return False
    try:
        srule(node, ["x"] * len(node.args))
    except Opaque:
        return False
    try:
        cg.dtype_name(dtype_of(node.value))
    except Opaque:
        return False
    return True


class _Probe:
    """A context that only checks whether a guard has a compiled form."""

    def __init__(self, ctx):
        self.ctx = ctx

    def shape(self, a):
        return self.ctx.shape(a)

    def value(self, a):
        return self.ctx.value(a)

    def ref(self, r):
        return f"v{r.idx}"

    def const_array(self, v):
        return "c"


def _driver_args(ctx, dglobals, args):
    """The driver's source for each argument of a call it makes: a value or a constant."""
    return [_driver_ref(ctx, a) if isinstance(a, Ref) else _driver_const(ctx, dglobals, a)
            for a in args]


def _driver_ref(ctx, a):
    """Name of record ``a`` in the driver (an output of the segment that made it)."""
    name = f"v{a.idx}"
    w = ctx.where.get(name)
    if w not in (None, "d"):
        s = ctx.segments[w]
        if name not in s.outputs:
            s.outputs.append(name)
    return name


def _driver_const(ctx, dglobals, a):
    name = f"_c{len(dglobals)}"
    dglobals[name] = a
    return name


def _cast(expr, v):
    """``expr`` as the traced dtype for scalars of a dtype Numba would not keep."""
    dt = np.dtype(dtype_of(v))
    if shape_of(v) == () and dt.kind in "fc" and dt not in (np.float64, np.complex128):
        return f"{cg.dtype_name(dt)}({expr})"
    return expr


def _scalar(v, t):
    if type(v) is np.ndarray:
        v = v[()]
    return t(v)


def _fits(v, spec):
    return type(v) is np.ndarray and v.shape == spec[0] and v.dtype == spec[1]


def _same(a, b):
    if type(a) is tuple and type(b) is tuple:  # an observed check's several results
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.shape(a) == np.shape(b) and bool(np.array_equal(a, b))
    try:
        return bool(a == b) and type(a) is type(b)
    except (TypeError, ValueError):
        return False


def _copy(v):
    return v.copy() if isinstance(v, np.ndarray) else v


_loaded = {}


class numba_settings:
    """Numba's LLVM settings while the generated code compiles: -O1 without the loop and SLP
    vectorizers (on the generated straight-line and small-loop code, Numba's defaults took 3
    times the compile time for no faster code; see diffsci/ARCHITECTURE_JIT.md)."""

    def __enter__(self):
        from numba.core import config

        self.saved = (config.OPT, config.LOOP_VECTORIZE, config.SLP_VECTORIZE)
        config.OPT = type(config.OPT)(1)
        config.LOOP_VECTORIZE = 0
        config.SLP_VECTORIZE = 0

    def __exit__(self, *exc):
        from numba.core import config

        config.OPT, config.LOOP_VECTORIZE, config.SLP_VECTORIZE = self.saved


#: "numba" (compile the generated code) or "python" (run the same source as plain Python:
#: the tests of the code generator use it to cover every primitive without compile times)
BACKEND = os.environ.get("DIFFSCI_JIT_BACKEND", "numba")


class _NoNumba:
    """Stands in for ``numba`` in the generated source under the "python" backend."""

    @staticmethod
    def njit(*args, **kwargs):
        return (lambda f: f) if not args or not callable(args[0]) else args[0]


def _load(source, name, modname=None, python=False):
    if BACKEND == "python" or python:
        digest = "py" + hashlib.sha1(source.encode()).hexdigest()[:20]
        mod = _loaded.get(digest)
        if mod is None:
            modname = modname or f"diffsci_jit_{digest}"
            mod = types.ModuleType(modname)
            code = source.replace("import numba\n", "")
            mod.__dict__["numba"] = _NoNumba
            sys.modules[modname] = mod
            exec(compile(code, f"<diffsci.jit {name}>", "exec"), mod.__dict__)  # noqa: S102
            _loaded[digest] = mod
        return mod
    digest = hashlib.sha1(source.encode()).hexdigest()[:20]
    mod = _loaded.get(digest)
    if mod is not None:
        return mod
    path = Path(cache_dir()) / f"{modname or 'jit_' + digest}.py"
    if not path.exists():
        _write(path, source.encode())
    modname = modname or f"diffsci_jit_{digest}"
    # The bytecode is kept next to the source (the file is named by the source's hash, so
    # it never goes stale), whether or not Python writes its own (PYTHONDONTWRITEBYTECODE):
    # compiling a generated module of a thousand lines takes milliseconds in a new process.
    cpath = path.with_suffix(f".{sys.implementation.cache_tag}.code")
    try:
        code = marshal.loads(cpath.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        code = compile(source, str(path), "exec")
        try:
            _write(cpath, marshal.dumps(code))
        except OSError:
            pass
    mod = types.ModuleType(modname)
    mod.__file__ = str(path)  # Numba's cache finds the source (and its stamp) through it
    sys.modules[modname] = mod
    exec(code, mod.__dict__)  # noqa: S102
    _loaded[digest] = mod
    return mod


def _write(path, data):
    """Write ``data`` to ``path`` atomically (processes share the cache folder)."""
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
