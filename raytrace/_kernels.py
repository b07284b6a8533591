"""Numba render and adjoint kernels (Whitted ray tracing with Blinn–Phong shading).

Plain ``@njit`` functions on float64 structure-of-arrays scene tables; they never see traced
values and never import diffsci. ``raytrace/_pack.py`` builds the tables from a Scene and
``raytrace/_ops.py`` validates the scene first: the kernels assume valid input (finite numbers,
radii > 0, non-degenerate triangles, unit-free plane normals ≠ 0) and say so.

Scene tables (one row per object):

==========  =======  ==============================================================
table       columns  layout
==========  =======  ==============================================================
``cam``     (4, 3)   eye, forward F, right R·tan(fov/2)·W/H, up U·tan(fov/2)
``sph``     (Ns, 4)  centre xyz, radius
``pln``     (Np, 12) point xyz, normal xyz, texture axes u xyz, v xyz
``verts``   (Nv, 3)  triangle vertices; ``tri`` (Nt, 3) int64 indices into ``verts``
``uvs``     (Nv, 2)  texture coordinates (u, v) of the vertices
``mat``     (Nm, 14) diffuse rgb, specular rgb, exponent, reflection, ambient rgb, texture
                     offset (row of ``tex``; −1: none), texture width, texture height
``tex``     (Nx, 3)  the texels of every texture, row-major images one after another
``plights`` (Nl, 7)  position xyz, colour rgb, intensity
``dlights`` (Nd, 7)  direction xyz, colour rgb, intensity
==========  =======  ==============================================================

``sph_mat``, ``pln_mat``, ``tri_mat`` give each object's row of ``mat``.

The primary ray of sample (a, b) of pixel (i, j) (``s × s`` stratified samples) has direction
``normalize(F + α R + β U)`` with α = 2(j + ξ)/W − 1, β = 1 − 2(i + η)/H; ξ, η are the stratum
centres for s = 1 and jittered (an R2 low-discrepancy sequence keyed by pixel, sample and seed)
otherwise. The adjoint kernel re-traces each sample's ray chain, stores its bounces and walks them
backwards; the maths is in ``raytrace/DERIVATIONS.md`` (equations (R1)–(R9)).

References:
    T. Whitted, "An improved illumination model for shaded display", CACM 23(6), 1980.
    J. F. Blinn, "Models of light reflection for computer synthesized pictures", SIGGRAPH 1977.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit, prange

__all__ = [
    "BVH_COLS",
    "MAT_COLS",
    "build_bvh",
    "cast_kernel",
    "T_EPS",
    "render_adjoint_kernel",
    "render_kernel",
    "render_points_kernel",
    "render_tangent_kernel",
]

#: Intersections closer than this are ignored (secondary rays start on the surface they leave).
T_EPS = 1e-6
#: Columns of the material table.
MAT_COLS = 14
KD, KS, EXP, REFL, AMB, TEX, TEXW, TEXH = 0, 3, 6, 7, 8, 11, 12, 13
#: Kinds of hit.
MISS, SPHERE, PLANE, TRIANGLE = -1, 0, 1, 2
_INV4PI = 1.0 / (4.0 * math.pi)
_R2_A1 = 0.7548776662466927
_R2_A2 = 0.5698402909980532
# Columns of one stored bounce in the adjoint kernel.
_B_O, _B_D, _B_X, _B_N, _B_T, _B_S = 0, 3, 6, 9, 12, 13
_B_KIND, _B_IDX, _B_MAT, _B_COLS = 14, 15, 16, 17


# ---------------------------------------------------------------------------
# 3-vectors as tuples (no allocation in the inner loops)
# ---------------------------------------------------------------------------
@njit(cache=True)
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True)
def _add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@njit(cache=True)
def _sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(cache=True)
def _scale(s, a):
    return (s * a[0], s * a[1], s * a[2])


@njit(cache=True)
def _mul(a, b):
    return (a[0] * b[0], a[1] * b[1], a[2] * b[2])


@njit(cache=True)
def _axpy(a, x, y):
    """a·x + y."""
    return (a * x[0] + y[0], a * x[1] + y[1], a * x[2] + y[2])


@njit(cache=True)
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit(cache=True)
def _row(arr, i, off):
    return (arr[i, off], arr[i, off + 1], arr[i, off + 2])


@njit(cache=True)
def _acc1(g, i, j, v):
    """g[i, j] += v (the CUDA kernels swap in an atomic add)."""
    g[i, j] += v


@njit(cache=True)
def _acc(g, i, off, v):
    g[i, off] += v[0]
    g[i, off + 1] += v[1]
    g[i, off + 2] += v[2]


@njit(cache=True)
def _normalize_adj(u, nrm, gbar):
    """Adjoint of n = u/|u|: ū = (n̄ − n (n·n̄)) / |u| (eq. R2)."""
    n = _scale(1.0 / nrm, u)
    return _scale(1.0 / nrm, _axpy(-_dot(n, gbar), n, gbar))


# ---------------------------------------------------------------------------
# Intersection
# ---------------------------------------------------------------------------
@njit(cache=True)
def _triangle_t(o, d, verts, tri, i):
    """Möller–Trumbore: the ray parameter t of the hit with triangle i, or −1 (no hit)."""
    v0 = _row(verts, tri[i, 0], 0)
    e1 = _sub(_row(verts, tri[i, 1], 0), v0)
    e2 = _sub(_row(verts, tri[i, 2], 0), v0)
    p = _cross(d, e2)
    det = _dot(e1, p)
    if det == 0.0:
        return -1.0
    inv = 1.0 / det
    s = _sub(o, v0)
    u = _dot(s, p) * inv
    if u < 0.0 or u > 1.0:
        return -1.0
    q = _cross(s, e1)
    v = _dot(d, q) * inv
    if v < 0.0 or u + v > 1.0:
        return -1.0
    return _dot(e2, q) * inv


@njit(cache=True)
def _slab(lo, hi, o, d, t0, t1):
    """Clip [t0, t1] to the slab lo ≤ o + t d ≤ hi of one axis (t0 > t1: no overlap)."""
    if d == 0.0:
        if o < lo or o > hi:
            return 1.0, 0.0
        return t0, t1
    inv = 1.0 / d
    ta = (lo - o) * inv
    tb = (hi - o) * inv
    if ta > tb:
        ta, tb = tb, ta
    return max(t0, ta), min(t1, tb)


@njit(cache=True)
def _box_hit(bvh, nd, o, d, tmin, tmax):
    """Does the ray segment tmin ≤ t ≤ tmax meet the box of BVH node ``nd``?"""
    t0, t1 = _slab(bvh[nd, 0], bvh[nd, 3], o[0], d[0], tmin, tmax)
    if t0 > t1:
        return False
    t0, t1 = _slab(bvh[nd, 1], bvh[nd, 4], o[1], d[1], t0, t1)
    if t0 > t1:
        return False
    t0, t1 = _slab(bvh[nd, 2], bvh[nd, 5], o[2], d[2], t0, t1)
    return t0 <= t1


@njit(cache=True)
def _intersect_analytic(o, d, tmin, tmax, sph, pln):
    """Closest sphere or plane hit with tmin < t < tmax: (t, kind, index); t = tmax on a miss."""
    best = tmax
    kind = MISS
    idx = -1
    for i in range(sph.shape[0]):
        oc = (o[0] - sph[i, 0], o[1] - sph[i, 1], o[2] - sph[i, 2])
        b = _dot(oc, d)
        disc = b * b - (_dot(oc, oc) - sph[i, 3] * sph[i, 3])
        if disc > 0.0:
            s = math.sqrt(disc)
            t = -b - s
            if t <= tmin:
                t = -b + s
            if tmin < t < best:
                best = t
                kind = SPHERE
                idx = i
    for i in range(pln.shape[0]):
        m = _row(pln, i, 3)
        den = _dot(d, m)
        if den != 0.0:
            t = _dot(_sub(_row(pln, i, 0), o), m) / den
            if tmin < t < best:
                best = t
                kind = PLANE
                idx = i
    return best, kind, idx


@njit(cache=True)
def _intersect(o, d, tmin, tmax, sph, pln, verts, tri, bvh, order):
    """Closest hit of the ray o + t d (|d| = 1) with tmin < t < tmax: (t, kind, index).

    Triangles are found through the BVH ``bvh``/``order`` (see :func:`build_bvh`) when it has
    nodes, else by testing all of them. Ties in t go to the sphere/plane, then to the triangle
    with the lowest index, so both ways return the same hit bit for bit.
    """
    best, kind, idx = _intersect_analytic(o, d, tmin, tmax, sph, pln)
    nn = bvh.shape[0]
    if nn == 0:
        for i in range(tri.shape[0]):
            t = _triangle_t(o, d, verts, tri, i)
            if tmin < t < best:
                best = t
                kind = TRIANGLE
                idx = i
        return best, kind, idx
    # Stackless traversal of the threaded BVH: nodes in depth-first order, column 6 = the node
    # after this one's subtree (where to go on a box miss or after a leaf).
    nd = 0
    while nd < nn:
        if _box_hit(bvh, nd, o, d, tmin, best):
            cnt = int(bvh[nd, 8])
            if cnt == 0:
                nd += 1
                continue
            first = int(bvh[nd, 7])
            for q in range(first, first + cnt):
                i = order[q]
                t = _triangle_t(o, d, verts, tri, i)
                if tmin < t and (t < best or (t == best and kind == TRIANGLE and i < idx)):
                    best = t
                    kind = TRIANGLE
                    idx = i
        nd = int(bvh[nd, 6])
    return best, kind, idx


@njit(cache=True)
def _occluded(o, d, tmax, sph, pln, verts, tri, bvh, order):
    """Is anything hit at T_EPS < t < tmax (any hit; same verdict as :func:`_intersect`)?"""
    t, kind, idx = _intersect_analytic(o, d, T_EPS, tmax, sph, pln)
    if kind != MISS:
        return True
    if bvh.shape[0] == 0:
        for i in range(tri.shape[0]):
            t = _triangle_t(o, d, verts, tri, i)
            if T_EPS < t < tmax:
                return True
        return False
    nd = 0
    nn = bvh.shape[0]
    while nd < nn:
        if _box_hit(bvh, nd, o, d, T_EPS, tmax):
            cnt = int(bvh[nd, 8])
            if cnt == 0:
                nd += 1
                continue
            first = int(bvh[nd, 7])
            for q in range(first, first + cnt):
                t = _triangle_t(o, d, verts, tri, order[q])
                if T_EPS < t < tmax:
                    return True
        nd = int(bvh[nd, 6])
    return False


# ---------------------------------------------------------------------------
# Bounding-volume hierarchy over the triangles (built on the host, once per render)
# ---------------------------------------------------------------------------
#: Scenes with fewer triangles than this skip the BVH (testing them all is as fast).
BVH_MIN_TRIANGLES = 16
#: Triangles per BVH leaf (at most).
BVH_LEAF_SIZE = 4
#: BVH node table columns: box lo xyz, box hi xyz, skip, first, count.
BVH_COLS = 9


@njit(cache=True)
def _spread_bits(x):
    """The 10 low bits of x spread to every third bit (for 30-bit Morton codes)."""
    x &= 0x3FF
    x = (x | (x << 16)) & 0x030000FF
    x = (x | (x << 8)) & 0x0300F00F
    x = (x | (x << 4)) & 0x030C30C3
    x = (x | (x << 2)) & 0x09249249
    return x


@njit(cache=True)
def _morton_split(code, lo, hi):
    """Split sorted Morton codes [lo, hi) where their highest differing bit flips (else halve)."""
    first = code[lo]
    last = code[hi - 1]
    if first == last:
        return (lo + hi) // 2
    bit = 1
    diff = first ^ last
    while diff > 1:
        diff >>= 1
        bit <<= 1
    a = lo
    b = hi - 1  # code[b] has the bit, code[lo] has not: find the first index that has it.
    while b - a > 1:
        m = (a + b) // 2
        if code[m] & bit:
            b = m
        else:
            a = m
    return b


@njit(cache=True)
def build_bvh_kernel(verts, tri, leaf_size, pad):
    """A BVH over ``tri`` in Morton order: (nodes (N, 9), order (Nt,)).

    The triangles are sorted once by the Morton code of their centroids (Lauterbach et al. 2009,
    "Fast BVH construction on GPUs"), and each node splits its range of that order where the
    highest differing code bit flips (a spatial-median split; Karras 2012), so the build is one
    sort plus O(Nt log Nt) work at most. Nodes are in depth-first order (a node's left child is
    the next node); a node's row is its box (lo xyz, hi xyz, widened by ``pad``), the index of
    the node after its subtree, and for a leaf the range ``order[first:first + count]`` of its
    triangles (count 0 for inner nodes).
    """
    nt = tri.shape[0]
    tlo = np.empty((nt, 3))
    thi = np.empty((nt, 3))
    cen = np.empty((nt, 3))
    clo = np.full(3, np.inf)
    chi = np.full(3, -np.inf)
    for i in range(nt):
        for a in range(3):
            x0 = verts[tri[i, 0], a]
            x1 = verts[tri[i, 1], a]
            x2 = verts[tri[i, 2], a]
            tlo[i, a] = min(x0, x1, x2)
            thi[i, a] = max(x0, x1, x2)
            cen[i, a] = (x0 + x1 + x2) / 3.0
            clo[a] = min(clo[a], cen[i, a])
            chi[a] = max(chi[a], cen[i, a])
    code = np.empty(nt, np.int64)
    for i in range(nt):
        c = 0
        for a in range(3):
            ext = chi[a] - clo[a]
            q = int(1023.0 * (cen[i, a] - clo[a]) / ext) if ext > 0.0 else 0
            c |= _spread_bits(q) << (2 - a)
        code[i] = c
    order = np.argsort(code, kind="mergesort")
    sorted_code = code[order]
    cap = max(1, 2 * nt)
    nodes = np.zeros((cap, BVH_COLS))
    right = np.full(cap, -1, np.int64)
    st_lo = np.empty(cap, np.int64)
    st_hi = np.empty(cap, np.int64)
    st_parent = np.empty(cap, np.int64)
    sp = 1
    st_lo[0] = 0
    st_hi[0] = nt
    st_parent[0] = -1
    count = 0
    while sp > 0:
        sp -= 1
        lo = st_lo[sp]
        hi = st_hi[sp]
        if st_parent[sp] >= 0:
            right[st_parent[sp]] = count
        node = count
        count += 1
        if hi - lo <= leaf_size:
            nodes[node, 7] = lo
            nodes[node, 8] = hi - lo
            continue
        mid = _morton_split(sorted_code, lo, hi)
        st_lo[sp] = mid
        st_hi[sp] = hi
        st_parent[sp] = node
        st_lo[sp + 1] = lo
        st_hi[sp + 1] = mid
        st_parent[sp + 1] = -1
        sp += 2
    # Boxes and skip links bottom-up (children come after their parent in depth-first order).
    size = np.ones(count, np.int64)
    for node in range(count - 1, -1, -1):
        if nodes[node, 8] > 0.0:
            first = int(nodes[node, 7])
            for a in range(3):
                lo_a = np.inf
                hi_a = -np.inf
                for q in range(first, first + int(nodes[node, 8])):
                    lo_a = min(lo_a, tlo[order[q], a])
                    hi_a = max(hi_a, thi[order[q], a])
                nodes[node, a] = lo_a - pad
                nodes[node, 3 + a] = hi_a + pad
        else:
            r = right[node]
            size[node] = 1 + size[node + 1] + size[r]
            for a in range(3):
                nodes[node, a] = min(nodes[node + 1, a], nodes[r, a])
                nodes[node, 3 + a] = max(nodes[node + 1, 3 + a], nodes[r, 3 + a])
        nodes[node, 6] = node + size[node]
    return nodes[:count].copy(), order


def build_bvh(verts, tri):
    """The BVH tables ``(bvh, order)`` of a triangle table; empty below BVH_MIN_TRIANGLES."""
    if tri.shape[0] < BVH_MIN_TRIANGLES:
        return np.zeros((0, BVH_COLS)), np.zeros(0, np.int64)
    # Widen boxes a little so rounding in the slab test never culls a hit that the
    # all-triangles loop finds.
    pad = 1e-7 * (1.0 + float(np.abs(verts).max()))
    return build_bvh_kernel(verts, tri, BVH_LEAF_SIZE, pad)


@njit(cache=True)
def _geometry(kind, idx, x, sph, pln, verts, tri):
    """The outward (unflipped) unit normal at x and the hit object's material index slot."""
    if kind == SPHERE:
        r = sph[idx, 3]
        return ((x[0] - sph[idx, 0]) / r, (x[1] - sph[idx, 1]) / r, (x[2] - sph[idx, 2]) / r)
    if kind == PLANE:
        m = _row(pln, idx, 3)
    else:
        v0 = _row(verts, tri[idx, 0], 0)
        m = _cross(_sub(_row(verts, tri[idx, 1], 0), v0), _sub(_row(verts, tri[idx, 2], 0), v0))
    return _scale(1.0 / math.sqrt(_dot(m, m)), m)


