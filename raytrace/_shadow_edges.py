"""Visibility edges, part 2: hard-shadow boundaries seen by the camera (Li et al. 2018, §5).

A shadow boundary on a receiver is where rays from a light graze an occluder's silhouette: for a
point P on an occluder curve (a triangle edge, or a sphere's silhouette circle as seen from the
light), the ray from the light through P continues to the receiver point X = P + t(P − L) (for a
directional light along its direction w: X = P + t w), t from the analytic intersection with the
receiver (a plane, a triangle's plane or a sphere). The screen curve s = project(X) is where the
image jumps, and its motion enters the pixel derivative exactly as a primary silhouette does
(``_edges.py``, DERIVATIONS.md R11–R12):

    Σ_samples w ḡ(pixel(s)) · (f(s − δn) − f(s + δn)) · n·∂s/∂θ,

so light position/direction, occluder geometry, receiver geometry and the camera all receive a
boundary term. Samples are stratified along each occluder curve (count = density × the screen
length of its shadow, estimated from a few probe rays, but at least density × MIN_SHADOW_LENGTH,
so that a shadow the probes see only a sliver of, or miss, is still sampled and its variance
falls as 1/density); w = |ds/dλ| Δλ. Occluder edges that are not silhouettes
from the light, and shadows hidden from the camera, have f(s − δn) = f(s + δn) and add nothing.

Not covered: shadows seen through mirror bounces.
``device="cuda"`` runs the probe casts and the radiance evaluations on the GPU.

References:
    T.-M. Li, M. Aittala, F. Durand, J. Lehtinen, "Differentiable Monte Carlo Ray Tracing through
    Edge Sampling", ACM TOG 37(6), 2018, eq. (4) and §5 (secondary visibility).
"""

from __future__ import annotations

import numpy as np

from . import _kernels as K
from ._edges import EDGE_OFFSET, Boundary, _primary_dirs, radiance_at
from ._edges import cast as _cast
from ._pack import Packed

__all__ = ["shadow_boundary"]

#: Probe rays per occluder edge / sphere silhouette used to size the sample count.
PROBES_EDGE = 8
PROBES_SPHERE = 32
#: Every occluder curve is sampled as if its shadow were at least this long (pixels).
MIN_SHADOW_LENGTH = 0.5
#: Step of the central difference for the screen tangent ds/dλ of a sample.
_TANGENT_STEP = 1e-6
_MIN_DEPTH = 1e-9
_EDGE, _SPHERE = "edge", "sphere"
_PLANE, _TRI = "plane", "triangle"


def _project(cam, x, width, height):
    w = x - cam[0]
    depth = w @ cam[1]
    al = (w @ cam[2]) / (depth * np.sum(cam[2] * cam[2]))
    be = (w @ cam[3]) / (depth * np.sum(cam[3] * cam[3]))
    return np.stack([(al + 1.0) * (width / 2.0), (1.0 - be) * (height / 2.0)], axis=1)


def _light(plights, dlights, kind, k):
    return plights[k, :3] if kind == "point" else dlights[k, :3]


def _occluder_points(verts, sph, light, light_kind, occ, t):
    """Points on the occluder curves at parameter t (λ ∈ [0, 1] on edges, φ on circles)."""
    if occ["type"] == _EDGE:
        return (1.0 - t)[:, None] * verts[occ["ia"]] + t[:, None] * verts[occ["ib"]]
    c = sph[occ["isph"], :3]
    r = sph[occ["isph"], 3]
    if light_kind == "point":
        w = light - c
        dist = np.sqrt(np.sum(w * w, axis=1))
        u = w / dist[:, None]
        centre = c + (r * r / dist)[:, None] * u
        rho = r * np.sqrt(1.0 - (r / dist) ** 2)
    else:
        u = -light / np.sqrt(np.sum(light * light))
        u = u + 0.0 * c
        centre = c
        rho = r
    e1 = np.cross(u, occ["helper"])
    e1 = e1 / np.sqrt(np.sum(e1 * e1, axis=1))[:, None]
    e2 = np.cross(u, e1)
    return centre + rho[:, None] * (np.cos(t)[:, None] * e1 + np.sin(t)[:, None] * e2)


def _receive(verts, tri, sph, pln, pts, d, rec):
    """X = P + t d on the receivers ``rec`` (analytic; smooth in every table)."""
    if rec["type"] == _SPHERE:
        c = sph[rec["idx"], :3]
        r = sph[rec["idx"], 3]
        oc = pts - c
        a = np.sum(d * d, axis=1)
        b = np.sum(oc * d, axis=1)
        cc = np.sum(oc * oc, axis=1) - r * r
        t = (-b - np.sqrt(b * b - a * cc)) / a
    else:
        if rec["type"] == _PLANE:
            p0, m = pln[rec["idx"], :3], pln[rec["idx"], 3:6]
        else:
            f = tri[rec["idx"]]
            p0 = verts[f[:, 0]]
            m = np.cross(verts[f[:, 1]] - p0, verts[f[:, 2]] - p0)
        t = np.sum((p0 - pts) * m, axis=1) / np.sum(d * m, axis=1)
    return pts + t[:, None] * d


