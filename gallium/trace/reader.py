"""TraceReader: opens a trace, checks it whole, and serves its parts on demand.

Opening walks the file once, record by record: every header is checked and
every payload's checksum verified (read in pieces, so memory stays bounded
whatever the record sizes), and an index is kept -- where each blob, call
chunk, boundary and snapshot lives.  Nothing else is held: call chunks,
snapshots and blobs are read again (and checked again) when they are asked
for, blobs through a cache bounded in bytes.  Any problem is a
:class:`TraceFormatError` naming the file offset of the record at fault; a
trace that ends before its END record (the recording process died, the copy
was cut) is reported as truncated, at the offset where it stops.
"""

from __future__ import annotations

import io
import os
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO, NamedTuple

from . import calls
from . import format as fmt
from .format import Ref, TraceFormatError

MAX_META = 64 << 20  # stored bytes of a HEADER, BOUNDARY or END record
MAX_CHUNK = 64 << 20  # decompressed bytes of a CALLS or SNAPSHOT record (the writer: 16 MiB)
BLOB_CACHE = 256 << 20
MIN_CALL_BYTES = 10  # the smallest encoded call: (op, target, (), None, None)
_PIECE = 1 << 20


class Call(NamedTuple):
    """One recorded call, decoded."""

    index: int  # position in the whole trace
    name: str  # the method (calls.METHODS)
    target: int  # id of the screen or context it was made on
    args: tuple
    kw: dict | None
    result: Any
    offset: int  # file offset of the CALLS record holding it


@dataclass
class Boundary:
    """The end of a segment (see encoder.py for the fields)."""

    segment: int
    eof: bool
    renders: bool
    broken: bool
    context: int
    framebuffer: Any  # the flushing context's FramebufferState (refs), or None
    next_startable: bool
    reasons: list[str]
    calls: int
    offset: int
    snapshot_offset: int = -1


@dataclass
class Segment:
    index: int
    chunks: list[int] = field(default_factory=list)  # offsets of its CALLS records
    end: Boundary | None = None
    start_offset: int = -1  # the SNAPSHOT that starts it (-1: segment 0)
    call_bytes_before: int = 0  # decoded bytes of the calls before it, as their records state
    startable: bool = True
    reasons: list[str] = field(default_factory=list)


@dataclass
class Frame:
    """A frame: segments ``first..last``; its image is taken at the end of ``last``."""

    index: int
    first: int
    last: int
    startable: bool  # replayable from its own start (no earlier frame needed)
    reasons: list[str]


