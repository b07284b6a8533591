"""JAX + optax recover scene parameters through diffsci's ray tracer, under jax.jit.

The scene of examples/raytrace/01 (Innes et al., arXiv 1907.07587, §5): one triangle with
vertices (-1.7, 1, 0), (1, 1, 0), (-0.5, -1, 0) and reflection 0.5, a camera at (0, 0, -5)
looking at the origin (45° field of view), Blinn-Phong shading with hard shadows, up to 2
mirror bounces, and a point light of intensity 20000. Unknown: the light's position (target
(5, 5, -10), start (1, 2, -7)) and the triangle's diffuse colour (target (0.1, 0.9, 0.2),
start (0.5, 0.5, 0.5); inside (0, 1), where its logits are finite). ``diffsci.interop.to_jax``
makes the render a JAX function (a
``jax.pure_callback`` with a ``jax.custom_vjp`` whose backward runs raytrace's hand-written
adjoint kernel through diffsci), and one training step (the colour as the sigmoid of free
logits, written in JAX, the render, the mean squared pixel loss, its gradient and
``optax.adam``'s update) is a single ``jax.jit``-compiled function. Adam's learning rate is
0.1. Adam's fixed step then crawls along the loss's curved valley, so the fit goes on with
``optax.lbfgs`` (its zoom line search calls the bridged render too), also one ``jax.jit``-ed
step, which reaches the truth to about 1e-14 within 50 iterations. Default run: 48×48 images,
150 Adam + 50 L-BFGS steps; ``--full``: 128×128, 300 + 50.

The figure shows the initial guess, the fit and the target, the six parameters against the
truth over the steps, and the loss. The RESULT line gives the recovered values and errors, the
loss before and after, the time per jitted step, and the JAX gradient at the start checked
against diffsci's own (the same numbers, through the bridge).
"""

import time

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import optax

import diffsci as ds
import raytrace as rt
from diffsci.interop import to_jax
from examples._common import parse_args, result, save_figure

jax.config.update("jax_enable_x64", True)  # the renderer works in float64

TARGET = {"light": np.array([5.0, 5.0, -10.0]), "colour": np.array([0.1, 0.9, 0.2])}
START = {"light": np.array([1.0, 2.0, -7.0]), "colour": np.array([0.5, 0.5, 0.5])}
LR = 0.1


def make_scene(light, colour, size):
    material = rt.Material(diffuse=colour, specular=(1.0, 1.0, 1.0), exponent=50.0,
                           reflection=0.5, ambient=(0.0, 0.05, 0.0))
    triangle = rt.Triangle((-1.7, 1.0, 0.0), (1.0, 1.0, 0.0), (-0.5, -1.0, 0.0), material)
    camera = rt.Camera(eye=(0.0, 0.0, -5.0), look_at=(0.0, 0.0, 0.0), fov=45.0, width=size,
                       height=size)
    return rt.Scene(camera, (triangle,), (rt.PointLight(light, 20000.0, (1.0, 1.0, 1.0)),))


