"""The BVH: renders and gradients bit-identical to testing every triangle; its structure."""

import numpy as np
import pytest

import diffsci as ds
import raytrace as rt
from raytrace import _kernels as K
from raytrace._ops import adjoint_tables
from raytrace._pack import pack
from tests.raytrace.problems import uv_sphere

pytestmark = pytest.mark.kernels


def mesh_scene(size=24):
    v, f = uv_sphere(12, centre=(0.2, 0.1, 0.5), radius=1.0)
    v2, f2 = uv_sphere(5, centre=(-1.3, 0.6, 1.2), radius=0.5)
    return rt.Scene(
        rt.Camera(eye=(0.3, 1.0, -4.0), look_at=(0.0, 0.0, 0.5), width=size, height=size),
        (rt.Mesh(v, f, rt.Material(diffuse=(0.8, 0.3, 0.2), specular=(0.5,) * 3, reflection=0.3)),
         rt.Mesh(v2, f2, rt.Material(diffuse=(0.2, 0.8, 0.3), reflection=0.5)),
         rt.Sphere((1.4, -0.4, 0.0), 0.4, rt.Material(reflection=0.4)),
         rt.Plane((0.0, -1.0, 0.0), (0.0, 1.0, 0.0), rt.Material(diffuse=(0.6,) * 3,
                                                                 reflection=0.2))),
        (rt.PointLight((3.0, 5.0, -4.0), 600.0), rt.DirectionalLight((-0.3, -1.0, 0.5), 0.5)),
        background=(0.1, 0.1, 0.2),
    )


def test_bvh_structure():
    p = pack(mesh_scene())
    nodes, order = p.bvh, p.order
    assert len(nodes) > 1 and np.array_equal(np.sort(order), np.arange(len(p.tri)))
    leaves = nodes[:, 8] > 0
    assert nodes[leaves, 8].max() <= K.BVH_LEAF_SIZE and nodes[leaves, 8].sum() == len(p.tri)
    # Every leaf's box holds its triangles; skip links point past the node.
    for n in np.flatnonzero(leaves):
        first, cnt = int(nodes[n, 7]), int(nodes[n, 8])
        pts = p.verts[p.tri[order[first:first + cnt]]].reshape(-1, 3)
        assert np.all(pts >= nodes[n, :3]) and np.all(pts <= nodes[n, 3:6])
    assert np.all(nodes[:, 6] > np.arange(len(nodes))) and nodes[0, 6] == len(nodes)


def test_bvh_render_and_adjoint_equal_brute_force_exactly():
    scene = mesh_scene()
    w = h = scene.camera.width
    with_bvh, brute = pack(scene), pack(scene, bvh=False)
    assert len(with_bvh.bvh) and not len(brute.bvh)
    images = []
    for p in (with_bvh, brute):
        out = np.empty((h, w, 3))
        K.render_kernel(w, h, 2, 2, 1.0, *p.tables(), out)
        images.append(out)
    np.testing.assert_array_equal(images[0], images[1])
    assert images[0].std() > 0.05
    g = np.random.default_rng(0).normal(size=(h, w, 3))
    a = adjoint_tables(with_bvh, w, h, 2, 2, 1, g, nchunks=4)
    b = adjoint_tables(brute, w, h, 2, 2, 1, g, nchunks=4)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    # And through the public API.
    np.testing.assert_array_equal(rt.render(scene, samples=4, seed=1), images[0])


def test_mesh_vertex_gradient_through_the_bvh():
    v, f = uv_sphere(4, radius=0.8)

    def loss(verts):
        s = mesh_scene(size=8)
        return np.sum(rt.render(rt.Scene(s.camera, (rt.Mesh(verts, f),), s.lights)) ** 2)

    gv = ds.grad(loss)(v)
    u = np.random.default_rng(1).normal(size=v.shape) * 1e-3
    eps = 1e-4
    fd = (loss(v + eps * u) - loss(v - eps * u)) / (2 * eps)
    np.testing.assert_allclose(np.sum(gv * u), fd, rtol=1e-5)


def _strip(n):
    """A zig-zag strip of n triangles (a wavy ribbon in front of the camera)."""
    x = np.linspace(-1.5, 1.5, n // 2 + 2)
    top = np.stack([x, 0.4 + 0.1 * np.sin(3 * x), 0.3 * np.cos(2 * x)], axis=1)
    bottom = top + np.array([0.0, -0.9, 0.2])
    v = np.concatenate([top, bottom])
    m = len(x)
    faces = [(k // 2, m + k // 2, k // 2 + 1) if k % 2 == 0 else
             (k // 2 + 1, m + k // 2, m + k // 2 + 1) for k in range(n)]
    return v, np.array(faces)


@pytest.mark.parametrize("n", [K.BVH_MIN_TRIANGLES - 1, K.BVH_MIN_TRIANGLES,
                               4 * K.BVH_MIN_TRIANGLES])
def test_edge_terms_with_and_without_the_bvh_agree_around_the_threshold(n):
    # The edge terms' ray casts and radiance evaluations (cast_kernel, render_points_kernel) on
    # either side of the BVH threshold give the same samples and jumps with and without it.
    from raytrace._edges import primary_boundary
    from raytrace._horizon import horizon_boundary
    from raytrace._shadow_edges import shadow_boundary

    v, f = _strip(n)
    s = mesh_scene(size=12)
    mesh = rt.Mesh(v, f, rt.Material(diffuse=(0.7, 0.5, 0.3)))
    scene = rt.Scene(s.camera, (mesh,) + s.shapes[2:], s.lights, s.background)
    with_bvh, brute = pack(scene), pack(scene, bvh=False)
    assert (len(with_bvh.bvh) > 0) == (n >= K.BVH_MIN_TRIANGLES)
    for boundary in (primary_boundary, shadow_boundary, horizon_boundary):
        a = boundary(with_bvh, 12, 12, 2, 4.0, 3)
        b = boundary(brute, 12, 12, 2, 4.0, 3)
        assert a is not None and b is not None, boundary.__name__
        np.testing.assert_array_equal(a.s, b.s)
        np.testing.assert_array_equal(a.jump, b.jump)