class TraceReader:
    """A trace file (path, bytes or binary file object), checked and indexed."""

    def __init__(self, source: str | os.PathLike | bytes | bytearray | BinaryIO) -> None:
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._file: BinaryIO = io.BytesIO(bytes(source))
            self.name = "<memory>"
            self._owns = True
        elif isinstance(source, (str, os.PathLike)):
            self.name = os.fspath(source)
            try:
                self._file = open(self.name, "rb")  # noqa: SIM115  (closed by close())
            except OSError as exc:
                raise TraceFormatError(f"cannot open {self.name}: {exc.strerror}") from None
            self._owns = True
        else:
            self._file = source
            self.name = getattr(source, "name", "<file>")
            self._owns = False
        self._file.seek(0, os.SEEK_END)
        self.size = self._file.tell()
        self.blobs: dict[bytes, tuple[int, int, int]] = {}  # digest -> (offset, length, flags)
        self.segments: list[Segment] = [Segment(0)]
        self.counts: dict[str, int] = {n: 0 for n in fmt.RECORD_NAMES.values()}
        self.bytes_by_type: dict[str, int] = {n: 0 for n in fmt.RECORD_NAMES.values()}
        self.raw_blob_bytes = 0
        self.tables: fmt.Tables | None = None
        self.version = 0
        self.creator = ""
        self.total_calls = 0
        self.eof_marked = False
        self._cache: OrderedDict[bytes, bytes] = OrderedDict()
        self._cached = 0
        try:
            self._scan()
        except BaseException:
            self.close()
            raise
        self.frames: list[Frame] = self._frames()

    # -- scanning --------------------------------------------------------------------------

    def _read_at(self, offset: int, n: int) -> bytes:
        self._file.seek(offset)
        data = self._file.read(n)
        return data

    def _scan(self) -> None:
        f = self._file
        f.seek(0)
        magic = f.read(len(fmt.MAGIC))
        if magic != fmt.MAGIC:
            if len(magic) < len(fmt.MAGIC) and fmt.MAGIC.startswith(magic):
                raise TraceFormatError("truncated: the file ends inside its magic number", 0)
            raise TraceFormatError("not a numpipe trace (wrong magic number)", 0)
        offset = len(fmt.MAGIC)
        ended = False
        expect_snapshot: Boundary | None = None
        call_bytes = 0
        while True:
            head = f.read(fmt.RECORD_HEADER_SIZE)
            if not head:
                break
            if ended:
                raise TraceFormatError("data after the END record", offset)
            rtype, flags, length, crc = fmt.parse_record_header(head, offset)
            body_at = offset + fmt.RECORD_HEADER_SIZE
            if length > self.size - body_at:
                raise TraceFormatError(
                    f"truncated: {fmt.RECORD_NAMES[rtype]} record of {length} bytes runs past "
                    f"the end of the file ({self.size - body_at} bytes left)",
                    offset,
                )
            kind = fmt.RECORD_NAMES[rtype]
            if self.tables is None and rtype != fmt.HEADER:
                raise TraceFormatError(f"{kind} record before the HEADER record", offset)
            if expect_snapshot is not None and rtype != fmt.SNAPSHOT:
                raise TraceFormatError("BOUNDARY record not followed by its SNAPSHOT", offset)
            keep = rtype in (fmt.HEADER, fmt.BOUNDARY, fmt.END)
            if keep and length > MAX_META:
                raise TraceFormatError(
                    f"{kind} record of {length} bytes is implausibly large", offset
                )
            payload, first = self._checked_payload(head, length, crc, offset, keep)
            self.counts[kind] += 1
            self.bytes_by_type[kind] += fmt.RECORD_HEADER_SIZE + length
            if rtype == fmt.HEADER:
                if self.tables is not None:
                    raise TraceFormatError("a second HEADER record", offset)
                self._header(payload, flags, offset)
            elif rtype == fmt.BLOB:
                name, raw_size = fmt.blob_head(first, offset)
                self.blobs.setdefault(name, (offset, length, flags))
                self.raw_blob_bytes += raw_size
            elif rtype == fmt.CALLS:
                self.segments[-1].chunks.append(offset)
                call_bytes += min(int.from_bytes(first[:4], "little"), MAX_CHUNK)
            elif rtype == fmt.BOUNDARY:
                b = self._boundary(payload, flags, offset)
                self.segments[-1].end = b
                expect_snapshot = b
            elif rtype == fmt.SNAPSHOT:
                if expect_snapshot is None:
                    raise TraceFormatError("SNAPSHOT record without its BOUNDARY", offset)
                expect_snapshot.snapshot_offset = offset
                seg = Segment(len(self.segments), start_offset=offset)
                seg.call_bytes_before = call_bytes
                seg.startable = expect_snapshot.next_startable
                seg.reasons = list(expect_snapshot.reasons)
                self.segments.append(seg)
                expect_snapshot = None
            elif rtype == fmt.END:
                self._end(payload, flags, offset)
                ended = True
            offset = body_at + length
            f.seek(offset)
        if expect_snapshot is not None:
            raise TraceFormatError("truncated: the last BOUNDARY has no SNAPSHOT", offset)
        if not ended:
            raise TraceFormatError(
                "truncated: the trace stops without its END record (the recording did not "
                "finish, or the file was cut)",
                offset,
            )

    def _checked_payload(
        self, head: bytes, length: int, crc: int, offset: int, keep: bool
    ) -> tuple[bytes, bytes]:
        """Read a payload in pieces, checking its CRC; return it (if ``keep``) and its start."""
        f = self._file
        value = zlib.crc32(head[:8])
        parts = []
        first = b""
        left = length
        while left:
            piece = f.read(min(_PIECE, left))
            if not piece:
                raise TraceFormatError("truncated record", offset)
            if not first:
                first = piece[: fmt.DIGEST_SIZE + 8]
            value = zlib.crc32(piece, value)
            if keep:
                parts.append(piece)
            left -= len(piece)
        if value != crc:
            raise TraceFormatError(
                f"{fmt.RECORD_NAMES.get(head[0], '?')} record fails its checksum (damaged file)",
                offset,
            )
        return b"".join(parts), first

    def _decode(self, payload: bytes, flags: int, offset: int) -> Any:
        raw = fmt.unpack_body(payload, flags, offset)
        return fmt.decode_value(raw, self.tables or fmt.Tables(), offset)

    def _header(self, payload: bytes, flags: int, offset: int) -> None:
        value = self._decode(payload, flags, offset)
        if not isinstance(value, tuple) or len(value) < 6 or type(value[0]) is not int:
            raise TraceFormatError("HEADER record has an unexpected shape", offset)
        if value[0] != fmt.VERSION:
            raise TraceFormatError(
                f"trace format version {value[0]}; this reader reads version {fmt.VERSION}",
                offset,
            )
        self.version = value[0]
        self.creator = str(value[1])
        self.tables = fmt.Tables.from_header(value, offset)

    def _boundary(self, payload: bytes, flags: int, offset: int) -> Boundary:
        v = self._decode(payload, flags, offset)
        types = (int, bool, bool, bool, Ref, object, bool, list, int)
        if not (isinstance(v, tuple) and len(v) == 9) or not all(
            isinstance(x, t) for x, t in zip(v, types)
        ):
            raise TraceFormatError("BOUNDARY record has an unexpected shape", offset)
        seg, eof, renders, broken, ctx, fb, startable, reasons, ncalls = v
        if seg != len(self.segments) - 1:
            raise TraceFormatError(
                f"BOUNDARY of segment {seg} where segment {len(self.segments) - 1} ends", offset
            )
        if fb is not None:  # the context's set_framebuffer_state entry: (op, (state,), kw)
            if not (isinstance(fb, tuple) and len(fb) == 3 and isinstance(fb[1], tuple) and fb[1]):
                raise TraceFormatError(
                    "BOUNDARY record's framebuffer has an unexpected shape", offset
                )
            fb = fb[1][0]
        return Boundary(
            seg,
            eof,
            renders,
            broken,
            ctx.tid,
            fb,
            startable,
            [str(r) for r in reasons],
            ncalls,
            offset,
        )

    def _end(self, payload: bytes, flags: int, offset: int) -> None:
        v = self._decode(payload, flags, offset)
        if not (isinstance(v, tuple) and len(v) == 3 and type(v[0]) is int and type(v[1]) is int):
            raise TraceFormatError("END record has an unexpected shape", offset)
        if v[0] != len(self.segments) - 1:
            raise TraceFormatError(
                f"END record counts {v[0]} segment ends; the file has {len(self.segments) - 1}",
                offset,
            )
        self.total_calls = v[1]
        self.eof_marked = bool(v[2])

    # -- frames ------------------------------------------------------------------------------

    def _frames(self) -> list[Frame]:
        """Frames end at END_OF_FRAME flushes; a trace with none has one at every
        segment end (each follows rendering: see recorder.py)."""
        ends = [s for s in self.segments if s.end is not None]
        eof = any(s.end.eof for s in ends)
        frames: list[Frame] = []
        first = 0
        for s in ends:
            if eof and not s.end.eof:
                continue
            segs = self.segments[first : s.index + 1]
            reasons = (
                list(self.segments[first].reasons) if not self.segments[first].startable else []
            )
            for x in segs:
                if x.end is not None and x.end.broken:
                    reasons.append(f"a resource could not be read back in segment {x.index}")
            frames.append(Frame(len(frames), first, s.index, not reasons, reasons))
            first = s.index + 1
        return frames

    # -- parts -----------------------------------------------------------------------------------

    def _record(self, offset: int, want: int) -> tuple[bytes, int]:
        head = self._read_at(offset, fmt.RECORD_HEADER_SIZE)
        rtype, flags, length, crc = fmt.parse_record_header(head, offset)
        if rtype != want:
            raise TraceFormatError(
                f"expected a {fmt.RECORD_NAMES[want]} record, found {fmt.RECORD_NAMES[rtype]}",
                offset,
            )
        payload = self._file.read(length)
        if len(payload) != length:
            raise TraceFormatError("truncated record", offset)
        fmt.check_crc(head, payload, crc, offset)
        return payload, flags

    def blob(self, name: bytes) -> bytes:
        """The contents of a blob, checked against its digest."""
        hit = self._cache.get(name)
        if hit is not None:
            self._cache.move_to_end(name)
            return hit
        where = self.blobs.get(name)
        if where is None:
            raise TraceFormatError(f"blob {name.hex()} is referenced but not in the trace")
        offset, _, _ = where
        payload, flags = self._record(offset, fmt.BLOB)
        _, raw = fmt.unpack_blob(payload, flags, offset)
        if len(raw) <= BLOB_CACHE // 4:
            self._cache[name] = raw
            self._cached += len(raw)
            while self._cached > BLOB_CACHE:
                _, old = self._cache.popitem(last=False)
                self._cached -= len(old)
        return raw

    def _body(self, offset: int, rtype: int) -> tuple[bytes, Any]:
        payload, flags = self._record(offset, rtype)
        if len(payload) >= 4 and int.from_bytes(payload[:4], "little") > MAX_CHUNK:
            raise TraceFormatError("record is implausibly large", offset)
        return fmt.unpack_body(payload, flags, offset), flags

    def chunk(self, offset: int) -> Iterator[Call]:
        """The calls of one CALLS record, decoded one at a time (the record's bytes and one
        call in memory, whatever the record holds)."""
        raw, _ = self._body(offset, fmt.CALLS)
        d = fmt.Decoder(raw, self.tables, offset)
        first = d.value()
        if type(first) is not int or first < 0:
            raise TraceFormatError("CALLS record without its first call's index", offset)
        n = 0
        methods = self.tables.methods
        while d.pos < len(raw):
            v = d.value()
            if not (
                isinstance(v, tuple) and len(v) == 5 and type(v[0]) is int and type(v[1]) is int
            ):
                raise TraceFormatError(f"call {first + n} has an unexpected shape", offset)
            op, target, args, kw, result = v
            name = methods[op] if op < len(methods) else None
            if name not in calls.KIND:
                raise TraceFormatError(f"call {first + n}: unknown method {name or op!r}", offset)
            if not isinstance(args, tuple):
                raise TraceFormatError(f"call {first + n}: arguments are not a tuple", offset)
            yield Call(first + n, name, target, args, _kwargs(kw, offset), result, offset)
            n += 1

    def calls(self, segment: int):
        """Every call of one segment, in order."""
        for offset in self.segments[segment].chunks:
            yield from self.chunk(offset)

    def all_calls(self):
        for seg in self.segments:
            yield from self.calls(seg.index)

    def snapshot(self, segment: int) -> tuple[list, list, list, list[HandleState]]:
        """``(objects, states, mappings, handles)`` at the start of ``segment`` (> 0)."""
        seg = self.segments[segment]
        offset = seg.start_offset
        raw, _ = self._body(offset, fmt.SNAPSHOT)
        v = fmt.decode_value(raw, self.tables, offset)
        if not (isinstance(v, tuple) and len(v) == 5 and v[0] == segment):
            raise TraceFormatError("SNAPSHOT record has an unexpected shape", offset)
        _, objects, states, maps, handles = v
        try:
            objs = [(o[0].tid, o[1].tid, o[2], bool(o[3])) for o in objects]
            sts = [(c.tid, [_entry(e, offset) for e in entries]) for c, entries in states]
            mps = [(x.tid, c.tid, a) for x, c, a in maps]
            # at most as many handles made as calls recorded before this segment (as the
            # boundary counts them, and as the records before it can hold)
            calls_before = min(
                self.segments[segment - 1].end.calls, seg.call_bytes_before // MIN_CALL_BYTES
            )
            hds = [_handles(h, calls_before, offset) for h in handles]
        except TraceFormatError:
            raise
        except (TypeError, ValueError, AttributeError, IndexError):
            raise TraceFormatError("SNAPSHOT record has an unexpected shape", offset) from None
        return objs, sts, mps, hds

    def definition(self, blob: Any) -> tuple[str, tuple, dict | None]:
        """The ``(method, args, kwargs)`` an object was created with."""
        if not isinstance(blob, fmt.BlobRef):
            raise TraceFormatError("object definition is not a blob reference")
        where = self.blobs.get(blob.name, (None,))[0]
        raw = self.blob(blob.name)
        v = fmt.decode_value(raw, self.tables, where)
        if not (
            isinstance(v, tuple)
            and len(v) == 3
            and isinstance(v[0], str)
            and isinstance(v[1], tuple)
        ):
            raise TraceFormatError("object definition has an unexpected shape", where)
        if calls.KIND.get(v[0]) not in (calls.CREATE, calls.PSEUDO):
            raise TraceFormatError(f"object definition names {v[0]!r}, not a create call", where)
        return v[0], v[1], _kwargs(v[2], where)

    def close(self) -> None:
        if self._owns:
            self._file.close()

    def __enter__(self) -> TraceReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class HandleState(NamedTuple):
    """A context's bindless handles at a segment start (encoder.py's SNAPSHOT)."""

    context: int
    made: int  # create_*_handle calls it made before this point
    live: list[tuple[int, int, tuple]]  # (handle, n: the n-th made, (op, args, kwargs))
    resident: list[tuple[int, tuple]]  # (handle, its make_*_handle_resident call), in order


