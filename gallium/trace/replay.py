"""Replayer: re-executes a trace on a screen and reads back each frame.

Two ways to reach a frame, with the same bytes (tests/trace check it):

* in sequence, from the start of the trace (or of an earlier frame), every
  recorded call executed in order;
* *alone*: from the SNAPSHOT that starts the frame -- the live objects are
  created from their definitions, every context's bound state is set, open
  mappings are mapped again -- after which the frame's calls run in order and
  each ``@content`` record met for a resource not yet loaded (or made) in
  this replay uploads the contents the recording read back at that point.

A frame that cannot start from its own snapshot (a query active across its
start, a read-back that failed inside it: ``Frame.reasons``) starts from the
nearest earlier frame that can, or from the beginning, silently; the frame
returned is the same.

Bindless handles are data: the application writes the numbers
``create_texture_handle`` / ``create_image_handle`` return into buffers that
shaders read, so a replayed frame is right only if the replaying context
makes the very numbers the recording got.  numpipe numbers a context's
handles in the order they are made (the n-th ``create_*_handle`` call on a
context returns ``1 << 32 | n``, on the direct and the threaded context
alike), so replaying the same calls in order makes the same numbers; the
replayer checks every one against the recorded answer, and a difference is
a :class:`HandleMismatchError` naming the call and its record's offset
(never a frame rendered with the wrong handles).  A snapshot stores each
context's handles as the recording left them -- how many it had made, the
live ones (which of those made each was, and its create call), the resident
ones in the order they became resident -- and a replay that starts there
restores them through the contract's calls alone: it makes as many handles
as the recording had, in the same order, each live one from its own
definition and the others (deleted by then) from a scratch view that are
deleted at once, then makes the resident ones resident again.  The numbers
then follow the same sequence as in the recording, and each live one is
checked as it is made.  A driver that numbers handles otherwise (by kind, by
view, reusing deleted numbers) fails that check, or a later one in the frame,
and the replay then starts from an earlier frame, back to the beginning of
the trace, where only the recorded calls are made and a mismatch is the
error.  (Storing handles as objects to be made again would not help: no call
of the contract asks for a given number.)

Not replayed: calls that only ask (caps, query results: their recorded
answers stay in the trace), mappings for reading, callbacks (Python callables
cannot be stored).  Waits the application did outside the contract's calls
(``await fence``, ``fence.wait()``, reading a buffer back) are not in the
trace, so where they may matter the replayer waits itself: at every flush
while two or more contexts exist (one may use the other's work next), and
before writing bytes the application wrote through an unsynchronized or
persistent mapping.  The replayer owns the contexts it makes; it takes a
screen (default: a new numpipe screen, which it destroys on ``close``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..pipe.enums import PIPE_TIMEOUT_INFINITE, Bind, Format, TextureTarget, Transfer
from ..pipe.errors import PipeError
from ..pipe.state import Box, ResourceTemplate, SamplerState, SamplerViewTemplate
from . import calls
from . import format as fmt
from .calls import KIND, level_boxes
from .format import ArrayRef, BlobRef, Opaque, Ref, TraceFormatError
from .reader import Boundary, Call, HandleState, TraceReader

_WRITE = int(Transfer.WRITE)
DESTROYERS = {
    **{f"create_{n}_state": f"destroy_{n}_state" for n in calls._CSO_ALL},
    "create_surface": "surface_destroy",
    "create_sampler_view": "sampler_view_destroy",
    "create_stream_output_target": "stream_output_target_destroy",
    "create_query": "destroy_query",
}


class TraceReplayError(PipeError, RuntimeError):
    """Replaying a call failed (the message names the call and its record)."""


class _Unloadable(TraceReplayError):
    """A replay that did not start at the beginning needs contents the recording could
    not read back: it must start earlier."""


class HandleMismatchError(_Unloadable):
    """The replaying context made a bindless handle other than the one the recording got
    (module doc).  Raised when a replay from the beginning of the trace meets it; a replay
    from a snapshot starts earlier instead."""


@dataclass
class FrameImage:
    """One replayed frame: ``color`` is colour buffer 0 as (H, W, 4) RGBA8.

    ``targets`` (with ``targets=True``): every colour buffer and the depth /
    stencil buffer bound when the frame ended, as ``(format, raw)`` with
    ``raw`` the level's bytes shaped (H, W, bytes per pixel).
    """

    index: int
    color: np.ndarray | None
    targets: dict[str, tuple[Format, np.ndarray]] = field(default_factory=dict)


def parse_frames(spec: Any, count: int) -> list[int]:
    """Frame indices from ``None`` (all), a slice, a range, ints or ``"A:B[:S]"`` / ``"N"``."""
    if spec is None:
        return list(range(count))
    if isinstance(spec, str):
        parts = spec.split(":")
        try:
            nums = [int(p) if p.strip() else None for p in parts]
        except ValueError:
            raise ValueError(f"frames {spec!r} must be A:B as a Python slice, or N") from None
        if len(parts) == 1:
            n = nums[0]
            if n is None:
                raise ValueError("frames must not be empty")
            spec = slice(n, n + 1 if n != -1 else None)
        elif len(parts) in (2, 3):
            spec = slice(*nums)
        else:
            raise ValueError(f"frames {spec!r} must be A:B as a Python slice, or N")
    if isinstance(spec, slice):
        if spec.step == 0:
            raise ValueError("frames: a slice step must not be zero")
        return list(range(count))[spec]
    if isinstance(spec, int):
        spec = [spec]
    out = []
    for i in spec:
        i = int(i)
        if not -count <= i < count:
            raise ValueError(f"frame {i} is out of range: the trace has {count} frames")
        out.append(i % count)
    return out


class Replayer:
    """Replays one trace on one screen (module doc)."""

    def __init__(
        self,
        trace: TraceReader | str,
        screen: Any = None,
        threaded: bool = True,
        verify: bool = False,
        targets: bool = False,
    ) -> None:
        self.reader = trace if isinstance(trace, TraceReader) else TraceReader(trace)
        self._owns_reader = not isinstance(trace, TraceReader)
        if screen is None:
            import gallium

            screen = gallium.create_screen(trace=False)
            self._owns_screen = True
        else:
            self._owns_screen = False
        self.screen = screen
        self.threaded = threaded
        self.verify = verify
        self.targets = targets
        # the frame whose snapshot the replay state was last built from (None: the trace's
        # beginning); a run that continues from the frame before keeps it
        self.started_from: int | None = None
        self._reset_state()

    def _reset_state(self) -> None:
        self.objs: dict[int, Any] = {}
        self.defs: dict[int, tuple[str, tuple]] = {}
        self.maps: dict[int, tuple[Any, Any]] = {}  # transfer id -> (data, transfer)
        self.skipped: set[int] = set()  # transfer ids of mappings not replayed
        self.established: set[int] = set()  # resources whose contents follow the recording
        self.contexts: list[Any] = []
        self._creator: dict[int, Any] = {}
        self._at: int | None = None  # the frame the replay state is at the end of

    # -- public ---------------------------------------------------------------------------

    @property
    def frame_count(self) -> int:
        return len(self.reader.frames)

    def frames(self, selection: Any = None) -> Iterator[FrameImage]:
        """Replay the selected frames (see ``parse_frames``), yielding them in order."""
        wanted = parse_frames(selection, self.frame_count)
        runs: list[list[int]] = []
        for k in sorted(set(wanted)):
            if runs and k == runs[-1][-1] + 1:
                runs[-1].append(k)
            else:
                runs.append([k])
        for run in runs:
            yield from self._run(run[0], run[-1])

    def frame(self, k: int) -> FrameImage:
        """Frame ``k`` alone (from its own start when it can: module doc)."""
        (img,) = self.frames([k])
        return img

    def close(self) -> None:
        self._drop()
        if self._owns_screen:
            self.screen.destroy()
        if self._owns_reader:
            self.reader.close()

    def __enter__(self) -> Replayer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- runs --------------------------------------------------------------------------------

    def starts(self, first: int) -> list[int | None]:
        """Where a replay of frames from ``first`` on may start, best first: the frames at
        or before it that start alone (their snapshot complete, no read-back failed in
        them), then None (the beginning of the trace, which always works)."""
        frames = self.reader.frames
        segs = self.reader.segments
        out: list[int | None] = []
        for j in range(first, -1, -1):
            f = frames[j]
            if f.first > 0 and not segs[f.first].startable:
                continue
            if any(s.end is not None and s.end.broken for s in segs[f.first : f.last + 1]):
                continue
            out.append(j)
        return [*out, None]

    def start_frame(self, first: int, last: int | None = None) -> int | None:
        """The frame a replay of ``first..`` starts from first (None: the beginning)."""
        return self.starts(first)[0]

    def _run(self, first: int, last: int) -> Iterator[FrameImage]:
        """Frames ``first..last``.  A start that meets, before ``last``, a resource whose
        contents the recording could not read back (and that nothing replayed since the
        start has made or overwritten) is given up for the next earlier one; frames
        already yielded are not yielded again."""
        frames = self.reader.frames
        nxt = first
        continuing = self._at is not None and first == self._at + 1
        candidates = [None] if continuing else self.starts(first)
        for j in candidates:
            if continuing:
                start_seg = frames[first].first  # the state is where the last run left it
                continuing = False
                setup = False
            else:
                start_seg = frames[j].first if j is not None else 0
                self._drop()
                self._reset_state()
                self.started_from = j
                setup = start_seg > 0
            emit = {frames[k].last: k for k in range(first, last + 1)}
            try:
                if setup:
                    self._setup(start_seg)
                for seg in range(start_seg, frames[last].last + 1):
                    self._at = None  # mid-frame until the frame's last segment is done
                    for call in self.reader.calls(seg):
                        self._execute(call)
                    end = self.reader.segments[seg].end
                    if seg in emit and end is not None:
                        self._at = emit[seg]
                        if emit[seg] >= nxt:
                            nxt = emit[seg] + 1
                            yield self._outputs(emit[seg], end)
                return
            except _Unloadable:
                if j is None:  # from the very beginning everything is made by the replay
                    raise
                continue

    def _drop(self) -> None:
        self._at = None
        for ctx in self.contexts:
            try:
                ctx.destroy()
            except Exception:  # a context the trace destroyed, or one that failed
                pass
        self.contexts = []

    # -- snapshot ------------------------------------------------------------------------------

    def _setup(self, segment: int) -> None:
        objects, states, maps, handles = self.reader.snapshot(segment)
        zombies = []
        for tid, creator, definition, zombie in objects:
            name, args, kw = self.reader.definition(definition)
            self._create(creator, tid, name, args, kw, established=False)
            if zombie:
                zombies.append((tid, name))
        methods = self.reader.tables.methods
        for ctx_tid, entries in states:
            ctx = self._obj(ctx_tid, "bound state")
            for op, args, kw in entries:
                name = methods[op] if type(op) is int and op < len(methods) else None
                if KIND.get(name) != calls.STATE or not isinstance(args, tuple):
                    raise TraceFormatError(
                        f"snapshot of segment {segment}: {name!r} is no state call"
                    )
                self._invoke(ctx, name, args, kw, f"restoring {name} of context #{ctx_tid}")
        for xtid, ctx_tid, args in maps:
            ctx = self._obj(ctx_tid, "mapping")
            data, xfer = self._invoke(ctx, "transfer_map", args, None, "mapping again")
            self.maps[xtid] = (data, xfer, ctx, _racy(args))
            self.objs[xtid] = xfer
        for state in handles:  # (while the destroyed objects they name still exist)
            self._restore_handles(state, segment)
        # Objects destroyed before the segment but still used (bound, or named by a live
        # handle or by another such object) are made, used, then destroyed again -- except
        # resources: the frame loads their contents where it first uses them (@content),
        # which a destroyed resource refuses, and no recorded call names them again.
        for tid, name in reversed(zombies):
            obj = self.objs.get(tid)
            if name in ("resource_create", calls.ADOPT):
                continue
            if name == "context_create":
                obj.destroy()
                self.contexts.remove(obj)
            elif name in DESTROYERS:
                creator = self._creator.get(tid)
                getattr(creator, DESTROYERS[name])(obj)

    def _restore_handles(self, state: HandleState, segment: int) -> None:
        """Make a context's bindless handles again, with their recorded numbers (module doc)."""
        ctx = self._obj(state.context, "bindless handles")
        methods = self.reader.tables.methods
        live = {n: (value, entry) for value, n, entry in state.live}
        scratch = None
        try:
            for n in range(1, state.made + 1):
                if n not in live:  # a handle deleted by then: made and deleted again
                    if scratch is None:
                        scratch = self._scratch_view(ctx)
                    ctx.delete_texture_handle(ctx.create_texture_handle(scratch[1], SamplerState()))
                    continue
                value, (op, args, kw) = live[n]
                name = _entry_name(methods, op, calls.HANDLE, segment)
                where = (
                    f"restoring handle {value:#x} of context #{state.context} (the {n}th it "
                    f"made) at the start of segment {segment}"
                )
                got = self._invoke(ctx, name, args, kw, where)
                if got != value:
                    raise HandleMismatchError(
                        f"{where}: {name} made {_hex(got)} here; this frame cannot start "
                        "from its own snapshot on this driver"
                    )
        except PipeError as exc:
            if isinstance(exc, TraceReplayError):
                raise
            raise TraceReplayError(
                f"making the deleted handles of context #{state.context} again: {exc}"
            ) from exc
        finally:
            if scratch is not None:
                ctx.sampler_view_destroy(scratch[1])
                self.screen.resource_destroy(scratch[0])
        for value, (op, args, kw) in state.resident:
            name = _entry_name(methods, op, calls.RESIDENT, segment)
            self._invoke(ctx, name, args, kw, f"restoring the residency of handle {value:#x}")

    def _scratch_view(self, ctx: Any) -> tuple[Any, Any]:
        """A 1x1 texture and a view of it: what deleted handles are made of again."""
        res = self.screen.resource_create(
            ResourceTemplate(
                target=TextureTarget.TEXTURE_2D,
                format=Format.R8G8B8A8_UNORM,
                width0=1,
                height0=1,
                bind=Bind.SAMPLER_VIEW,
            )
        )
        view = ctx.create_sampler_view(res, SamplerViewTemplate(format=Format.R8G8B8A8_UNORM))
        return res, view

    # -- objects -----------------------------------------------------------------------------------

    def _obj(self, tid: int, what: str) -> Any:
        try:
            return self.objs[tid]
        except KeyError:
            raise TraceReplayError(f"{what}: object #{tid} does not exist here") from None

    def _create(
        self,
        creator: int,
        tid: int,
        name: str,
        args: tuple,
        kw: dict | None,
        established: bool = True,
    ) -> Any:
        if name == calls.SCREEN_CREATE:
            obj = self.screen
        elif name == calls.ADOPT:  # made before the recording: contents come from @content
            obj = self._invoke(self.screen, "resource_create", args, kw, f"creating #{tid}")
            established = False
        elif name == "context_create":
            flags = args[1] if len(args) > 1 and type(args[1]) is int else 0
            obj = self.screen.context_create(None, flags, threaded=self.threaded)
            self.contexts.append(obj)
        else:
            target = self.objs.get(creator)
            if target is None:
                raise TraceReplayError(f"object #{tid} ({name}): its creator #{creator} is gone")
            obj = self._invoke(target, name, args, kw, f"creating object #{tid}")
            self._creator[tid] = target
        self.objs[tid] = obj
        self.defs[tid] = (name, args)
        if established and name in ("resource_create", calls.ADOPT):
            self.established.add(tid)
        return obj

    # -- calls ---------------------------------------------------------------------------------

    def _resolve(self, v: Any) -> Any:
        t = type(v)
        if t is Ref:
            return self._obj(v.tid, "argument")
        if t is BlobRef:
            return self.reader.blob(v.name)
        if t is ArrayRef:
            return v.build(self.reader.blob(v.blob.name))
        if t is tuple:
            return tuple(self._resolve(x) for x in v)
        if t is list:
            return [self._resolve(x) for x in v]
        if t is Opaque:
            raise TraceReplayError(f"a value that could not be recorded ({v.text})")
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            for f in dataclasses.fields(v):
                x = getattr(v, f.name)
                if not isinstance(x, (int, float, str, bool, type(None))):
                    setattr(v, f.name, self._resolve(x))
            return v
        return v

    def _invoke(self, target: Any, name: str, args: tuple, kw: dict | None, where: str) -> Any:
        a = self._resolve(args)
        k = {n: self._resolve(x) for n, x in kw.items()} if kw else {}
        attr = calls.SCREEN_ATTR.get(name, name)
        try:
            return getattr(target, attr)(*a, **k)
        except (PipeError, TypeError, ValueError, NotImplementedError) as exc:
            raise TraceReplayError(
                f"{where}: {name} failed: {exc}" if where else f"{name} failed: {exc}"
            ) from exc

    def _execute(self, call: Call) -> None:
        name = call.name
        kind = KIND[name]
        where = f"call {call.index} ({name}) in the record at offset {call.offset}"
        try:
            if kind in (calls.INFO, calls.OPAQUE):
                return
            if name == calls.SCREEN_CREATE:
                self._create(0, _tid(call.result, where), name, call.args, None)
                return
            if name == calls.CONTENT:
                self._content(call, where)
                return
            if name == calls.RELEASE:
                tid = _tid(call.args[0] if call.args else None, where)
                self.objs.pop(tid, None)
                self.maps.pop(tid, None)
                return
            if name == calls.WRITE:
                xtid = _tid(call.args[0], where)
                if xtid in self.maps:
                    data, _, ctx, racy = self.maps[xtid]
                    if racy:
                        self._idle(ctx)
                    _write(data, self._resolve(call.args[1]), where)
                return
            target = self._obj(call.target, where)
            if kind == calls.CREATE:
                cname, args, kw = self.reader.definition(call.args[0] if call.args else None)
                if cname != name:
                    raise TraceFormatError(f"{where}: its definition is a {cname}", call.offset)
                self._create(call.target, _tid(call.result, where), name, args, kw)
            elif kind == calls.FLUSH:
                fence = self._invoke(target, name, call.args, call.kw, where)
                if isinstance(call.result, Ref):
                    self.objs[call.result.tid] = fence
                if len(self.contexts) > 1 and fence is not None:
                    # Another context may use this work next: the application waited for
                    # it somehow (a fence, a read-back), which the trace may not show.
                    self.screen.fence_finish(None, fence, PIPE_TIMEOUT_INFINITE)
            elif kind == calls.HANDLE:
                got = self._invoke(target, name, call.args, call.kw, where)
                if got != call.result:
                    raise HandleMismatchError(
                        f"{where}: the replaying context made handle {_hex(got)} where the "
                        f"recording got {_hex(call.result)}; shaders read the recorded "
                        "numbers from the application's buffers, so the frame would differ"
                    )
            elif kind == calls.MAP:
                self._map(target, call, where)
            elif kind == calls.UNMAP:
                self._unmap(target, call, where)
            elif kind == calls.FLUSH_REGION:
                xtid = _tid(call.args[0], where)
                if xtid in self.maps:
                    target.transfer_flush_region(self.maps[xtid][1], self._resolve(call.args[1]))
            elif kind == calls.FENCE:
                ref = call.args[1] if name == "screen_fence_finish" else call.args[0]
                fence = self.objs.get(ref.tid) if isinstance(ref, Ref) else None
                if fence is not None:
                    self.screen.fence_finish(None, fence, PIPE_TIMEOUT_INFINITE)
            elif kind == calls.END:
                if name == "destroy":
                    target.destroy()
                    if target in self.contexts:
                        self.contexts.remove(target)
            else:  # state, exec, destroy
                self._invoke(target, name, call.args, call.kw, where)
        except _Unloadable:
            raise
        except TraceReplayError as exc:
            if str(exc).startswith(where):
                raise
            raise TraceReplayError(f"{where}: {exc}") from exc
        except TraceFormatError:
            raise
        except Exception as exc:
            raise TraceReplayError(f"{where}: {type(exc).__name__}: {exc}") from exc

    def _map(self, ctx: Any, call: Call, where: str) -> None:
        xtid = _tid(call.result, where) if call.result is not None else None
        usage = call.args[2] if len(call.args) > 2 else 0
        if xtid is None:
            return  # the recorded mapping failed (DONTBLOCK): nothing to do
        if not isinstance(usage, int) or not int(usage) & _WRITE:
            self.skipped.add(xtid)
            return
        data, xfer = self._invoke(ctx, "transfer_map", call.args, call.kw, where)
        if xfer is None:
            raise TraceReplayError(f"{where}: the mapping was refused on replay")
        self.maps[xtid] = (data, xfer, ctx, _racy(call.args))
        self.objs[xtid] = xfer

    def _unmap(self, ctx: Any, call: Call, where: str) -> None:
        xtid = _tid(call.args[0] if call.args else None, where)
        if xtid in self.skipped:
            self.skipped.discard(xtid)
            return
        mapped = self.maps.pop(xtid, None)
        if mapped is None:
            raise TraceReplayError(f"{where}: transfer #{xtid} is not mapped")
        data, xfer, _, racy = mapped
        payload = self._resolve(call.args[1]) if len(call.args) > 1 else None
        if payload is not None:
            if racy:
                self._idle(ctx)
            _write(data, payload, where)
        ctx.transfer_unmap(xfer)

    def _idle(self, ctx: Any) -> None:
        """Wait for everything ``ctx`` was given.  Bytes written through an unsynchronized or
        persistent mapping were written, while recording, after whatever the application
        waited for (a read-back, a fence) -- waits a replay does not repeat -- so it waits
        for all of the context's work before writing them."""
        self.screen.fence_finish(None, ctx.flush(), PIPE_TIMEOUT_INFINITE)

    # -- contents ------------------------------------------------------------------------------

    def _content(self, call: Call, where: str) -> None:
        tid = _tid(call.args[0] if call.args else None, where)
        names = call.args[1] if len(call.args) > 1 else None
        if tid not in self.objs:
            raise TraceReplayError(f"{where}: resource #{tid} does not exist here")
        if tid in self.established:
            if self.verify and isinstance(names, list):
                self._verify(call, tid, names, where)
            return
        if names == "whole":  # overwritten whole here: what it held does not matter
            self.established.add(tid)
            return
        if names is None:
            raise _Unloadable(
                f"{where}: resource #{tid} could not be read back while recording; "
                "this frame cannot be replayed alone"
            )
        ctx = self._obj(call.target, where)
        res = self.objs[tid]
        templ = self._template(tid, where)
        boxes = level_boxes(templ)
        if not isinstance(names, list) or len(names) != len(boxes):
            raise TraceFormatError(
                f"{where}: contents do not match the resource's levels", call.offset
            )
        for level, (box, name) in enumerate(zip(boxes, names)):
            data = self._resolve(name)
            if int(templ.target) == int(TextureTarget.BUFFER):
                ctx.buffer_subdata(res, Transfer.WRITE, 0, data)
            else:
                ctx.texture_subdata(res, level, Transfer.WRITE, box, data)
        self.established.add(tid)

    def _template(self, tid: int, where: str) -> Any:
        d = self.defs.get(tid)
        if d is None or d[0] not in ("resource_create", calls.ADOPT) or not d[1]:
            raise TraceReplayError(f"{where}: #{tid} is not a resource")
        return d[1][0]

    def _read_level(self, ctx: Any, res: Any, level: int, box: Box) -> np.ndarray:
        data, xfer = ctx.transfer_map(res, level, Transfer.READ, box)
        try:
            return np.array(data)
        finally:
            ctx.transfer_unmap(xfer)

    def _verify(self, call: Call, tid: int, names: Any, where: str) -> None:
        ctx = self._obj(call.target, where)
        res = self.objs[tid]
        for level, (box, name) in enumerate(zip(level_boxes(self._template(tid, where)), names)):
            raw = np.ascontiguousarray(self._read_level(ctx, res, level, box)).tobytes()
            if fmt.digest(raw) != name.name:
                raise TraceReplayError(
                    f"{where}: the replay diverged: resource #{tid} level {level} differs "
                    "from the recording"
                )

    # -- outputs --------------------------------------------------------------------------------

    def _outputs(self, index: int, end: Boundary) -> FrameImage:
        ctx = self.objs.get(end.context)
        fb = end.framebuffer
        img = FrameImage(index, None)
        if ctx is None or fb is None:
            return img
        cbufs = list(getattr(fb, "cbufs", []) or [])
        surfaces = [(f"cbuf{i}", s) for i, s in enumerate(cbufs)]
        surfaces.append(("zsbuf", getattr(fb, "zsbuf", None)))
        for name, s in surfaces:
            if not isinstance(s, Ref) or (name != "cbuf0" and not self.targets):
                continue
            d = self.defs.get(s.tid)
            if d is None or d[0] != "create_surface":
                continue
            res_ref, stempl = d[1][0], d[1][1]
            res = self.objs.get(res_ref.tid) if isinstance(res_ref, Ref) else None
            if res is None:
                continue
            rtempl = self._template(res_ref.tid, "frame output")
            box = level_boxes(rtempl)[stempl.level]
            raw = self._read_level(
                ctx, res, stempl.level, Box(0, 0, stempl.first_layer, box.width, box.height, 1)
            )[0]
            format_ = Format(int(stempl.format or rtempl.format))
            if name == "cbuf0":
                img.color = to_rgba8(format_, raw)
            if self.targets:
                img.targets[name] = (format_, raw)
        return img


