"""The render kernel, its adjoint and its tangent bound as one diffsci primitive; validation.

:func:`render_primitive` is a ``ds.custom_vjp`` function of the whole :class:`~raytrace.Scene`:
its cotangent is a Scene-shaped pytree, so any image loss written with NumPy/diffsci calls
differentiates with respect to every scene parameter. Validation happens here, once per render, on
plain values (inside the primal and the forward rule), with errors naming the object and the field.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import diffsci as ds
from diffsci.devices import check_device
from diffsci.extend import is_tracer
from diffsci.random import check_seed

from . import _kernels as K
from ._edges import (
    DEFAULT_EDGE_DENSITY,
    boundary_cotangents,
    boundary_tangent,
    primary_boundary,
)
from ._horizon import horizon_boundary
from ._model import DirectionalLight, Mesh, Plane, PointLight, Scene, Sphere, Triangle
from ._pack import Packed, _build, camera_table, pack, unpack_cotangent
from ._shadow_edges import shadow_boundary

__all__ = ["GRAD_TABLES", "render_primitive", "validate_scene"]

#: The differentiable tables, in the order of the adjoint and tangent kernels' arguments.
GRAD_TABLES = ("cam", "bg", "sph", "pln", "verts", "uvs", "mat", "tex", "plights", "dlights")

#: Triangles with area below this (relative to their longest edge squared) are degenerate.
DEGENERATE_TRIANGLE_RTOL = 1e-12
#: The camera's forward and up directions may not be closer to parallel than this (|sin angle|).
PARALLEL_UP_TOL = 1e-9


def _check_finite(where: str, value) -> None:
    a = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{where}: expected finite numbers, got {a!r}")


def _check_material(where: str, m) -> None:
    for name in ("diffuse", "specular", "exponent", "reflection", "ambient"):
        _check_finite(f"{where}.material.{name}", getattr(m, name))
    if float(m.exponent) <= 0.0:
        raise ValueError(f"{where}.material.exponent: expected > 0, got {float(m.exponent)}")
    if float(m.reflection) < 0.0:
        raise ValueError(f"{where}.material.reflection: expected >= 0, got {float(m.reflection)}")
    if m.texture is not None:
        _check_finite(f"{where}.material.texture.image", m.texture.image)


def _check_triangle(where: str, v0, v1, v2) -> None:
    e1, e2 = v1 - v0, v2 - v0
    area2 = np.linalg.norm(np.cross(e1, e2), axis=-1)
    scale = np.maximum(np.sum(e1 * e1, axis=-1), np.sum(e2 * e2, axis=-1))
    bad = np.flatnonzero(np.atleast_1d(area2 <= DEGENERATE_TRIANGLE_RTOL * scale))
    if bad.size:
        raise ValueError(
            f"{where}: degenerate triangle (zero area), face {int(bad[0])} with vertices "
            f"{np.atleast_2d(v0)[bad[0]]}, {np.atleast_2d(v1)[bad[0]]}, "
            f"{np.atleast_2d(v2)[bad[0]]}"
        )


def validate_scene(scene) -> None:
    """Check a scene's values once before rendering.

    Raises:
        TypeError: ``scene`` is not a Scene.
        ValueError: naming the object and field: a non-finite number, a radius ≤ 0, a degenerate
            triangle, a zero plane normal or light direction, an out-of-range mesh face index, a
            fov outside (0, 180), a camera whose eye equals its look-at point or that looks along
            its up vector, a textured sphere, a textured mesh without ``uv``.
    """
    if not isinstance(scene, Scene):
        raise TypeError(f"render: scene: expected a raytrace.Scene, got {type(scene).__name__}")
    cam = scene.camera
    for name in ("eye", "look_at", "up", "fov"):
        _check_finite(f"scene.camera.{name}", getattr(cam, name))
    fov = float(cam.fov)
    if not 0.0 < fov < 180.0:
        raise ValueError(f"scene.camera.fov: expected degrees in (0, 180), got {fov}")
    fwd = np.asarray(cam.look_at, np.float64) - np.asarray(cam.eye, np.float64)
    up = np.asarray(cam.up, np.float64)
    if np.linalg.norm(fwd) == 0.0:
        raise ValueError(f"scene.camera.look_at: equals the eye {np.asarray(cam.eye)}")
    sin_angle = np.linalg.norm(np.cross(fwd, up)) / (np.linalg.norm(fwd) * np.linalg.norm(up))
    if not sin_angle > PARALLEL_UP_TOL:
        raise ValueError(
            f"scene.camera.up: {up} is parallel to the viewing direction look_at - eye = {fwd}; "
            f"choose an up vector not along the viewing direction"
        )
    _check_finite("scene.background", scene.background)
    for k, s in enumerate(scene.shapes):
        where = f"scene.shapes[{k}] ({type(s).__name__})"
        _check_material(where, s.material)
        if isinstance(s, Sphere):
            if s.material.texture is not None:
                raise ValueError(
                    f"{where}.material.texture: spheres cannot be textured (no UV "
                    f"parametrisation); texture planes, triangles or meshes"
                )
            _check_finite(f"{where}.center", s.center)
            _check_finite(f"{where}.radius", s.radius)
            if float(s.radius) <= 0.0:
                raise ValueError(f"{where}.radius: expected > 0, got {float(s.radius)}")
        elif isinstance(s, Plane):
            _check_finite(f"{where}.point", s.point)
            _check_finite(f"{where}.normal", s.normal)
            _check_finite(f"{where}.u_axis", s.u_axis)
            _check_finite(f"{where}.v_axis", s.v_axis)
            if not np.any(np.asarray(s.normal) != 0.0):
                raise ValueError(f"{where}.normal: expected a non-zero vector, got {s.normal}")
        elif isinstance(s, Triangle):
            for name in ("v0", "v1", "v2", "uv"):
                _check_finite(f"{where}.{name}", getattr(s, name))
            _check_triangle(where, *(np.asarray(getattr(s, n), np.float64)
                                     for n in ("v0", "v1", "v2")))
        elif isinstance(s, Mesh):
            _check_finite(f"{where}.vertices", s.vertices)
            if s.uv is not None:
                _check_finite(f"{where}.uv", s.uv)
            elif s.material.texture is not None:
                raise ValueError(
                    f"{where}.uv: a textured mesh needs per-vertex texture coordinates "
                    f"(Mesh(vertices, faces, material, uv=...)), got None"
                )
            f = np.asarray(s.faces, dtype=np.int64).reshape(-1, 3)
            nv = len(s.vertices)
            if f.size and (f.min() < 0 or f.max() >= nv):
                raise ValueError(
                    f"{where}.faces: indices must lie in [0, {nv}), got range "
                    f"[{f.min()}, {f.max()}]"
                )
            v = np.asarray(s.vertices, np.float64)
            if f.size:
                _check_triangle(f"{where}.faces", v[f[:, 0]], v[f[:, 1]], v[f[:, 2]])
    for k, li in enumerate(scene.lights):
        where = f"scene.lights[{k}] ({type(li).__name__})"
        where_is = "position" if isinstance(li, PointLight) else "direction"
        for name in ("intensity", "color", where_is):
            _check_finite(f"{where}.{name}", getattr(li, name))
        if isinstance(li, DirectionalLight) and not np.any(np.asarray(li.direction) != 0.0):
            raise ValueError(f"{where}.direction: expected a non-zero vector, got {li.direction}")


def _out_dtype(scene):
    leaves = [x for x in ds.tree_leaves(scene) if np.result_type(x).kind == "f"]
    return np.result_type(*leaves) if leaves else np.dtype(np.float64)


def _refuse_nested(scene) -> None:
    """A traced scene inside a rule means a second derivative (grad of grad, hessian, ...)."""
    if any(is_tracer(x) for x in ds.tree_leaves(scene)):
        raise NotImplementedError(
            "raytrace.render: second derivatives (ds.hessian, grad of grad, jvp of grad) are not "
            "supported: the render's adjoint and tangent are Numba kernels; use first-order "
            "ds.grad / ds.pullback / ds.jvp"
        )


def _forward(scene, depth, side, seed, device):
    _refuse_nested(scene)
    validate_scene(scene)
    p = pack(scene)
    cam = scene.camera
    if device == "cuda":
        from ._cuda import render_cuda

        img = render_cuda(cam.width, cam.height, side, depth, seed, p)
    else:
        img = np.empty((cam.height, cam.width, 3))
        K.render_kernel(cam.width, cam.height, side, depth, float(seed), *p.tables(), img)
    return img.astype(_out_dtype(scene), copy=False), p


def adjoint_tables(p: Packed, width, height, side, depth, seed, gimg, nchunks=None):
    """Run the adjoint kernel: cotangents of every table of ``p`` (dict keyed like Packed)."""
    nchunks = K.default_chunks() if nchunks is None else nchunks
    z = {name: np.zeros((nchunks,) + getattr(p, name).shape) for name in GRAD_TABLES}
    K.render_adjoint_kernel(width, height, side, depth, float(seed), *p.tables(),
                            np.ascontiguousarray(gimg, dtype=np.float64), nchunks,
                            *(z[name] for name in GRAD_TABLES))
    return {name: a.sum(axis=0) for name, a in z.items()}


@ds.custom_vjp
def render_primitive(scene, depth, side, seed, device, edge_density):
    """Render ``scene`` (Whitted, Blinn–Phong): float image (height, width, 3); one primitive.

    ``edge_density`` > 0 adds the visibility-edge term (``_edges.py``) to the gradient.
    """
    return _forward(scene, depth, side, seed, device)[0]


def _render_fwd(scene, depth, side, seed, device, edge_density):
    img, p = _forward(scene, depth, side, seed, device)
    return img, (scene, p, depth, side, seed, device, edge_density)


def _render_bwd(res, g):
    scene, p, depth, side, seed, device, edge_density = res
    cam = scene.camera
    if isinstance(g, ds.Tracer):
        # Differentiating the adjoint itself (reverse over reverse) would need the kernel's
        # second derivatives; forward mode has its own rule (_render_jvp).
        raise NotImplementedError(
            "raytrace.render: second derivatives (ds.hessian, grad of grad, jvp of grad) are not "
            "supported: the render's adjoint and tangent are Numba kernels; use first-order "
            "ds.grad / ds.pullback / ds.jvp"
        )
    g = np.asarray(g)
    if g.shape != (cam.height, cam.width, 3):
        raise ValueError(
            f"render: image cotangent: expected shape {(cam.height, cam.width, 3)}, got {g.shape}"
        )
    if device == "cuda":
        from ._cuda import adjoint_tables_cuda

        tables = adjoint_tables_cuda(p, cam.width, cam.height, side, depth, seed, g)
    else:
        tables = adjoint_tables(p, cam.width, cam.height, side, depth, seed, g)
    for b in _boundaries(p, cam, depth, seed, edge_density, device):
        for name, ct in boundary_cotangents(b, p, g).items():
            tables[name] = tables[name] + ct
    return unpack_cotangent(scene, tables), None, None, None, None, None


def _boundaries(p, cam, depth, seed, edge_density, device="cpu"):
    """The visibility-edge samples (silhouettes, also in planar mirrors; shadow boundaries;
    plane horizons)."""
    if edge_density <= 0:
        return ()
    return (primary_boundary(p, cam.width, cam.height, depth, edge_density, seed, device),
            shadow_boundary(p, cam.width, cam.height, depth, edge_density, seed, device),
            horizon_boundary(p, cam.width, cam.height, depth, edge_density, seed, device))


def _fill_tangent(primal, tangent):
    """A tangent pytree shaped like ``primal`` with zeros where diffsci passed None."""
    if primal is None:
        return None
    if isinstance(primal, tuple):
        return tuple(_fill_tangent(a, None if tangent is None else b)
                     for a, b in zip(primal, tangent or (None,) * len(primal)))
    if dataclasses.is_dataclass(primal):
        return _build(type(primal), **{
            f.name: (getattr(primal, f.name) if f.metadata.get("static") else
                     _fill_tangent(getattr(primal, f.name),
                                   None if tangent is None else getattr(tangent, f.name)))
            for f in dataclasses.fields(primal)})
    if tangent is None:
        return np.zeros(np.shape(primal))
    return np.broadcast_to(np.asarray(tangent, dtype=np.float64), np.shape(primal))


def tangent_tables(scene: Scene, tscene) -> dict:
    """Tangents of the kernel tables (dict keyed like :class:`Packed`) for a Scene tangent."""
    t = _fill_tangent(scene, tscene)
    cam, tcam = scene.camera, t.camera
    # Packing is linear in every field except the camera, whose table gets its own JVP; the
    # tangent scene is packed with the primal camera so that nothing divides by zero.
    tp = pack(_build(Scene, camera=cam, shapes=t.shapes, lights=t.lights,
                     background=t.background), bvh=False)
    fields = ("eye", "look_at", "up", "fov")
    _, dcam = ds.jvp(lambda e, la, up, fov: camera_table(e, la, up, fov, cam.width, cam.height),
                     tuple(np.asarray(getattr(cam, n), np.float64) for n in fields),
                     tuple(np.asarray(getattr(tcam, n), np.float64) for n in fields))
    return {"cam": np.ascontiguousarray(dcam),
            **{n: getattr(tp, n) for n in GRAD_TABLES if n != "cam"}}


def _render_jvp(primals, tangents):
    """Forward mode: the tangent kernel (interior terms) plus the edge samples' w·jump·n·ṡ."""
    scene, depth, side, seed, device, edge_density = primals
    _refuse_nested(scene)
    validate_scene(scene)
    p = pack(scene)
    cam = scene.camera
    dt = tangent_tables(scene, tangents[0])
    if device == "cuda":
        from ._cuda import tangent_cuda

        out, dout = tangent_cuda(cam.width, cam.height, side, depth, seed, p, dt)
    else:
        out = np.empty((cam.height, cam.width, 3))
        dout = np.empty_like(out)
        K.render_tangent_kernel(cam.width, cam.height, side, depth, float(seed), *p.tables(),
                                *(dt[name] for name in GRAD_TABLES), out, dout)
    for b in _boundaries(p, cam, depth, seed, edge_density, device):
        dout += boundary_tangent(b, p, dt, cam.width, cam.height)
    dtype = _out_dtype(scene)
    return out.astype(dtype, copy=False), dout.astype(dtype, copy=False)