@njit(cache=True)
def _material_index(kind, idx, sph_mat, pln_mat, tri_mat):
    if kind == SPHERE:
        return sph_mat[idx]
    if kind == PLANE:
        return pln_mat[idx]
    return tri_mat[idx]


# ---------------------------------------------------------------------------
# Textures: UV coordinates at a hit and bilinear image lookups (eqs. R14–R15)
# ---------------------------------------------------------------------------
@njit(cache=True)
def _tex_axis(u, n):
    """Bilinear coordinate along one texture axis of n texels (repeat wrap): (i0, i1, frac).

    Texel c has its centre at u = (c + 0.5)/n; u is wrapped to [0, 1) first.
    """
    s = (u - math.floor(u)) * n - 0.5
    f0 = math.floor(s)
    i0 = int(f0)
    if i0 < 0:
        i0 += n
    i1 = i0 + 1
    if i1 >= n:
        i1 -= n
    return i0, i1, s - f0


@njit(cache=True)
def _tex_lookup(tex, mat, mi, u, v):
    """Bilinear lookup of material mi's texture at (u, v): (T, ∂T/∂u, ∂T/∂v) (eq. R14)."""
    off = int(mat[mi, TEX])
    w = int(mat[mi, TEXW])
    h = int(mat[mi, TEXH])
    c0, c1, fx = _tex_axis(u, w)
    r0, r1, fy = _tex_axis(v, h)
    t00 = _row(tex, off + r0 * w + c0, 0)
    t01 = _row(tex, off + r0 * w + c1, 0)
    t10 = _row(tex, off + r1 * w + c0, 0)
    t11 = _row(tex, off + r1 * w + c1, 0)
    top = _axpy(fx, _sub(t01, t00), t00)
    bot = _axpy(fx, _sub(t11, t10), t10)
    val = _axpy(fy, _sub(bot, top), top)
    du = _scale(w, _axpy(fy, _sub(_sub(t11, t10), _sub(t01, t00)), _sub(t01, t00)))
    dv = _scale(h, _sub(bot, top))
    return val, du, dv


