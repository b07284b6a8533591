"""Wavefront OBJ meshes: :func:`load_obj` and :func:`save_obj`.

Only geometry is read: ``v`` lines (x y z, an optional w is ignored) and ``f`` lines whose
corners are ``v``, ``v/vt``, ``v//vn`` or ``v/vt/vn`` (1-based; negative indices count back from
the latest vertex). Polygons are fan-triangulated (v₀ vᵢ vᵢ₊₁). Texture coordinates, normals,
groups, smoothing groups and materials (``vt vn g o s usemtl mtllib l``) are skipped.

Reference: Wavefront Technologies, "Appendix B1. Object Files (.obj)", Advanced Visualizer
manual, sections "Vertex data" and "Referencing vertex data".
"""

from __future__ import annotations

import os

import numpy as np

from ._model import Material, Mesh

__all__ = ["load_obj", "save_obj"]


def _vertex_index(token: str, nverts: int, where: str) -> int:
    head = token.split("/", 1)[0]
    try:
        k = int(head)
    except ValueError:
        raise ValueError(f"{where}: expected a vertex index (v, v/vt, v//vn or v/vt/vn), "
                         f"got {token!r}") from None
    if k == 0:
        raise ValueError(f"{where}: vertex index 0 is invalid (OBJ indices start at 1)")
    i = k - 1 if k > 0 else nverts + k
    if not 0 <= i < nverts:
        raise ValueError(f"{where}: vertex index {k} out of range; {nverts} vertices defined "
                         f"so far")
    return i


def load_obj(path: str | os.PathLike[str], material: Material | None = None) -> Mesh:
    """Read a triangle mesh from a Wavefront OBJ file.

    Args:
        path: a file path (str or os.PathLike).
        material: the mesh's material (default ``Material()``).

    Returns:
        A :class:`~raytrace.Mesh` with float64 vertices (V, 3) and int64 faces (F, 3).

    Raises:
        ValueError: naming the file and line number: a malformed ``v`` line, a face corner that
            is not an index, an index of 0 or out of range, a face with fewer than 3 corners, or
            a file without faces.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "quad.obj"
        >>> _ = p.write_text("v 0 0 0\\nv 1 0 0\\nv 1 1 0\\nv 0 1 0\\nf 1/1/1 2/2/1 3/3/1 -1\\n")
        >>> load_obj(p).faces
        array([[0, 1, 2],
               [0, 2, 3]])
    """
    verts: list[tuple[float, float, float]] = []
    faces: list[tuple[int, int, int]] = []
    name = os.fspath(path)
    with open(name, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            where = f"load_obj: {name}, line {lineno}"
            if words[0] == "v":
                try:
                    xyz = tuple(float(w) for w in words[1:])
                except ValueError:
                    raise ValueError(f"{where}: expected 'v x y z [w]' with numbers, got "
                                     f"{line.strip()!r}") from None
                if len(xyz) not in (3, 4):
                    raise ValueError(f"{where}: expected 'v x y z [w]', got {line.strip()!r}")
                verts.append(xyz[:3])
            elif words[0] == "f":
                corners = [_vertex_index(w, len(verts), where) for w in words[1:]]
                if len(corners) < 3:
                    raise ValueError(f"{where}: a face needs at least 3 vertices, got "
                                     f"{len(corners)}")
                faces.extend((corners[0], corners[k], corners[k + 1])
                             for k in range(1, len(corners) - 1))
    if not faces:
        raise ValueError(f"load_obj: {name}: no faces ('f' lines) found")
    return Mesh(np.array(verts, dtype=np.float64), np.array(faces, dtype=np.int64), material)


def save_obj(path: str | os.PathLike[str], mesh: Mesh) -> None:
    """Write ``mesh``'s vertices and triangles as a Wavefront OBJ file (round-trips exactly).

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "tri.obj"
        >>> save_obj(p, Mesh(np.eye(3), [[0, 1, 2]]))
        >>> load_obj(p).vertices.tolist()
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    v = np.asarray(mesh.vertices, dtype=np.float64)
    lines = [f"v {x!r} {y!r} {z!r}" for x, y, z in v.tolist()]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in np.asarray(mesh.faces).tolist()]
    with open(os.fspath(path), "w", encoding="utf-8") as fh:
        fh.write("# written by raytrace.save_obj\n" + "\n".join(lines) + "\n")
