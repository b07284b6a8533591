"""The visibility-edge term (Li et al. 2018) against finite differences of a high-sample render.

Each test moves an outline across pixels: the reference is a central difference (eps = 0.04) of
the loss on 4096 stratified samples per pixel, where the pixel integral is smooth in the
parameter. The gradient with ``edges=True`` (256 samples per pixel for the interior term, mean of
three seeds) must match it within a few percent; the interior-only gradient must not. The light
sits at the eye, so no shadow boundary is visible (shadow edges are not in the edge term).
"""

import numpy as np
import pytest

import diffsci as ds
import raytrace as rt

N = 16
RAMP = np.linspace(0.0, 1.0, N)
WEIGHTS = (RAMP[None, :, None] + 0.5 * RAMP[:, None, None]) * np.array([1.0, 0.7, 0.4])
TRIANGLE = np.array([[-2.0, -1.6, 1.5], [1.6, -1.4, 1.6], [0.3, 1.5, 1.8]])


def scene(centre=(0.3, 0.1, 0.0), radius=0.9, triangle=TRIANGLE, eye=(0.0, 0.0, -5.0)):
    return rt.Scene(
        rt.Camera(eye=eye, look_at=(0.0, 0.0, 0.0), fov=45.0, width=N, height=N),
        (rt.Sphere(centre, radius, rt.Material(diffuse=(0.9, 0.5, 0.2), ambient=(0.1, 0.1, 0.1))),
         rt.Triangle(triangle[0], triangle[1], triangle[2], rt.Material(diffuse=(0.2, 0.3, 0.9)))),
        (rt.PointLight(eye, 400.0),),
        background=(0.05, 0.1, 0.1),
    )


def _loss(make, t, samples, edges=False, seed=0):
    return np.sum(WEIGHTS * rt.render(make(t), depth=0, samples=samples, edges=edges, seed=seed))


CASES = {
    "sphere moved sideways": lambda t: scene(centre=np.stack([0.3 + t, np.asarray(0.1),
                                                              np.asarray(0.0)])),
    "sphere radius": lambda t: scene(radius=0.9 + t),
    "triangle moved sideways": lambda t: scene(triangle=TRIANGLE + t * np.array([1.0, 0.0, 0.0])),
    "camera eye moved sideways": lambda t: scene(
        eye=np.stack([t, np.asarray(0.0), np.asarray(-5.0)])),
}


@pytest.mark.parametrize("case", list(CASES))
def test_edge_term_matches_high_sample_finite_differences(case):
    make = CASES[case]
    eps = 0.04
    fd = (_loss(make, eps, 4096) - _loss(make, -eps, 4096)) / (2 * eps)

    def grad(edges):
        return np.mean([float(ds.grad(lambda t: _loss(make, t, 256, edges, seed))(np.asarray(0.0)))
                        for seed in range(3)])

    with_edges, interior = grad(True), grad(False)
    assert abs(with_edges - fd) < 0.04 * abs(fd) + 0.05, (case, fd, with_edges, interior)
    assert abs(interior - fd) > 0.05 * abs(fd), (case, fd, with_edges, interior)


def test_edges_leave_the_image_and_smooth_gradients_alone():
    # The forward image does not depend on `edges`; shading-only parameters get no edge term.
    s = scene()
    np.testing.assert_array_equal(rt.render(s, edges=True), rt.render(s))

    def loss(intensity, edges):
        sc = scene()
        sc = rt.Scene(sc.camera, sc.shapes, (rt.PointLight((0.0, 0.0, -5.0), intensity),),
                      sc.background)
        return np.sum(WEIGHTS * rt.render(sc, depth=0, samples=4, edges=edges))

    g0 = ds.grad(lambda i: loss(i, False))(np.asarray(400.0))
    g1 = ds.grad(lambda i: loss(i, True))(np.asarray(400.0))
    np.testing.assert_allclose(g1, g0, rtol=1e-12)


def test_bad_edges_option():
    with pytest.raises(ValueError, match=r"edges: expected True, False or a density > 0"):
        rt.render(scene(), edges=-1.0)