@njit(cache=True)
def _tex_scatter(tex_bar, mat, mi, u, v, gbar):
    """Adjoint of the lookup in the texels: tex_bar[texel] += bilinear weight · ḡ (eq. R14)."""
    off = int(mat[mi, TEX])
    w = int(mat[mi, TEXW])
    h = int(mat[mi, TEXH])
    c0, c1, fx = _tex_axis(u, w)
    r0, r1, fy = _tex_axis(v, h)
    _acc(tex_bar, off + r0 * w + c0, 0, _scale((1.0 - fx) * (1.0 - fy), gbar))
    _acc(tex_bar, off + r0 * w + c1, 0, _scale(fx * (1.0 - fy), gbar))
    _acc(tex_bar, off + r1 * w + c0, 0, _scale((1.0 - fx) * fy, gbar))
    _acc(tex_bar, off + r1 * w + c1, 0, _scale(fx * fy, gbar))


@njit(cache=True)
def _barycentric(x, verts, tri, idx):
    """Barycentrics (b1, b2) of x on triangle idx and the dual vectors g1, g2 (eq. R15)."""
    v0 = _row(verts, tri[idx, 0], 0)
    e1 = _sub(_row(verts, tri[idx, 1], 0), v0)
    e2 = _sub(_row(verts, tri[idx, 2], 0), v0)
    m = _cross(e1, e2)
    a = 1.0 / _dot(m, m)
    g1 = _scale(a, _cross(e2, m))
    g2 = _scale(a, _cross(m, e1))
    q = _sub(x, v0)
    return _dot(q, g1), _dot(q, g2), g1, g2


@njit(cache=True)
def _uv(kind, idx, x, pln, verts, uvs, tri):
    """Texture coordinates (u, v) of the hit x: planar axes for planes, barycentric
    interpolation of the vertex UVs for triangles (eq. R15)."""
    if kind == PLANE:
        q = _sub(x, _row(pln, idx, 0))
        return _dot(q, _row(pln, idx, 6)), _dot(q, _row(pln, idx, 9))
    b1, b2, g1, g2 = _barycentric(x, verts, tri, idx)
    b0 = 1.0 - b1 - b2
    i0 = tri[idx, 0]
    i1 = tri[idx, 1]
    i2 = tri[idx, 2]
    u = b0 * uvs[i0, 0] + b1 * uvs[i1, 0] + b2 * uvs[i2, 0]
    v = b0 * uvs[i0, 1] + b1 * uvs[i1, 1] + b2 * uvs[i2, 1]
    return u, v


@njit(cache=True)
def _diffuse(kind, idx, x, mi, mat, tex, pln, verts, uvs, tri):
    """The diffuse colour at a hit: the material's, times its texture at the hit's UV."""
    kd = _row(mat, mi, KD)
    if mat[mi, TEX] < 0.0 or kind == SPHERE:
        return kd
    u, v = _uv(kind, idx, x, pln, verts, uvs, tri)
    return _mul(kd, _tex_lookup(tex, mat, mi, u, v)[0])


