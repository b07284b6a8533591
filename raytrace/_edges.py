"""Visibility edges: the edge-sampling term of Li et al. (2018) for silhouettes.

A pixel's value is the box-filtered integral I = ∫_pixel f(s) ds of the radiance f seen through
screen point s. Its derivative has an interior part (``render_adjoint_kernel``) and a boundary part
over every curve where f jumps (Li et al. 2018, eq. 4; Reynolds transport):

    ∂I/∂θ ⊃ ∮ (f(s − δn) − f(s + δn)) · (n · ∂s/∂θ) dl,

with n the curve's unit normal in the screen and ∂s/∂θ the screen velocity of the edge point.
The curves sampled here are the projected edges of every triangle (mesh edges shared by two faces
are sampled once) and the silhouette circle of every sphere, each clipped to the view frustum
(so edges crossing the plane of the eye are sampled on their visible part), seen directly and
seen in every reflecting *plane* (the mirror image of the scene, R11). Points are stratified
along each curve (``density`` per pixel of screen length, jittered by ``seed``); f on both sides
comes from the render-points kernel; n · ∂s/∂θ is the pullback of a short NumPy function (the
edge point in 3-D, mirrored, projected by the camera), so edge motion reaches vertices, sphere
centres and radii, mirror planes and the camera. An edge hidden behind another object has
f(s − δn) = f(s + δn) and contributes nothing, so hidden samples are found first by one cheap
closest-hit cast each (two for a mirror view) and skip the two radiance evaluations.

Shadow boundaries are sampled by ``_shadow_edges.py`` (R12), plane horizons by ``_horizon.py``
(R16). Not covered (DERIVATIONS.md, R11):
silhouettes reflected by spheres, triangles or meshes, or after two or more mirror bounces, and
shadow boundaries seen in mirrors; for those the gradient has the interior term only.

References:
    T.-M. Li, M. Aittala, F. Durand, J. Lehtinen, "Differentiable Monte Carlo Ray Tracing through
    Edge Sampling", ACM TOG 37(6) (SIGGRAPH Asia), 2018, eq. (4)-(6).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import diffsci as ds

from . import _kernels as K
from ._pack import Packed

__all__ = [
    "DEFAULT_EDGE_DENSITY",
    "EDGE_OFFSET",
    "Boundary",
    "boundary_cotangents",
    "boundary_tangent",
    "cast",
    "edge_cotangents",
    "mirror_planes",
    "primary_boundary",
    "radiance_at",
]

#: Edge samples per pixel of projected edge length.
DEFAULT_EDGE_DENSITY = 4.0
#: Offset (pixels) of the two radiance evaluations on either side of an edge sample.
EDGE_OFFSET = 1e-5
#: An edge point counts as hidden when something is hit this much (relative) closer to the eye.
VISIBILITY_RTOL = 1e-6
#: Points used to measure a sphere silhouette's projected length.
_SILHOUETTE_PROBE = 64
_MIN_DEPTH = 1e-9


def _project(cam, p, width, height):
    """Screen position (x, y) in pixels of 3-D points p (N, 3) for the camera table ``cam``."""
    w = p - cam[0]
    depth = w @ cam[1]
    al = (w @ cam[2]) / (depth * np.sum(cam[2] * cam[2]))
    be = (w @ cam[3]) / (depth * np.sum(cam[3] * cam[3]))
    return np.stack([(al + 1.0) * (width / 2.0), (1.0 - be) * (height / 2.0)], axis=1)


def _depth(cam, p):
    return (p - cam[0]) @ cam[1]


def _reflect(x, plane):
    """Mirror image of points x (N, 3) in the plane row ``plane`` (point, normal, ...)."""
    m = plane[3:6] / np.sqrt(np.sum(plane[3:6] * plane[3:6]))
    return x - (2.0 * ((x - plane[:3]) @ m))[:, None] * m


def _view(verts, sph, pln, mirror):
    """The vertex and sphere tables as the camera sees them: directly (mirror −1) or as
    mirror images in plane ``mirror`` (the virtual scene behind a planar mirror)."""
    if mirror < 0:
        return verts, sph
    plane = pln[mirror]
    vv = _reflect(verts, plane) if len(verts) else verts
    if not len(sph):
        return vv, sph
    return vv, np.concatenate([_reflect(sph[:, :3], plane), sph[:, 3:4]], axis=1)


def _silhouette(cam, sph, isph, phi, helper):
    """Points at angle phi on the silhouette circles of spheres ``isph`` seen from the eye."""
    c = sph[isph, :3]
    r = sph[isph, 3]
    w = cam[0] - c
    dist = np.sqrt(np.sum(w * w, axis=1))
    u = w / dist[:, None]
    centre = c + (r * r / dist)[:, None] * u
    rho = r * np.sqrt(1.0 - (r / dist) ** 2)
    e1 = np.cross(u, helper)
    e1 = e1 / np.sqrt(np.sum(e1 * e1, axis=1))[:, None]
    e2 = np.cross(u, e1)
    return centre + rho[:, None] * (np.cos(phi)[:, None] * e1 + np.sin(phi)[:, None] * e2)


def _edge_points_3d(cam, verts, sph, spec):
    """The 3-D points of all edge samples (triangle edges, then sphere silhouettes)."""
    ia, ib, lam, isph, phi, helper = spec
    parts = []
    if len(ia):
        parts.append((1.0 - lam)[:, None] * verts[ia] + lam[:, None] * verts[ib])
    if len(isph):
        parts.append(_silhouette(cam, sph, isph, phi, helper))
    return np.concatenate(parts, axis=0)


def _edge_points(cam, verts, sph, spec, width, height):
    """Screen positions of all edge samples as a differentiable function of the tables."""
    return _project(cam, _edge_points_3d(cam, verts, sph, spec), width, height)


def _visible(p: Packed, x, mirror, device):
    """Which edge points x (N, 3) the camera sees: directly (mirror −1: nothing hit before x)
    or, for a mirror view, x being the virtual point, the primary ray's first hit is that
    mirror and the reflected ray reaches the real point unblocked. One or two closest-hit casts
    per sample: a hidden sample's jump is zero, so its two radiance evaluations are skipped."""
    eye = np.broadcast_to(p.cam[0], x.shape)
    d = x - eye
    dist = np.linalg.norm(d, axis=1)
    t, kind, idx = cast(p, eye, d, device)
    if mirror < 0:
        return t >= dist * (1.0 - VISIBILITY_RTOL)
    on = (kind == K.PLANE) & (idx == mirror) & (t < dist)
    hit = eye + (np.where(on, t, 0.0) / dist)[:, None] * d
    real = _reflect(x, p.pln[mirror])
    t2, _, _ = cast(p, hit, real - hit, device)
    return on & (t2 >= np.linalg.norm(real - hit, axis=1) * (1.0 - VISIBILITY_RTOL))


