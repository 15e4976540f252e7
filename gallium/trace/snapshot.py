"""Snapshots of call arguments, taken on the application's thread at the call.

The contract lets a caller change a template or reuse a buffer as soon as a
call returns, so the recorder keeps its own copy of every argument -- but only
of what can change: numbers, strings, enums and the driver's objects (known by
their types, registered as the recorder sees them created) are kept as they
are, lists and templates are rebuilt, numpy arrays and writable buffers are
copied.  A template becomes the tuple ``(TEMPLATE_MARK, class, field values)``,
which costs a fraction of ``copy.copy``.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .format import ENUMS, TEMPLATE_FIELDS, TEMPLATE_MARK

# Types whose values are kept as they are.  The recorder adds the driver's
# object types here (Resource, CSO classes...) as it registers them: those are
# references, recorded by identity.
KEEP: set[type] = {int, float, bool, str, bytes, type(None), *ENUMS.values()}


def _getter(names: tuple[str, ...]):
    if len(names) == 1:
        name = names[0]
        return lambda obj: (getattr(obj, name),)
    return operator.attrgetter(*names)


GETTERS = {cls: _getter(names) for cls, names in TEMPLATE_FIELDS.items()}
_issuperset = KEEP.issuperset


def template(t: Any) -> tuple:
    """A template's snapshot: ``(TEMPLATE_MARK, class, field values)``."""
    cls = type(t)
    vals = GETTERS[cls](t)
    if not _issuperset(map(type, vals)):
        vals = tuple(map(value, vals))
    return (TEMPLATE_MARK, cls, vals)


def value(v: Any) -> Any:
    """A snapshot of any argument value (see module docstring)."""
    t = type(v)
    if t in KEEP:
        return v
    if t in GETTERS:
        return template(v)
    if t is tuple:
        return v if _issuperset(map(type, v)) else tuple(map(value, v))
    if t is list:
        return list(map(value, v))
    if t is np.ndarray:
        return v.copy()
    if t is bytearray or t is memoryview:
        return bytes(v)
    return v  # numpy scalars, driver objects, callables: kept by identity


def args(a: tuple) -> tuple:
    return a if _issuperset(map(type, a)) else tuple(map(value, a))


def nbytes(data: Any) -> int:
    """Size in bytes of a user buffer argument (0 when it is not one)."""
    n = getattr(data, "nbytes", None)
    if n is not None:
        return int(n)
    try:
        return len(data)
    except TypeError:
        return 0
