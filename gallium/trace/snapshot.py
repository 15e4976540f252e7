"""Snapshots of call arguments, taken on the application's thread at the call.

The contract lets a caller change a template or reuse a buffer as soon as a
call returns, so the recorder keeps its own copy of every argument -- but only
of what can change: numbers, strings and enums are kept as they are, lists and
templates are rebuilt, numpy arrays and writable buffers are copied, and the
driver's objects become their trace ids.  The snapshot is made of tuples of
plain values only, tagged by marker objects:

* ``(TEMPLATE_MARK, class index, field values)`` for a state template,
* ``(LIST_MARK, items)`` for a list,
* ``(REF_MARK, id)`` for an object the recorder registered,

because the garbage collector stops tracking a tuple that holds nothing but
such values: a frame's worth of pending records then costs the collector
nothing, where tuples holding the driver's objects made every full collection
walk them all (three times the recording call's cost, measured).
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Any

import numpy as np

from .format import ENUMS, LIST_MARK, REF_MARK, TEMPLATE_FIELDS, TEMPLATE_IDS, TEMPLATE_MARK

MARKS = (TEMPLATE_MARK, LIST_MARK, REF_MARK)
# Types whose values are kept as they are.
KEEP: frozenset[type] = frozenset({int, float, bool, str, bytes, type(None), *ENUMS.values()})


def _getter(names: tuple[str, ...]):
    if len(names) == 1:
        name = names[0]
        return lambda obj: (getattr(obj, name),)
    return operator.attrgetter(*names)


_PRIMITIVE = {"int", "float", "bool", "str", "None", *ENUMS}


def _kind(annotation: Any) -> str:
    """How a field declared ``annotation`` is snapshotted: "prim" (kept: numbers,
    enums, strings -- a value the driver accepted there is one of those), "tuple"
    (a tuple of numbers: made a tuple if it is a list or an array) or "other"."""
    parts = [p.strip() for p in str(annotation).split("|")]
    if all(p in _PRIMITIVE for p in parts):
        return "prim"
    if len(parts) == 1 and parts[0].startswith("tuple[") and parts[0].endswith("]"):
        inner = [p.strip() for p in parts[0][6:-1].split(",")]
        if all(p in _PRIMITIVE for p in inner):
            return "tuple"
    return "other"


def _spec(cls: type) -> tuple[Any, tuple[tuple[int, str], ...]]:
    fields = dataclasses.fields(cls)
    check = tuple((i, k) for i, f in enumerate(fields) if (k := _kind(f.type)) != "prim")
    return _getter(TEMPLATE_FIELDS[cls]), check


SPECS = {cls: _spec(cls) for cls in TEMPLATE_FIELDS}
GETTERS = {cls: spec[0] for cls, spec in SPECS.items()}


class Snapshotter:
    """Snapshots for one recorder: ``objs`` maps ``id(obj)`` to what it registered."""

    def __init__(self, objs: dict[int, Any]) -> None:
        self.objs = objs

    def template(self, t: Any) -> tuple:
        """A template's snapshot: ``(TEMPLATE_MARK, class index, field values)``."""
        cls = type(t)
        getter, check = SPECS[cls]
        vals = getter(t)
        fixed = None
        for i, kind in check:
            v = vals[i]
            tv = type(v)
            if tv in KEEP or (tv is tuple and kind == "tuple"):
                continue
            if fixed is None:
                fixed = list(vals)
            fixed[i] = tuple(v) if kind == "tuple" and tv in (list, np.ndarray) else self.value(v)
        return (TEMPLATE_MARK, TEMPLATE_IDS[cls], vals if fixed is None else tuple(fixed))

    def value(self, v: Any) -> Any:
        """A snapshot of any argument value (see module docstring)."""
        t = type(v)
        if t in KEEP:
            return v
        info = self.objs.get(id(v))
        if info is not None:
            return (REF_MARK, info.tid)
        if t in SPECS:
            return self.template(v)
        if t is tuple:
            if v and v[0] in MARKS:
                return v  # already a snapshot
            return v if KEEP.issuperset(map(type, v)) else tuple(map(self.value, v))
        if t is list:
            return (LIST_MARK, tuple(map(self.value, v)))
        if t is np.ndarray:
            return v.copy()
        if t is bytearray or t is memoryview:
            return bytes(v)
        return v  # numpy scalars, unknown objects, callables: kept by identity

    def args(self, a: tuple) -> tuple:
        return a if KEEP.issuperset(map(type, a)) else tuple(map(self.value, a))


def nbytes(data: Any) -> int:
    """Size in bytes of a user buffer argument (0 when it is not one)."""
    n = getattr(data, "nbytes", None)
    if n is not None:
        return int(n)
    try:
        return len(data)
    except TypeError:
        return 0
