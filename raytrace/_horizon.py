"""Visibility edges, part 3: the horizon (vanishing line) of every infinite plane (R16).

A plane with normal m seen by a camera not on it covers one side of a straight screen line, its
horizon: the image of its line at infinity, the screen points whose primary direction
d(s) = F + αR + βU is parallel to the plane,

    g(s) = d(s)·m = A x + B y + C = 0,
    A = 2 (R·m)/W,   B = −2 (U·m)/H,   C = (F − R + U)·m                         (R16)

(s = (x, y) in pixels, α = 2x/W − 1, β = 1 − 2y/H). Rays on one side hit the plane ever farther
away; on the other they miss it. The image jumps across the line from the plane's radiance at
infinity to whatever lies beyond, so the line enters the pixel derivative like any silhouette
(R11): Σ w ḡ(pixel(s)) · (f(s − δn) − f(s + δn)) · n·∂s/∂θ, with n = (A, B)/|(A, B)|. The line
depends on the camera table and the plane's normal only (not on its point), so this term carries
the derivatives of camera rotation (look_at, up, fov) and of plane normals across the horizon.

The moving sample point is the projection of a fixed screen point q (the sample's position at
the current parameters) onto the moving line, s(θ) = q − g(q; θ) (A, B)/(A² + B²), whose normal
velocity is −(∂g/∂θ)/|(A, B)|: the exact velocity of the line. f on both sides comes from the
render-points kernel, at an offset where the plane side's hit lies 10³ scene sizes away: its
shading there is the radiance at infinity (point lights have faded to ~10⁻⁶ of their near
field); much farther (the silhouettes' fixed offset puts it ~10⁶ away) and the rounding of the
hit point would make its mirror ray hit the plane again. Where something in front hides the
horizon (the ray along the horizon direction hits it) the sample is dropped before shading.
Exactly parallel planes share one horizon: each samples it with weight 1/(number of planes
sharing it), so moves that carry them together (the camera's) get the whole term.

Not covered: horizons seen in mirrors (a plane's vanishing line reflected by another plane or a
curved mirror); for those the gradient has the interior term only.
"""

from __future__ import annotations

import numpy as np

from ._edges import Boundary, _primary_dirs, cast, radiance_at
from ._pack import Packed

__all__ = ["HORIZON_MIN_SAMPLES", "horizon_boundary", "horizon_lines"]

#: Fewest samples on a horizon crossing the image, at any density.
HORIZON_MIN_SAMPLES = 4
#: The plane side of a horizon is evaluated where its hit is this many scene sizes away.
FAR = 1e3
#: Planes whose unit normals are closer to parallel than this (|sin angle|) share one horizon.
PARALLEL_TOL = 1e-12


def horizon_lines(cam, pln, width, height):
    """The coefficients (A, B, C) (each (Np,)) of every plane's horizon line A x + B y + C = 0
    in pixel coordinates, as a differentiable function of the camera and plane tables (R16)."""
    m = pln[:, 3:6]
    rm = m @ cam[2]
    um = m @ cam[3]
    fm = m @ cam[1]
    return 2.0 * rm / width, -2.0 * um / height, fm - rm + um


def _clip_line(a, b, c, width, height):
    """The part of the line a x + b y + c = 0 inside [0, W] × [0, H]: its foot point q0 (nearest
    the origin), unit tangent and parameter range [lo, hi] (lo ≥ hi: the line misses)."""
    nrm2 = a * a + b * b
    q0 = np.array([-c * a / nrm2, -c * b / nrm2])
    tan = np.array([-b, a]) / np.sqrt(nrm2)
    lo, hi = -np.inf, np.inf
    for k, size in ((0, width), (1, height)):
        if tan[k] == 0.0:
            if not 0.0 <= q0[k] <= size:
                return q0, tan, 0.0, 0.0
            continue
        t0, t1 = (0.0 - q0[k]) / tan[k], (size - q0[k]) / tan[k]
        lo, hi = max(lo, min(t0, t1)), min(hi, max(t0, t1))
    return q0, tan, lo, hi


def _groups(pln, eye):
    """For each plane: the weight of its horizon samples (1/size of its group of exactly
    parallel planes; 0 for a plane containing the eye, which has no horizon)."""
    m = pln[:, 3:6] / np.linalg.norm(pln[:, 3:6], axis=1)[:, None]
    on = ((eye - pln[:, :3]) * pln[:, 3:6]).sum(axis=1) == 0.0
    cross = np.linalg.norm(np.cross(m[:, None, :], m[None, :, :]), axis=2)
    par = (cross <= PARALLEL_TOL) & ~on[None, :]
    size = par.sum(axis=1)
    return np.where(on, 0.0, 1.0 / np.maximum(size, 1))


