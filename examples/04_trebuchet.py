"""Model-based control: aim a trebuchet with a network trained through an ODE simulation.

The paper's control demonstration. A counterweight trebuchet is simulated in two phases,
both integrated with ``diffsci.scipy.integrate.odeint`` (fixed-step RK4, gradients by
backpropagation through the steps):

1. The swing. A beam pivoted at height H (long arm L1, short arm L2, mass m_a) carries a
   counterweight m_c on the short end and a sling of length Ls on the long end, with the
   projectile m_p hanging in it at rest (a simplification: no trough phase). Its two degrees of
   freedom, the arm angle α and the sling angle β, obey the Lagrange equations
   M(α, β) [α̈, β̈]ᵀ = r(α, β, α̇, β̇) with the 2×2 mass matrix solved in closed form (the
   simulation conserves energy to rounding). The projectile is released when the arm reaches
   the release angle α_r; the crossing time is located on the integration grid and refined by a
   second-order Taylor step, so the release state is a smooth function of (m_c, α_r).
2. The flight: a ball of radius r with quadratic air drag relative to a horizontal wind,
   v̇ = −g ŷ − k |v − w| (v − w), k = ρ C_d π r² / (2 m_p), until it lands (y = 0), again
   located by a Taylor step from the last grid point above ground. Both phases are integrated
   over fixed horizons and the events located from the states by ``value_mask``, so that the
   compiled training step recomputes them at every call.

A small MLP maps (target distance, wind) to (counterweight, release angle), squashed by
sigmoids into physical ranges; it is trained end to end with Adam (``ds.fit(..., jit=True)``:
each step's value and gradient compiled by ``ds.jit``, the speed-up over eager mode printed) on
the mean squared miss (target − distance)² over a fixed set of random targets and winds. Then,
on 100 new random (target, wind) pairs, the network's miss is measured and the time it takes to
aim is compared with optimising (m_c, α_r) for each target directly by gradient descent (Adam,
its step compiled too) through the same simulator.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

import diffsci as ds
from diffsci import nn, optim
from diffsci.extend import value_mask
from diffsci.scipy.integrate import odeint
from examples._common import parse_args, result, save_figure

# ---------------------------------------------------------------- the trebuchet (SI units)
G = 9.81  # gravity, m/s²
H = 8.0  # pivot height
L1, L2, LS = 5.0, 1.2, 3.5  # long arm, short arm, sling
M_ARM, M_PROJ = 60.0, 15.0  # beam mass (uniform), projectile mass
I_ARM = M_ARM * (L1 ** 3 + L2 ** 3) / (3 * (L1 + L2))  # beam about the pivot
ALPHA0, BETA0 = -np.pi / 4, -np.pi / 2  # at rest: arm 45° down behind, sling hanging
K_DRAG = 1.2 * 0.47 * np.pi * 0.1 ** 2 / (2 * M_PROJ)  # ρ C_d π r² / (2 m), r = 10 cm

# The controls' physical ranges and the task's.
MC_RANGE = (400.0, 3000.0)  # counterweight, kg
ALPHA_RANGE = (np.deg2rad(65.0), np.deg2rad(100.0))  # release angle of the arm
TARGET_RANGE = (40.0, 180.0)  # m
WIND_RANGE = (-8.0, 8.0)  # m/s, + blows toward the target

# Integration grids (RK4, fixed steps): the swing and the flight are integrated with gradients
# up to these horizons; the release and landing are located on the grid from the states.
SWING_DT, SWING_T = 0.04, 2.2  # the slowest release (400 kg, 100°): 1.9 s
FLIGHT_DT, FLIGHT_T = 0.2, 8.4  # the longest flight over the ranges: 7.5 s


def arm_accelerations(alpha, omega, beta, beta_dot, mc):
    """[α̈, β̈] from the Lagrange equations of the beam + counterweight + sling + projectile.

    Arm tip at L1(−cos α, sin α), counterweight at L2(cos α, −sin α), projectile at the tip
    plus Ls(cos β, sin β) (pivot at the origin). With c = m_p L1 Ls:
    M = [[I + m_c L2² + m_p L1², c cos(α+β)], [c cos(α+β), m_p Ls²]],
    r = [c sin(α+β) β̇² − ∂V/∂α, c sin(α+β) α̇² − ∂V/∂β].
    """
    m11 = I_ARM + mc * L2 ** 2 + M_PROJ * L1 ** 2
    m22 = M_PROJ * LS ** 2
    c = M_PROJ * L1 * LS
    m12 = c * np.cos(alpha + beta)
    s = c * np.sin(alpha + beta)
    dv_alpha = G * np.cos(alpha) * (M_PROJ * L1 + M_ARM * (L1 - L2) / 2 - mc * L2)
    dv_beta = G * M_PROJ * LS * np.cos(beta)
    r1 = s * beta_dot ** 2 - dv_alpha
    r2 = s * omega ** 2 - dv_beta
    det = m11 * m22 - m12 ** 2
    return (m22 * r1 - m12 * r2) / det, (m11 * r2 - m12 * r1) / det


def swing_rhs(z, t, mc):
    """d/dt [α, α̇, β, β̇] for a batch: z has shape (4, batch)."""
    alpha, omega, beta, beta_dot = z
    acc_a, acc_b = arm_accelerations(alpha, omega, beta, beta_dot, mc)
    return np.stack([omega, acc_a, beta_dot, acc_b])


def flight_rhs(z, t, wind):
    """d/dt [x, y, vx, vy] with gravity and quadratic drag relative to the wind."""
    x, y, vx, vy = z
    rel = vx - wind
    speed = np.sqrt(rel ** 2 + vy ** 2)
    return np.stack([vx, vy, -K_DRAG * speed * rel, -G - K_DRAG * speed * vy])


def last_before(hit, what):
    """For every shot (column of ``hit``, time × batch), the last grid index before ``hit``
    first turns True (a plain computation on values)."""
    if not np.all(np.any(hit, axis=0)):
        raise RuntimeError(f"trebuchet: the {what} did not happen within the integration "
                           f"horizon; widen the grid or narrow the ranges")
    return np.argmax(hit, axis=0) - 1


def release_index(zs, alpha_r):
    return last_before(zs[:, 0] >= alpha_r, "release")


def landing_index(zs):
    return last_before(zs[:, 1] < 0, "landing")


def at_index(zs, k):
    """The states ``zs[k[b], :, b]`` of every shot b (zs: time × 4 × batch), as 4 rows."""
    return np.take_along_axis(zs, k[None, None, :], axis=0)[0]


def integrate_to_event(rhs, z0, dt, horizon, arg, index, *index_args):
    """odeint on the grid 0, dt, ... up to ``horizon``; returns the states and, for every
    shot, the last grid index before its event, ``index(states, *index_args)``.

    The index is a value computed from the states (a constant to the derivative: the states
    after it do not reach the loss). ``value_mask`` computes it from the values, and under
    ``ds.jit`` the compiled program calls it again at every call: with a fixed-length
    integration instead of one cut at the last event, one compiled program serves every
    update of the controls.
    """
    ts = np.arange(0.0, horizon + dt / 2, dt)
    zs = odeint(rhs, z0, ts, arg, method="rk4", step=dt, gradient="backprop")
    return zs, value_mask(index, zs, *index_args)


def release_state(mc, alpha_r):
    """Position and velocity of the projectile when the arm passes ``alpha_r``; swing path."""
    batch = np.shape(mc)[0]
    z0 = np.stack([np.full(batch, ALPHA0), np.zeros(batch), np.full(batch, BETA0),
                   np.zeros(batch)])
    zs, k = integrate_to_event(swing_rhs, z0, SWING_DT, SWING_T, mc, release_index, alpha_r)
    alpha, omega, beta, beta_dot = at_index(zs, k)
    acc_a, acc_b = arm_accelerations(alpha, omega, beta, beta_dot, mc)
    gap = alpha_r - alpha  # solve α + ω τ + ½ α̈ τ² = α_r (the stable root)
    tau = 2 * gap / (omega + np.sqrt(omega ** 2 + 2 * acc_a * gap))
    omega = omega + acc_a * tau
    beta = beta + beta_dot * tau + 0.5 * acc_b * tau ** 2
    beta_dot = beta_dot + acc_b * tau
    px = -L1 * np.cos(alpha_r) + LS * np.cos(beta)
    py = H + L1 * np.sin(alpha_r) + LS * np.sin(beta)
    vx = L1 * omega * np.sin(alpha_r) - LS * beta_dot * np.sin(beta)
    vy = L1 * omega * np.cos(alpha_r) + LS * beta_dot * np.cos(beta)
    return np.stack([px, py, vx, vy]), zs


def distance(mc, alpha_r, wind, paths=False):
    """Landing distance (m) for batches of counterweights, release angles and winds.

    With ``paths=True`` also the swing and flight states on their grids and the flight's
    last grid index before landing (for plotting).
    """
    z0, swing = release_state(mc, alpha_r)
    zs, k = integrate_to_event(flight_rhs, z0, FLIGHT_DT, FLIGHT_T, wind, landing_index)
    x, y, vx, vy = at_index(zs, k)
    ax, ay = flight_rhs(np.stack([x, y, vx, vy]), 0.0, wind)[2:]
    tau = 2 * y / (-vy + np.sqrt(vy ** 2 - 2 * ay * y))  # y + vy τ + ½ a_y τ² = 0
    d = x + vx * tau + 0.5 * ax * tau ** 2
    return (d, swing, zs, k) if paths else d


# ---------------------------------------------------------------- the controller
def squash(u, lo_hi):
    lo, hi = lo_hi
    return lo + (hi - lo) * nn.sigmoid(u)


def controls(net, target, wind):
    """The network's (counterweight, release angle) for targets and winds (batches)."""
    features = np.stack([(target - 110.0) / 70.0, wind / 8.0], axis=-1)
    u = net(features)
    return squash(u[:, 0], MC_RANGE), squash(u[:, 1], ALPHA_RANGE)


