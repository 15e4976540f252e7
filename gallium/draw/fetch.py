"""Vertex fetch and index reading (the front of Mesa's draw module).

``read_indices`` turns a draw's index buffer (or ``start..start+count``)
into a flat array of vertex ids plus the positions where primitive restart
cut the stream.  ``fetch_attributes`` reads every vertex element for a list
of (vertex id, instance id) lanes, following context.rst's address rule::

    per vertex:    attribAddr = stride * index + src_offset
    per instance:  attribAddr = stride * (start_instance + instanceID / divisor) + src_offset

Reads outside a buffer give zeros (robust access) instead of garbage.
Everything here is pure numpy on captured byte arrays: no context state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..pipe.errors import bad_value
from ..util.format import FormatDesc, describe, try_describe


@dataclass(frozen=True, slots=True)
class BoundVertexBuffer:
    """A vertex buffer binding with its bytes captured for this draw."""

    data: np.ndarray  # uint8
    stride: int
    offset: int


def buffer_bytes(obj: object) -> np.ndarray:
    """A uint8 view of a Resource's storage or of user data (bytes-like / numpy)."""
    storage = getattr(obj, "storage", None)
    if storage is not None:
        return storage
    if isinstance(obj, np.ndarray):
        return np.ascontiguousarray(obj).reshape(-1).view(np.uint8)
    return np.frombuffer(memoryview(obj).cast("B"), dtype=np.uint8)


def check_index_range(data: np.ndarray, index_size: int, start: int, count: int) -> None:
    """A draw's index range must lie inside its index buffer (checked when the
    draw is made, before it is queued: read_indices then cannot fail)."""
    if index_size not in (1, 2, 4):
        raise bad_value("info.index_size", "must be 0, 1, 2 or 4", index_size)
    first = start * index_size
    last = first + count * index_size
    if first < 0 or last > data.size:
        raise bad_value(
            "info.start/count",
            f"index range [{start}, {start + count}) must lie inside the index buffer "
            f"({data.size // index_size} indices)",
        )


