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

pytestmark = pytest.mark.kernels

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


# ---------------------------------------------------------------------------------------------
# Silhouettes seen in a planar mirror, edges crossing the plane of the eye (R11)
# ---------------------------------------------------------------------------------------------
MIRROR_TRIANGLE = np.array([[-1.6, -0.6, 1.8], [-0.5, -0.7, 1.6], [-1.1, 0.5, 2.0]])


def mirror_scene(centre=(0.2, 0.0, 1.0), triangle=MIRROR_TRIANGLE, floor_y=-1.0,
                 curved=False, size=N):
    """Two glowing (ambient-only) objects over a mirror floor, no lights: the image's only
    dependence on geometry is where the outlines (direct and reflected) run, so the interior
    derivative is exactly zero and the whole gradient is the edge term. ``curved`` replaces the
    floor by a big mirror sphere (reflected silhouettes there are not sampled)."""
    glow = lambda c: rt.Material(diffuse=(0.0, 0.0, 0.0), ambient=c)  # noqa: E731
    mirror = rt.Material(diffuse=(0.0, 0.0, 0.0), ambient=(0.05, 0.05, 0.05), reflection=0.8)
    y = np.array([0.0, 1.0, 0.0])
    floor = (rt.Sphere(y * (floor_y - 3.0) + np.array([0.0, 0.0, 1.0]), 3.0, mirror) if curved
             else rt.Plane(y * floor_y, y, mirror))
    return rt.Scene(
        rt.Camera(eye=(0.0, 0.2, -3.0), look_at=(0.0, -1.0, 1.0), fov=40.0, width=size,
                  height=size),
        (floor, rt.Sphere(centre, 0.5, glow((1.0, 0.6, 0.2))),
         rt.Triangle(*triangle, material=glow((0.2, 0.5, 1.0)))),
        (), background=(0.1, 0.1, 0.1))


def _mirror_loss(make, t, samples, edges=False, seed=0, depth=1):
    return np.sum(WEIGHTS * rt.render(make(t), depth=depth, samples=samples, edges=edges,
                                      seed=seed))


MIRROR_CASES = {
    "sphere moved (direct and reflected)": lambda t: mirror_scene(
        centre=np.array([0.2, 0.0, 1.0]) + t * np.array([1.0, 0.0, 0.0])),
    "triangle moved (direct and reflected)": lambda t: mirror_scene(
        triangle=MIRROR_TRIANGLE + t * np.array([1.0, 0.0, 0.0])),
    "mirror plane raised": lambda t: mirror_scene(floor_y=-1.0 + t),
}


@pytest.mark.parametrize("case", list(MIRROR_CASES))
def test_reflected_silhouettes_in_a_planar_mirror(case):
    make = MIRROR_CASES[case]
    eps = 0.04
    fd = (_mirror_loss(make, eps, 4096) - _mirror_loss(make, -eps, 4096)) / (2 * eps)
    # The reflection carries a large part of the derivative (depth 0 has no reflection) ...
    fd_direct = ((_mirror_loss(make, eps, 1024, depth=0) - _mirror_loss(make, -eps, 1024, depth=0))
                 / (2 * eps))
    assert abs(fd - fd_direct) > 0.1 * abs(fd), (case, fd, fd_direct)
    # ... the interior term is exactly zero, and the edge term (direct + reflected) matches.
    assert float(ds.grad(lambda t: _mirror_loss(make, t, 16))(np.asarray(0.0))) == 0.0
    g = np.mean([float(ds.grad(lambda t: _mirror_loss(make, t, 16, 16.0, seed))(np.asarray(0.0)))
                 for seed in range(3)])
    assert abs(g - fd) < 0.05 * abs(fd) + 0.05, (case, fd, g)


def test_silhouettes_in_curved_mirrors_are_not_sampled():
    # The documented exclusion (R11): a silhouette reflected by a sphere (or by a triangle or
    # mesh face acting as a mirror, or seen after two mirror bounces) has no edge samples. Here
    # the objects are out of direct view, so the edge term is zero and the gradient misses the
    # whole derivative.
    def make(t):
        s = mirror_scene(centre=np.array([0.2, 0.0, 1.0]) + t * np.array([1.0, 0.0, 0.0]),
                         curved=True)
        cam = rt.Camera(eye=(0.0, 0.2, -3.0), look_at=(0.0, -1.6, 0.8), fov=25.0, width=N,
                        height=N)
        return rt.Scene(cam, s.shapes, s.lights, s.background)

    eps = 0.04
    fd = (_mirror_loss(make, eps, 1024) - _mirror_loss(make, -eps, 1024)) / (2 * eps)
    g = float(ds.grad(lambda t: _mirror_loss(make, t, 4, 16.0))(np.asarray(0.0)))
    assert abs(fd) > 0.1 and g == 0.0, (fd, g)


def test_edges_crossing_the_plane_of_the_eye():
    # A big triangle with one vertex behind the camera (two of its edges cross the eye plane)
    # and a sphere reaching behind the eye plane: their visible outlines are clipped to the
    # view frustum and sampled like any other (they used to be skipped).
    big = np.array([[-2.0, -1.2, -7.0], [2.5, -0.8, 3.0], [-0.6, 1.6, 3.0]])

    def make(t):
        shift = t * np.array([1.0, 0.0, 0.0])
        s = scene(triangle=big + shift, centre=np.array([2.2, 0.2, -4.6]) + shift, radius=1.0)
        return s

    eps = 0.04
    fd = (_loss(make, eps, 4096) - _loss(make, -eps, 4096)) / (2 * eps)
    interior = float(ds.grad(lambda t: _loss(make, t, 256))(np.asarray(0.0)))
    g = np.mean([float(ds.grad(lambda t: _loss(make, t, 256, True, seed))(np.asarray(0.0)))
                 for seed in range(3)])
    assert abs(g - fd) < 0.04 * abs(fd) + 0.05, (fd, g, interior)
    assert abs(interior - fd) > 0.1 * abs(fd), (fd, g, interior)


def test_hidden_edges_are_culled_before_shading():
    # A triangle entirely behind a big sphere: its edge samples are found hidden by one cast
    # each and dropped, so only the sphere's silhouette samples are shaded (R11).
    from raytrace._edges import primary_boundary
    from raytrace._pack import pack

    hidden = np.array([[-0.3, -0.3, 3.0], [0.3, -0.3, 3.0], [0.0, 0.3, 3.0]])
    with_tri = pack(scene(centre=(0.0, 0.0, 0.0), radius=1.5, triangle=hidden))
    alone = pack(rt.Scene(*(lambda s: (s.camera, s.shapes[:1], s.lights, s.background))(
        scene(centre=(0.0, 0.0, 0.0), radius=1.5))))
    b1 = primary_boundary(with_tri, N, N, 0)
    b2 = primary_boundary(alone, N, N, 0)
    assert len(b1.s) == len(b2.s) > 50