def sample_tasks(rng, n):
    return rng.uniform(*TARGET_RANGE, n), rng.uniform(*WIND_RANGE, n)


def direct_loss(u, t, w):
    """Squared miss (in units of 10 m) of the controls ``squash(u)`` for targets t, winds w."""
    mc, ar = squash(u[:1], MC_RANGE), squash(u[1:], ALPHA_RANGE)
    return np.mean(((distance(mc, ar, w) - t) / 10.0) ** 2)


#: its value and gradient, compiled once for every target (the target and wind are arguments)
direct_step = ds.jit(ds.value_and_grad(direct_loss))


def aim_directly(target, wind, steps, tol=0.5):
    """Gradient descent (Adam) on (m_c, α_r) for one target, from the middle of the ranges.

    Stops when the miss is below ``tol`` metres; returns the controls, the miss and the
    number of Adam steps.
    """
    u = np.zeros(2)
    t, w = np.array([target]), np.array([wind])
    opt = optim.Adam(0.3)
    state = opt.init(u)
    taken = 0
    value, g = direct_step(u, t, w)
    while np.sqrt(value) * 10.0 >= tol and taken < steps:
        u, state = opt.update(g, state, u)
        value, g = direct_step(u, t, w)
        taken += 1
    mc, ar = squash(u[:1], MC_RANGE), squash(u[1:], ALPHA_RANGE)
    return float(mc[0]), float(ar[0]), float(np.sqrt(value) * 10.0), taken


