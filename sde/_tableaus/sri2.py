"""SRI2: Rößler's order-1.5 stochastic Runge–Kutta tableau for Itô SDEs with scalar or diagonal
noise (data only). Deterministic order 3, strong order 1.5.

Stage values (s = 0..3), with I₁ = ΔW, I₁₁ = (ΔW² − h)/2, I₁₁₁ = (ΔW³ − 3hΔW)/6, I₁₀ the
integral ∫(W_u − W_t) du over the step:

    H⁰ₛ = y + Σⱼ A0[s][j] f(H⁰ⱼ) h + Σⱼ B0[s][j] g(H¹ⱼ) I₁₀/h
    H¹ₛ = y + Σⱼ A1[s][j] f(H⁰ⱼ) h + Σⱼ B1[s][j] g(H¹ⱼ) √h
    y'  = y + Σₛ ALPHA[s] f(H⁰ₛ) h
            + Σₛ (BETA1[s] I₁ + BETA2[s] I₁₁/√h + BETA3[s] I₁₀/h + BETA4[s] I₁₁₁/h) g(H¹ₛ)

(f at t + C0[s]h, g at t + C1[s]h).

Reference: A. Rößler, "Runge–Kutta methods for the strong approximation of solutions of
stochastic differential equations", SIAM J. Numer. Anal. 48(3), 2010, 922–952, §5, scheme
(5.1) with the coefficients of the method "SRI2" (deterministic order 3); the same coefficients
as torchsde's ``tableaus/srid2.py``.
"""

STAGES = 4

C0 = (0.0, 1.0, 1.0 / 2.0, 0.0)
C1 = (0.0, 1.0 / 4.0, 1.0, 1.0 / 4.0)

A0 = ((), (1.0,), (1.0 / 4.0, 1.0 / 4.0), (0.0, 0.0, 0.0))
A1 = ((), (1.0 / 4.0,), (1.0, 0.0), (0.0, 0.0, 1.0 / 4.0))
B0 = ((), (0.0,), (1.0, 1.0 / 2.0), (0.0, 0.0, 0.0))
B1 = ((), (-1.0 / 2.0,), (1.0, 0.0), (2.0, -1.0, 1.0 / 2.0))

ALPHA = (1.0 / 6.0, 1.0 / 6.0, 2.0 / 3.0, 0.0)
BETA1 = (-1.0, 4.0 / 3.0, 2.0 / 3.0, 0.0)
BETA2 = (1.0, -4.0 / 3.0, 1.0 / 3.0, 0.0)
BETA3 = (2.0, -4.0 / 3.0, -2.0 / 3.0, 0.0)
BETA4 = (-2.0, 5.0 / 3.0, -2.0 / 3.0, 1.0)