def read_indices(
    data: np.ndarray | None,
    index_size: int,
    start: int,
    count: int,
    index_bias: int,
    restart: bool,
    restart_index: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Vertex ids of a draw (int64) and the restart cut positions.

    Returns ``(ids, cuts)`` where ``cuts`` are indices into ``ids`` at which a
    new primitive sequence starts (restart indices are removed from ``ids``).
    """
    if index_size == 0:
        return np.arange(start, start + count, dtype=np.int64), np.zeros(0, np.int64)
    assert data is not None
    check_index_range(data, index_size, start, count)
    dt = {1: np.uint8, 2: np.uint16, 4: np.uint32}[index_size]
    first = start * index_size
    raw = data[first : first + count * index_size].view(dt).astype(np.int64)
    cuts = np.zeros(0, np.int64)
    if restart:
        is_restart = raw == (restart_index & ((1 << (8 * index_size)) - 1))
        if is_restart.any():
            positions = np.nonzero(is_restart)[0]
            keep = ~is_restart
            raw = raw[keep]
            # a restart at position p starts a new sequence at (p - restarts before it)
            cuts = positions - np.arange(positions.size)
    return raw + index_bias, cuts


def fetch_attributes(
    elements: list,
    buffers: dict[int, BoundVertexBuffer],
    vertex_ids: np.ndarray,
    instance_ids: np.ndarray,
    start_instance: int,
) -> list[list[np.ndarray]]:
    """Per vertex element: four channel arrays (float32, or int32/uint32 for
    pure integer formats), missing channels filled with (0, 0, 0, 1)."""
    out = []
    n = vertex_ids.size
    for i, ve in enumerate(elements):
        desc = element_desc(ve, i)
        vb = buffers.get(ve.vertex_buffer_index)
        if vb is None:
            out.append(_default_channels(desc, n))
            continue
        if ve.instance_divisor:
            index = start_instance + instance_ids // ve.instance_divisor
        else:
            index = vertex_ids
        size = desc.block_bytes
        raw = _gather_rows(vb.data, vb.offset + ve.src_offset, vb.stride, size, index)
        if raw is None:  # some vertex reads outside the buffer: those read zeros (or odd data)
            addr = vb.offset + ve.src_offset + index * vb.stride
            ok = (addr >= 0) & (addr + size <= vb.data.size)
            raw = np.zeros((index.size, size), np.uint8)
            if ok.any():
                raw[ok] = vb.data[addr[ok][:, None] + np.arange(size)]
        out.append(_convert(desc, raw))
    return out


# Up to this many vertices _gather_rows reads their bytes with one 2-D fancy
# index (~4.5 us for 3 vertices here, against ~9.4 through a strided view of
# the buffer as opaque items, which is ~10x faster for thousands).
FEW_ROWS = 16


def _gather_rows(
    data: np.ndarray, base: int, stride: int, size: int, index: np.ndarray
) -> np.ndarray | None:
    """The ``size`` bytes at ``base + i*stride`` for every ``i`` of ``index``,
    as an (n, size) uint8 array, gathered as whole rows of a strided view of
    the buffer; None when any of them lies outside it."""
    n = index.size
    if n == 0:
        return np.zeros((0, size), np.uint8)
    if data.ndim != 1 or data.strides[0] != 1:
        return None
    few = n <= FEW_ROWS
    if few:  # (numpy's reductions cost more than Python's on a few values)
        ids = index.tolist()
        lo, hi = min(ids), max(ids)
    else:
        lo, hi = int(index.min()), int(index.max())
    first, last = base + lo * stride, base + hi * stride
    if min(first, last) < 0 or max(first, last) + size > data.size:
        return None
    if stride <= 0 or few:  # stride 0 (every vertex reads the same bytes), negative, or few rows
        return data[(base + index * stride)[:, None] + np.arange(size)]
    start = base + lo * stride
    # (an ndarray over the buffer: as_strided costs ~10 us a call)
    rows = np.ndarray((hi - lo + 1, size), np.uint8, data, start, (stride, 1))
    # each row as one opaque item: the gather copies items, not bytes (~10x faster)
    items = rows.view(np.dtype((np.void, size)))[:, 0]
    return items[index - lo if lo else index].view(np.uint8).reshape(n, size)


def element_desc(ve: object, i: int) -> FormatDesc:
    fmt = getattr(ve, "src_format", None)
    desc = try_describe(fmt) if fmt is not None else None
    if desc is None or desc.is_depth or desc.is_stencil:
        raise bad_value(f"vertex element {i} src_format", "must be a plain vertex format", fmt)
    return desc


def _default_channels(desc: FormatDesc, n: int) -> list[np.ndarray]:
    if desc.is_integer:
        dt = np.int32 if desc.is_signed_integer else np.uint32
        return [np.zeros(n, dt), np.zeros(n, dt), np.zeros(n, dt), np.ones(n, dt)]
    z = np.zeros(n, np.float32)
    return [z, z, z, np.ones(n, np.float32)]


def _convert(desc: FormatDesc, raw: np.ndarray) -> list[np.ndarray]:
    from ..util.format import channel_values, unpack_rgba

    if desc.layout == "array" and all(c.type == "FLOAT" and c.bits == 32 for c in desc.channels):
        # float32 channels: the bytes as they are (no conversion), each
        # channel a row of one transposed copy
        f = np.ascontiguousarray(raw.view(np.float32).T)
        n = raw.shape[0]
        chans = [None, None, None, None]
        for i, c in enumerate(desc.channels):
            slot = "RGBA".find(c.name)
            if slot >= 0:
                chans[slot] = f[i]
        return [
            ch
            if ch is not None
            else (np.ones(n, np.float32) if k == 3 else np.zeros(n, np.float32))
            for k, ch in enumerate(chans)
        ]
    if desc.layout == "array" and all(
        c.type in ("FLOAT", "USCALED", "SSCALED") for c in desc.channels
    ):
        vals = channel_values(desc, raw)
        n = raw.shape[0]
        chans = [np.zeros(n, np.float32) for _ in range(3)] + [np.ones(n, np.float32)]
        for c, v in zip(desc.channels, vals):
            slot = "RGBA".find(c.name)
            if slot >= 0:
                chans[slot] = v.astype(np.float32)
        return chans
    rgba = unpack_rgba(desc, raw)
    return [np.ascontiguousarray(rgba[:, c]) for c in range(4)]


def vertex_format_supported(fmt: object) -> bool:
    desc = try_describe(fmt)  # type: ignore[arg-type]
    return (
        desc is not None
        and not (desc.is_depth or desc.is_stencil)
        and desc.layout
        in (
            "array",
            "packed",
        )
    )


__all__ = [
    "BoundVertexBuffer",
    "buffer_bytes",
    "check_index_range",
    "describe",
    "fetch_attributes",
    "read_indices",
    "vertex_format_supported",
]
