"""IEEE arithmetic as the GPU does it: infinities and NaNs are values, not errors.

Vertices with w = 0, infinite or NaN coordinates, colours or texture
coordinates are legal input: the pipeline carries the resulting inf/NaN
through (and clipping, the guard band and the fill rule decide what is
drawn).  numpy reports such operations as floating-point errors and, by
default, turns them into ``RuntimeWarning``\\ s -- which an application
running under ``warnings.simplefilter("error")`` receives as exceptions.
The driver's numeric entry points therefore run under :func:`ieee`, which
sets numpy's error state to "ignore" for the call only: the caller's own
numpy settings are untouched, on any thread.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import numpy as np

P = ParamSpec("P")
R = TypeVar("R")


def ieee(fn: Callable[P, R]) -> Callable[P, R]:
    """Run ``fn`` with numpy's floating-point errors ignored (a fresh
    ``np.errstate`` per call, so concurrent calls on several threads are safe)."""

    @functools.wraps(fn)
    def quiet(*args: P.args, **kwargs: P.kwargs) -> R:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    return quiet
