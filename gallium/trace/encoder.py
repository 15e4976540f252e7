"""TraceEncoder: turns the recorder's pending records into trace records.

It runs on whichever thread drains the recorder (the one that flushes,
usually), under the recorder's lock, and walks the records in order.  Besides
encoding each call it keeps the model a segment start needs: the objects
alive and their definitions, every context's bound state (as already encoded
entries, one per state key: see ``calls.KEYS``), open mappings, active
queries.  What the records hold:

``CALLS``     the global index of its first call, then one value per call:
              ``(op, target id, args, kwargs or None, result)``.  A call that
              created an object carries ``(definition blob,)`` as its args and
              ``Ref(new id)`` as its result; a definition is the encoded
              ``(method name, args, kwargs)``.
``BOUNDARY``  the end of a segment: ``(segment, end of frame?, rendered?,
              broken?, context id, framebuffer state entry or None,
              startable?, reasons, calls so far)``.
``SNAPSHOT``  the start of the next one: ``(segment, objects, states,
              mappings, handles)``; objects are ``(id, creator id,
              definition, destroyed?)`` in creation order (with the
              destroyed objects that a bound one, a live handle or another
              such object's definition names), states ``(context id, [(op,
              args, kwargs)...])``, mappings ``(transfer id, context id,
              transfer_map args)``, handles ``(context id, handles made,
              [(handle, n, create entry)...], [(handle, residency
              entry)...])`` for each context that made bindless handles: how
              many ``create_*_handle`` calls it made so far, its live handles
              (the n-th made, 1-based, and the create call as an ``(op, args,
              kwargs)`` entry) and, in the order they became resident, the last
              ``make_*_handle_resident`` call of each resident one (format
              version 2).
``END``       ``(segments, calls, frames marked with END_OF_FRAME?)``.
"""

from __future__ import annotations

from typing import Any

from .. import __version__
from . import calls
from . import format as fmt
from .calls import KEYS, KIND, METHODS, OPS, PARAMS
from .format import LIST_MARK, REF_MARK, BlobRef, Encoder, Raw, Ref


def header_value() -> tuple:
    """The HEADER record's value: format version, writer, name tables."""
    return (
        fmt.VERSION,
        f"numpipe {__version__} gallium.trace",
        list(METHODS),
        fmt.template_table(),
        list(fmt.ENUMS),
        list(fmt.DTYPES),
    )


CHUNK_BYTES = 16 << 20  # a CALLS record is cut here (readers refuse over 64 MiB)
_CALL_HEAD = bytes([fmt.T_TUPLE, 5])
_ENTRY_HEAD = bytes([fmt.T_TUPLE, 3])


def _items(v: Any) -> Any:
    """The items of a list argument, snapshotted ``(LIST_MARK, items)`` or not."""
    if type(v) is tuple and len(v) == 2 and v[0] is LIST_MARK:
        return v[1]
    return v


def _op_bytes(op: int) -> bytes:
    return fmt.encode_value(op)


class _Entry:
    __slots__ = ("creator", "definition", "name", "refs")

    def __init__(self, creator: int, definition: bytes, name: str, refs: frozenset) -> None:
        self.creator, self.definition, self.name = creator, definition, name
        self.refs = refs  # the objects its definition names


class _Handles:
    """A context's bindless handles: how many it made, the live ones, the resident ones."""

    __slots__ = ("live", "made", "resident")

    def __init__(self) -> None:
        self.made = 0
        self.live: dict[int, tuple[int, bytes, frozenset]] = {}  # handle -> (n, entry, refs)
        self.resident: dict[int, bytes] = {}  # handle -> its residency entry, in order