@njit(cache=True)
def _diffuse_adj(kdbar, kind, idx, x, mi, mat, tex, pln, verts, uvs, tri, gmat, gtex, gpln,
                 gverts, guvs):
    """Adjoint of _diffuse: accumulates material, texel, UV and geometry cotangents; returns
    the hit point's x̄ (eqs. R14–R15)."""
    if mat[mi, TEX] < 0.0 or kind == SPHERE:
        _acc(gmat, mi, KD, kdbar)
        return (0.0, 0.0, 0.0)
    kd = _row(mat, mi, KD)
    u, v = _uv(kind, idx, x, pln, verts, uvs, tri)
    tv, tu, tvv = _tex_lookup(tex, mat, mi, u, v)
    _acc(gmat, mi, KD, _mul(kdbar, tv))
    tbar = _mul(kdbar, kd)
    _tex_scatter(gtex, mat, mi, u, v, tbar)
    ubar = _dot(tbar, tu)
    vbar = _dot(tbar, tvv)
    if kind == PLANE:
        q = _sub(x, _row(pln, idx, 0))
        ax_u = _row(pln, idx, 6)
        ax_v = _row(pln, idx, 9)
        xbar = _axpy(ubar, ax_u, _scale(vbar, ax_v))
        _acc(gpln, idx, 0, _scale(-1.0, xbar))
        _acc(gpln, idx, 6, _scale(ubar, q))
        _acc(gpln, idx, 9, _scale(vbar, q))
        return xbar
    b1, b2, g1, g2 = _barycentric(x, verts, tri, idx)
    b0 = 1.0 - b1 - b2
    i0 = tri[idx, 0]
    i1 = tri[idx, 1]
    i2 = tri[idx, 2]
    _acc1(guvs, i0, 0, b0 * ubar)
    _acc1(guvs, i0, 1, b0 * vbar)
    _acc1(guvs, i1, 0, b1 * ubar)
    _acc1(guvs, i1, 1, b1 * vbar)
    _acc1(guvs, i2, 0, b2 * ubar)
    _acc1(guvs, i2, 1, b2 * vbar)
    b1bar = ubar * (uvs[i1, 0] - uvs[i0, 0]) + vbar * (uvs[i1, 1] - uvs[i0, 1])
    b2bar = ubar * (uvs[i2, 0] - uvs[i0, 0]) + vbar * (uvs[i2, 1] - uvs[i0, 1])
    gg = _axpy(b1bar, g1, _scale(b2bar, g2))
    _acc(gverts, i0, 0, _scale(-b0, gg))
    _acc(gverts, i1, 0, _scale(-b1, gg))
    _acc(gverts, i2, 0, _scale(-b2, gg))
    return gg


@njit(cache=True)
def _diffuse_jvp(kind, idx, x, dx, mi, mat, dmat, tex, dtex, pln, dpln, verts, dverts, uvs, duvs,
                 tri):
    """_diffuse and its tangent (eqs. R14–R15, forward)."""
    kd = _row(mat, mi, KD)
    dkd = _row(dmat, mi, KD)
    if mat[mi, TEX] < 0.0 or kind == SPHERE:
        return kd, dkd
    if kind == PLANE:
        q = _sub(x, _row(pln, idx, 0))
        dq = _sub(dx, _row(dpln, idx, 0))
        ax_u = _row(pln, idx, 6)
        ax_v = _row(pln, idx, 9)
        u = _dot(q, ax_u)
        v = _dot(q, ax_v)
        du = _dot(dq, ax_u) + _dot(q, _row(dpln, idx, 6))
        dv = _dot(dq, ax_v) + _dot(q, _row(dpln, idx, 9))
    else:
        b1, b2, g1, g2 = _barycentric(x, verts, tri, idx)
        b0 = 1.0 - b1 - b2
        i0 = tri[idx, 0]
        i1 = tri[idx, 1]
        i2 = tri[idx, 2]
        w = _sub(dx, _axpy(b0, _row(dverts, i0, 0),
                           _axpy(b1, _row(dverts, i1, 0), _scale(b2, _row(dverts, i2, 0)))))
        db1 = _dot(g1, w)
        db2 = _dot(g2, w)
        db0 = -db1 - db2
        u = b0 * uvs[i0, 0] + b1 * uvs[i1, 0] + b2 * uvs[i2, 0]
        v = b0 * uvs[i0, 1] + b1 * uvs[i1, 1] + b2 * uvs[i2, 1]
        du = (db0 * uvs[i0, 0] + db1 * uvs[i1, 0] + db2 * uvs[i2, 0]
              + b0 * duvs[i0, 0] + b1 * duvs[i1, 0] + b2 * duvs[i2, 0])
        dv = (db0 * uvs[i0, 1] + db1 * uvs[i1, 1] + db2 * uvs[i2, 1]
              + b0 * duvs[i0, 1] + b1 * duvs[i1, 1] + b2 * duvs[i2, 1])
    tv, tu, tvv = _tex_lookup(tex, mat, mi, u, v)
    # The lookup is linear in the texels: its texel tangent is the lookup of dtex.
    dt = _add(_tex_lookup(dtex, mat, mi, u, v)[0], _axpy(du, tu, _scale(dv, tvv)))
    return _mul(kd, tv), _add(_mul(dkd, tv), _mul(kd, dt))


# ---------------------------------------------------------------------------
# Shading (Blinn–Phong with ambient and hard shadows)
# ---------------------------------------------------------------------------
@njit(cache=True)
def _light_term(n, v, l, e, kd, mat, mi):
    """E ⊙ (kd max(n·l,0) + ks max(n·h,0)^p) for a visible light with n·l > 0."""
    hh = _add(l, v)
    h = _scale(1.0 / math.sqrt(_dot(hh, hh)), hh)
    nh = _dot(n, h)
    spec = nh ** mat[mi, EXP] if nh > 0.0 else 0.0
    nl = _dot(n, l)
    ks = _row(mat, mi, KS)
    return _mul(e, _axpy(spec, ks, _scale(nl, kd)))


@njit(cache=True)
def _shade(x, n, d, mi, kd, mat, plights, dlights, sph, pln, verts, tri, bvh, order):
    """Local colour at a hit with diffuse colour kd: ambient + Σ visible lights (eq. R1)."""
    c = _row(mat, mi, AMB)
    v = (-d[0], -d[1], -d[2])
    for k in range(plights.shape[0]):
        w = _sub(_row(plights, k, 0), x)
        dist2 = _dot(w, w)
        dist = math.sqrt(dist2)
        l = _scale(1.0 / dist, w)
        if _dot(n, l) <= 0.0 or _occluded(x, l, dist, sph, pln, verts, tri, bvh, order):
            continue
        e = _scale(plights[k, 6] * _INV4PI / dist2, _row(plights, k, 3))
        c = _add(c, _light_term(n, v, l, e, kd, mat, mi))
    for k in range(dlights.shape[0]):
        w = _row(dlights, k, 0)
        l = _scale(-1.0 / math.sqrt(_dot(w, w)), w)
        if _dot(n, l) <= 0.0 or _occluded(x, l, np.inf, sph, pln, verts, tri, bvh, order):
            continue
        e = _scale(dlights[k, 6], _row(dlights, k, 3))
        c = _add(c, _light_term(n, v, l, e, kd, mat, mi))
    return c


# ---------------------------------------------------------------------------
# Camera rays
# ---------------------------------------------------------------------------
@njit(cache=True)
def sample_offsets(pix, k, side, seed):
    """Position (ξ, η) in [0, 1)² of sample k of pixel ``pix`` (stratified, R2-jittered)."""
    a = k // side
    b = k - a * side
    if side == 1:
        return 0.5, 0.5
    n = float(pix * side * side + k) + 7919.0 * seed
    jx = (0.5 + n * _R2_A1) % 1.0
    jy = (0.5 + n * _R2_A2) % 1.0
    return (b + jx) / side, (a + jy) / side


