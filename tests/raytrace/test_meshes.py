"""raytrace.uv_sphere: a closed, outward-facing mesh on the sphere; bad arguments."""

import numpy as np
import pytest

import raytrace as rt


def test_uv_sphere_is_closed_outward_and_on_the_sphere():
    m = rt.uv_sphere(5, center=(0.5, -1.0, 2.0), radius=0.7)
    assert m.faces.shape == (4 * 5 * 4, 3) and len(m.vertices) == 2 * 5 * 4 + 2
    np.testing.assert_allclose(np.linalg.norm(m.vertices - [0.5, -1.0, 2.0], axis=1), 0.7)
    edges = np.sort(np.concatenate([m.faces[:, [0, 1]], m.faces[:, [1, 2]], m.faces[:, [2, 0]]]),
                    axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    assert np.all(counts == 2)  # closed 2-manifold
    v = m.vertices[m.faces]
    normal = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
    assert np.all(np.sum(normal * (v.mean(axis=1) - [0.5, -1.0, 2.0]), axis=1) > 0)


@pytest.mark.parametrize("kwargs, message", [({"n": 1}, r"uv_sphere: n: expected an int >= 2"),
                                             ({"n": 4, "radius": 0.0}, r"uv_sphere: radius")])
def test_uv_sphere_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        rt.uv_sphere(**kwargs)