def _scene_size(p: Packed):
    """A length bounding every object's, light's and plane point's distance from the eye."""
    eye = p.cam[0]
    parts = [np.ones(1), np.linalg.norm(p.pln[:, :3] - eye, axis=1)]
    if len(p.sph):
        parts.append(np.linalg.norm(p.sph[:, :3] - eye, axis=1) + p.sph[:, 3])
    if len(p.verts):
        parts.append(np.linalg.norm(p.verts - eye, axis=1))
    if len(p.plights):
        parts.append(np.linalg.norm(p.plights[:, :3] - eye, axis=1))
    return float(max(np.max(x) for x in parts))


def _offsets(p: Packed, q, which, normal, width, height):
    """Offsets (pixels) of the two radiance evaluations across each horizon sample: where the
    plane side's hit lies FAR scene sizes away (t = |(P − eye)·m|·|d| / |g|, g = δ|∇g| there).
    Much closer and point lights have not faded; much farther (the fixed EDGE_OFFSET can put
    the hit 1e6 away) and the rounding of the hit point, over T_EPS off the plane, makes its
    mirror ray hit the plane again."""
    a, b, _ = horizon_lines(p.cam, p.pln, width, height)
    grad = np.hypot(a, b)[which]
    m = p.pln[which, 3:6]
    height_m = np.abs(np.sum((p.pln[which, :3] - p.cam[0]) * m, axis=1))
    al = 2.0 * q[:, 0] / width - 1.0
    be = 1.0 - 2.0 * q[:, 1] / height
    d = p.cam[1] + al[:, None] * p.cam[2] + be[:, None] * p.cam[3]
    off = height_m * np.linalg.norm(d, axis=1) / (FAR * _scene_size(p) * grad)
    return np.clip(off, 1e-9, 1e-3)


def horizon_boundary(p: Packed, width, height, depth, density, seed=0,
                     device="cpu") -> Boundary | None:
    """The horizon samples of every plane whose vanishing line crosses the image (R16).

    Args:
        p: the packed scene.
        width, height, depth: as for the render.
        density: samples per pixel of horizon length (at least ``HORIZON_MIN_SAMPLES`` each).
        seed: seed of the jitter along the lines.
        device: where the radiance on both sides of each sample is evaluated.

    Returns:
        A :class:`~raytrace._edges.Boundary` over the tables ("cam", "pln"), or None when no
        horizon crosses the image.
    """
    if not len(p.pln):
        return None
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x40A1]))
    share = _groups(p.pln, p.cam[0])
    a, b, c = horizon_lines(p.cam, p.pln, width, height)
    q, which, weight, normal = [], [], [], []
    for k in range(len(p.pln)):
        if share[k] == 0.0 or a[k] == 0.0 and b[k] == 0.0:
            continue
        q0, tan, lo, hi = _clip_line(a[k], b[k], c[k], width, height)
        if not hi > lo:
            continue
        length = hi - lo
        count = max(HORIZON_MIN_SAMPLES, int(np.ceil(density * length)))
        u = lo + length * (np.arange(count) + rng.random(count)) / count
        pts = q0[None, :] + u[:, None] * tan[None, :]
        inside = (pts[:, 0] >= 0) & (pts[:, 0] < width) & (pts[:, 1] >= 0) & (pts[:, 1] < height)
        pts = pts[inside]
        n = np.array([a[k], b[k]]) / np.hypot(a[k], b[k])
        q.append(pts)
        which.append(np.full(len(pts), k))
        weight.append(np.full(len(pts), share[k] * length / count))
        normal.append(np.broadcast_to(n, pts.shape))
    if not q or not sum(len(x) for x in q):
        return None
    q = np.concatenate(q)
    which = np.concatenate(which)
    weight = np.concatenate(weight)
    normal = np.ascontiguousarray(np.concatenate(normal))
    # A horizon point is hidden where the ray parallel to the plane hits something nearer than
    # half the far distance (both offset rays then see that object): dropped before shading.
    t, _, _ = cast(p, np.broadcast_to(p.cam[0], (len(q), 3)), _primary_dirs(p.cam, q, width,
                                                                             height), device)
    seen = np.flatnonzero(~(t < 0.5 * FAR * _scene_size(p)))
    q, which, weight, normal = q[seen], which[seen], weight[seen], normal[seen]
    if not len(q):
        return None
    off = _offsets(p, q, which, normal, width, height)[:, None]
    both = np.concatenate([q - off * normal, q + off * normal])
    f = radiance_at(p, both, depth, width, height, device)
    jump = f[: len(q)] - f[len(q):]
    keep = np.flatnonzero(np.any(jump != 0.0, axis=1))
    q, which, weight, normal, jump = q[keep], which[keep], weight[keep], normal[keep], jump[keep]
    if not len(q):
        return None

    def points(cam, pln):
        a, b, c = horizon_lines(cam, pln, width, height)
        a, b, c = a[which], b[which], c[which]
        g = a * q[:, 0] + b * q[:, 1] + c
        r = g / (a * a + b * b)
        return np.stack([q[:, 0] - r * a, q[:, 1] - r * b], axis=1)

    return Boundary(points, ("cam", "pln"), q, weight, normal, jump)