class TraceEncoder:
    def __init__(self, recorder: Any, writer: Any) -> None:
        self.tr = recorder
        self.writer = writer
        self.blobs: set[bytes] = set()
        self.table: dict[int, _Entry] = {}  # live objects that have definitions
        self.zombies: dict[int, _Entry] = {}  # destroyed or released (still referenced?)
        self.states: dict[int, dict[tuple, tuple[bytes, frozenset]]] = {}
        self.maps: dict[int, tuple[int, bytes, frozenset]] = {}  # open transfers
        self.active: dict[int, int] = {}  # query id -> context id
        self.cond: dict[int, bool] = {}  # context id -> render condition set
        self.so: dict[int, bool] = {}  # context id -> stream output targets bound
        self.handles: dict[int, _Handles] = {}  # context id -> its bindless handles
        self.segment = 0
        self.ncalls = 0
        self._seen: list[int] = []  # the objects the value being encoded refers to
        self._enc = Encoder(self._ref, self._blob, self._seen)  # writes into the chunk
        self._aside = Encoder(self._ref, self._blob, self._seen)  # definitions, state entries
        self._chunk = bytearray()
        self._chunk_first = 0
        self.writer.put(fmt.HEADER, fmt.encode_value(header_value()))

    # -- helpers -----------------------------------------------------------------------

    def _ref(self, v: Any) -> int | None:
        info = self.tr.objs.get(id(v))
        if info is None:
            return None
        self._seen.append(info.tid)
        return info.tid

    def _blob(self, data: bytes) -> bytes:
        name = fmt.digest(data)
        if name not in self.blobs:
            self.blobs.add(name)
            self.writer.put(fmt.BLOB, data, name)
        return name

    def _encode(self, v: Any) -> tuple[bytes, frozenset]:
        """Encode one value; also the ids of the objects it refers to."""
        enc = self._aside
        self._seen.clear()
        try:
            enc.value(v)
        except (TypeError, ValueError, OverflowError) as exc:
            enc.take()
            enc.value(fmt.Opaque(f"unrecordable value: {exc}"))
        return bytes(enc.take()), frozenset(self._seen)

    def _tid(self, obj: Any) -> int | None:
        """The id of an object in a record: a snapshot's (REF_MARK, id), or the object."""
        if type(obj) is tuple and len(obj) == 2 and obj[0] is REF_MARK:
            return obj[1]
        info = self.tr.objs.get(id(obj))
        return None if info is None else info.tid

    # -- the pass ------------------------------------------------------------------------

    def process(self) -> None:
        pend = self.tr.pend
        n = len(pend)
        items = pend[:n]
        del pend[:n]
        from .recorder import BOUNDARY_MARK, FLAT_REF, expand_flat

        # A flat record (the hottest state calls) is often the very same tuple again
        # (context.py reuses them): its bytes and bound-state entry are made once a pass.
        seen: dict[int, tuple] = {}
        states = self.states
        for item in items:
            op = item[0]
            if op >= FLAT_REF:
                hit = seen.get(id(item))
                if hit is not None:
                    data, ctx, key, entry = hit
                    if not self._chunk:
                        self._chunk_first = self.ncalls
                    self._chunk += data
                    self.ncalls += 1
                    st = states.get(ctx)
                    if st is not None:
                        st[key] = entry
                    continue
                start = len(self._chunk)
                op, ctx, args, result = expand_flat(item)
                self._call(op, ctx, args, result)
                key = (METHODS[op],)
                entry = states.get(ctx, {}).get(key)
                if entry is not None and len(self._chunk) > start:
                    seen[id(item)] = (bytes(self._chunk[start:]), ctx, key, entry)
            elif op == BOUNDARY_MARK:
                self._boundary(item[1], *item[2])
            else:
                self._call(*item)
            if len(self._chunk) >= CHUNK_BYTES:
                self._flush_chunk()
        self._flush_chunk()

    def _call(self, op: int, target: int, args: tuple, result: Any) -> None:
        name = METHODS[op]
        kind = KIND[name]
        kw = None
        if args and type(args[-1]).__name__ == "Kwargs":
            kw = tuple(args[-1].items())
            args = args[:-1]
        rec_result: Any = None
        if name == calls.CONTENT:
            tid, content = args
            if content is None or content == "whole":
                args = (Ref(tid), content)
            else:
                if content.names is None:
                    content.names = [self._blob(level) for level in content.levels]
                    content.levels = None
                args = (Ref(tid), [BlobRef(n) for n in content.names])
        elif name == calls.RELEASE:
            (tid,) = args
            entry = self.table.pop(tid, None)
            if entry is not None:
                self.zombies[tid] = entry
            self.maps.pop(tid, None)
            self.active.pop(tid, None)
            self.states.pop(tid, None)
            self.handles.pop(tid, None)
            args = (Ref(tid),)
        elif kind == calls.CREATE or name == calls.SCREEN_CREATE:
            tid = self._tid(result)
            definition, refs = self._encode((name, args, kw))
            digest = self._blob(definition)
            if tid is not None:
                self.table[tid] = _Entry(target, digest, name, refs)
                if name == "context_create":
                    self.states[tid] = {}
            args, kw, rec_result = (BlobRef(digest),), None, Ref(tid or 0)
        elif kind == calls.DESTROY or kind == calls.END:
            tid = target if kind == calls.END else self._tid(args[0]) if args else None
            entry = self.table.pop(tid, None) if tid is not None else None
            if entry is not None:
                self.zombies[tid] = entry
            if kind == calls.END:
                self.states.pop(target, None)
                self.handles.pop(target, None)
                # what the context made dies with it (unless still bound elsewhere: a zombie)
                for t in [t for t, e in self.table.items() if e.creator == target]:
                    self.zombies[t] = self.table.pop(t)
            if name == "destroy_query" and tid is not None:
                self.active.pop(tid, None)
        elif kind == calls.STATE:
            if self._state(target, name, args, kw):
                self._emit(op, target, args, kw, result, (target, (name,)))
                return
        elif kind in (calls.HANDLE, calls.HANDLE_DELETE, calls.RESIDENT):
            self._handle(op, target, kind, args, kw, result)
        elif kind == calls.MAP:
            xtid = self._tid(result)
            if xtid is not None:
                encoded, tids = self._encode(args)
                self.maps[xtid] = (target, encoded, tids)
            rec_result = Ref(xtid) if xtid is not None else None
        elif kind == calls.UNMAP:
            xtid = self._tid(args[0])
            if xtid is not None:
                self.maps.pop(xtid, None)
        elif kind == calls.FLUSH:
            ftid = self._tid(result)
            rec_result = Ref(ftid) if ftid is not None else None
        elif name == "begin_query":
            qtid = self._tid(args[0])
            if qtid is not None:
                self.active[qtid] = target
        elif name == "end_query":
            qtid = self._tid(args[0])
            if qtid is not None:
                self.active.pop(qtid, None)
        if rec_result is None and kind not in (calls.CREATE, calls.MAP, calls.FLUSH):
            rec_result = result
        self._emit(op, target, args, kw, rec_result)

    def _emit(
        self, op: int, target: int, args: Any, kw: Any, result: Any, state: tuple | None = None
    ) -> None:
        """Append one call to the chunk.  ``state``: ``(context, key)`` whose bound-state
        entry becomes this call's ``(op, args, kwargs)``, from the same bytes."""
        chunk = self._chunk
        if not chunk:
            self._chunk_first = self.ncalls
        start = len(chunk)
        enc = self._enc
        enc.out = chunk
        try:
            chunk += _CALL_HEAD
            enc.value(op)
            enc.value(target)
            self._seen.clear()
            a = len(chunk)
            enc.value(args)
            enc.value(kw)
            c = len(chunk)
            enc.value(result)
        except (TypeError, ValueError, OverflowError) as exc:
            del chunk[start:]
            enc.out = chunk
            self._emit(op, target, (fmt.Opaque(f"unrecordable arguments: {exc}"),), None, None)
            return
        if state is not None:
            ctx, key = state
            entry = _ENTRY_HEAD + _op_bytes(op) + chunk[a:c]
            self.states.setdefault(ctx, {})[key] = (bytes(entry), frozenset(self._seen))
        self.ncalls += 1

    def _flush_chunk(self) -> None:
        if self._chunk:
            body = fmt.encode_value(self._chunk_first) + self._chunk
            self.writer.put(fmt.CALLS, body)
            self._chunk = bytearray()

    # -- bindless handles --------------------------------------------------------------------

    def _handle(self, op: int, ctx: int, kind: str, args: tuple, kw: Any, result: Any) -> None:
        """Keep a context's handles for the snapshots.  Only calls that succeeded are
        recorded (they are forwarded first), so a handle named here is one it made."""
        if kind == calls.HANDLE:
            if type(result) is not int:
                return
            h = self.handles.setdefault(ctx, _Handles())
            h.made += 1
            entry, refs = self._encode((op, args, kw))
            h.live[result] = (h.made, entry, refs)
            return
        h = self.handles.get(ctx)
        handle = args[0] if args else None
        if h is None or handle not in h.live:
            return
        if kind == calls.HANDLE_DELETE:
            del h.live[handle]
            h.resident.pop(handle, None)
        elif args[-1]:  # (handle, [access,] resident): made resident (in place if it was)
            h.resident[handle] = self._encode((op, args, kw))[0]
        else:
            h.resident.pop(handle, None)

    # -- bound state -----------------------------------------------------------------------

    def _state(self, ctx: int, name: str, args: tuple, kw: tuple | None) -> bool:
        """Update the context's bound state; True when the call itself is the entry of
        the one key ``(name,)`` (its bytes are then taken as the call is encoded)."""
        st = self.states.setdefault(ctx, {})
        mode = KEYS.get(name)
        op = OPS[name]
        if kw and mode is not None:
            names, given = PARAMS[name], dict(kw)
            full = list(args) + [given.get(n) for n in names[len(args) :]]
            args, kw = tuple(full), None
        if name == "render_condition":
            self.cond[ctx] = bool(args) and args[0] is not None
        elif name == "set_stream_output_targets":
            self.so[ctx] = bool(args) and any(t is not None for t in _items(args[0]))
        if mode == "slots+shader":
            shader, start, items = args
            for i, item in enumerate(_items(items)):
                key = (name, int(shader), start + i)
                st.pop(key, None)  # keep the order of the most recent binding
                st[key] = self._encode((op, (shader, start + i, [item]), None))
        elif mode == "slots":
            start, items = args
            for i, item in enumerate(_items(items)):
                key = (name, start + i)
                st.pop(key, None)
                st[key] = self._encode((op, (start + i, [item]), None))
        elif mode == "index":
            key = (name, int(args[0]), args[1])
            st.pop(key, None)
            st[key] = self._encode((op, args, None))
        else:
            st.setdefault((name,), (b"", frozenset()))
            return True
        return False

    # -- segment boundaries -----------------------------------------------------------------

    def _boundary(self, ctx: int, eof: bool, renders: bool, broken: bool) -> None:
        self._flush_chunk()
        reasons = []
        referenced: set[int] = set()
        for st in self.states.values():
            for _, tids in st.values():
                referenced |= tids
        for _, _, tids in self.maps.values():
            referenced |= tids
        for h in self.handles.values():
            for _, _, tids in h.live.values():
                referenced |= tids
        for e in self.table.values():
            referenced |= e.refs
        for qtid, qctx in self.active.items():
            reasons.append(f"query #{qtid} is active on context #{qctx}")
        for c, on in self.cond.items():
            if on and c in self.states:
                reasons.append(f"context #{c} renders under a render condition")
        for c, on in self.so.items():
            if on and c in self.states:
                reasons.append(f"context #{c} has stream output targets bound")
        objects = []
        live = set(self.table)
        zombies = {}
        needed = sorted(referenced - live)
        while needed:
            tid = needed.pop()
            if tid in zombies:
                continue
            if tid in self.zombies:
                zombies[tid] = self.zombies[tid]
                creator = zombies[tid].creator
                if creator not in live and creator not in zombies:
                    needed.append(creator)  # made by a destroyed context: make that too
                # and what its definition names (a destroyed view's destroyed resource)
                needed.extend(t for t in zombies[tid].refs if t not in live and t not in zombies)
            else:
                reasons.append(f"bound object #{tid} no longer exists")
        self.zombies = zombies
        for tid in sorted(live | set(zombies)):
            e = self.table.get(tid) or zombies[tid]
            objects.append((Ref(tid), Ref(e.creator), BlobRef(e.definition), tid in zombies))
        fb = self.states.get(ctx, {}).get(("set_framebuffer_state",))
        boundary = (
            self.segment,
            eof,
            renders,
            broken,
            Ref(ctx),
            Raw(fb[0]) if fb is not None else None,
            not reasons,
            reasons,
            self.ncalls,
        )
        self.writer.put(fmt.BOUNDARY, fmt.encode_value(boundary))
        states = [
            (Ref(c), [Raw(encoded) for encoded, _ in st.values()]) for c, st in self.states.items()
        ]
        maps = [(Ref(x), Ref(c), Raw(a)) for x, (c, a, _) in self.maps.items()]
        handles = [
            (
                Ref(c),
                h.made,
                [(v, n, Raw(entry)) for v, (n, entry, _) in h.live.items()],
                [(v, Raw(entry)) for v, entry in h.resident.items()],
            )
            for c, h in self.handles.items()
        ]
        snapshot = (self.segment + 1, objects, states, maps, handles)
        self.writer.put(fmt.SNAPSHOT, fmt.encode_value(snapshot))
        self.segment += 1

    def finish(self) -> None:
        self._flush_chunk()
        self.writer.put(fmt.END, fmt.encode_value((self.segment, self.ncalls, self.tr.eof_seen)))
