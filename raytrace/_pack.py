"""Scene ⇄ structure-of-arrays tables for the kernels, and kernel cotangents → Scene cotangents.

:func:`pack` flattens a (validated, plain-valued) :class:`~raytrace.Scene` into the float64 tables
documented in ``raytrace/_kernels.py``; :func:`unpack_cotangent` maps cotangents of those tables
back onto a Scene-shaped pytree (one material row per shape, so a Material shared by several shapes
receives the sum through diffsci's leaf accumulation). The camera's table is a small differentiable
function (:func:`camera_table`) whose pullback diffsci computes.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

import diffsci as ds

from ._kernels import MAT_COLS, build_bvh
from ._model import (
    Camera,
    DirectionalLight,
    Material,
    Mesh,
    Plane,
    PointLight,
    Scene,
    Sphere,
    Texture,
    Triangle,
)

__all__ = ["Packed", "camera_table", "pack", "unpack_cotangent"]


def camera_table(eye, look_at, up, fov, width: int, height: int):
    """The (4, 3) camera table: eye, forward F, R·tan(fov/2)·W/H, U·tan(fov/2).

    F = normalize(look_at − eye), R = normalize(F × up), U = R × F. Written with NumPy calls so
    diffsci differentiates it (``raytrace/DERIVATIONS.md``, eq. R10).
    """
    f = look_at - eye
    f = f / np.sqrt(np.sum(f * f))
    r = np.cross(f, up)
    r = r / np.sqrt(np.sum(r * r))
    u = np.cross(r, f)
    th = np.tan(np.deg2rad(fov) / 2.0)
    return np.stack([eye, f, r * (th * (width / height)), u * th])


@dataclass(frozen=True)
class Packed:
    """The kernel tables of one scene (see ``raytrace/_kernels.py``)."""

    cam: np.ndarray
    bg: np.ndarray
    sph: np.ndarray
    sph_mat: np.ndarray
    pln: np.ndarray
    pln_mat: np.ndarray
    verts: np.ndarray
    uvs: np.ndarray
    tri: np.ndarray
    tri_mat: np.ndarray
    mat: np.ndarray
    tex: np.ndarray
    plights: np.ndarray
    dlights: np.ndarray
    bvh: np.ndarray
    order: np.ndarray

    def tables(self):
        """The tables in the kernels' argument order."""
        return (self.cam, self.bg, self.sph, self.sph_mat, self.pln, self.pln_mat, self.verts,
                self.uvs, self.tri, self.tri_mat, self.mat, self.tex, self.plights, self.dlights,
                self.bvh, self.order)


def _f(x):
    return np.asarray(x, dtype=np.float64)


def _material_row(m: Material, tex_offset: int) -> np.ndarray:
    if m.texture is None:
        info = [-1.0, 0.0, 0.0]
    else:
        h, w = np.shape(m.texture.image)[:2]
        info = [float(tex_offset), float(w), float(h)]
    return np.concatenate([_f(m.diffuse), _f(m.specular), [_f(m.exponent)], [_f(m.reflection)],
                           _f(m.ambient), info])


def _texels(m: Material) -> int:
    return 0 if m.texture is None else int(np.prod(np.shape(m.texture.image)[:2]))


def pack(scene: Scene, bvh: bool = True) -> Packed:
    """Flatten a scene with plain (untraced) values into kernel tables.

    With ``bvh`` (and at least ``BVH_MIN_TRIANGLES`` triangles) a BVH over all triangles is
    built (``_kernels.build_bvh``); without, the kernels test every triangle (same image).
    """
    cam = scene.camera
    sph, sph_mat, pln, pln_mat, verts, tri, tri_mat, mats = [], [], [], [], [], [], [], []
    uvs, tex = [], []
    nverts = ntex = 0
    for shape in scene.shapes:
        mi = len(mats)
        m = shape.material
        mats.append(_material_row(m, ntex))
        if m.texture is not None:
            tex.append(_f(m.texture.image).reshape(-1, 3))
            ntex += _texels(m)
        if isinstance(shape, Sphere):
            sph.append(np.concatenate([_f(shape.center), [_f(shape.radius)]]))
            sph_mat.append(mi)
        elif isinstance(shape, Plane):
            pln.append(np.concatenate([_f(shape.point), _f(shape.normal), _f(shape.u_axis),
                                       _f(shape.v_axis)]))
            pln_mat.append(mi)
        elif isinstance(shape, Triangle):
            verts.append(np.stack([_f(shape.v0), _f(shape.v1), _f(shape.v2)]))
            uvs.append(_f(shape.uv))
            tri.append(np.arange(nverts, nverts + 3)[None, :])
            tri_mat.append(np.array([mi]))
            nverts += 3
        else:  # Mesh
            v = _f(shape.vertices)
            verts.append(v)
            uvs.append(np.zeros((len(v), 2)) if shape.uv is None else _f(shape.uv))
            tri.append(np.asarray(shape.faces, dtype=np.int64).reshape(-1, 3) + nverts)
            tri_mat.append(np.full(len(shape.faces), mi, dtype=np.int64))
            nverts += len(v)
    pl = [np.concatenate([_f(li.position), _f(li.color), [_f(li.intensity)]])
          for li in scene.lights if isinstance(li, PointLight)]
    dl = [np.concatenate([_f(li.direction), _f(li.color), [_f(li.intensity)]])
          for li in scene.lights if isinstance(li, DirectionalLight)]

    def table(rows, cols):
        return np.ascontiguousarray(np.array(rows, dtype=np.float64).reshape(len(rows), cols))

    verts = np.ascontiguousarray(np.concatenate(verts) if verts else np.zeros((0, 3)))
    uvs = np.ascontiguousarray(np.concatenate(uvs) if uvs else np.zeros((0, 2)))
    tex = np.ascontiguousarray(np.concatenate(tex) if tex else np.zeros((0, 3)))
    tri = np.ascontiguousarray(np.concatenate(tri) if tri else np.zeros((0, 3), np.int64))
    nodes, order = build_bvh(verts, tri if bvh else tri[:0])
    return Packed(
        cam=np.ascontiguousarray(camera_table(_f(cam.eye), _f(cam.look_at), _f(cam.up),
                                              _f(cam.fov), cam.width, cam.height)),
        bg=_f(scene.background).copy(),
        sph=table(sph, 4),
        sph_mat=np.array(sph_mat, dtype=np.int64),
        pln=table(pln, 12),
        pln_mat=np.array(pln_mat, dtype=np.int64),
        verts=verts,
        uvs=uvs,
        tri=tri,
        tri_mat=np.concatenate(tri_mat) if tri_mat else np.zeros(0, np.int64),
        mat=table(mats, MAT_COLS),
        tex=tex,
        plights=table(pl, 7),
        dlights=table(dl, 7),
        bvh=nodes,
        order=order,
    )


