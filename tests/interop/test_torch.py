"""diffsci ⇄ PyTorch: to_torch, TorchModule, from_torch.

Every gradient is compared with the same computation written in torch (to 1e-12) and
checked by torch.autograd.gradcheck / gradgradcheck (finite differences) or
diffsci.testing.check_grads.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import diffsci as ds  # noqa: E402
from diffsci.interop import TorchModule, from_torch, to_torch  # noqa: E402
from diffsci.interop._torch import _from_numpy, _to_numpy  # noqa: E402
from diffsci.testing import check_grads  # noqa: E402

F64 = torch.float64


def _t(a, dtype=F64, grad=True):
    return torch.tensor(np.asarray(a), dtype=dtype, requires_grad=grad)


def _model_ds(p, x):
    h = np.tanh(x @ p["w"] + p["b"])
    return {"loss": np.sum(np.sin(h) ** 2) + np.sum(p["w"] ** 2), "h": h}


def _model_torch(p, x):
    h = torch.tanh(x @ p["w"] + p["b"])
    return {"loss": torch.sum(torch.sin(h) ** 2) + torch.sum(p["w"] ** 2), "h": h}


def _params(rng, dtype=F64):
    return {"w": _t(rng.normal(size=(3, 2)), dtype), "b": _t(rng.normal(size=2), dtype)}


def _grads(loss, leaves):
    return torch.autograd.grad(loss, leaves)


# ---------------------------------------------------------------------------
# to_torch: values and gradients against the native torch computation
# ---------------------------------------------------------------------------
def test_pytree_gradients_match_native_torch():
    rng = np.random.default_rng(0)
    p, x = _params(rng), _t(rng.normal(size=(4, 3)))
    f = to_torch(_model_ds)
    out, ref = f(p, x), _model_torch(p, x)
    assert set(out) == {"loss", "h"} and out["h"].dtype == F64
    torch.testing.assert_close(out["h"], ref["h"], rtol=1e-12, atol=1e-12)
    v = _t(rng.normal(size=(4, 2)), grad=False)
    leaves = [p["w"], p["b"], x]
    g = _grads(out["loss"] + torch.sum(out["h"] * v), leaves)
    gref = _grads(ref["loss"] + torch.sum(ref["h"] * v), leaves)
    for a, b in zip(g, gref):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


def test_gradcheck_and_gradgradcheck():
    rng = np.random.default_rng(1)
    p, x = _params(rng), _t(rng.normal(size=(2, 3)))
    f = to_torch(_model_ds)

    def flat(w, b, x):
        o = f({"w": w, "b": b}, x)
        return o["loss"], o["h"]

    assert torch.autograd.gradcheck(flat, (p["w"], p["b"], x))
    assert torch.autograd.gradgradcheck(flat, (p["w"], p["b"], x))


def test_double_backward_matches_native_hessian():
    # create_graph=True: the backward is itself a bridged diffsci call; torch's Hessian of
    # the bridged function equals torch's Hessian of the native one, third order too.
    rng = np.random.default_rng(2)
    x0 = rng.normal(size=3)
    f = to_torch(lambda x: np.sum(np.exp(np.sin(x)) * x ** 2))
    h = torch.autograd.functional.hessian(f, _t(x0), create_graph=False)
    href = torch.autograd.functional.hessian(
        lambda x: torch.sum(torch.exp(torch.sin(x)) * x ** 2), _t(x0))
    torch.testing.assert_close(h, href, rtol=1e-12, atol=1e-12)
    x, xr = _t(x0), _t(x0)
    g = torch.autograd.grad(f(x), x, create_graph=True)[0]
    g2 = torch.autograd.grad(g.sum(), x, create_graph=True)[0]
    g3 = torch.autograd.grad(g2.sum(), x)[0]
    r = torch.autograd.grad(torch.sum(torch.exp(torch.sin(xr)) * xr ** 2), xr,
                            create_graph=True)[0]
    r2 = torch.autograd.grad(r.sum(), xr, create_graph=True)[0]
    r3 = torch.autograd.grad(r2.sum(), xr)[0]
    torch.testing.assert_close(g3, r3, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------
# complex: PyTorch's convention is diffsci's
# ---------------------------------------------------------------------------
def test_complex_real_loss_matches_torch():
    rng = np.random.default_rng(3)
    z0 = rng.normal(size=3) + 1j * rng.normal(size=3)
    f = to_torch(lambda z: np.sum(np.abs(np.exp(z) * np.conj(z) + z ** 2) ** 2))
    z, zr = _t(z0, torch.complex128), _t(z0, torch.complex128)
    (g,) = torch.autograd.grad(f(z), z)
    (gr,) = torch.autograd.grad(
        torch.sum(torch.abs(torch.exp(zr) * torch.conj(zr) + zr ** 2) ** 2), zr)
    torch.testing.assert_close(g, gr, rtol=1e-12, atol=1e-12)
    # |z|²'s gradient is 2z in this convention (README), here at 1+2i: 2+4i
    zz = _t(1 + 2j, torch.complex128)
    (g1,) = torch.autograd.grad(to_torch(lambda z: np.abs(z) ** 2)(zz), zz)
    assert complex(g1) == 2 + 4j


def test_complex_vjp_with_complex_cotangent_and_gradcheck():
    rng = np.random.default_rng(4)
    z0 = rng.normal(size=3) + 1j * rng.normal(size=3)
    v = torch.tensor(rng.normal(size=3) + 1j * rng.normal(size=3))
    f = to_torch(lambda z: np.exp(z) * np.conj(z))   # neither holomorphic nor real
    z, zr = _t(z0, torch.complex128), _t(z0, torch.complex128)
    (g,) = torch.autograd.grad(f(z), z, v)
    (gr,) = torch.autograd.grad(torch.exp(zr) * torch.conj(zr), zr, v)
    torch.testing.assert_close(g, gr, rtol=1e-12, atol=1e-12)
    assert torch.autograd.gradcheck(f, (z,))
    assert torch.autograd.gradgradcheck(f, (z,))


# ---------------------------------------------------------------------------
# crossing: float32 kept, memory shared, non-contiguous inputs
# ---------------------------------------------------------------------------
def test_float32_preserved():
    rng = np.random.default_rng(5)
    x0 = rng.normal(size=(3, 3))
    f = to_torch(lambda x: np.sum(np.tanh(x) ** 2, axis=0))
    x, xr = _t(x0, torch.float32), _t(x0, torch.float32)
    y = f(x)
    assert y.dtype == torch.float32
    (g,) = torch.autograd.grad(y.sum(), x)
    (gr,) = torch.autograd.grad(torch.sum(torch.tanh(xr) ** 2, dim=0).sum(), xr)
    assert g.dtype == torch.float32
    torch.testing.assert_close(g, gr, rtol=1e-5, atol=1e-6)   # float32 arithmetic
    torch.testing.assert_close(y, torch.sum(torch.tanh(xr) ** 2, dim=0), rtol=1e-6, atol=1e-6)


def test_crossing_shares_memory():
    t = torch.arange(12, dtype=F64).reshape(3, 4)
    a = _to_numpy(t, "test", "t")
    assert a.ctypes.data == t.data_ptr() and np.shares_memory(a, t.numpy())
    tt = t.T  # non-contiguous: the strides cross, not a copy
    b = _to_numpy(tt, "test", "tt")
    assert not b.flags.c_contiguous and np.shares_memory(b, t.numpy())
    np.testing.assert_array_equal(b, t.numpy().T)
    o = np.linspace(0.0, 1.0, 6)
    r = _from_numpy(o, "test", 0)
    assert r.data_ptr() == o.ctypes.data
    # a lazily conjugated tensor is resolved (not mistaken for its memory)
    zc = torch.tensor([1 + 2j]).conj()
    assert _to_numpy(zc, "test", "zc")[0] == 1 - 2j


def test_non_contiguous_inputs_gradients():
    rng = np.random.default_rng(6)
    base = _t(rng.normal(size=(4, 3)))
    f = to_torch(lambda x: np.sum(np.cumsum(x, axis=0) ** 2))
    x = base.T[:, ::2]  # transposed and strided
    (g,) = torch.autograd.grad(f(x), base)
    (gr,) = torch.autograd.grad(torch.sum(torch.cumsum(base.T[:, ::2], dim=0) ** 2), base)
    torch.testing.assert_close(g, gr, rtol=1e-12, atol=1e-12)


def test_nondiff_argnums_and_constants():
    idx = torch.tensor([2, 0])
    f = to_torch(lambda x, i, scale: scale * np.sum(x[i] ** 2), nondiff_argnums=(1,))
    x = _t([1.0, 2.0, 3.0])
    (g,) = torch.autograd.grad(f(x, idx, 2.0), x)
    torch.testing.assert_close(g, torch.tensor([4.0, 0.0, 12.0], dtype=F64))
    # keyword arguments are constants too; their tensors cross as arrays
    h = to_torch(lambda x, *, w: np.sum(w * x ** 2))
    (g,) = torch.autograd.grad(h(x, w=torch.tensor([1.0, 0.0, 2.0], dtype=F64)), x)
    torch.testing.assert_close(g, torch.tensor([2.0, 0.0, 12.0], dtype=F64))


# ---------------------------------------------------------------------------
# errors name what crossed wrongly
# ---------------------------------------------------------------------------
def test_errors():
    f = to_torch(lambda x: np.sum(x ** 2), name="sq")
    with pytest.raises(TypeError, match=r"to_torch\(sq\): argument 0 is a tensor on device "
                                        r"meta.*\.cpu\(\)"):
        f(torch.empty(3, device="meta"))
    with pytest.raises(TypeError, match=r"argument 0 is a tensor of dtype torch.int64.*"
                                        r"nondiff_argnums"):
        f(torch.arange(3))
    with pytest.raises(TypeError, match=r"argument 1 \(leaf 0 of its pytree\) is a tensor of "
                                        r"dtype torch.bool"):
        to_torch(lambda x, d: x)(_t([1.0]), {"m": torch.tensor([True])})
    with pytest.raises(TypeError, match=r"output leaf 0 is a str"):
        to_torch(lambda x: "nope", name="s")(_t([1.0]))
    with pytest.raises(TypeError, match="sparse"):
        f(torch.eye(2, dtype=F64).to_sparse())


def test_create_graph_without_second_order_is_a_clear_error():
    # a custom_vjp whose fwd cuts outer traces has no second derivative in diffsci
    @ds.custom_vjp
    def cube(x):
        return x ** 3

    cube.defvjp(lambda x: (ds.stop_gradient(x) ** 3, ds.stop_gradient(x)),
                lambda x, g: (3 * x ** 2 * g,))
    f = to_torch(lambda x: np.sum(cube(x)), name="cube")
    x = _t([1.0, 2.0])
    (g,) = torch.autograd.grad(f(x), x)          # first order works
    torch.testing.assert_close(g, torch.tensor([3.0, 12.0], dtype=F64))
    # create_graph=True records the backward as a diffsci computation traced at a second
    # level, which is where diffsci finds the missing second order: the error comes then
    with pytest.raises(RuntimeError, match=r"to_torch\(cube\): torch asked for derivatives of "
                                           r"order 2.*create_graph=True.*custom_vjp cube"):
        torch.autograd.grad(f(x), x, create_graph=True)


# ---------------------------------------------------------------------------
# TorchModule
# ---------------------------------------------------------------------------
def test_torch_module_parameters_gradients_and_training():
    rng = np.random.default_rng(7)
    p0 = {"w": rng.normal(size=(3, 2)), "b": np.zeros(2)}
    layer = TorchModule(lambda p, x: _model_ds(p, x)["h"], p0)
    assert [q.dtype for q in layer.parameters()] == [F64, F64]
    assert [tuple(q.shape) for q in layer.parameters()] == [(3, 2), (2,)]
    x = _t(rng.normal(size=(5, 3)), grad=False)
    y = layer(x).pow(2).sum()
    g = torch.autograd.grad(y, list(layer.parameters()))
    pr = {"w": _t(p0["w"]), "b": _t(p0["b"])}
    gr = torch.autograd.grad(_model_torch(pr, x)["h"].pow(2).sum(), [pr["w"], pr["b"]])
    for a, b in zip(g, gr):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    # in a torch model, trained by torch.optim: the loss falls
    target = torch.tanh(x @ torch.ones(3, 2, dtype=F64))
    model = torch.nn.Sequential(layer, torch.nn.Linear(2, 2, dtype=F64))
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(40):
        opt.zero_grad()
        loss = (model(x) - target).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.2 * losses[0]
    assert not np.allclose(layer.numpy_params()["w"], p0["w"])
    with pytest.raises(TypeError, match="parameter leaf 1 is a ndarray of shape \\(2,\\) and "
                                        "dtype int64"):
        TorchModule(lambda p, x: x, (np.ones(2), np.arange(2)))


# ---------------------------------------------------------------------------
# from_torch: torch inside diffsci
# ---------------------------------------------------------------------------
def test_from_torch_function_all_orders():
    f = from_torch(lambda x, y: (torch.tanh(x) * y ** 2, torch.sum(torch.sin(x * y))))
    x, y = np.array([0.3, -0.7]), np.array([1.2, 0.4])
    check_grads(f, (x, y), order=2)  # VJP, JVP and their compositions by finite differences
    xt, yt = _t(x), _t(y)
    a, b = torch.tanh(xt) * yt ** 2, torch.sum(torch.sin(xt * yt))
    ref = torch.autograd.grad(a.sum() + 3 * b, (xt, yt))
    got = ds.grad(lambda x, y: np.sum(f(x, y)[0]) + 3 * f(x, y)[1], argnums=(0, 1))(x, y)
    for u, v in zip(got, ref):
        np.testing.assert_allclose(u, v.numpy(), rtol=1e-12, atol=1e-12)
    H = ds.hessian(lambda x: f(x, y)[1])(x)
    Hr = torch.autograd.functional.hessian(lambda x: torch.sum(torch.sin(x * yt.detach())), xt)
    np.testing.assert_allclose(H, Hr.numpy(), rtol=1e-12, atol=1e-12)


def test_from_torch_complex():
    f = from_torch(lambda z: torch.exp(z) * torch.conj(z))
    z = np.array([0.3 + 0.4j, -0.2 + 0.1j])
    check_grads(f, (z,), order=2)
    zt = _t(z, torch.complex128)
    v = np.array([1.0 - 2.0j, 0.5 + 0.5j])
    (gr,) = torch.autograd.grad(torch.exp(zt) * torch.conj(zt), zt, torch.tensor(v))
    _, back = ds.pullback(f, z)
    np.testing.assert_allclose(back(v)[0], gr.numpy(), rtol=1e-12, atol=1e-12)


def test_from_torch_module_parameters():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Tanh(),
                              torch.nn.Linear(4, 1)).double()
    g = from_torch(net)
    assert list(g.params) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    x = np.array([[0.3, -0.2], [0.1, 0.5]])
    check_grads(lambda p, x: g(p, x), (g.params, x), order=2, modes=("rev",))
    grads = ds.grad(lambda p: np.sum(g(p, x) ** 2))(g.params)
    net.zero_grad()
    torch.sum(net(torch.tensor(x)) ** 2).backward()
    for n, q in net.named_parameters():
        np.testing.assert_allclose(grads[n], q.grad.numpy(), rtol=1e-12, atol=1e-12)
    const = from_torch(net, params=False)
    np.testing.assert_allclose(const(x), net(torch.tensor(x)).detach().numpy(), rtol=1e-15)
    # a tied parameter (one Linear used twice) is one entry, and both uses see the value given
    lin = torch.nn.Linear(2, 2).double()
    tied = torch.nn.Sequential(lin, torch.nn.Tanh(), lin)
    gt = from_torch(tied)
    assert list(gt.params) == ["0.weight", "0.bias"]
    gtied = ds.grad(lambda p: np.sum(gt(p, x) ** 2))(gt.params)
    tied.zero_grad()
    torch.sum(tied(torch.tensor(x)) ** 2).backward()
    np.testing.assert_allclose(gtied["0.weight"], lin.weight.grad.numpy(), rtol=1e-12)
    with pytest.raises(TypeError, match=r"the first argument must be the dict of parameters"):
        g({"w": 1.0}, x)
    with pytest.raises(TypeError, match=r"output leaf 0 is a str"):
        from_torch(lambda x: "nope")(np.ones(2))


def test_round_trip_torch_diffsci_torch_second_order():
    # to_torch(from_torch(fn)) has the native torch function's first and second derivatives
    fn = lambda x: torch.sum(torch.sigmoid(x) ** 3 * x)  # noqa: E731
    rt = to_torch(from_torch(fn), name="round_trip")
    x0 = np.array([0.2, -1.0, 0.7])
    h = torch.autograd.functional.hessian(rt, _t(x0))
    hr = torch.autograd.functional.hessian(fn, _t(x0))
    torch.testing.assert_close(h, hr, rtol=1e-12, atol=1e-12)
    assert torch.autograd.gradgradcheck(rt, (_t(x0),))


@pytest.mark.kernels
def test_quantum_circuit_second_order_through_torch():
    # a real diffsci function with second derivatives (quantum's composed nested rules):
    # gradgradcheck of the bridged expectation value, and its Hessian against diffsci's
    from quantum import Circuit, X, Z, expval

    c = Circuit(2).ry(0).rx(1).cnot(0, 1).rz(1)
    obs = Z(0) @ Z(1) + 0.5 * X(1)
    f = to_torch(lambda t: expval(c, t, obs), name="expval")
    t0 = np.array([0.3, -0.8, 1.1])
    assert torch.autograd.gradcheck(f, (_t(t0),))
    assert torch.autograd.gradgradcheck(f, (_t(t0),))
    h = torch.autograd.functional.hessian(f, _t(t0))
    np.testing.assert_allclose(h.numpy(), ds.hessian(lambda t: expval(c, t, obs))(t0),
                               rtol=1e-12, atol=1e-12)
