"""Pytrees: containers without registration, static dataclass fields, registration."""

import collections
import dataclasses

import numpy as np
import pytest

import diffsci as ds

NT = collections.namedtuple("NT", "a b")


@dataclasses.dataclass
class DC:
    x: float
    y: tuple
    tag: str = dataclasses.field(default="t", metadata={"static": True})


def test_roundtrip_of_nested_containers():
    tree = {"a": [1.0, (2.0, None)], "b": NT(3.0, np.ones(2)), "c": DC(4.0, (5.0,))}
    leaves, td = ds.tree_flatten(tree)
    assert len(leaves) == 6
    back = ds.tree_unflatten(td, leaves)
    assert back["a"] == [1.0, (2.0, None)] and isinstance(back["b"], NT)
    assert isinstance(back["c"], DC) and back["c"].tag == "t" and back["c"].y == (5.0,)


def test_tree_map_multiple_trees_and_structure_mismatch():
    out = ds.tree_map(lambda a, b: a + b, (1, [2]), (10, [20]))
    assert out == (11, [22])
    with pytest.raises(ValueError, match="structure"):
        ds.tree_map(lambda a, b: a + b, (1, [2]), (10, 20))


def test_unflatten_wrong_leaf_count():
    _, td = ds.tree_flatten((1.0, 2.0))
    with pytest.raises(ValueError, match="2 leaves, got 3"):
        ds.tree_unflatten(td, [1, 2, 3])


def test_register_pytree_node():
    class Box:
        def __init__(self, a, b):
            self.a, self.b = a, b

    ds.register_pytree_node(Box, lambda bx: ((bx.a, bx.b), None), lambda aux, ch: Box(*ch))
    g = ds.grad(lambda bx: bx.a * bx.b)(Box(2.0, 3.0))
    assert isinstance(g, Box) and (g.a, g.b) == (3.0, 2.0)


def test_static_array_field_compares_by_value():
    @dataclasses.dataclass(frozen=True)
    class Mesh:
        verts: np.ndarray
        faces: np.ndarray = dataclasses.field(metadata={"static": True})

    m = Mesh(np.ones((3, 3)), np.array([[0, 1, 2]]))
    g = ds.grad(lambda m: np.sum(m.verts[m.faces[0]] ** 2))(m)
    assert type(g) is Mesh and g.faces is m.faces
    np.testing.assert_array_equal(g.verts, 2 * np.ones((3, 3)))
    m2 = Mesh(np.zeros((3, 3)), np.array([[0, 1, 2]]))  # equal faces, another array
    assert ds.tree_map(lambda a, b: a + b, m, m2).verts.sum() == 9.0
    with pytest.raises(ValueError, match="structure"):
        ds.tree_map(lambda a, b: a + b, m, Mesh(np.ones((3, 3)), np.array([[2, 1, 0]])))


def test_unflattener_equals_tree_unflatten_on_every_kind_of_node():
    from diffsci._jit._unflatten import unflattener

    @dataclasses.dataclass
    class Pair:
        p: object
        q: object

    trees = [1.0, (), [], {}, None, (1.0,), [1.0, (2.0, None)], {"a": 1.0, "b": [2.0, {}]},
             NT(1.0, [2.0]), DC(4.0, (5.0, NT(6.0, None))), Pair([1.0], {"z": (2.0,)}),
             ds.nn.MLP.init(0, [2, 3, 1]), [[[[(k, [k + 0.5]) for k in range(3)]]]]]
    for tree in trees:
        leaves, td = ds.tree_flatten(tree)
        fresh = [object() for _ in leaves]  # by identity: every leaf in its place
        got = unflattener(td)(fresh)
        want = ds.tree_unflatten(td, fresh)
        lg, tg = ds.tree_flatten(got)
        lw, tw = ds.tree_flatten(want)
        assert tg == tw == td and all(a is b for a, b in zip(lg, lw)), tree
        assert type(got) is type(want)