def main():
    args = parse_args()
    size, steps = (128, 300) if args.full else (48, 150)
    lbfgs_steps = 50

    def render_ds(p):  # a diffsci function of a dict of arrays
        return rt.render(make_scene(p["light"], p["colour"], size), depth=2)

    render = to_jax(render_ds, name="render")
    target = jnp.asarray(render_ds(TARGET))

    def scene_params(q):  # JAX code around the bridge: the colour stays in (0, 1)
        return {"light": q["light"], "colour": jax.nn.sigmoid(q["logit"])}

    def loss(q):
        return jnp.mean((render(scene_params(q)) - target) ** 2)

    opt = optax.adam(LR)

    @jax.jit
    def step(p, state):
        value, g = jax.value_and_grad(loss)(p)
        updates, state = opt.update(g, state, p)
        return optax.apply_updates(p, updates), state, value

    params = {"light": jnp.asarray(START["light"]),
              "logit": jnp.log(START["colour"] / (1 - START["colour"]))}
    # the bridge's gradient is diffsci's: compare at the start (w.r.t. the scene parameters)
    g_jax = jax.grad(lambda p: jnp.mean((render(p) - target) ** 2))(
        jax.tree_util.tree_map(jnp.asarray, START))
    g_ds = ds.grad(lambda p: np.mean((render_ds(p) - np.asarray(target)) ** 2))(START)
    grad_err = max(float(np.max(np.abs(np.asarray(g_jax[k]) - g_ds[k])) /
                         np.max(np.abs(g_ds[k]))) for k in g_ds)

    state = opt.init(params)
    history, losses = [scene_params(params)], []
    t0 = time.perf_counter()
    params, state, value = step(params, state)  # compiles
    compile_s = time.perf_counter() - t0
    losses.append(float(value))
    history.append(scene_params(params))
    t0 = time.perf_counter()
    for k in range(1, steps):
        params, state, value = step(params, state)
        losses.append(float(value))
        history.append(scene_params(params))
        if (k + 1) % 50 == 0:
            print(f"step {k + 1}/{steps}: loss {float(value):.3g}, light "
                  f"{np.round(np.asarray(history[-1]['light']), 3)}, colour "
                  f"{np.round(np.asarray(history[-1]['colour']), 3)}", flush=True)
    per_step = (time.perf_counter() - t0) / max(1, steps - 1)

    lbfgs = optax.lbfgs()
    value_and_grad = optax.value_and_grad_from_state(loss)

    @jax.jit
    def lbfgs_step(p, state):
        value, g = value_and_grad(p, state=state)
        updates, state = lbfgs.update(g, state, p, value=value, grad=g, value_fn=loss)
        return optax.apply_updates(p, updates), state, value

    state = lbfgs.init(params)
    t0 = time.perf_counter()
    for k in range(lbfgs_steps):
        params, state, value = lbfgs_step(params, state)
        losses.append(float(value))
        history.append(scene_params(params))
        if (k + 1) % 10 == 0:
            print(f"optax.lbfgs step {k + 1}/{lbfgs_steps}: loss {float(value):.3g}, light "
                  f"{np.round(np.asarray(history[-1]['light']), 6)}", flush=True)
    lbfgs_s = time.perf_counter() - t0
    final = {k: np.asarray(v) for k, v in scene_params(params).items()}
    final_loss = float(loss(params))

    fig = plt.figure(figsize=(14, 8))
    grid = fig.add_gridspec(2, 6)
    images = (render_ds(START), render_ds(final), np.asarray(target))
    titles = ("initial guess", f"fit: {steps} adam + {lbfgs_steps} lbfgs steps", "target")
    for k, (img, title) in enumerate(zip(images, titles)):
        ax = fig.add_subplot(grid[0, 2 * k: 2 * k + 2])
        ax.imshow(rt.to_display(img, exposure=0.1))
        ax.set_title(title)
        ax.axis("off")
    ax = fig.add_subplot(grid[1, :2])
    for k, axis in enumerate("xyz"):
        ax.plot([float(h["light"][k]) for h in history], color=f"C{k}", label=f"light {axis}")
        ax.axhline(TARGET["light"][k], color=f"C{k}", ls="--", lw=1)
    ax.axvline(steps, color="k", ls=":", lw=1)
    ax.set_xlabel("step (optax.adam, then optax.lbfgs)")
    ax.set_ylabel("light position (scene units)")
    ax.set_title("light position (dashed: truth)")
    ax.legend(fontsize=9)
    ax = fig.add_subplot(grid[1, 2:4])
    for k, (channel, color) in enumerate(zip("RGB", ("C3", "C2", "C0"))):
        ax.plot([float(h["colour"][k]) for h in history], color=color, label=channel)
        ax.axhline(TARGET["colour"][k], color=color, ls="--", lw=1)
    ax.axvline(steps, color="k", ls=":", lw=1)
    ax.set_xlabel("step (optax.adam, then optax.lbfgs)")
    ax.set_ylabel("diffuse reflectance (fraction)")
    ax.set_title("triangle colour (dashed: truth)")
    ax.legend(fontsize=9)
    ax = fig.add_subplot(grid[1, 4:])
    ax.semilogy(losses)
    ax.axvline(steps, color="k", ls=":", lw=1)
    ax.set_xlabel("step (optax.adam, then optax.lbfgs)")
    ax.set_ylabel("MSE (linear radiance², per pixel and channel)")
    ax.set_title("loss")
    fig.suptitle(f"raytrace under jax.jit + optax ({size}x{size}), via diffsci.interop.to_jax")
    fig.tight_layout()
    save_figure(fig)
    err_l = float(np.linalg.norm(final["light"] - TARGET["light"]))
    err_c = float(np.linalg.norm(final["colour"] - TARGET["colour"]))
    light, colour = final["light"], final["colour"]
    result(
        f"{size}x{size}, {steps} jitted optax.adam + {lbfgs_steps} optax.lbfgs steps "
        f"({lbfgs_s:.1f} s): light ({light[0]:.3f}, {light[1]:.3f}, "
        f"{light[2]:.3f}) error {err_l:.1e} (start "
        f"{np.linalg.norm(START['light'] - TARGET['light']):.3f}), colour ({colour[0]:.3f}, "
        f"{colour[1]:.3f}, {colour[2]:.3f}) error {err_c:.1e}; loss {losses[0]:.3g} -> "
        f"{final_loss:.3g}; {1e3 * per_step:.1f} ms per step (compile {compile_s:.1f} s); "
        f"JAX gradient = diffsci's to {grad_err:.1e} (relative)"
    )


if __name__ == "__main__":
    main()
