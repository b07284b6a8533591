"""The hard-shadow boundary term against finite differences of a high-sample render.

A triangle and a sphere (or a 48-face sphere mesh) over a floor cast shadows lit by a point
light; the camera looks down at them. Each case sweeps a shadow edge across pixels (moving the
light, the triangle, sphere or mesh occluder, or turning a directional light); the reference
is a central difference (eps = 0.04) of the loss on 4096 stratified samples per pixel.
``edges=16`` (16 edge samples per pixel of curve length, 256 samples per pixel for the interior
term, mean of three seeds) must match within a few percent; the interior-only gradient must not
(it misses 5–100 % here).
"""

import numpy as np
import pytest

import diffsci as ds
import raytrace as rt
from tests.raytrace.problems import uv_sphere

pytestmark = pytest.mark.kernels

N = 16
RAMP = np.linspace(0.0, 1.0, N)
WEIGHTS = (RAMP[None, :, None] + 0.5 * RAMP[:, None, None]) * np.array([1.0, 0.7, 0.4])
TRIANGLE = np.array([[-0.8, 0.5, -0.6], [0.7, 0.5, -0.4], [0.0, 0.6, 0.6]])


MESH_V, MESH_F = uv_sphere(4, centre=(0.9, 0.0, 0.8), radius=0.4)


def scene(light=(0.3, 4.0, -0.5), triangle=TRIANGLE, centre=(0.9, 0.0, 0.8), directional=None,
          mesh=None):
    lights = ((rt.PointLight(light, 300.0),) if directional is None
              else (rt.DirectionalLight(directional, 1.5),))
    return rt.Scene(
        rt.Camera(eye=(0.0, 3.0, -4.0), look_at=(0.0, -0.5, 0.5), width=N, height=N),
        (rt.Plane((0.0, -1.0, 0.0), (0.0, 1.0, 0.0),
                  rt.Material(diffuse=(0.8, 0.8, 0.8), ambient=(0.05, 0.05, 0.05))),
         rt.Triangle(*triangle, material=rt.Material(diffuse=(0.2, 0.3, 0.9))),
         rt.Sphere(centre, 0.4, rt.Material(diffuse=(0.9, 0.5, 0.2))) if mesh is None else
         rt.Mesh(mesh, MESH_F, rt.Material(diffuse=(0.9, 0.5, 0.2)))),
        lights,
    )


def _loss(make, t, samples, edges=False, seed=0):
    return np.sum(WEIGHTS * rt.render(make(t), depth=0, samples=samples, edges=edges, seed=seed))


X, Z = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])


CASES = {
    "point light moved": lambda t: scene(light=np.array([0.3, 4.0, -0.5]) + t * X),
    "triangle occluder moved": lambda t: scene(triangle=TRIANGLE + t * X),
    "sphere occluder moved": lambda t: scene(centre=np.array([0.9, 0.0, 0.8]) + t * Z),
    "mesh occluder moved": lambda t: scene(mesh=MESH_V + t * Z),
    "directional light turned": lambda t: scene(directional=np.array([0.3, -1.0, 0.2]) + t * X),
}


@pytest.mark.parametrize("case", list(CASES))
def test_shadow_edge_term_matches_high_sample_finite_differences(case):
    make = CASES[case]
    eps = 0.04
    fd = (_loss(make, eps, 4096) - _loss(make, -eps, 4096)) / (2 * eps)

    def grad(edges):
        return np.mean([float(ds.grad(lambda t: _loss(make, t, 256, edges, seed))(np.asarray(0.0)))
                        for seed in range(3)])

    with_edges, interior = grad(16.0), grad(False)
    assert abs(with_edges - fd) < 0.05 * abs(fd) + 0.05, (case, fd, with_edges, interior)
    assert abs(interior - fd) > 0.04 * abs(fd), (case, fd, with_edges, interior)


def test_forward_mode_with_edges_is_the_transpose_of_reverse_mode():
    # Same seed, same edge samples: <u, J t> from ds.jvp equals <J^T u, t> from ds.pullback,
    # silhouette and shadow-boundary terms included.
    rng = np.random.default_rng(2)
    t = (rng.normal(size=3), rng.normal(size=(3, 3)), rng.normal(size=3))
    u = rng.normal(size=(N, N, 3))

    def image(light, triangle, centre):
        return rt.render(scene(light, triangle, centre), depth=1, samples=4, edges=True, seed=5)

    xs = (np.array([0.3, 4.0, -0.5]), TRIANGLE.copy(), np.array([0.9, 0.0, 0.8]))
    _, jt = ds.jvp(image, xs, t)
    _, back = ds.pullback(image, *xs)
    rhs = sum(np.sum(a * b) for a, b in zip(back(u), t))
    np.testing.assert_allclose(np.sum(u * jt), rhs, rtol=1e-10)
    _, jt0 = ds.jvp(lambda *a: rt.render(scene(*a), depth=1, samples=4, seed=5), xs, t)
    assert abs(np.sum(u * (jt - jt0))) > 1e-3 * abs(np.sum(u * jt))  # the edge term is there