def _build(cls, **values):
    """A dataclass instance without __init__ (cotangents need not satisfy the model's checks)."""
    obj = object.__new__(cls)
    for f in fields(cls):
        object.__setattr__(obj, f.name, values[f.name])
    return obj


def _like(g, ref):
    """Cotangent ``g`` in the dtype and shape of the primal leaf ``ref``."""
    dtype = np.result_type(ref) if np.result_type(ref).kind == "f" else np.float64
    return np.asarray(g, dtype=dtype).reshape(np.shape(ref))


def _material_ct(row, m: Material, gtex) -> Material:
    """Material cotangent; ``gtex`` holds the texel cotangents of its texture (if any)."""
    texture = None
    if m.texture is not None:
        texture = _build(Texture, image=_like(gtex, m.texture.image))
    return _build(Material, diffuse=_like(row[0:3], m.diffuse),
                  specular=_like(row[3:6], m.specular),
                  exponent=_like(row[6], m.exponent), reflection=_like(row[7], m.reflection),
                  ambient=_like(row[8:11], m.ambient), texture=texture)


def unpack_cotangent(scene: Scene, g: dict) -> Scene:
    """Map cotangents of the kernel tables (dict keyed like :class:`Packed`) onto a Scene pytree."""
    cam = scene.camera
    _, back = ds.pullback(
        lambda e, la, up, fov: camera_table(e, la, up, fov, cam.width, cam.height),
        _f(cam.eye), _f(cam.look_at), _f(cam.up), _f(cam.fov),
    )
    ge, gl, gu, gf = back(g["cam"])
    cam_ct = _build(Camera, eye=_like(ge, cam.eye), look_at=_like(gl, cam.look_at),
                    up=_like(gu, cam.up), fov=_like(gf, cam.fov), width=cam.width,
                    height=cam.height)
    shapes = []
    isph = ipln = nverts = ntex = 0
    for mi, shape in enumerate(scene.shapes):
        nt = _texels(shape.material)
        mct = _material_ct(g["mat"][mi], shape.material, g["tex"][ntex:ntex + nt])
        ntex += nt
        if isinstance(shape, Sphere):
            row = g["sph"][isph]
            isph += 1
            shapes.append(_build(Sphere, center=_like(row[:3], shape.center),
                                 radius=_like(row[3], shape.radius), material=mct))
        elif isinstance(shape, Plane):
            row = g["pln"][ipln]
            ipln += 1
            shapes.append(_build(Plane, point=_like(row[:3], shape.point),
                                 normal=_like(row[3:6], shape.normal), material=mct,
                                 u_axis=_like(row[6:9], shape.u_axis),
                                 v_axis=_like(row[9:12], shape.v_axis)))
        elif isinstance(shape, Triangle):
            v = g["verts"][nverts:nverts + 3]
            uv = g["uvs"][nverts:nverts + 3]
            nverts += 3
            shapes.append(_build(Triangle, v0=_like(v[0], shape.v0), v1=_like(v[1], shape.v1),
                                 v2=_like(v[2], shape.v2), material=mct,
                                 uv=_like(uv, shape.uv)))
        else:
            nv = len(shape.vertices)
            v = g["verts"][nverts:nverts + nv]
            uv = None if shape.uv is None else _like(g["uvs"][nverts:nverts + nv], shape.uv)
            nverts += nv
            shapes.append(_build(Mesh, vertices=_like(v, shape.vertices), faces=shape.faces,
                                 material=mct, uv=uv))
    lights = []
    ipl = idl = 0
    for li in scene.lights:
        if isinstance(li, PointLight):
            row = g["plights"][ipl]
            ipl += 1
            lights.append(_build(PointLight, position=_like(row[:3], li.position),
                                 color=_like(row[3:6], li.color),
                                 intensity=_like(row[6], li.intensity)))
        else:
            row = g["dlights"][idl]
            idl += 1
            lights.append(_build(DirectionalLight, direction=_like(row[:3], li.direction),
                                 color=_like(row[3:6], li.color),
                                 intensity=_like(row[6], li.intensity)))
    return _build(Scene, camera=cam_ct, shapes=tuple(shapes), lights=tuple(lights),
                  background=_like(g["bg"], scene.background))
