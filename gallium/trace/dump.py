"""``trace info`` and ``trace dump``: a trace as numbers and as text (like Mesa's dump.py)."""

from __future__ import annotations

import dataclasses
import enum
from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import calls
from .format import ArrayRef, BlobRef, Opaque, Ref
from .reader import TraceReader

LONG_TEXT = 160


def info(reader: TraceReader) -> str:
    """Frames, calls per kind, objects, resources and bytes of a trace."""
    per_method: Counter[str] = Counter()
    created: Counter[str] = Counter()
    contexts: set[int] = set()
    for call in reader.all_calls():
        per_method[call.name] += 1
        if calls.KIND[call.name] == calls.CREATE:
            created[call.name] += 1
        if (
            call.target
            and calls.KIND[call.name] != calls.PSEUDO
            and call.name in calls.CONTEXT_METHODS
        ):
            contexts.add(call.target)
    frames = reader.frames
    alone = sum(1 for f in frames if f.startable)
    lines = [
        f"file:        {reader.name} ({reader.size:,} bytes)",
        f"format:      version {reader.version}, written by {reader.creator}",
        f"frames:      {len(frames)}"
        + (
            " (marked by END_OF_FRAME flushes)"
            if reader.eof_marked
            else " (no END_OF_FRAME flush: one frame per flush after rendering)"
        )
        + f"; {alone} replayable alone from their own start",
        f"segments:    {len(reader.segments)}",
        f"calls:       {reader.total_calls:,} on {len(contexts)} context(s)",
        f"objects:     {sum(created.values()):,} created"
        + (f" ({created['resource_create']:,} resources)" if created["resource_create"] else ""),
        f"blobs:       {len(reader.blobs):,} stored once, {reader.raw_blob_bytes:,} bytes before "
        f"compression, {reader.bytes_by_type['BLOB']:,} in the file",
        "records:     "
        + ", ".join(
            f"{n} {c} ({reader.bytes_by_type[n]:,} B)" for n, c in reader.counts.items() if c
        ),
    ]
    not_alone = [f for f in frames if not f.startable]
    for f in not_alone[:5]:
        lines.append(f"  frame {f.index} replays from an earlier frame: {'; '.join(f.reasons)}")
    if len(not_alone) > 5:
        lines.append(f"  ... and {len(not_alone) - 5} more frames like it")
    lines.append("calls per kind:")
    width = max((len(n) for n in per_method), default=0)
    for name, n in sorted(per_method.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  {name:<{width}}  {n:>9,}")
    return "\n".join(lines)


def dump(reader: TraceReader, frame: int | None = None, full: bool = False) -> Iterator[str]:
    """The calls as text; ``frame``: only that frame's, after the state it starts from."""
    frames = reader.frames
    ends = {f.last: f.index for f in frames}
    if frame is None:
        segments = range(len(reader.segments))
    else:
        if not -len(frames) <= frame < len(frames):
            raise ValueError(f"frame {frame} is out of range: the trace has {len(frames)} frames")
        f = frames[frame]
        segments = range(f.first, f.last + 1)
        yield f"# frame {f.index}: segments {f.first}..{f.last}"
        if f.first > 0:
            yield from _snapshot(reader, f.first, full)
    for seg in segments:
        for call in reader.calls(seg):
            yield format_call(reader, call, full)
        end = reader.segments[seg].end
        if end is not None:
            what = f"end of frame {ends[seg]}" if seg in ends else "end of segment"
            how = "END_OF_FRAME flush" if end.eof else "flush"
            yield f"# --- {what} ({how} on context #{end.context}, segment {seg}) ---"


def _snapshot(reader: TraceReader, segment: int, full: bool) -> Iterator[str]:
    objects, states, maps, handles = reader.snapshot(segment)
    yield f"# state at the start of segment {segment}: {len(objects)} live objects"
    for tid, creator, definition, zombie in objects:
        name, args, kw = reader.definition(definition)
        text = f"#   #{tid} = #{creator}.{name}({_args(args, kw, full)})"
        yield text + ("  (destroyed, still used)" if zombie else "")
    methods = reader.tables.methods
    for ctx, entries in states:
        for op, args, kw in entries:
            yield f"#   #{ctx}.{methods[op]}({_args(args, kw, full)})"
    for xtid, ctx, args in maps:
        yield f"#   #{xtid} = #{ctx}.transfer_map({_args(args, None, full)})  (still mapped)"
    for h in handles:
        yield f"#   context #{h.context} has made {h.made} bindless handle(s); live:"
        for value, n, (op, args, kw) in h.live:
            yield f"#     {value:#x} = #{h.context}.{methods[op]}({_args(args, kw, full)})  (#{n})"
        for _, (op, args, kw) in h.resident:
            yield f"#     #{h.context}.{methods[op]}({_args(args, kw, full)})"


def format_call(reader: TraceReader, call: Any, full: bool = False) -> str:
    args, kw = call.args, call.kw
    if calls.KIND[call.name] == calls.CREATE or call.name == calls.SCREEN_CREATE:
        if args and isinstance(args[0], BlobRef):
            _, args, kw = reader.definition(args[0])
    text = f"{call.index}: #{call.target}.{call.name}({_args(args, kw, full)})"
    if call.result is not None:
        text += f" -> {value_text(call.result, full)}"
    return text


def _args(args: tuple, kw: dict | None, full: bool) -> str:
    parts = [value_text(a, full) for a in args]
    parts += [f"{k}={value_text(v, full)}" for k, v in (kw or {}).items()]
    return ", ".join(parts)


def value_text(v: Any, full: bool = False) -> str:
    if isinstance(v, Ref):
        return f"#{v.tid}"
    if isinstance(v, BlobRef):
        return f"<blob {v.name.hex()[:12]}>"
    if isinstance(v, ArrayRef):
        return f"array({v.dtype}, {v.shape}, {v.blob!r})"
    if isinstance(v, Opaque):
        return f"<{v.text}>"
    if isinstance(v, enum.Enum):
        return f"{type(v).__name__}.{v.name}" if v.name else f"{type(v).__name__}({int(v)})"
    if isinstance(v, np.ndarray):
        if v.size <= 16 or full:
            return f"array({v.tolist()}, {v.dtype})"
        return f"array({v.dtype}, {v.shape})"
    if isinstance(v, (bytes, bytearray)):
        return f"bytes({len(v)})" if len(v) > 32 and not full else repr(bytes(v))
    if isinstance(v, str):
        if len(v) > LONG_TEXT and not full:
            first = v.splitlines()[0] if v else ""
            return repr(f"{first[:60]}... ({len(v)} chars, {v.count(chr(10)) + 1} lines)")
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(value_text(x, full) for x in v) + "]"
    if isinstance(v, tuple):
        inner = ", ".join(value_text(x, full) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        parts = []
        for f in dataclasses.fields(v):
            x = getattr(v, f.name)
            default = (
                f.default
                if f.default is not dataclasses.MISSING
                else (f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
            )
            if full or not _same(x, default):
                parts.append(f"{f.name}={value_text(x, full)}")
        return f"{type(v).__name__}({', '.join(parts)})"
    return repr(v)


def _same(a: Any, b: Any) -> bool:
    try:
        return (bool(a == b) and type(a) is type(b)) or (a is None and b is None)
    except Exception:
        return False