def _clip(constraints, n):
    """Liang–Barsky: the sub-interval [lo, hi] of λ ∈ [0, 1] where every affine constraint
    f(λ) = f₀ + λ(f₁ − f₀) ≥ 0 holds; ``constraints`` are pairs (f₀, f₁) of (n,) arrays."""
    lo, hi = np.zeros(n), np.ones(n)
    dead = np.zeros(n, bool)
    for f0, f1 in constraints:
        out0, out1 = f0 < 0, f1 < 0
        t = f0 / np.where(f0 != f1, f0 - f1, 1.0)
        lo = np.where(out0 & ~out1, np.maximum(lo, t), lo)
        hi = np.where(out1 & ~out0, np.minimum(hi, t), hi)
        dead |= out0 & out1
    return lo, hi, ~dead & (lo < hi)


def _frustum(cam, x, halfspace):
    """Values of the view-frustum constraints (≥ 0 inside) at points x: |α| ≤ 1, |β| ≤ 1 in
    camera coordinates (z·α = w·R/|R|², z·β = w·U/|U|²), depth > 0, and, for a mirror view,
    (x − p)·m ≥ 0 (the virtual point lies behind the mirror)."""
    w = x - cam[0]
    z = w @ cam[1]
    a = (w @ cam[2]) / np.sum(cam[2] * cam[2])
    b = (w @ cam[3]) / np.sum(cam[3] * cam[3])
    out = [z - a, z + a, z - b, z + b, z - _MIN_DEPTH]
    if halfspace is not None:
        out.append((x - halfspace[0]) @ halfspace[1])
    return out


