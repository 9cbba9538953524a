"""A straight line fitted to points, with Pearson's r and confidence intervals as Project Sid's
tables give them (68, 95 and 99 %): t-based for the slope, Fisher's z for r. numpy only (scipy
is not a dependency): Student's t quantile by bisection on its integrated density."""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

LEVELS = (0.68, 0.95, 0.99)


def t_cdf(x: float, df: int) -> float:
    """P(T <= x) for Student's t with `df` degrees of freedom (Simpson's rule from 0, fine enough
    for a quantile to three decimals)."""
    if x == 0:
        return 0.5
    n = 4000  # even
    grid = np.linspace(0.0, abs(x), n + 1)
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    pdf = c * (1 + grid ** 2 / df) ** (-(df + 1) / 2)
    area = (grid[1] - grid[0]) / 3 * (pdf[0] + pdf[-1] + 4 * pdf[1:-1:2].sum() + 2 * pdf[2:-1:2].sum())
    return 0.5 + math.copysign(float(area), x)


def t_quantile(p: float, df: int) -> float:
    """x with P(T <= x) = p, for 0.5 < p < 1."""
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_cdf(mid, df) < p else (lo, mid)
    return (lo + hi) / 2


@dataclass(frozen=True)
class Fit:
    n: int
    r: float | None  # None: a side has no spread (r is undefined)
    slope: float
    intercept: float
    slope_se: float
    slope_ci: dict[str, tuple[float, float]]  # "95%" -> (low, high)
    r_ci: dict[str, tuple[float, float]]  # Fisher's z; empty when r is undefined or n <= 3

    def to_json(self) -> dict:
        return {"n": self.n, "r": self.r, "slope": self.slope, "intercept": self.intercept,
                "slope_se": self.slope_se, "slope_ci": {k: list(v) for k, v in self.slope_ci.items()},
                "r_ci": {k: list(v) for k, v in self.r_ci.items()}}


def fit(x: list[float], y: list[float]) -> Fit | None:
    """Least squares y = a + b x; None with fewer than 3 points or no spread in x."""
    n = len(x)
    if n < 3:
        return None
    xs, ys = np.asarray(x, float), np.asarray(y, float)
    dx, dy = xs - xs.mean(), ys - ys.mean()
    sxx, syy, sxy = float(dx @ dx), float(dy @ dy), float(dx @ dy)
    if sxx == 0:
        return None
    slope = sxy / sxx
    intercept = float(ys.mean() - slope * xs.mean())
    resid = ys - (intercept + slope * xs)
    se = math.sqrt(float(resid @ resid) / (n - 2) / sxx)
    slope_ci = {}
    for level in LEVELS:
        q = t_quantile(0.5 + level / 2, n - 2)
        slope_ci[f"{level:.0%}"] = (slope - q * se, slope + q * se)
    r = sxy / math.sqrt(sxx * syy) if syy > 0 else None
    r_ci = {}
    if r is not None and n > 3:
        z, zse = math.atanh(max(-0.999999, min(0.999999, r))), 1 / math.sqrt(n - 3)
        for level in LEVELS:
            q = NormalDist().inv_cdf(0.5 + level / 2)
            r_ci[f"{level:.0%}"] = (math.tanh(z - q * zse), math.tanh(z + q * zse))
    return Fit(n, r, slope, intercept, se, slope_ci, r_ci)