@njit(cache=True)
def _primary(cam, i, j, sx, sy, width, height):
    """Unnormalised direction u = F + α R + β U and (α, β) of a primary ray."""
    al = 2.0 * (j + sx) / width - 1.0
    be = 1.0 - 2.0 * (i + sy) / height
    u = (cam[1, 0] + al * cam[2, 0] + be * cam[3, 0],
         cam[1, 1] + al * cam[2, 1] + be * cam[3, 1],
         cam[1, 2] + al * cam[2, 2] + be * cam[3, 2])
    return u, al, be


# ---------------------------------------------------------------------------
# Forward render
# ---------------------------------------------------------------------------
@njit(cache=True)
def _trace(o, d, depth, bg, sph, sph_mat, pln, pln_mat, verts, uvs, tri, tri_mat, mat, tex,
           plights, dlights, bvh, order):
    """Colour seen along the ray: local shading plus up to ``depth`` mirror bounces (Whitted)."""
    col = (0.0, 0.0, 0.0)
    w = 1.0
    for _ in range(depth + 1):
        t, kind, idx = _intersect(o, d, T_EPS, np.inf, sph, pln, verts, tri, bvh, order)
        if kind == MISS:
            return _axpy(w, bg, col)
        x = _axpy(t, d, o)
        n = _geometry(kind, idx, x, sph, pln, verts, tri)
        if _dot(n, d) > 0.0:
            n = (-n[0], -n[1], -n[2])
        mi = _material_index(kind, idx, sph_mat, pln_mat, tri_mat)
        kd = _diffuse(kind, idx, x, mi, mat, tex, pln, verts, uvs, tri)
        col = _axpy(w, _shade(x, n, d, mi, kd, mat, plights, dlights, sph, pln, verts, tri, bvh,
                              order), col)
        r = mat[mi, REFL]
        if r == 0.0:
            break
        w *= r
        d = _axpy(-2.0 * _dot(d, n), n, d)
        o = x
    return col


@njit(parallel=True, cache=True)
def render_kernel(width, height, side, depth, seed, cam, bg, sph, sph_mat, pln, pln_mat, verts,
                  uvs, tri, tri_mat, mat, tex, plights, dlights, bvh, order, out):
    """Render into ``out`` (height, width, 3): the mean over ``side²`` samples per pixel."""
    ns = side * side
    for pix in prange(width * height):
        i = pix // width
        j = pix - i * width
        acc = (0.0, 0.0, 0.0)
        eye = _row(cam, 0, 0)
        for k in range(ns):
            sx, sy = sample_offsets(pix, k, side, seed)
            u, al, be = _primary(cam, i, j, sx, sy, width, height)
            d = _scale(1.0 / math.sqrt(_dot(u, u)), u)
            acc = _add(acc, _trace(eye, d, depth, bg, sph, sph_mat, pln, pln_mat, verts, uvs,
                                   tri, tri_mat, mat, tex, plights, dlights, bvh, order))
        out[i, j, 0] = acc[0] / ns
        out[i, j, 1] = acc[1] / ns
        out[i, j, 2] = acc[2] / ns


# ---------------------------------------------------------------------------
# Adjoint
# ---------------------------------------------------------------------------
@njit(cache=True)
def _light_term_adj(gbar, n, v, l, e, kd, mat, mi, gmat):
    """Adjoint of _light_term (eq. R4): accumulates specular cotangents; returns
    (ē, n̄, v̄, l̄, k̄_d)."""
    hh = _add(l, v)
    hn = math.sqrt(_dot(hh, hh))
    h = _scale(1.0 / hn, hh)
    nh = _dot(n, h)
    p = mat[mi, EXP]
    nl = _dot(n, l)
    ks = _row(mat, mi, KS)
    spec = nh ** p if nh > 0.0 else 0.0
    b = _axpy(spec, ks, _scale(nl, kd))
    ebar = _mul(gbar, b)
    bbar = _mul(gbar, e)
    _acc(gmat, mi, KS, _scale(spec, bbar))
    nlbar = _dot(bbar, kd)
    specbar = _dot(bbar, ks)
    nhbar = 0.0
    if nh > 0.0:
        _acc1(gmat, mi, EXP, specbar * spec * math.log(nh))
        nhbar = specbar * p * nh ** (p - 1.0)
    nbar = _axpy(nlbar, l, _scale(nhbar, h))
    hhbar = _normalize_adj(hh, hn, _scale(nhbar, n))
    lbar = _axpy(nlbar, n, hhbar)
    return ebar, nbar, hhbar, lbar, _scale(nl, bbar)


@njit(cache=True)
def _shade_adj(gbar, x, n, d, mi, kd, mat, plights, dlights, sph, pln, verts, tri, bvh, order,
               gmat, gpl, gdl):
    """Adjoint of _shade with output cotangent ``gbar``: returns (x̄, n̄, d̄, k̄_d) (eqs. R3–R5)."""
    _acc(gmat, mi, AMB, gbar)
    v = (-d[0], -d[1], -d[2])
    xbar = (0.0, 0.0, 0.0)
    nbar = (0.0, 0.0, 0.0)
    vbar = (0.0, 0.0, 0.0)
    kdbar = (0.0, 0.0, 0.0)
    for k in range(plights.shape[0]):
        w = _sub(_row(plights, k, 0), x)
        dist2 = _dot(w, w)
        dist = math.sqrt(dist2)
        l = _scale(1.0 / dist, w)
        if _dot(n, l) <= 0.0 or _occluded(x, l, dist, sph, pln, verts, tri, bvh, order):
            continue
        col = _row(plights, k, 3)
        inten = plights[k, 6]
        e = _scale(inten * _INV4PI / dist2, col)
        ebar, nb, vb, lbar, kb = _light_term_adj(gbar, n, v, l, e, kd, mat, mi, gmat)
        nbar = _add(nbar, nb)
        vbar = _add(vbar, vb)
        kdbar = _add(kdbar, kb)
        # e = I c / (4π |w|²), l = w / |w|.
        _acc(gpl, k, 3, _scale(inten * _INV4PI / dist2, ebar))
        _acc1(gpl, k, 6, _dot(ebar, col) * _INV4PI / dist2)
        dist2bar = -_dot(ebar, e) / dist2
        wbar = _axpy(2.0 * dist2bar, w, _normalize_adj(w, dist, lbar))
        _acc(gpl, k, 0, wbar)
        xbar = _sub(xbar, wbar)
    for k in range(dlights.shape[0]):
        w = _row(dlights, k, 0)
        wn = math.sqrt(_dot(w, w))
        l = _scale(-1.0 / wn, w)
        if _dot(n, l) <= 0.0 or _occluded(x, l, np.inf, sph, pln, verts, tri, bvh, order):
            continue
        col = _row(dlights, k, 3)
        inten = dlights[k, 6]
        e = _scale(inten, col)
        ebar, nb, vb, lbar, kb = _light_term_adj(gbar, n, v, l, e, kd, mat, mi, gmat)
        nbar = _add(nbar, nb)
        vbar = _add(vbar, vb)
        kdbar = _add(kdbar, kb)
        _acc(gdl, k, 3, _scale(inten, ebar))
        _acc1(gdl, k, 6, _dot(ebar, col))
        _acc(gdl, k, 0, _scale(-1.0, _normalize_adj(w, wn, lbar)))
    return xbar, nbar, (-vbar[0], -vbar[1], -vbar[2]), kdbar