def _block_points(cam, verts, sph, pln, plights, dlights, tri, blk, width, height, t=None):
    """Screen positions of one block of shadow-edge samples (one light, occluder and receiver
    type) as a differentiable function of the tables."""
    light = _light(plights, dlights, blk["light_kind"], blk["light"])
    pts = _occluder_points(verts, sph, light, blk["light_kind"], blk["occ"],
                           blk["t"] if t is None else t)
    d = pts - light if blk["light_kind"] == "point" else light + 0.0 * pts
    x = _receive(verts, tri, sph, pln, pts, d, blk["rec"])
    return _project(cam, x, width, height)


def _take(occ, rows):
    return {k: (v[rows] if isinstance(v, np.ndarray) else v) for k, v in occ.items()}


def _light_silhouette_edges(p: Packed, light, light_kind):
    """Vertex pairs of the triangle edges that can cast a shadow boundary from this light.

    An edge shared by exactly two faces that face the same side of the light is dropped: shadow
    rays passing it on either side are blocked (by one face or the other), so its jump is zero.
    Boundary and non-manifold edges, and edges between faces facing opposite sides, are kept.
    """
    nt = len(p.tri)
    pairs = np.sort(np.concatenate([p.tri[:, [0, 1]], p.tri[:, [1, 2]], p.tri[:, [2, 0]]]), axis=1)
    face = np.tile(np.arange(nt), 3)
    uniq, inverse, counts = np.unique(pairs, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    v0, v1, v2 = (p.verts[p.tri[:, c]] for c in range(3))
    m = np.cross(v1 - v0, v2 - v0)
    to_light = light - v0 if light_kind == "point" else -np.broadcast_to(light, v0.shape)
    side = np.sum(m * to_light, axis=1) > 0
    order = np.argsort(inverse, kind="stable")
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    two = counts == 2
    fa = face[order[start[two]]]
    fb = face[order[start[two] + 1]]
    keep = ~two
    keep[np.flatnonzero(two)] = side[fa] != side[fb]
    return uniq[keep]


def _curves(p: Packed, light, light_kind):
    """The occluder curves for one light: triangle edges and sphere silhouettes."""
    out = []
    if len(p.tri):
        pairs = _light_silhouette_edges(p, light, light_kind)
        out.append({"type": _EDGE, "ia": pairs[:, 0], "ib": pairs[:, 1], "span": 1.0,
                    "probes": PROBES_EDGE})
    if len(p.sph):
        c, r = p.sph[:, :3], p.sph[:, 3]
        if light_kind == "point":
            w = light - c
            keep = np.flatnonzero(np.linalg.norm(w, axis=1) > r * (1.0 + 1e-9))
            u = w[keep] / np.linalg.norm(w[keep], axis=1)[:, None]
        else:
            keep = np.arange(len(c))
            u = np.broadcast_to(-light / np.linalg.norm(light), (len(keep), 3))
        if len(keep):
            helper = np.eye(3)[np.argmin(np.abs(u), axis=1)]
            out.append({"type": _SPHERE, "isph": keep, "helper": helper, "span": 2.0 * np.pi,
                        "probes": PROBES_SPHERE})
    return out


def _plain_hits(p, light, light_kind, occ, t, device):
    """Occluder points, ray directions and host ray-cast hits for parameters t."""
    pts = _occluder_points(p.verts, p.sph, light, light_kind, occ, t)
    d = pts - light if light_kind == "point" else np.broadcast_to(light, pts.shape)
    th, kind, idx = _cast(p, pts, d, device)
    th = np.where(kind != K.MISS, th, 0.0)  # misses have t = inf
    x = pts + (th / np.linalg.norm(d, axis=1))[:, None] * d
    return kind, idx, x


def _light_blocks(p: Packed, light_kind, k, width, height, density, rng, device):
    light = _light(p.plights, p.dlights, light_kind, k)
    blocks = []
    for curve in _curves(p, light, light_kind):
        ncurve = len(curve["ia"] if curve["type"] == _EDGE else curve["isph"])
        npr = curve["probes"]
        # Probe the shadow of every curve to size its sample count by its screen length.
        rows = np.repeat(np.arange(ncurve), npr)
        tp = np.tile((np.arange(npr) + 0.5) / npr * curve["span"], ncurve)
        kind, _, x = _plain_hits(p, light, light_kind, _take(curve, rows), tp, device)
        hit = (kind != K.MISS) & ((x - p.cam[0]) @ p.cam[1] > _MIN_DEPTH)
        s = np.where(hit[:, None], _project(p.cam, np.where(hit[:, None], x, p.cam[0] + p.cam[1]),
                                            width, height), 0.0).reshape(ncurve, npr, 2)
        hit = hit.reshape(ncurve, npr)
        both = hit[:, 1:] & hit[:, :-1]
        seg = np.where(both, np.linalg.norm(np.diff(s, axis=1), axis=2), 0.0)
        length = seg.sum(axis=1) * npr / max(npr - 1, 1)
        # Every curve gets at least density · MIN_SHADOW_LENGTH samples, also where the probes
        # see only a sliver of its shadow (length 0: no two neighbouring probes hit) or none
        # of it: the count, hence the inverse variance, always grows with the density.
        count = np.ceil(density * np.maximum(length, MIN_SHADOW_LENGTH)).astype(np.int64)
        if not count.sum():
            continue
        which = np.repeat(np.arange(ncurve), count)
        j = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
        t = (j + rng.random(len(j))) / count[which] * curve["span"]
        occ = _take(curve, which)
        kind, idx, _ = _plain_hits(p, light, light_kind, occ, t, device)
        for rec_kind, rec_type in ((K.SPHERE, _SPHERE), (K.PLANE, _PLANE), (K.TRIANGLE, _TRI)):
            sel = np.flatnonzero(kind == rec_kind)
            if not len(sel):
                continue
            blk = {"light_kind": light_kind, "light": k, "occ": _take(occ, sel), "t": t[sel],
                   "rec": {"type": rec_type, "idx": idx[sel]}}
            args = (p.cam, p.verts, p.sph, p.pln, p.plights, p.dlights, p.tri, blk, width, height)
            s = _block_points(*args)
            h = _TANGENT_STEP
            tangent = (_block_points(*args, t=blk["t"] + h)
                       - _block_points(*args, t=blk["t"] - h)) / (2.0 * h)
            speed = np.linalg.norm(tangent, axis=1)
            x_ok = np.isfinite(s).all(axis=1) & np.isfinite(speed) & (speed > 0)
            inside = x_ok & (s[:, 0] >= 0) & (s[:, 0] < width) & (s[:, 1] >= 0) & (s[:, 1] < height)
            keep = np.flatnonzero(inside)
            if not len(keep):
                continue
            blk = {**blk, "occ": _take(blk["occ"], keep), "t": blk["t"][keep],
                   "rec": {"type": rec_type, "idx": blk["rec"]["idx"][keep]}}
            tn = tangent[keep] / speed[keep, None]
            blk["weight"] = speed[keep] * curve["span"] / count[which[sel[keep]]]
            blk["normal"] = np.stack([-tn[:, 1], tn[:, 0]], axis=1)
            blk["s"] = s[keep]
            blk["rec_kind"] = rec_kind
            blocks.append(blk)
    return blocks


def shadow_boundary(p: Packed, width, height, depth, density, seed=0,
                    device="cpu") -> Boundary | None:
    """The hard-shadow boundary samples seen by the camera (see the module docstring).

    Args and sampling as :func:`raytrace._edges.primary_boundary`; ``density`` is samples per
    pixel of the shadow curve's screen length.
    """
    names = ("cam", "verts", "sph", "pln", "plights", "dlights")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x5AD0]))
    blocks = []
    for k in range(len(p.plights)):
        blocks += _light_blocks(p, "point", k, width, height, density, rng, device)
    for k in range(len(p.dlights)):
        blocks += _light_blocks(p, "directional", k, width, height, density, rng, device)
    if not blocks:
        return None
    s = np.concatenate([b["s"] for b in blocks])
    normal = np.concatenate([b["normal"] for b in blocks])
    weight = np.concatenate([b["weight"] for b in blocks])
    both = np.concatenate([s - EDGE_OFFSET * normal, s + EDGE_OFFSET * normal])
    f = radiance_at(p, both, depth, width, height, device)
    jump = f[: len(s)] - f[len(s):]
    # Keep samples whose receiver the camera sees on both sides: elsewhere the image jump is a
    # primary silhouette (counted by _edges.py; it coincides with the shadow curve when the
    # light sits at the eye) or the shadow is hidden.
    _, kind, idx = _cast(p, np.broadcast_to(p.cam[0], both.shape[:1] + (3,)),
                         _primary_dirs(p.cam, both, width, height), device)
    rec_kind = np.concatenate([np.full(len(b["s"]), b["rec_kind"]) for b in blocks])
    rec_idx = np.concatenate([b["rec"]["idx"] for b in blocks])
    seen = ((kind[: len(s)] == rec_kind) & (idx[: len(s)] == rec_idx)
            & (kind[len(s):] == rec_kind) & (idx[len(s):] == rec_idx))
    jump = np.where(seen[:, None], jump, 0.0)

    def points(cam, verts, sph, pln, plights, dlights):
        return np.concatenate([_block_points(cam, verts, sph, pln, plights, dlights, p.tri, b,
                                             width, height) for b in blocks])

    return Boundary(points, names, s, weight, normal, jump)
