"""The edge terms' spread over seeds falls with the edge-sample density in every scene.

For each kind of visibility edge (primary silhouettes, hard-shadow boundaries, plane horizons)
and a few scenes — among them the cases whose sample count used to stay at its minimum: a
shadow boundary of which only a sliver lands on a receiver (the probe rays see at most one hit),
and a sphere whose silhouette is mostly off screen — the edge term alone (its cotangents for a
fixed image cotangent) is computed for 12 seeds at densities 4 and 64. Unbiased estimators
whose sample count grows with the density have a spread falling at least as 1/√density (×4
here); the test asks for ×2 (the seed-spread of 12 seeds is itself uncertain by ~20 %), and that
the means agree within the spread. ``benchmarks/bench_raytrace.py`` has the per-parameter
variance table.
"""

import numpy as np
import pytest

import raytrace as rt
from raytrace._edges import boundary_cotangents, primary_boundary
from raytrace._horizon import horizon_boundary
from raytrace._pack import pack
from raytrace._shadow_edges import shadow_boundary

pytestmark = pytest.mark.kernels

N = 16
RAMP = np.linspace(0.0, 1.0, N)
WEIGHTS = (RAMP[None, :, None] + 0.5 * RAMP[:, None, None]) * np.array([1.0, 0.7, 0.4])
SEEDS = range(12)


def sliver_shadow():
    """A long triangle edge's shadow crosses a sphere receiver: of its 8 probe rays one at most
    reaches the sphere, and only a short arc of the shadow boundary is seen."""
    cam = rt.Camera(eye=(0.0, 2.5, -3.0), look_at=(0.0, 0.0, 0.0), width=N, height=N, fov=40.0)
    sx = 0.3
    tri = rt.Triangle((-8.0 + sx, 2.0, 0.3), (9.0 + sx, 2.0, 0.3), (sx, 2.0, 6.0),
                      rt.Material(diffuse=(0.8, 0.8, 0.8)))
    ball = rt.Sphere((0.0, 0.0, 0.0), 1.0, rt.Material(diffuse=(0.9, 0.5, 0.2)))
    return rt.Scene(cam, (tri, ball), (rt.PointLight((0.0, 5.0, 0.0), 300.0),))


def floor_shadows():
    """A triangle and a sphere over a floor under a point light (the shadow-edge test scene)."""
    tri = ((-0.8, 0.5, -0.6), (0.7, 0.5, -0.4), (0.0, 0.6, 0.6))
    return rt.Scene(
        rt.Camera(eye=(0.0, 3.0, -4.0), look_at=(0.0, -0.5, 0.5), width=N, height=N),
        (rt.Plane((0.0, -1.0, 0.0), (0.0, 1.0, 0.0), rt.Material(ambient=(0.05, 0.05, 0.05))),
         rt.Triangle(*tri, material=rt.Material(diffuse=(0.2, 0.3, 0.9))),
         rt.Sphere((0.9, 0.0, 0.8), 0.4, rt.Material(diffuse=(0.9, 0.5, 0.2)))),
        (rt.PointLight((0.3, 4.0, -0.5), 300.0),))


def silhouettes(centre=(0.3, 0.1, 0.0)):
    tri = ((-2.0, -1.6, 1.5), (1.6, -1.4, 1.6), (0.3, 1.5, 1.8))
    return rt.Scene(
        rt.Camera(eye=(0.0, 0.0, -5.0), width=N, height=N),
        (rt.Sphere(centre, 0.9, rt.Material(diffuse=(0.9, 0.5, 0.2), ambient=(0.1, 0.1, 0.1))),
         rt.Triangle(*tri, material=rt.Material(diffuse=(0.2, 0.3, 0.9)))),
        (rt.PointLight((0.0, 0.0, -5.0), 400.0),), background=(0.05, 0.1, 0.1))


def horizon():
    cam = rt.Camera(eye=(0.0, 1.2, -4.0), look_at=(0.0, 0.6, 0.0), up=(0.15, 1.0, 0.0), fov=50.0,
                    width=N, height=N)
    floor = rt.Plane((0.0, -1.0, 0.0), (0.08, 1.0, -0.05),
                     rt.Material(diffuse=(0.8, 0.7, 0.6), ambient=(0.1, 0.1, 0.05)))
    ball = rt.Sphere((1.2, -0.05, 3.0), 0.8, rt.Material(diffuse=(0.2, 0.4, 0.9)))
    return rt.Scene(cam, (floor, ball), (rt.PointLight((1.0, 3.0, -2.0), 150.0),
                                         rt.DirectionalLight((0.4, -1.0, 0.6), 0.5)),
                    background=(0.3, 0.4, 0.6))


CASES = {
    "shadow sliver on a sphere": (sliver_shadow, shadow_boundary),
    "shadows on a floor": (floor_shadows, shadow_boundary),
    "silhouettes": (silhouettes, primary_boundary),
    # The sphere's silhouette is mostly outside the image: a sliver of it is seen.
    "sphere silhouette sliver": (lambda: silhouettes(centre=(2.65, 0.3, 0.0)), primary_boundary),
    "horizon": (horizon, horizon_boundary),
}


def _edge_term(p, boundary, density, seed):
    b = boundary(p, N, N, 0, density, seed)
    cts = boundary_cotangents(b, p, WEIGHTS)
    return np.concatenate([np.ravel(cts.get(name, np.zeros(getattr(p, name).shape)))
                           for name in ("cam", "verts", "sph", "pln", "plights")])


@pytest.mark.parametrize("case", list(CASES))
def test_edge_term_spread_falls_with_density(case):
    make, boundary = CASES[case]
    p = pack(make())
    lo = np.array([_edge_term(p, boundary, 4.0, s) for s in SEEDS])
    hi = np.array([_edge_term(p, boundary, 64.0, s) for s in SEEDS])
    spread_lo = np.sqrt(np.sum(lo.var(axis=0)))
    spread_hi = np.sqrt(np.sum(hi.var(axis=0)))
    assert spread_lo > 0.0, case
    assert spread_hi < spread_lo / 2.0, (case, spread_lo, spread_hi)
    # Both are estimates of the same boundary integral.
    diff = np.linalg.norm(lo.mean(axis=0) - hi.mean(axis=0))
    assert diff < 4.0 * spread_lo / np.sqrt(len(SEEDS)), (case, diff, spread_lo)