def _unique_edges(tri):
    """The vertex pairs (E, 2) of all triangle edges, each once."""
    pairs = np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]])
    return np.unique(np.sort(pairs, axis=1), axis=0)


def _triangle_samples(cam, verts, pairs, width, height, density, rng, halfspace=None):
    """Samples on the triangle edges ``pairs``, clipped to the view frustum (and the mirror's
    half-space): (ia, ib, λ, weight, screen normal). Edges crossing the plane of the eye are
    clipped at a positive depth, so their visible part is sampled like any other edge."""
    if not len(pairs):
        none = np.zeros(0, np.int64)
        return none, none, np.zeros(0), np.zeros(0), np.zeros((0, 2))
    va, vb = verts[pairs[:, 0]], verts[pairs[:, 1]]
    lo, hi, keep = _clip(list(zip(_frustum(cam, va, halfspace), _frustum(cam, vb, halfspace))),
                         len(pairs))
    pairs, va, vb, lo, hi = pairs[keep], va[keep], vb[keep], lo[keep], hi[keep]
    ca = va + lo[:, None] * (vb - va)
    cb = va + hi[:, None] * (vb - va)
    za, zb = _depth(cam, ca), _depth(cam, cb)
    sa, sb = _project(cam, ca, width, height), _project(cam, cb, width, height)
    length = np.linalg.norm(sb - sa, axis=1)
    count = np.maximum(1, np.ceil(density * length)).astype(np.int64)
    edge = np.repeat(np.arange(len(pairs)), count)
    k = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    tau = (k + rng.random(len(k))) / count[edge]
    # Screen-uniform τ ↦ 3-D λ (perspective-correct: 1/depth is affine in screen position).
    frac = (tau / zb[edge]) / ((1.0 - tau) / za[edge] + tau / zb[edge])
    lam = lo[edge] + (hi[edge] - lo[edge]) * frac
    weight = length[edge] / count[edge]
    t = (sb - sa)[edge] / np.maximum(length[edge, None], 1e-300)
    normal = np.stack([-t[:, 1], t[:, 0]], axis=1)
    ok = length[edge] > 0
    return pairs[edge, 0][ok], pairs[edge, 1][ok], lam[ok], weight[ok], normal[ok]


def _sphere_samples(cam, sph, width, height, density, rng, halfspace=None):
    """Samples on the spheres' silhouette circles (uniform in angle): (isph, φ, helper, weight,
    screen normal). Parts of a circle behind the plane of the eye (or, for a mirror view, in
    front of the mirror) are dropped sample by sample, so spheres reaching behind the camera
    are handled too; only spheres containing the eye are skipped (they have no silhouette)."""
    empty = (np.zeros(0, np.int64), np.zeros(0), np.zeros((0, 3)), np.zeros(0), np.zeros((0, 2)))
    if not len(sph):
        return empty
    dist = np.linalg.norm(cam[0] - sph[:, :3], axis=1)
    keep = np.flatnonzero(dist > sph[:, 3] * (1.0 + 1e-9))
    if not len(keep):
        return empty
    u = (cam[0] - sph[keep, :3]) / dist[keep, None]
    helper = np.eye(3)[np.argmin(np.abs(u), axis=1)]
    npr = _SILHOUETTE_PROBE
    probe = np.linspace(0.0, 2.0 * np.pi, npr + 1)
    x = _silhouette(cam, sph, np.repeat(keep, npr + 1), np.tile(probe, len(keep)),
                    np.repeat(helper, npr + 1, axis=0))
    valid = np.all(np.stack(_frustum(cam, x, halfspace)) >= 0, axis=0)
    pts = _project(cam, np.where(valid[:, None], x, cam[0] + cam[1]), width, height)
    pts = pts.reshape(len(keep), npr + 1, 2)
    valid = valid.reshape(len(keep), npr + 1)
    seg = np.where(valid[:, 1:] | valid[:, :-1], np.linalg.norm(np.diff(pts, axis=1), axis=2), 0)
    # The count only sets the variance (samples are uniform in φ, weighted by |ds/dφ|Δφ).
    length = np.where(valid.any(axis=1), seg.sum(axis=1), 0.0)
    # At least 2·density samples per circle, also when the probes miss its visible part, so the
    # count (hence the inverse variance) grows with the density in every scene.
    count = np.maximum(np.ceil(2.0 * density), np.ceil(density * length)).astype(np.int64)
    which = np.repeat(np.arange(len(keep)), count)
    k = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    phi = 2.0 * np.pi * (k + rng.random(len(k))) / count[which]
    isph, hlp = keep[which], helper[which]
    x = _silhouette(cam, sph, isph, phi, hlp)
    front = np.all(np.stack(_frustum(cam, x, halfspace)[4:]) >= 0, axis=0)
    h = 1e-6
    s_plus = _project(cam, _silhouette(cam, sph, isph, phi + h, hlp), width, height)
    s_minus = _project(cam, _silhouette(cam, sph, isph, phi - h, hlp), width, height)
    ds_dphi = (s_plus - s_minus) / (2.0 * h)
    speed = np.linalg.norm(ds_dphi, axis=1)
    ok = front & np.isfinite(speed) & (speed > 0)
    weight = speed * 2.0 * np.pi / np.maximum(count[which], 1)
    t = ds_dphi / np.where(speed > 0, speed, 1.0)[:, None]
    normal = np.stack([-t[:, 1], t[:, 0]], axis=1)
    return isph[ok], phi[ok], hlp[ok], weight[ok], normal[ok]


