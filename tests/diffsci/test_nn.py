"""diffsci.nn: activations, initialisers, Dense, MLP, LSTMCell and LSTM.

Gradients of every activation and layer against central finite differences in float64 (with
respect to parameters and inputs), the LSTM cell against a hand-written NumPy reference, stable
activations at ±1000 without warnings, seeds, dtypes and the layers' validation errors.
"""

import dataclasses
import warnings

import numpy as np
import pytest
from scipy import special

import diffsci as ds
import diffsci.nn as nn
from diffsci._fit import fit
from diffsci.testing import check_grads

pytestmark = pytest.mark.kernels  # softmax and log_softmax run Numba kernels (diffsci/_kernels.py)

RNG = np.random.default_rng(1907)


def _x(*shape):
    return RNG.standard_normal(shape)


# ---------------------------------------------------------------- activations
REFERENCE = {
    "relu": lambda x: np.maximum(x, 0.0),
    "tanh": np.tanh,
    "sigmoid": special.expit,
    "softplus": lambda x: np.log1p(np.exp(x)),
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
    "elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "leaky_relu": lambda x: np.where(x > 0, x, 0.01 * x),
    "softmax": lambda x: special.softmax(x, axis=-1),
    "log_softmax": lambda x: special.log_softmax(x, axis=-1),
    "identity": lambda x: x,
}


def test_every_activation_has_a_reference():
    assert set(REFERENCE) == set(nn.ACTIVATIONS)


@pytest.mark.parametrize("name", sorted(nn.ACTIVATIONS))
def test_activation_values_and_gradients(name):
    f = nn.ACTIVATIONS[name]
    x = 2.0 * _x(3, 4)
    np.testing.assert_allclose(f(x), REFERENCE[name](x), rtol=1e-12, atol=1e-15)
    check_grads(f, (x,), order=2 if name not in ("softmax", "log_softmax") else 1)


@pytest.mark.parametrize("name", sorted(nn.ACTIVATIONS))
def test_activations_keep_float32(name):
    x = _x(5).astype(np.float32)
    assert nn.ACTIVATIONS[name](x).dtype == np.float32
    assert ds.grad(lambda x: np.sum(nn.ACTIVATIONS[name](x)))(x).dtype == np.float32


@pytest.mark.parametrize("name", ["sigmoid", "softplus", "gelu", "elu", "tanh", "log_softmax"])
def test_activations_are_stable_at_plus_minus_1000(name):
    x = np.array([-1000.0, -40.0, 0.0, 40.0, 1000.0])
    f = nn.ACTIVATIONS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = f(x)
        g = ds.grad(lambda x: np.sum(f(x)))(x)
    assert np.all(np.isfinite(y)) and np.all(np.isfinite(g))


