"""Recover a texture from one image: the 8×8 texels of a textured floor, seen from above.

A floor plane carries an 8×8 RGB texture (a checkerboard tinted by a colour ramp), bilinearly
filtered; a mirror sphere stands on it and casts a shadow, and a point light and a weak
directional light shine. The target image is rendered from the true texture; starting from a
uniform grey texture, Adam fits all 192 texel values under a mean squared pixel loss. Each texel
gets its gradient from the hand-written adjoint kernel (``raytrace/DERIVATIONS.md`` R14–R15): from
the pixels that see it directly and from those that see it in the mirror sphere.

Default: 48×48 images, 4 samples per pixel, 150 steps; ``--full``: 128×128, 300 steps. The figure
shows the initial, final fitted and true textures, the target image, the texels' median and
largest errors over the iterations (the truth is error 0), and the loss; the RESULT line gives the
texel errors.
"""

import time

import numpy as np

import diffsci as ds
import raytrace as rt
from examples._common import fit_figure, parse_args, result, save_figure


def true_texture():
    r, c = np.meshgrid(np.arange(8), np.arange(8), indexing="ij")
    checker = 0.35 + 0.5 * ((r + c) % 2)
    ramp = np.stack([0.3 + 0.7 * c / 7, 0.4 + 0.5 * r / 7, 1.0 - 0.6 * c / 7], axis=-1)
    return checker[..., None] * ramp


def make_scene(texels, size):
    floor = rt.Plane((-2.0, -1.0, 0.0), (0.0, 1.0, 0.0),
                     rt.Material(diffuse=(1.0, 1.0, 1.0), ambient=(0.04,) * 3,
                                 texture=rt.Texture(texels)),
                     u_axis=(0.25, 0.0, 0.0), v_axis=(0.0, 0.0, 0.25))
    ball = rt.Sphere((0.5, -0.45, 1.6), 0.55,
                     rt.Material(diffuse=(0.1, 0.1, 0.1), specular=(0.6,) * 3, reflection=0.7))
    camera = rt.Camera(eye=(0.0, 3.0, 2.0), look_at=(0.0, -1.0, 2.0), up=(0.0, 0.0, 1.0),
                       fov=50.0, width=size, height=size)
    lights = (rt.PointLight((-1.5, 3.0, 1.0), 180.0), rt.DirectionalLight((0.2, -1.0, 0.3), 0.4))
    return rt.Scene(camera, (floor, ball), lights, background=(0.05, 0.05, 0.08))


def main():
    args = parse_args()
    size, steps = (128, 300) if args.full else (48, 150)
    truth = true_texture()
    target = rt.render(make_scene(truth, size), depth=2, samples=16)

    def loss(texels, seed):
        img = rt.render(make_scene(texels, size), depth=2, samples=4, seed=seed)
        return np.mean((img - target) ** 2)

    value_and_grad = ds.value_and_grad(loss)
    opt = ds.optim.Adam(0.03)
    start = np.full_like(truth, 0.5)
    texels, state, losses = start, opt.init(start), []
    errors = lambda t: [np.median(np.abs(t - truth)), np.abs(t - truth).max()]  # noqa: E731
    path = [errors(start)]
    t0 = time.perf_counter()
    for step in range(steps):
        value, g = value_and_grad(texels, step)
        losses.append(float(value))
        texels, state = opt.update(g, state, texels)
        path.append(errors(np.asarray(texels)))
        if (step + 1) % 50 == 0:
            print(f"step {step + 1}/{steps}: loss {value:.3g}", flush=True)
    fit_s = time.perf_counter() - t0
    texels = np.asarray(texels)

    images = [np.clip(start, 0.0, 1.0), np.clip(texels, 0.0, 1.0), np.clip(truth, 0.0, 1.0),
              rt.to_display(target)]
    fig = fit_figure(images, ("initial texture", f"final fit (after {steps} steps)",
                              "true texture", "target image"),
                     path, (0.0, 0.0), ("median texel error", "largest texel error"),
                     "texel error (albedo, 0-1)", losses,
                     loss_label="MSE loss (linear radiance²)",
                     show=lambda ax, img: ax.imshow(img, interpolation="nearest"),
                     suptitle=f"8x8 floor texture from one {size}x{size} image (bilinear "
                              "lookups, mirror sphere, shadow)")
    save_figure(fig)
    err = np.abs(texels - truth)
    result(
        f"{size}x{size}, {steps} Adam steps: texel error median {np.median(err):.3f}, max "
        f"{err.max():.3f} (start: median {np.median(np.abs(start - truth)):.3f}, max "
        f"{np.abs(start - truth).max():.3f}); loss {losses[0]:.3g} -> {losses[-1]:.3g}; "
        f"{fit_s:.1f} s"
    )


if __name__ == "__main__":
    main()