def _primary_dirs(cam, pts, width, height):
    """Unnormalised primary directions F + αR + βU through screen points (x, y) in pixels."""
    al = 2.0 * pts[:, 0] / width - 1.0
    be = 1.0 - 2.0 * pts[:, 1] / height
    return cam[1] + al[:, None] * cam[2] + be[:, None] * cam[3]


def cast(p: Packed, origins, dirs, device="cpu"):
    """Closest hits (t, kind, index) of rays from ``origins`` along ``dirs``."""
    if device == "cuda":
        from ._cuda import cast_cuda

        return cast_cuda(p, origins, dirs)
    n = len(origins)
    t, kind, idx = np.empty(n), np.empty(n, np.int64), np.empty(n, np.int64)
    if n:
        K.cast_kernel(np.ascontiguousarray(origins), np.ascontiguousarray(dirs), p.sph, p.pln,
                      p.verts, p.tri, p.bvh, p.order, t, kind, idx)
    return t, kind, idx


def mirror_planes(p: Packed, depth: int) -> np.ndarray:
    """Indices of the planes whose material reflects (reflected silhouettes are sampled)."""
    if depth < 1 or not len(p.pln):
        return np.zeros(0, np.int64)
    return np.flatnonzero(p.mat[p.pln_mat, K.REFL] > 0.0)


@dataclass(frozen=True)
class Boundary:
    """Edge samples of one kind: their screen points s = ``points(*tables)`` (a differentiable
    function of the tables named ``names``), arc-length weights, unit screen normals and the
    radiance jumps f(s − δn) − f(s + δn) (N, 3)."""

    points: Callable
    names: tuple
    s: np.ndarray
    weight: np.ndarray
    normal: np.ndarray
    jump: np.ndarray


def boundary_cotangents(b: Boundary | None, p: Packed, gimg) -> dict:
    """Σ w ḡ(pixel(s))·jump · n·∂s/∂θ as cotangents of the tables ``b.names`` (eq. R11)."""
    if b is None:
        return {}
    g = gimg[b.s[:, 1].astype(np.int64), b.s[:, 0].astype(np.int64)]
    a = b.weight * np.sum(g * b.jump, axis=1)
    if not np.any(a):
        return {}
    _, back = ds.pullback(b.points, *(getattr(p, name) for name in b.names))
    cts = back(a[:, None] * b.normal)
    return {name: np.asarray(ct) for name, ct in zip(b.names, cts)}


