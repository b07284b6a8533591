"""SRA1: Rößler's order-1.5 stochastic Runge–Kutta tableau for additive noise (data only).

Reference: A. Rößler, "Runge–Kutta methods for the strong approximation of solutions of
stochastic differential equations", SIAM J. Numer. Anal. 48(3), 2010, 922–952, Table 6.2
("SRA1"); the same coefficients as torchsde's ``tableaus/sra1.py``.
"""

STAGES = 2

C0 = (0.0, 3.0 / 4.0)
C1 = (1.0, 0.0)

A0 = ((), (3.0 / 4.0,))
B0 = ((), (3.0 / 2.0,))

ALPHA = (1.0 / 3.0, 2.0 / 3.0)
BETA1 = (1.0, 0.0)
BETA2 = (-1.0, 1.0)