@njit(cache=True)
def _hit_adj(kind, idx, s, o, d, t, x, xbar, nbar, sph, pln, verts, tri, gsph, gpln, gverts):
    """Adjoint of x = o + t(o, d, θ) d and n = s·normal(x, θ) (eqs. R6–R8): returns (ō, d̄)."""
    if kind == SPHERE:
        c = _row(sph, idx, 0)
        r = sph[idx, 3]
        q = _sub(x, c)
        # n = s q / r
        xbar = _axpy(s / r, nbar, xbar)
        _acc(gsph, idx, 0, _scale(-s / r, nbar))
        _acc1(gsph, idx, 3, -s * _dot(nbar, q) / (r * r))
        tbar = _dot(xbar, d)
        den = _dot(q, d)
        obar = _axpy(-tbar / den, q, xbar)
        dbar = _axpy(-tbar * t / den, q, _scale(t, xbar))
        _acc(gsph, idx, 0, _scale(tbar / den, q))
        _acc1(gsph, idx, 3, tbar * r / den)
        return obar, dbar
    if kind == PLANE:
        p = _row(pln, idx, 0)
        m = _row(pln, idx, 3)
    else:
        i0 = tri[idx, 0]
        i1 = tri[idx, 1]
        i2 = tri[idx, 2]
        p = _row(verts, i0, 0)
        e1 = _sub(_row(verts, i1, 0), p)
        e2 = _sub(_row(verts, i2, 0), p)
        m = _cross(e1, e2)
    mn = math.sqrt(_dot(m, m))
    mbar = _normalize_adj(m, mn, _scale(s, nbar))
    tbar = _dot(xbar, d)
    den = _dot(d, m)
    obar = _axpy(-tbar / den, m, xbar)
    dbar = _axpy(-tbar * t / den, m, _scale(t, xbar))
    pbar = _scale(tbar / den, m)
    mbar = _axpy(-tbar / den, _sub(x, p), mbar)
    if kind == PLANE:
        _acc(gpln, idx, 0, pbar)
        _acc(gpln, idx, 3, mbar)
    else:
        e1bar = _cross(e2, mbar)
        e2bar = _cross(mbar, e1)
        _acc(gverts, i1, 0, e1bar)
        _acc(gverts, i2, 0, e2bar)
        _acc(gverts, i0, 0, _sub(pbar, _add(e1bar, e2bar)))
    return obar, dbar


@njit(cache=True)
def _trace_adj(o, d, gbar, depth, bg, sph, sph_mat, pln, pln_mat, verts, uvs, tri, tri_mat, mat,
               tex, plights, dlights, bvh, order, rec, gbg, gsph, gpln, gverts, guvs, gmat, gtex,
               gpl, gdl):
    """Re-trace one ray chain into ``rec`` and walk it backwards: returns (ō, d̄) of the ray."""
    nb = 0
    missed = False
    rzero = 0.0  # ḡ·(colour of the mirror ray) at a last hit with reflection 0 (eq. R9)
    for bounce in range(depth + 1):
        t, kind, idx = _intersect(o, d, T_EPS, np.inf, sph, pln, verts, tri, bvh, order)
        for c in range(3):
            rec[nb, _B_O + c] = o[c]
            rec[nb, _B_D + c] = d[c]
        rec[nb, _B_KIND] = kind
        nb += 1
        if kind == MISS:
            missed = True
            break
        x = _axpy(t, d, o)
        n = _geometry(kind, idx, x, sph, pln, verts, tri)
        s = 1.0
        if _dot(n, d) > 0.0:
            s = -1.0
            n = (-n[0], -n[1], -n[2])
        mi = _material_index(kind, idx, sph_mat, pln_mat, tri_mat)
        for c in range(3):
            rec[nb - 1, _B_X + c] = x[c]
            rec[nb - 1, _B_N + c] = n[c]
        rec[nb - 1, _B_T] = t
        rec[nb - 1, _B_S] = s
        rec[nb - 1, _B_IDX] = idx
        rec[nb - 1, _B_MAT] = mi
        if mat[mi, REFL] == 0.0:
            if bounce < depth:
                # The mirror ray is not traced in the forward pass (its weight is 0), but the
                # derivative with respect to the reflection coefficient is its colour.
                dr = _axpy(-2.0 * _dot(d, n), n, d)
                mc = _trace(x, dr, depth - bounce - 1, bg, sph, sph_mat, pln, pln_mat, verts,
                            uvs, tri, tri_mat, mat, tex, plights, dlights, bvh, order)
                rzero = _dot(gbar, mc)
            break
        d = _axpy(-2.0 * _dot(d, n), n, d)
        o = x
    # Weights W_k = Π_{i<k} refl_i (eq. R9).
    w = 1.0
    for k in range(nb):
        rec[k, _B_COLS] = w
        if rec[k, _B_KIND] != MISS:
            w *= mat[int(rec[k, _B_MAT]), REFL]
    obar_next = (0.0, 0.0, 0.0)
    dbar_next = (0.0, 0.0, 0.0)
    rnext = 0.0  # R_{k+1} = ḡ·(colour seen by ray k+1)
    for k in range(nb - 1, -1, -1):
        wk = rec[k, _B_COLS]
        if k == nb - 1 and missed:
            _acc2(gbg, _scale(wk, gbar))
            rnext = gbar[0] * bg[0] + gbar[1] * bg[1] + gbar[2] * bg[2]
            continue
        o = _row(rec, k, _B_O)
        d = _row(rec, k, _B_D)
        x = _row(rec, k, _B_X)
        n = _row(rec, k, _B_N)
        t = rec[k, _B_T]
        s = rec[k, _B_S]
        kind = int(rec[k, _B_KIND])
        idx = int(rec[k, _B_IDX])
        mi = int(rec[k, _B_MAT])
        refl = mat[mi, REFL]
        xbar = (0.0, 0.0, 0.0)
        nbar = (0.0, 0.0, 0.0)
        dbar = (0.0, 0.0, 0.0)
        if k == nb - 1:
            _acc1(gmat, mi, REFL, wk * rzero)
        else:
            # The next ray: o' = x, d' = d − 2 (d·n) n, weighted by refl (eq. R9).
            _acc1(gmat, mi, REFL, wk * rnext)
            xbar = obar_next
            dn = _dot(d, n)
            ndb = _dot(n, dbar_next)
            dbar = _axpy(-2.0 * ndb, n, dbar_next)
            nbar = _scale(-2.0, _axpy(dn, dbar_next, _scale(ndb, d)))
        kd = _diffuse(kind, idx, x, mi, mat, tex, pln, verts, uvs, tri)
        loc = _shade(x, n, d, mi, kd, mat, plights, dlights, sph, pln, verts, tri, bvh, order)
        rnext = _dot(gbar, loc) + refl * rnext
        xb, nb2, db, kdbar = _shade_adj(_scale(wk, gbar), x, n, d, mi, kd, mat, plights, dlights,
                                        sph, pln, verts, tri, bvh, order, gmat, gpl, gdl)
        xbar = _add(xbar, xb)
        xbar = _add(xbar, _diffuse_adj(kdbar, kind, idx, x, mi, mat, tex, pln, verts, uvs, tri,
                                       gmat, gtex, gpln, gverts, guvs))
        nbar = _add(nbar, nb2)
        dbar = _add(dbar, db)
        ob, db2 = _hit_adj(kind, idx, s, o, d, t, x, xbar, nbar, sph, pln, verts, tri, gsph, gpln,
                           gverts)
        obar_next = ob
        dbar_next = _add(dbar, db2)
    return obar_next, dbar_next


