"""An independent, slow, pure-NumPy reference renderer (one Python call per ray).

It shares the *specification* with raytrace (shading model, camera convention, sample positions)
but none of the code: spheres by the general quadratic, triangles by solving the 3×3 barycentric
system, recursion instead of a loop, the camera basis from a look-at matrix.
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import map_coordinates

from raytrace import DirectionalLight, Mesh, Plane, PointLight, Sphere, Triangle
from raytrace._kernels import sample_offsets

EPS = 1e-6


def _unit(v):
    return v / np.linalg.norm(v)


def _triangles(scene):
    for s in scene.shapes:
        if isinstance(s, Triangle):
            yield np.array([s.v0, s.v1, s.v2], float), s, np.asarray(s.uv, float)
        elif isinstance(s, Mesh):
            v = np.asarray(s.vertices, float)
            uv = None if s.uv is None else np.asarray(s.uv, float)
            for f in np.asarray(s.faces):
                yield v[f], s, None if uv is None else uv[f]


def _texture(image, uv):
    """Bilinear, wrapped lookup by scipy's map_coordinates (texel centres at (c + 0.5)/w)."""
    img = np.asarray(image, float)
    h, w = img.shape[:2]
    at = [[uv[1] * h - 0.5], [uv[0] * w - 0.5]]
    return np.array([map_coordinates(img[..., c], at, order=1, mode="grid-wrap")[0]
                     for c in range(3)])


def _hit(scene, o, d, tmax=np.inf):
    """(t, shape, unit normal, texture coordinates or None) of the closest hit."""
    best = (tmax, None, None, None)
    for s in scene.shapes:
        if isinstance(s, Sphere):
            c, r = np.asarray(s.center, float), float(s.radius)
            a, b, cc = d @ d, 2 * d @ (o - c), (o - c) @ (o - c) - r * r
            disc = b * b - 4 * a * cc
            if disc <= 0:
                continue
            for t in sorted([(-b - np.sqrt(disc)) / (2 * a), (-b + np.sqrt(disc)) / (2 * a)]):
                if EPS < t < best[0]:
                    x = o + t * d
                    best = (t, s, (x - c) / r, None)
                    break
        elif isinstance(s, Plane):
            n = np.asarray(s.normal, float)
            den = d @ n
            if den != 0:
                t = (np.asarray(s.point, float) - o) @ n / den
                if EPS < t < best[0]:
                    q = o + t * d - np.asarray(s.point, float)
                    uv = np.array([q @ np.asarray(s.u_axis, float),
                                   q @ np.asarray(s.v_axis, float)])
                    best = (t, s, _unit(n), uv)
    for v, s, uv3 in _triangles(scene):
        m = np.column_stack([-d, v[1] - v[0], v[2] - v[0]])
        if abs(np.linalg.det(m)) < 1e-300:
            continue
        t, b1, b2 = np.linalg.solve(m, o - v[0])
        if b1 >= 0 and b2 >= 0 and b1 + b2 <= 1 and EPS < t < best[0]:
            uv = None if uv3 is None else (1 - b1 - b2) * uv3[0] + b1 * uv3[1] + b2 * uv3[2]
            best = (t, s, _unit(np.cross(v[1] - v[0], v[2] - v[0])), uv)
    return best


def _radiance(scene, o, d, depth):
    t, s, n, uv = _hit(scene, o, d)
    if s is None:
        return np.asarray(scene.background, float)
    x = o + t * d
    if n @ d > 0:
        n = -n
    m = s.material
    kd, ks = np.asarray(m.diffuse, float), np.asarray(m.specular, float)
    if m.texture is not None:
        kd = kd * _texture(m.texture.image, uv)
    col = np.asarray(m.ambient, float).copy()
    for light in scene.lights:
        if isinstance(light, PointLight):
            w = np.asarray(light.position, float) - x
            dist = np.linalg.norm(w)
            l = w / dist
            e = float(light.intensity) * np.asarray(light.color, float) / (4 * np.pi * dist**2)
        else:
            assert isinstance(light, DirectionalLight)
            dist = np.inf
            l = -_unit(np.asarray(light.direction, float))
            e = float(light.intensity) * np.asarray(light.color, float)
        if n @ l <= 0 or _hit(scene, x, l, dist)[1] is not None:
            continue
        h = _unit(l - d)
        spec = max(n @ h, 0.0) ** float(m.exponent) if n @ h > 0 else 0.0
        col += e * (kd * (n @ l) + ks * spec)
    r = float(m.reflection)
    if depth > 0 and r != 0:
        col += r * _radiance(scene, x, d - 2 * (d @ n) * n, depth - 1)
    return col


def reference_render(scene, depth=2, samples=1, seed=0):
    """The image (height, width, 3) in float64, pixel by pixel."""
    cam = scene.camera
    eye, target, up = (np.asarray(a, float) for a in (cam.eye, cam.look_at, cam.up))
    fw = _unit(target - eye)
    right = _unit(np.cross(fw, up))
    true_up = np.cross(right, fw)
    th = np.tan(np.radians(float(cam.fov)) / 2)
    w, h = cam.width, cam.height
    side = int(round(np.sqrt(samples)))
    img = np.zeros((h, w, 3))
    for i in range(h):
        for j in range(w):
            for k in range(side * side):
                sx, sy = sample_offsets.py_func(i * w + j, k, side, float(seed))
                ndc = np.array([2 * (j + sx) / w - 1, 1 - 2 * (i + sy) / h])
                d = _unit(fw + ndc[0] * th * (w / h) * right + ndc[1] * th * true_up)
                img[i, j] += _radiance(scene, eye, d, depth)
    return img / (side * side)