def _entry(e: Any, offset: int) -> tuple:
    """A call entry ``(op, args, kwargs)`` of a snapshot."""
    if not (isinstance(e, tuple) and len(e) == 3 and type(e[0]) is int):
        raise TypeError("not a call entry")
    if not isinstance(e[1], tuple):
        raise TypeError("arguments are not a tuple")
    return e[0], e[1], _kwargs(e[2], offset)


def _handles(h: Any, calls_before: int, offset: int) -> HandleState:
    ctx, made, live, resident = h
    if type(made) is not int or not 0 <= made <= calls_before:
        raise TraceFormatError(
            f"SNAPSHOT record: context #{ctx.tid} made {made!r} handles in "
            f"{calls_before} calls", offset
        )  # fmt: skip
    out_live, ns, values = [], set(), set()
    for value, n, e in live:
        if type(value) is not int or type(n) is not int or not 1 <= n <= made:
            raise ValueError("bad handle")
        if n in ns or value in values:
            raise ValueError("duplicate handle")
        ns.add(n)
        values.add(value)
        out_live.append((value, n, _entry(e, offset)))
    out_res = []
    for value, e in resident:
        if value not in values:
            raise ValueError("a resident handle that is not live")
        out_res.append((value, _entry(e, offset)))
    return HandleState(ctx.tid, made, sorted(out_live, key=lambda x: x[1]), out_res)


def _kwargs(kw: Any, offset: int) -> dict | None:
    if kw is None:
        return None
    if not isinstance(kw, tuple) or not all(
        isinstance(p, tuple)
        and len(p) == 2
        and type(p[0]) is str
        and p[0].isidentifier()
        and not p[0].startswith("_")
        for p in kw
    ):
        raise TraceFormatError("keyword arguments have an unexpected shape", offset)
    return dict(kw)
