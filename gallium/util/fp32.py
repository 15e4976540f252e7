"""float32 arithmetic helpers shared by setup and the rasterizer."""

from __future__ import annotations

import numpy as np

F32 = np.float32


def fma32(a: np.ndarray, b: np.ndarray | float, c: np.ndarray | float) -> np.ndarray:
    """fl32(a*b + c) with a single rounding of the product and sum (as an FMA).

    The float32 product is exact in float64, so only the final sums round;
    the float64 -> float32 double rounding differs from a true FMA only in
    rare halfway cases.
    """
    return (
        np.asarray(a, np.float64) * np.asarray(b, np.float64) + np.asarray(c, np.float64)
    ).astype(F32, copy=False)