render_primitive.defjvp(_render_jvp)
render_primitive.defvjp(_render_fwd, _render_bwd)


def check_options(depth, samples, seed, device, edges) -> tuple[int, int, int, str, float]:
    """Validate render options: (depth, side, seed, device, edge density), side² = samples."""
    if not isinstance(depth, (int, np.integer)) or isinstance(depth, bool) or depth < 0:
        raise ValueError(f"render: depth: expected an int >= 0, got {depth!r}")
    if not isinstance(samples, (int, np.integer)) or isinstance(samples, bool) or samples < 1:
        raise ValueError(f"render: samples: expected a positive perfect square, got {samples!r}")
    side = math.isqrt(int(samples))
    if side * side != samples:
        raise ValueError(
            f"render: samples: expected a perfect square (1, 4, 9, 16, ...) for s×s stratified "
            f"sampling, got {samples}"
        )
    seed = check_seed(seed, "render")
    if isinstance(edges, np.bool_):
        edges = bool(edges)
    if edges is True:
        edges = DEFAULT_EDGE_DENSITY
    if edges is False or edges is None:
        edges = 0.0
    if not isinstance(edges, (int, float, np.integer, np.floating)) or not edges >= 0:
        raise ValueError(
            f"render: edges: expected True, False or a density > 0 (edge samples per pixel of "
            f"edge length), got {edges!r}"
        )
    return int(depth), side, seed, check_device(device), float(edges)
