"""Visibility edges: the edge-sampling term of Li et al. (2018) for primary silhouettes.

A pixel's value is the box-filtered integral I = ∫_pixel f(s) ds of the radiance f seen through
screen point s. Its derivative has an interior part (``render_adjoint_kernel``) and a boundary part
over every curve where f jumps (Li et al. 2018, eq. 4; Reynolds transport):

    ∂I/∂θ ⊃ ∮ (f(s − δn) − f(s + δn)) · (n · ∂s/∂θ) dl,

with n the curve's unit normal in the screen and ∂s/∂θ the screen velocity of the edge point.
The curves sampled here are the projected edges of every triangle (mesh edges shared by two faces
are sampled once) and the silhouette circle of every sphere. Points are stratified along each curve
(``density`` per pixel of screen length, jittered by ``seed``); f on both sides comes from the
render-points kernel; n · ∂s/∂θ is the pullback of a short NumPy function (the edge point in 3-D,
projected by the camera), so edge motion reaches vertices, sphere centres and radii, and the camera.
An edge hidden behind another object has f(s − δn) = f(s + δn) and contributes nothing.

Shadow boundaries are sampled by ``_shadow_edges.py`` (R12). Not covered (DERIVATIONS.md, R11):
edges seen in mirrors, edges crossing the plane of the eye (those edges are skipped).

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
    "edge_cotangents",
    "primary_boundary",
]

#: Edge samples per pixel of projected edge length.
DEFAULT_EDGE_DENSITY = 4.0
#: Offset (pixels) of the two radiance evaluations on either side of an edge sample.
EDGE_OFFSET = 1e-5
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


def _edge_points(cam, verts, sph, spec, width, height):
    """Screen positions of all edge samples as a differentiable function of the tables."""
    ia, ib, lam, isph, phi, helper = spec
    parts = []
    if len(ia):
        p = (1.0 - lam)[:, None] * verts[ia] + lam[:, None] * verts[ib]
        parts.append(_project(cam, p, width, height))
    if len(isph):
        parts.append(_project(cam, _silhouette(cam, sph, isph, phi, helper), width, height))
    return np.concatenate(parts, axis=0)


def _triangle_samples(p: Packed, width, height, density, rng):
    tri = p.tri
    if not len(tri):
        none = np.zeros(0, np.int64)
        return none, none, np.zeros(0), np.zeros(0), np.zeros((0, 2))
    pairs = np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]])
    pairs = np.unique(np.sort(pairs, axis=1), axis=0)
    va, vb = p.verts[pairs[:, 0]], p.verts[pairs[:, 1]]
    za, zb = (va - p.cam[0]) @ p.cam[1], (vb - p.cam[0]) @ p.cam[1]
    keep = (za > _MIN_DEPTH) & (zb > _MIN_DEPTH)
    pairs, va, vb, za, zb = pairs[keep], va[keep], vb[keep], za[keep], zb[keep]
    sa, sb = _project(p.cam, va, width, height), _project(p.cam, vb, width, height)
    length = np.linalg.norm(sb - sa, axis=1)
    count = np.maximum(1, np.ceil(density * length)).astype(np.int64)
    edge = np.repeat(np.arange(len(pairs)), count)
    k = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    tau = (k + rng.random(len(k))) / count[edge]
    # Screen-uniform τ ↦ 3-D λ (perspective-correct: 1/depth is affine in screen position).
    lam = (tau / zb[edge]) / ((1.0 - tau) / za[edge] + tau / zb[edge])
    weight = length[edge] / count[edge]
    t = (sb - sa)[edge] / length[edge, None]
    normal = np.stack([-t[:, 1], t[:, 0]], axis=1)
    ok = length[edge] > 0
    return pairs[edge, 0][ok], pairs[edge, 1][ok], lam[ok], weight[ok], normal[ok]


def _sphere_samples(p: Packed, width, height, density, rng):
    sph = p.sph
    empty = (np.zeros(0, np.int64), np.zeros(0), np.zeros((0, 3)), np.zeros(0), np.zeros((0, 2)))
    if not len(sph):
        return empty
    dist = np.linalg.norm(p.cam[0] - sph[:, :3], axis=1)
    # Skip spheres containing the eye or reaching behind it (their silhouette is not a closed
    # curve in front of the camera).
    front = (p.cam[0] - sph[:, :3]) @ p.cam[1]
    keep = np.flatnonzero((dist > sph[:, 3]) & (-front - sph[:, 3] > _MIN_DEPTH))
    if not len(keep):
        return empty
    u = (p.cam[0] - sph[keep, :3]) / dist[keep, None]
    helper = np.eye(3)[np.argmin(np.abs(u), axis=1)]
    probe = np.linspace(0.0, 2.0 * np.pi, _SILHOUETTE_PROBE + 1)
    idx = np.repeat(keep, _SILHOUETTE_PROBE + 1)
    pts = _project(p.cam, _silhouette(p.cam, sph, idx, np.tile(probe, len(keep)),
                                      np.repeat(helper, _SILHOUETTE_PROBE + 1, axis=0)),
                   width, height).reshape(len(keep), _SILHOUETTE_PROBE + 1, 2)
    length = np.linalg.norm(np.diff(pts, axis=1), axis=2).sum(axis=1)
    count = np.maximum(8, np.ceil(density * length)).astype(np.int64)
    which = np.repeat(np.arange(len(keep)), count)
    k = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    phi = 2.0 * np.pi * (k + rng.random(len(k))) / count[which]
    isph, hlp = keep[which], helper[which]
    h = 1e-6
    s_plus = _project(p.cam, _silhouette(p.cam, sph, isph, phi + h, hlp), width, height)
    s_minus = _project(p.cam, _silhouette(p.cam, sph, isph, phi - h, hlp), width, height)
    ds_dphi = (s_plus - s_minus) / (2.0 * h)
    speed = np.linalg.norm(ds_dphi, axis=1)
    weight = speed * 2.0 * np.pi / count[which]
    t = ds_dphi / speed[:, None]
    normal = np.stack([-t[:, 1], t[:, 0]], axis=1)
    return isph, phi, hlp, weight, normal


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


def primary_boundary(p: Packed, width, height, depth, density=DEFAULT_EDGE_DENSITY,
                     seed=0) -> Boundary | None:
    """The primary-silhouette samples (triangle edges, sphere outlines) inside the image.

    Args:
        p: the packed scene.
        width, height, depth: as for the render.
        density: edge samples per pixel of projected edge length.
        seed: seed of the jitter along the edges.
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x5EED]))
    ia, ib, lam, wt, nt = _triangle_samples(p, width, height, density, rng)
    isph, phi, helper, ws, ns = _sphere_samples(p, width, height, density, rng)
    if not len(ia) and not len(isph):
        return None
    spec = (ia, ib, lam, isph, phi, helper)
    s = _edge_points(p.cam, p.verts, p.sph, spec, width, height)
    weight = np.concatenate([wt, ws])
    normal = np.concatenate([nt, ns])
    inside = (s[:, 0] >= 0) & (s[:, 0] < width) & (s[:, 1] >= 0) & (s[:, 1] < height)
    rows = np.flatnonzero(inside)
    if not len(rows):
        return None
    both = np.concatenate([s[rows] - EDGE_OFFSET * normal[rows],
                           s[rows] + EDGE_OFFSET * normal[rows]])
    f = np.empty((len(both), 3))
    K.render_points_kernel(np.ascontiguousarray(both), depth, *p.tables(), width, height, f)

    def points(cam, verts, sph):
        return _edge_points(cam, verts, sph, spec, width, height)[rows]

    return Boundary(points, ("cam", "verts", "sph"), s[rows], weight[rows], normal[rows],
                    f[: len(rows)] - f[len(rows):])


def edge_cotangents(p: Packed, width, height, depth, gimg, density=DEFAULT_EDGE_DENSITY, seed=0):
    """The primary-silhouette term's cotangents (a dict keyed by table name; missing = zero)."""
    return boundary_cotangents(primary_boundary(p, width, height, depth, density, seed), p, gimg)