def test_sigmoid_and_softplus_exact_in_the_tails():
    x = np.array([-1000.0, -40.0, 0.0, 40.0, 1000.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(nn.sigmoid(x), special.expit(x), rtol=1e-13)
        np.testing.assert_allclose(nn.softplus(x), [0.0, np.exp(-40.0), np.log(2), 40.0, 1000.0],
                                   rtol=1e-13)
        gs = ds.grad(lambda x: np.sum(nn.sigmoid(x)))(x)
        gp = ds.grad(lambda x: np.sum(nn.softplus(x)))(x)
    np.testing.assert_allclose(gs, special.expit(x) * special.expit(-x), rtol=1e-12, atol=0)
    np.testing.assert_allclose(gp, special.expit(x), rtol=1e-13)


def test_derivatives_at_the_kinks():
    zero = np.zeros(1)
    slope = lambda f: ds.grad(lambda x: np.sum(f(x)))(zero)[0]
    assert slope(nn.relu) == 0.0
    assert slope(nn.leaky_relu) == pytest.approx(0.01)
    assert slope(nn.elu) == 1.0  # continuous derivative of elu with alpha = 1
    assert slope(nn.sigmoid) == 0.25
    assert slope(nn.gelu) == 0.5


def test_get_activation_errors():
    with pytest.raises(ValueError, match=r"unknown activation 'tanhh'; expected one of"):
        nn.get_activation("tanhh")
    with pytest.raises(TypeError, match="activation must be a name, a callable or None"):
        nn.get_activation(3)
    assert nn.get_activation(None) is nn.identity


# ---------------------------------------------------------------- initialisers
def test_initialisers_shapes_scales_and_seeds():
    rng = np.random.default_rng(0)
    w = nn.glorot_uniform(rng, (30, 20))
    assert w.shape == (30, 20) and np.abs(w).max() <= np.sqrt(6 / 50)
    assert nn.he_normal(rng, (400, 300)).std() == pytest.approx(np.sqrt(2 / 400), rel=0.02)
    assert nn.lecun_normal(rng, (400, 300)).std() == pytest.approx(np.sqrt(1 / 400), rel=0.02)
    assert nn.glorot_normal(rng, (400, 300)).std() == pytest.approx(np.sqrt(2 / 700), rel=0.02)
    for shape in [(5, 5), (6, 3), (3, 6)]:
        q = nn.orthogonal(rng, shape)
        small = q.T @ q if shape[0] >= shape[1] else q @ q.T
        np.testing.assert_allclose(small, np.eye(min(shape)), atol=1e-12)
    assert nn.glorot_uniform(rng, (3, 2), np.float32).dtype == np.float32
    np.testing.assert_array_equal(nn.glorot_uniform(nn.as_rng(7), (3, 2)),
                                  nn.glorot_uniform(nn.as_rng(7), (3, 2)))
    with pytest.raises(TypeError, match="an explicit seed is required"):
        nn.as_rng(None)
    with pytest.raises(ValueError, match=r"shape must be \(fan_in, fan_out\)"):
        nn.glorot_uniform(rng, (3,))


# ---------------------------------------------------------------- Dense and MLP
def test_dense_forward_gradient_structure_and_checks():
    layer = nn.Dense.init(0, 3, 2, activation="tanh")
    x = _x(4, 3)
    np.testing.assert_allclose(layer(x), np.tanh(x @ layer.w + layer.b))
    g = ds.grad(lambda l: np.sum(l(x) ** 2))(layer)
    assert type(g) is nn.Dense and g.activation == "tanh" and g.w.shape == (3, 2)
    check_grads(lambda l, x: l(x), (layer, x))
    check_grads(lambda l, x: l(x), (nn.Dense.init(1, 3, 2, "softplus", bias=False), x[0]))


def test_dense_with_a_callable_activation_and_float32():
    layer = nn.Dense.init(3, 4, 5, activation=np.sin, dtype=np.float32)
    x = _x(2, 4).astype(np.float32)
    assert layer(x).dtype == np.float32
    g = ds.grad(lambda l: np.sum(l(x)))(layer)
    assert g.w.dtype == np.float32 and g.activation is np.sin


def test_dense_validation():
    with pytest.raises(ValueError, match=r"w must be 2-D"):
        nn.Dense(np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match=r"b must have shape \(2,\)"):
        nn.Dense(np.zeros((3, 2)), np.zeros(3))
    with pytest.raises(ValueError, match="unknown activation 'rellu'"):
        nn.Dense(np.zeros((3, 2)), np.zeros(2), activation="rellu")
    with pytest.raises(ValueError, match="in_features must be a positive int, got 0"):
        nn.Dense.init(0, 0, 2)
    with pytest.raises(ValueError, match=r"last axis must have in_features = 3"):
        nn.Dense.init(0, 3, 2)(np.zeros((2, 4)))


def test_mlp_gradients_seeds_and_validation():
    mlp = nn.MLP.init(0, [2, 5, 4, 1], activation="gelu", final_activation="sigmoid")
    assert [l.activation for l in mlp.layers] == ["gelu", "gelu", "sigmoid"]
    x = _x(3, 2)
    check_grads(lambda m, x: m(x), (mlp, x))
    g = ds.grad(lambda m: np.sum(m(x)))(mlp)
    assert type(g) is nn.MLP and all(type(l) is nn.Dense for l in g.layers)
    again = nn.MLP.init(0, [2, 5, 4, 1], activation="gelu", final_activation="sigmoid")
    other = nn.MLP.init(1, [2, 5, 4, 1])
    np.testing.assert_array_equal(mlp.layers[1].w, again.layers[1].w)
    assert not np.allclose(mlp.layers[1].w, other.layers[1].w)
    with pytest.raises(ValueError, match="at least an input and an output"):
        nn.MLP.init(0, [3])
    with pytest.raises(ValueError, match="layer 0 has 5 outputs but layer 1 takes 4 inputs"):
        nn.MLP((nn.Dense.init(0, 2, 5), nn.Dense.init(0, 4, 1)))


def test_mlp_fits_a_sine_with_fit_and_plain_numpy_model_code():
    x = np.linspace(-2, 2, 64)[:, None]
    y = np.sin(2 * x)

    def loss(model):
        return np.mean((model(x) - y) ** 2)

    mlp = nn.MLP.init(0, [1, 16, 1], activation="tanh")
    fitted, hist = fit(loss, mlp, steps=300, progress=False)
    assert hist["loss"][-1] < 0.1 * hist["loss"][0]
    assert type(fitted) is nn.MLP


# ---------------------------------------------------------------- LSTM
def reference_lstm_step(w_x, w_h, b, h, c, x):
    """A hand-written LSTM step in plain NumPy, gate by gate (order i, f, g, o)."""
    H = h.shape[-1]
    blocks = [slice(k * H, (k + 1) * H) for k in range(4)]
    pre = [x @ w_x[:, s] + h @ w_h[:, s] + b[s] for s in blocks]
    i, f, o = special.expit(pre[0]), special.expit(pre[1]), special.expit(pre[3])
    g = np.tanh(pre[2])
    c_new = f * c + i * g
    return o * np.tanh(c_new), c_new


def test_lstm_cell_matches_a_hand_written_reference():
    cell = nn.LSTMCell.init(0, 3, 5)
    h, c = 0.5 * _x(2, 5), 0.5 * _x(2, 5)
    for _ in range(4):
        x = _x(2, 3)
        (h_new, c_new), out = cell((h, c), x)
        h_ref, c_ref = reference_lstm_step(cell.w_x, cell.w_h, cell.b, h, c, x)
        np.testing.assert_allclose(h_new, h_ref, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(c_new, c_ref, rtol=1e-13, atol=1e-15)
        assert out is h_new
        h, c = h_new, c_new


def test_lstm_cell_init_forget_bias_and_shapes():
    cell = nn.LSTMCell.init(0, 3, 4, forget_bias=1.0)
    np.testing.assert_array_equal(cell.b, [0] * 4 + [1] * 4 + [0] * 8)
    assert cell.w_x.shape == (3, 16) and cell.w_h.shape == (4, 16) and cell.hidden == 4
    for k in range(4):  # each gate's recurrent block is orthogonal
        block = cell.w_h[:, 4 * k:4 * (k + 1)]
        np.testing.assert_allclose(block.T @ block, np.eye(4), atol=1e-12)
    h, c = cell.initial_carry((2, 7))
    assert h.shape == c.shape == (2, 7, 4)
    with pytest.raises(ValueError, match=r"w_h must have shape \(H, 4H\)"):
        nn.LSTMCell(np.zeros((3, 16)), np.zeros((4, 12)), np.zeros(16))
    with pytest.raises(ValueError, match=r"last axis must have in_features = 3"):
        cell(cell.initial_carry(), np.zeros(2))


def test_lstm_cell_gradients_wrt_params_carry_and_input():
    cell = nn.LSTMCell.init(0, 3, 4)
    carry = (0.5 * _x(2, 4), 0.5 * _x(2, 4))
    check_grads(lambda cell, carry, x: cell(carry, x), (cell, carry, _x(2, 3)))


def test_lstm_cell_second_order():
    cell = nn.LSTMCell.init(2, 2, 2)
    carry = (0.5 * _x(2), 0.5 * _x(2))
    check_grads(lambda cell, x: cell(carry, x)[1], (cell, _x(2)), order=2)


def test_lstm_is_the_cells_run_over_time_and_stacked():
    lstm = nn.LSTM.init(0, in_features=3, hidden=[4, 5])
    assert lstm.num_layers == 2 and [c.hidden for c in lstm.cells] == [4, 5]
    xs = _x(6, 2, 3)
    hs, carry = lstm(xs)
    assert hs.shape == (6, 2, 5) and len(carry) == 2
    # the same by hand, time-major, layer by layer
    seq = list(xs)
    for cell, (h_fin, c_fin) in zip(lstm.cells, carry):
        h, c = cell.initial_carry((2,))
        outs = []
        for x in seq:
            h, c = reference_lstm_step(cell.w_x, cell.w_h, cell.b, h, c, x)
            outs.append(h)
        seq = outs
        np.testing.assert_allclose(h_fin, h, rtol=1e-13)
        np.testing.assert_allclose(c_fin, c, rtol=1e-13)
    np.testing.assert_allclose(hs, np.stack(seq), rtol=1e-13)
    # a given carry continues the sequence
    hs2, _ = lstm(xs[3:], carry=lstm(xs[:3])[1])
    np.testing.assert_allclose(hs2, hs[3:], rtol=1e-13)


def test_lstm_gradients_wrt_params_inputs_and_carry():
    lstm = nn.LSTM.init(1, 2, 3, num_layers=2)
    xs = _x(3, 2, 2)
    carry = lstm.initial_carry((2,))
    check_grads(lambda l, xs, carry: l(xs, carry), (lstm, xs, carry))
    g = ds.grad(lambda l: np.sum(l(xs)[0]))(lstm)
    assert type(g) is nn.LSTM and all(type(c) is nn.LSTMCell for c in g.cells)


def test_lstm_float32_unbatched_and_errors():
    lstm = nn.LSTM.init(0, 2, 3, num_layers=1, dtype=np.float32)
    xs = _x(4, 2).astype(np.float32)
    hs, carry = lstm(xs)
    assert hs.shape == (4, 3) and hs.dtype == np.float32
    g = ds.grad(lambda l: np.sum(l(xs)[0]))(lstm)
    assert all(leaf.dtype == np.float32 for leaf in ds.tree_leaves(g))
    with pytest.raises(ValueError, match="carry has 1 entries but there are 2 layers"):
        nn.LSTM.init(0, 2, 3, num_layers=2)(_x(4, 2), carry=(lstm.initial_carry(),))
    with pytest.raises(ValueError, match="num_layers must be a positive int"):
        nn.LSTM.init(0, 2, 3, num_layers=0)
    with pytest.raises(ValueError, match="cell 0 has hidden size 3 but cell 1 takes 4"):
        nn.LSTM((nn.LSTMCell.init(0, 2, 3), nn.LSTMCell.init(0, 4, 3)))


def test_layers_are_frozen_dataclasses():
    layer = nn.Dense.init(0, 2, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        layer.w = np.zeros((2, 2))