_RACY = int(Transfer.UNSYNCHRONIZED | Transfer.PERSISTENT)


def _racy(map_args: tuple) -> bool:
    """Whether a transfer_map's usage lets the application write while work is queued."""
    usage = map_args[2] if len(map_args) > 2 else 0
    return isinstance(usage, int) and bool(int(usage) & _RACY)


def _hex(v: Any) -> str:
    return f"{v:#x}" if type(v) is int else repr(v)


def _entry_name(methods: list[str], op: Any, kind: str, segment: int) -> str:
    name = methods[op] if type(op) is int and 0 <= op < len(methods) else None
    if KIND.get(name) != kind:
        raise TraceFormatError(f"snapshot of segment {segment}: {name!r} is no {kind} call")
    return name


def _tid(v: Any, where: str) -> int:
    if not isinstance(v, Ref):
        raise TraceFormatError(f"{where}: expected an object reference, found {type(v).__name__}")
    return v.tid


def _write(data: Any, payload: Any, where: str) -> None:
    raw = np.frombuffer(payload, np.uint8) if isinstance(payload, (bytes, bytearray)) else None
    if raw is None or raw.size != data.size:
        raise TraceReplayError(f"{where}: written data does not fit the mapping")
    data[...] = raw.reshape(data.shape)


def to_rgba8(format_: Format, raw: np.ndarray) -> np.ndarray:
    """A (H, W, bpp) level of a colour format as (H, W, 4) RGBA8 (as a viewer shows it)."""
    if format_ == Format.R8G8B8A8_UNORM:
        return np.ascontiguousarray(raw)
    from ..util.format import describe, unpack_rgba

    desc = describe(format_)
    if desc.is_depth or desc.is_stencil:
        return None  # type: ignore[return-value]
    rgba = unpack_rgba(desc, raw)
    return np.rint(np.clip(rgba, 0, 1) * 255).astype(np.uint8)


def replay(
    trace: str | TraceReader,
    frames: Any = None,
    *,
    threaded: bool = True,
    screen: Any = None,
    verify: bool = False,
) -> Iterator[np.ndarray]:
    """Replay a trace and yield each selected frame's colour buffer, (H, W, 4) RGBA8."""
    with Replayer(trace, screen=screen, threaded=threaded, verify=verify) as r:
        for img in r.frames(frames):
            yield img.color