@njit(cache=True)
def _acc2(g, v):
    g[0] += v[0]
    g[1] += v[1]
    g[2] += v[2]


@njit(parallel=True, cache=True)
def render_adjoint_kernel(width, height, side, depth, seed, cam, bg, sph, sph_mat, pln, pln_mat,
                          verts, uvs, tri, tri_mat, mat, tex, plights, dlights, bvh, order, gimg,
                          nchunks, gcam, gbg, gsph, gpln, gverts, guvs, gmat, gtex, gpl, gdl):
    """Accumulate ⟨ḡ, ∂image/∂θ⟩ for every scene table θ (interior terms; no visibility edges).

    ``gimg`` (height, width, 3) is the image cotangent. Each of the ``nchunks`` parallel chunks of
    pixels owns slice ``[c]`` of every output ``g*`` (leading axis ``nchunks``); the caller sums
    them. ``gcam`` receives the cotangent of the ``cam`` table (eye, F, R, U).
    """
    npix = width * height
    ns = side * side
    for c in prange(nchunks):
        rec = np.zeros((depth + 1, _B_COLS + 1))
        lo = c * npix // nchunks
        hi = (c + 1) * npix // nchunks
        eye = _row(cam, 0, 0)
        for pix in range(lo, hi):
            i = pix // width
            j = pix - i * width
            gbar = (gimg[i, j, 0] / ns, gimg[i, j, 1] / ns, gimg[i, j, 2] / ns)
            if gbar[0] == 0.0 and gbar[1] == 0.0 and gbar[2] == 0.0:
                continue
            for k in range(ns):
                sx, sy = sample_offsets(pix, k, side, seed)
                u, al, be = _primary(cam, i, j, sx, sy, width, height)
                un = math.sqrt(_dot(u, u))
                d = _scale(1.0 / un, u)
                obar, dbar = _trace_adj(eye, d, gbar, depth, bg, sph, sph_mat, pln, pln_mat,
                                        verts, uvs, tri, tri_mat, mat, tex, plights, dlights, bvh,
                                        order, rec, gbg[c], gsph[c], gpln[c], gverts[c], guvs[c],
                                        gmat[c], gtex[c], gpl[c], gdl[c])
                ubar = _normalize_adj(u, un, dbar)
                _acc(gcam[c], 0, 0, obar)
                _acc(gcam[c], 1, 0, ubar)
                _acc(gcam[c], 2, 0, _scale(al, ubar))
                _acc(gcam[c], 3, 0, _scale(be, ubar))


def default_chunks() -> int:
    """Parallel chunks of the adjoint kernel: a few per thread, for load balance."""
    return 4 * numba.get_num_threads()


@njit(parallel=True, cache=True)
def render_points_kernel(points, depth, cam, bg, sph, sph_mat, pln, pln_mat, verts, uvs, tri,
                         tri_mat, mat, tex, plights, dlights, bvh, order, width, height, out):
    """Trace one primary ray through each screen point (x, y) in pixel units into ``out`` (N, 3).

    Pixel (i, j) covers x ∈ [j, j + 1), y ∈ [i, i + 1); used by the edge term to evaluate the
    image on both sides of a visibility edge.
    """
    eye = _row(cam, 0, 0)
    for k in prange(points.shape[0]):
        u, al, be = _primary(cam, 0, 0, points[k, 0], points[k, 1], width, height)
        d = _scale(1.0 / math.sqrt(_dot(u, u)), u)
        c = _trace(eye, d, depth, bg, sph, sph_mat, pln, pln_mat, verts, uvs, tri, tri_mat, mat,
                   tex, plights, dlights, bvh, order)
        out[k, 0] = c[0]
        out[k, 1] = c[1]
        out[k, 2] = c[2]


@njit(parallel=True, cache=True)
def cast_kernel(origins, dirs, sph, pln, verts, tri, bvh, order, t_out, kind_out, idx_out):
    """Closest hit (t, kind, index) of each ray origins[k] + t d̂[k], d̂ = dirs[k]/|dirs[k]|.

    Used by the shadow-edge term to find the receiver behind an occluder's silhouette.
    """
    for k in prange(origins.shape[0]):
        o = (origins[k, 0], origins[k, 1], origins[k, 2])
        u = (dirs[k, 0], dirs[k, 1], dirs[k, 2])
        d = _scale(1.0 / math.sqrt(_dot(u, u)), u)
        t, kind, idx = _intersect(o, d, T_EPS, np.inf, sph, pln, verts, tri, bvh, order)
        t_out[k] = t
        kind_out[k] = kind
        idx_out[k] = idx


# ---------------------------------------------------------------------------
# Tangent (forward mode): the image's directional derivative along a tangent of every table
# ---------------------------------------------------------------------------
@njit(cache=True)
def _normalize_jvp(u, nrm, du):
    """Tangent of n = u/|u|: ṅ = (u̇ − n (n·u̇)) / |u| (eq. R2, forward)."""
    n = _scale(1.0 / nrm, u)
    return _scale(1.0 / nrm, _axpy(-_dot(n, du), n, du))


@njit(cache=True)
def _light_term_jvp(n, dn, v, dv, l, dl, e, de, kd, dkd, mat, dmat, mi):
    """_light_term and its tangent (eq. R4, forward)."""
    hh = _add(l, v)
    hn = math.sqrt(_dot(hh, hh))
    h = _scale(1.0 / hn, hh)
    dh = _normalize_jvp(hh, hn, _add(dl, dv))
    nh = _dot(n, h)
    dnh = _dot(dn, h) + _dot(n, dh)
    p = mat[mi, EXP]
    spec = 0.0
    dspec = 0.0
    if nh > 0.0:
        spec = nh ** p
        dspec = p * nh ** (p - 1.0) * dnh + spec * math.log(nh) * dmat[mi, EXP]
    nl = _dot(n, l)
    dnl = _dot(dn, l) + _dot(n, dl)
    ks = _row(mat, mi, KS)
    b = _axpy(spec, ks, _scale(nl, kd))
    db = _add(_axpy(dspec, ks, _scale(spec, _row(dmat, mi, KS))),
              _axpy(dnl, kd, _scale(nl, dkd)))
    return _mul(e, b), _add(_mul(de, b), _mul(e, db))


@njit(cache=True)
def _shade_jvp(x, dx, n, dn, d, dd, mi, kd, dkd, mat, dmat, plights, dpl, dlights, ddl, sph, pln,
               verts, tri, bvh, order):
    """_shade and its tangent (eqs. R3–R5, forward); visibility is held fixed."""
    c = _row(mat, mi, AMB)
    dc = _row(dmat, mi, AMB)
    v = (-d[0], -d[1], -d[2])
    dv = (-dd[0], -dd[1], -dd[2])
    for k in range(plights.shape[0]):
        w = _sub(_row(plights, k, 0), x)
        dist2 = _dot(w, w)
        dist = math.sqrt(dist2)
        l = _scale(1.0 / dist, w)
        if _dot(n, l) <= 0.0 or _occluded(x, l, dist, sph, pln, verts, tri, bvh, order):
            continue
        dw = _sub(_row(dpl, k, 0), dx)
        dl = _normalize_jvp(w, dist, dw)
        col = _row(plights, k, 3)
        inten = plights[k, 6]
        e = _scale(inten * _INV4PI / dist2, col)
        de = _axpy(-2.0 * _dot(w, dw) / dist2, e,
                   _scale(_INV4PI / dist2, _axpy(dpl[k, 6], col, _scale(inten, _row(dpl, k, 3)))))
        t, dt = _light_term_jvp(n, dn, v, dv, l, dl, e, de, kd, dkd, mat, dmat, mi)
        c = _add(c, t)
        dc = _add(dc, dt)
    for k in range(dlights.shape[0]):
        w = _row(dlights, k, 0)
        wn = math.sqrt(_dot(w, w))
        l = _scale(-1.0 / wn, w)
        if _dot(n, l) <= 0.0 or _occluded(x, l, np.inf, sph, pln, verts, tri, bvh, order):
            continue
        dl = _scale(-1.0, _normalize_jvp(w, wn, _row(ddl, k, 0)))
        col = _row(dlights, k, 3)
        inten = dlights[k, 6]
        e = _scale(inten, col)
        de = _axpy(ddl[k, 6], col, _scale(inten, _row(ddl, k, 3)))
        t, dt = _light_term_jvp(n, dn, v, dv, l, dl, e, de, kd, dkd, mat, dmat, mi)
        c = _add(c, t)
        dc = _add(dc, dt)
    return c, dc