def boundary_tangent(b: Boundary | None, p: Packed, tangents: dict, width, height) -> np.ndarray:
    """The edge term of the image's directional derivative: each sample adds
    w · jump · n·ṡ to the pixel holding s (forward mode of eq. R11)."""
    img = np.zeros((height, width, 3))
    if b is None:
        return img
    _, sdot = ds.jvp(b.points, tuple(getattr(p, name) for name in b.names),
                     tuple(tangents[name] for name in b.names))
    c = b.weight * np.sum(b.normal * np.asarray(sdot), axis=1)
    np.add.at(img, (b.s[:, 1].astype(np.int64), b.s[:, 0].astype(np.int64)),
              c[:, None] * b.jump)
    return img


def radiance_at(p: Packed, pts, depth, width, height, device="cpu"):
    """Radiance (N, 3) along one primary ray through each screen point (x, y) in pixels."""
    pts = np.ascontiguousarray(pts, dtype=np.float64)
    if device == "cuda":
        from ._cuda import render_points_cuda

        return render_points_cuda(p, pts, depth, width, height)
    f = np.empty((len(pts), 3))
    if len(pts):
        K.render_points_kernel(pts, depth, *p.tables(), width, height, f)
    return f


def primary_boundary(p: Packed, width, height, depth, density=DEFAULT_EDGE_DENSITY,
                     seed=0, device="cpu") -> Boundary | None:
    """The silhouette samples (triangle edges, sphere outlines) inside the image: seen directly,
    and seen in each reflecting plane as the mirror image of the scene (R11).

    Args:
        p: the packed scene.
        width, height, depth: as for the render.
        density: edge samples per pixel of projected edge length.
        seed: seed of the jitter along the edges.
        device: where the radiance on both sides of each sample is evaluated.
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x5EED]))
    views = [-1] + [int(k) for k in mirror_planes(p, depth)]
    pairs = _unique_edges(p.tri)
    parts = []
    for mirror in views:
        verts, sph = _view(p.verts, p.sph, p.pln, mirror)
        halfspace = None
        if mirror >= 0:
            m = p.pln[mirror, 3:6]
            side = np.sign((p.cam[0] - p.pln[mirror, :3]) @ m)
            if side == 0:
                continue
            halfspace = (p.pln[mirror, :3], -side * m)
        ia, ib, lam, wt, nt = _triangle_samples(p.cam, verts, pairs, width, height, density, rng,
                                                halfspace)
        isph, phi, helper, ws, ns = _sphere_samples(p.cam, sph, width, height, density, rng,
                                                    halfspace)
        if not len(ia) and not len(isph):
            continue
        spec = (ia, ib, lam, isph, phi, helper)
        s = _edge_points(p.cam, verts, sph, spec, width, height)
        normal = np.concatenate([nt, ns])
        inside = (s[:, 0] >= 0) & (s[:, 0] < width) & (s[:, 1] >= 0) & (s[:, 1] < height)
        rows = np.flatnonzero(inside)
        if len(rows):
            vis = _visible(p, _edge_points_3d(p.cam, verts, sph, spec)[rows], mirror, device)
            rows = rows[vis]
        if len(rows):
            parts.append((mirror, spec, rows, s[rows], np.concatenate([wt, ws])[rows],
                          normal[rows]))
    if not parts:
        return None
    s = np.concatenate([q[3] for q in parts])
    weight = np.concatenate([q[4] for q in parts])
    normal = np.concatenate([q[5] for q in parts])
    both = np.concatenate([s - EDGE_OFFSET * normal, s + EDGE_OFFSET * normal])
    f = radiance_at(p, both, depth, width, height, device)
    jump = f[: len(s)] - f[len(s):]

    def points(cam, verts, sph, pln):
        out = []
        for mirror, spec, rows, *_ in parts:
            vv, sv = _view(verts, sph, pln, mirror)
            out.append(_edge_points(cam, vv, sv, spec, width, height)[rows])
        return np.concatenate(out)

    return Boundary(points, ("cam", "verts", "sph", "pln"), s, weight, normal, jump)


def edge_cotangents(p: Packed, width, height, depth, gimg, density=DEFAULT_EDGE_DENSITY, seed=0):
    """The primary-silhouette term's cotangents (a dict keyed by table name; missing = zero)."""
    return boundary_cotangents(primary_boundary(p, width, height, depth, density, seed), p, gimg)