def main():
    args = parse_args()
    rng = np.random.default_rng(0)
    n_train, steps = (256, 2000) if args.full else (96, 500)
    n_direct = 20 if args.full else 5
    train_t, train_w = sample_tasks(rng, n_train)
    test_t, test_w = sample_tasks(rng, 100)

    net = nn.MLP.init(0, [2, 32, 32, 2], activation="tanh")

    def loss(net):
        mc, ar = controls(net, train_t, train_w)
        return np.mean(((distance(mc, ar, train_w) - train_t) / 10.0) ** 2)

    start = time.perf_counter()
    schedule = lambda step: 0.05 * (0.05 + 0.475 * (1.0 + np.cos(np.pi * step / steps)))

    def report(step, _net, value):  # progress on stdout: the fit takes tens of seconds
        if step % 50 == 0 or step == steps - 1:
            print(f"  step {step:4d}/{steps}: mean squared miss {value * 100.0:9.2f} m², "
                  f"{time.perf_counter() - start:5.1f} s", flush=True)

    # Eager mode's time for one training step, then the fit with the step compiled by ds.jit
    # (the release and landing indices are values the compiled program recomputes, so one
    # program serves every update; its first step traces and compiles, cached on disk).
    vg = ds.value_and_grad(loss)
    vg(net)
    t0 = time.perf_counter()
    for _ in range(3):
        vg(net)
    eager_ms = (time.perf_counter() - t0) / 3 * 1e3
    start = time.perf_counter()
    net, history = ds.fit(loss, net, optimizer=optim.Adam(schedule), steps=steps,
                          callback=report, progress=False, jit=True)
    train_s = time.perf_counter() - start
    first_s, jit_ms = history["time"][0], 1e3 * float(np.median(np.diff(history["time"][1:])))
    print(f"a training step: eager {eager_ms:.1f} ms, ds.jit {jit_ms:.1f} ms "
          f"({eager_ms / jit_ms:.1f}x; first step {first_s:.1f} s: trace and compile)")

    # The network aims all 100 test cases in one call; also time a single target.
    reps = 20
    start = time.perf_counter()
    for _ in range(reps):
        mc, ar = controls(net, test_t, test_w)
    batch_us = (time.perf_counter() - start) / reps / len(test_t) * 1e6
    start = time.perf_counter()
    for i in range(reps):
        controls(net, test_t[i:i + 1], test_w[i:i + 1])
    single_us = (time.perf_counter() - start) / reps * 1e6
    # The same single-target call compiled by ds.jit (three dense layers and the squashing:
    # one Numba kernel each), timed the same way after its first (compiling) call.
    jcontrols = ds.jit(controls)
    start = time.perf_counter()
    jcontrols(net, test_t[:1], test_w[:1])
    compile_s = time.perf_counter() - start
    assert np.allclose(jcontrols(net, test_t[:1], test_w[:1]),
                       controls(net, test_t[:1], test_w[:1]), rtol=1e-12)
    start = time.perf_counter()
    for i in range(reps):
        jcontrols(net, test_t[i:i + 1], test_w[i:i + 1])
    jit_us = (time.perf_counter() - start) / reps * 1e6
    print(f"one target: eager {single_us:.0f} µs, ds.jit {jit_us:.0f} µs "
          f"({single_us / jit_us:.1f}x; compiled in {compile_s:.1f} s)")
    d, swing, flight, k_land = distance(mc, ar, test_w, paths=True)
    miss = np.abs(d - test_t)

    # Direct optimisation, one target at a time (the first n_direct test cases).
    direct_step(np.zeros(2), test_t[:1], test_w[:1])  # compiled before the timing
    direct_s, direct_miss, direct_steps = [], [], []
    for i in range(n_direct):
        start = time.perf_counter()
        _, _, m, s = aim_directly(test_t[i], test_w[i], steps=150)
        direct_s.append(time.perf_counter() - start)
        direct_miss.append(m)
        direct_steps.append(s)
    direct_ms = 1e3 * float(np.median(direct_s))
    print(f"trained in {train_s:.1f} s; network misses: mean {miss.mean():.2f} m, "
          f"max {miss.max():.2f} m; direct: median {direct_ms:.0f} ms/target "
          f"({int(np.median(direct_steps))} Adam steps, misses {np.round(direct_miss, 2)})")

    # ------------------------------------------------------------ figure
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.4))
    axes[0].semilogy(history["loss"] * 100.0)
    axes[0].set_xlabel("Adam step")
    axes[0].set_ylabel("mean squared miss (m²)")
    axes[0].set_title("training through the simulator")
    ax = axes[1]
    show = np.argsort(test_t)[::25][:4]
    for j, i in enumerate(show):
        colour = f"C{j}"
        path = np.vstack([flight[: k_land[i] + 1, :2, i], [[d[i], 0.0]]])  # to the landing
        ax.plot(path[:, 0], path[:, 1], color=colour,
                label=f"target {test_t[i]:.0f} m, wind {test_w[i]:+.1f} m/s")
        ax.plot([test_t[i]], [0.0], "v", color=colour, ms=9)
        # the sling's tip during the swing, up to release
        alpha, beta = swing[:, 0, i], swing[:, 2, i]
        upto = alpha <= ar[i]
        tip_x = -L1 * np.cos(alpha[upto]) + LS * np.cos(beta[upto])
        tip_y = H + L1 * np.sin(alpha[upto]) + LS * np.sin(beta[upto])
        ax.plot(tip_x, tip_y, ":", color=colour, lw=1)
    ax.plot([0, 0], [0, H], "k-", lw=3)  # the frame, and the beam at the last release
    ax.plot([L2 * np.cos(ar[i]), -L1 * np.cos(ar[i])],
            [H - L2 * np.sin(ar[i]), H + L1 * np.sin(ar[i])], "k-", lw=2)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("height (m)")
    ax.set_title("aimed shots (▼ targets; dotted: projectile during the swing)")
    ax.legend(fontsize=7, loc="upper right")
    ax = axes[2]
    sc = ax.scatter(test_t, d, c=test_w, cmap="coolwarm", s=14)
    ax.plot(TARGET_RANGE, TARGET_RANGE, "k:", lw=1)
    fig.colorbar(sc, ax=ax, label="wind (m/s)")
    ax.set_xlabel("target (m)")
    ax.set_ylabel("landing distance (m)")
    ax.set_title(f"100 test cases: mean miss {miss.mean():.2f} m")
    save_figure(fig)
    result(
        f"network aims 100 random (target {TARGET_RANGE[0]:.0f}-{TARGET_RANGE[1]:.0f} m, wind "
        f"±{WIND_RANGE[1]:.0f} m/s) shots with mean miss {miss.mean():.2f} m, max "
        f"{miss.max():.2f} m, in {single_us:.0f} µs for one target ({batch_us:.1f} µs per "
        f"target batched); optimising each target directly by Adam through the simulator: "
        f"median {direct_ms:.0f} ms per target ({n_direct} targets, "
        f"{direct_ms * 1e3 / single_us:,.0f}x slower); trained {len(history['loss'])} steps "
        f"in {train_s:.0f} s"
    )


if __name__ == "__main__":
    main()