@njit(cache=True)
def _hit_jvp(kind, idx, s, o, do, d, dd, t, x, sph, dsph, pln, dpln, verts, dverts, tri):
    """Tangents (ẋ, ṅ) of the hit point and signed normal (eqs. R6–R8, forward)."""
    if kind == SPHERE:
        c = _row(sph, idx, 0)
        dc = _row(dsph, idx, 0)
        r = sph[idx, 3]
        dr = dsph[idx, 3]
        q = _sub(x, c)
        dt = (r * dr - _dot(q, _sub(_axpy(t, dd, do), dc))) / _dot(q, d)
        dx = _axpy(dt, d, _axpy(t, dd, do))
        dn = _scale(s, _sub(_scale(1.0 / r, _sub(dx, dc)), _scale(dr / (r * r), q)))
        return dx, dn
    if kind == PLANE:
        p = _row(pln, idx, 0)
        dp = _row(dpln, idx, 0)
        m = _row(pln, idx, 3)
        dm = _row(dpln, idx, 3)
    else:
        i0 = tri[idx, 0]
        p = _row(verts, i0, 0)
        dp = _row(dverts, i0, 0)
        e1 = _sub(_row(verts, tri[idx, 1], 0), p)
        e2 = _sub(_row(verts, tri[idx, 2], 0), p)
        de1 = _sub(_row(dverts, tri[idx, 1], 0), dp)
        de2 = _sub(_row(dverts, tri[idx, 2], 0), dp)
        m = _cross(e1, e2)
        dm = _add(_cross(de1, e2), _cross(e1, de2))
    dt = -(_dot(_sub(_axpy(t, dd, do), dp), m) + _dot(_sub(x, p), dm)) / _dot(d, m)
    dx = _axpy(dt, d, _axpy(t, dd, do))
    dn = _scale(s, _normalize_jvp(m, math.sqrt(_dot(m, m)), dm))
    return dx, dn


@njit(cache=True)
def _trace_jvp(o, do, d, dd, depth, bg, sph, sph_mat, pln, pln_mat, verts, uvs, tri, tri_mat, mat,
               tex, plights, dlights, bvh, order, dbg, dsph, dpln, dverts, duvs, dmat, dtex, dpl,
               ddl):
    """_trace and its tangent (eq. R9, forward): (colour, colour tangent)."""
    col = (0.0, 0.0, 0.0)
    dcol = (0.0, 0.0, 0.0)
    w = 1.0
    dw = 0.0
    for bounce in range(depth + 1):
        t, kind, idx = _intersect(o, d, T_EPS, np.inf, sph, pln, verts, tri, bvh, order)
        if kind == MISS:
            return _axpy(w, bg, col), _add(dcol, _axpy(dw, bg, _scale(w, dbg)))
        x = _axpy(t, d, o)
        n = _geometry(kind, idx, x, sph, pln, verts, tri)
        s = 1.0
        if _dot(n, d) > 0.0:
            s = -1.0
            n = (-n[0], -n[1], -n[2])
        dx, dn = _hit_jvp(kind, idx, s, o, do, d, dd, t, x, sph, dsph, pln, dpln, verts, dverts,
                          tri)
        mi = _material_index(kind, idx, sph_mat, pln_mat, tri_mat)
        kd, dkd = _diffuse_jvp(kind, idx, x, dx, mi, mat, dmat, tex, dtex, pln, dpln, verts,
                               dverts, uvs, duvs, tri)
        loc, dloc = _shade_jvp(x, dx, n, dn, d, dd, mi, kd, dkd, mat, dmat, plights, dpl, dlights,
                               ddl, sph, pln, verts, tri, bvh, order)
        col = _axpy(w, loc, col)
        dcol = _add(dcol, _axpy(dw, loc, _scale(w, dloc)))
        r = mat[mi, REFL]
        if r == 0.0:
            if bounce < depth and dmat[mi, REFL] != 0.0:
                # Reflection 0: the mirror ray's colour still enters through ṙefl (eq. R9).
                mc = _trace(x, _axpy(-2.0 * _dot(d, n), n, d), depth - bounce - 1, bg, sph,
                            sph_mat, pln, pln_mat, verts, uvs, tri, tri_mat, mat, tex, plights,
                            dlights, bvh, order)
                dcol = _axpy(w * dmat[mi, REFL], mc, dcol)
            break
        dw = dw * r + w * dmat[mi, REFL]
        w *= r
        dnd = _dot(d, n)
        ddnd = _dot(dd, n) + _dot(d, dn)
        dd = _sub(dd, _scale(2.0, _axpy(ddnd, n, _scale(dnd, dn))))
        d = _axpy(-2.0 * dnd, n, d)
        o = x
        do = dx
    return col, dcol


@njit(parallel=True, cache=True)
def render_tangent_kernel(width, height, side, depth, seed, cam, bg, sph, sph_mat, pln, pln_mat,
                          verts, uvs, tri, tri_mat, mat, tex, plights, dlights, bvh, order, dcam,
                          dbg, dsph, dpln, dverts, duvs, dmat, dtex, dpl, ddl, out, dout):
    """Render into ``out`` and its directional derivative along the table tangents into ``dout``.

    The tangents ``d*`` are shaped like their tables (``dcam`` that of the (4, 3) camera table).
    Interior terms only, like :func:`render_adjoint_kernel` (its transpose).
    """
    ns = side * side
    for pix in prange(width * height):
        i = pix // width
        j = pix - i * width
        acc = (0.0, 0.0, 0.0)
        dacc = (0.0, 0.0, 0.0)
        eye = _row(cam, 0, 0)
        deye = _row(dcam, 0, 0)
        for k in range(ns):
            sx, sy = sample_offsets(pix, k, side, seed)
            u, al, be = _primary(cam, i, j, sx, sy, width, height)
            du = _add(_row(dcam, 1, 0), _axpy(al, _row(dcam, 2, 0), _scale(be, _row(dcam, 3, 0))))
            un = math.sqrt(_dot(u, u))
            d = _scale(1.0 / un, u)
            dd = _normalize_jvp(u, un, du)
            c, dc = _trace_jvp(eye, deye, d, dd, depth, bg, sph, sph_mat, pln, pln_mat, verts,
                               uvs, tri, tri_mat, mat, tex, plights, dlights, bvh, order, dbg,
                               dsph, dpln, dverts, duvs, dmat, dtex, dpl, ddl)
            acc = _add(acc, c)
            dacc = _add(dacc, dc)
        for c in range(3):
            out[i, j, c] = acc[c] / ns
            dout[i, j, c] = dacc[c] / ns
