"""TraceScreen: the recording ``pipe_screen`` (see recorder.py for how recording works)."""

from __future__ import annotations

from typing import Any

from ..pipe.enums import PIPE_TIMEOUT_INFINITE
from . import calls
from .calls import OPS
from .context import TraceContext
from .format import REF_MARK
from .recorder import _OP_SCREEN, Kwargs, Recorder


def _forward(name: str, kind_of_result: str | None = None):
    """A method that forwards the call and records it as it was made."""
    op = OPS[name]
    attr = calls.SCREEN_ATTR.get(name, name)

    def method(self, *args, **kw):
        result = getattr(self._inner, attr)(*args, **kw)
        a = self._snap.args(args)
        if kw:
            a = (*a, Kwargs({k: self._snap.value(v) for k, v in kw.items()}))
        rec = result
        if kind_of_result == "info":
            rec = self._snap.value(result)
        self._pend.append((op, self._tid, a, rec))
        return result

    method.__name__ = attr
    method.__qualname__ = attr
    method.__doc__ = f"``{attr}``: forwarded to the wrapped object and recorded."
    return method


class TraceScreen:
    """A ``pipe_screen`` that records every call made on it and its contexts."""

    def __init__(
        self, screen: Any, recorder: Recorder, owns_recorder: bool = True, on_destroy: Any = None
    ) -> None:
        self._inner = screen
        self._tr = recorder
        self._pend = recorder.pend
        self._snap = recorder.snap
        self._owns = owns_recorder
        self._on_destroy = on_destroy
        info = recorder.register(self, "screen")
        self._tid = info.tid
        name = screen.get_name() if hasattr(screen, "get_name") else type(screen).__name__
        self._pend.append((_OP_SCREEN, 0, (str(name),), info.ref_tuple))

    @property
    def trace_path(self) -> str:
        return self._tr.path

    def resource_create(self, templ):
        res = self._inner.resource_create(templ)
        info = self._tr.register_resource(res, templ)
        rec = (self._snap.template(templ),)
        self._pend.append((OPS["resource_create"], self._tid, rec, info.ref_tuple))
        return res

    def context_create(self, priv=None, flags=0, **kw):
        pipe = self._inner.context_create(priv, flags, **kw)
        ctx = TraceContext(self, pipe)
        a = (self._snap.value(priv), flags)
        if kw:
            a = (*a, Kwargs({k: self._snap.value(v) for k, v in kw.items()}))
        self._pend.append((OPS["context_create"], self._tid, a, (REF_MARK, ctx._tid)))
        return ctx

    def resource_destroy(self, resource):
        rec = (self._snap.value(resource),)
        self._inner.resource_destroy(resource)
        self._pend.append((OPS["resource_destroy"], self._tid, rec, None))

    def fence_finish(self, ctx, fence, timeout_ns=PIPE_TIMEOUT_INFINITE):
        inner = ctx._pipe if isinstance(ctx, TraceContext) else ctx
        ok = self._inner.fence_finish(inner, fence, timeout_ns)
        rec = (self._snap.value(ctx), self._snap.value(fence), timeout_ns)
        self._pend.append((OPS["screen_fence_finish"], self._tid, rec, ok))
        return ok

    def destroy(self):
        """Destroy the wrapped screen and finish the trace file."""
        self._pend.append((OPS["screen_destroy"], self._tid, (), None))
        try:
            self._inner.destroy()
        finally:
            if self._owns:
                self._tr.close()
            elif self._on_destroy is not None:
                self._on_destroy(self._tr)

    def close_trace(self) -> None:
        """Finish the trace file now (the screen stays usable, unrecorded)."""
        self._tr.close()

    def __enter__(self) -> TraceScreen:
        return self

    def __exit__(self, *exc) -> None:
        self._tr.close()

    def __getattr__(self, name: str) -> Any:
        # non-contract attributes of the wrapped screen (numpipe's pool, ...)
        if name.startswith("__") or name in ("_inner", "_tr"):
            raise AttributeError(name)
        return getattr(self._inner, name)

    def __repr__(self) -> str:
        return f"<TraceScreen {self._tr.path!r} over {self._inner!r}>"


for _name, _kind in calls.SCREEN_METHODS.items():
    if _name not in TraceScreen.__dict__ and calls.SCREEN_ATTR.get(_name, _name) not in (
        TraceScreen.__dict__
    ):
        setattr(
            TraceScreen,
            calls.SCREEN_ATTR.get(_name, _name),
            _forward(_name, "info" if _kind == calls.INFO else None),
        )
