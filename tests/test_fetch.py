"""Vertex fetch (gallium.draw.fetch.fetch_attributes) against the byte-level
definition: element i of a vertex reads ``size`` bytes at
``buffer_offset + src_offset + index * stride`` (zeros when they are not all
inside the buffer) and converts them with the element's format."""

from __future__ import annotations

import numpy as np
import pytest

from gallium import pipe
from gallium.draw.fetch import (
    FEW_ROWS,
    BoundVertexBuffer,
    _convert,
    element_desc,
    fetch_attributes,
)

FORMATS = [
    pipe.Format.R32G32B32A32_FLOAT,
    pipe.Format.R32G32_FLOAT,
    pipe.Format.R32G32B32_FLOAT,
    pipe.Format.R8G8B8A8_UNORM,
    pipe.Format.R16G16_SNORM,
    pipe.Format.R32_UINT,
    pipe.Format.R8_UNORM,
]


def reference(ve, vb, index, i):
    desc = element_desc(ve, i)
    size = desc.block_bytes
    raw = np.zeros((index.size, size), np.uint8)
    for row, v in enumerate(index.tolist()):
        addr = vb.offset + ve.src_offset + v * vb.stride
        if addr >= 0 and addr + size <= vb.data.size:
            raw[row] = vb.data[addr : addr + size]
    return _convert(desc, raw)


@pytest.mark.parametrize("seed", range(40))
def test_fetch_matches_the_byte_level_definition(seed):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, int(rng.integers(1, 600)), dtype=np.uint8)
    stride = int(rng.choice([0, 1, 3, 4, 12, 16, 20, 32, 37]))
    vb = BoundVertexBuffer(data, stride, int(rng.integers(0, 24)))
    n = int(rng.integers(0, 50))
    if seed % 3 == 0:  # a non-indexed draw: consecutive vertices
        index = np.arange(n, dtype=np.int64) + int(rng.integers(0, 5))
    else:  # indices, some out of range either side
        index = rng.integers(-3, 60, n).astype(np.int64)
    elements = [
        pipe.VertexElement(
            src_offset=int(rng.integers(0, 9)), src_format=FORMATS[int(rng.integers(len(FORMATS)))]
        )
        for _ in range(3)
    ]
    got = fetch_attributes(elements, {0: vb}, index, np.zeros(n, np.int64), 0)
    for i, ve in enumerate(elements):
        want = reference(ve, vb, index, i)
        for g, w in zip(got[i], want):
            assert g.dtype == w.dtype and g.shape == (n,)
            assert g.tobytes() == w.tobytes()


@pytest.mark.parametrize("outside", [False, True])
@pytest.mark.parametrize("n", [1, 3, FEW_ROWS, FEW_ROWS + 1, 64])
@pytest.mark.parametrize("stride", [0, 20, 32])
def test_few_and_many_vertices_read_the_same_bytes(n, stride, outside):
    """Up to FEW_ROWS vertices are gathered with one fancy index, more through
    a strided view of the buffer: either way the byte-level definition, and
    with a vertex out of range (the last) that one reads zeros."""
    data = np.random.default_rng(n + stride).integers(0, 256, 2100, dtype=np.uint8)
    vb = BoundVertexBuffer(data, stride, 4)
    index = (np.arange(n, dtype=np.int64) * 7) % 61
    outside = outside and n > 1 and stride > 0
    if outside:
        index[-1] = 1000  # past the buffer's end
    elements = [
        pipe.VertexElement(src_offset=0, src_format=pipe.Format.R32G32B32A32_FLOAT),
        pipe.VertexElement(src_offset=16, src_format=pipe.Format.R8G8B8A8_UNORM),
    ]
    got = fetch_attributes(elements, {0: vb}, index, np.zeros(n, np.int64), 0)
    for i, ve in enumerate(elements):
        for g, w in zip(got[i], reference(ve, vb, index, i)):
            assert g.dtype == w.dtype and g.shape == (n,)
            assert g.tobytes() == w.tobytes()
    if outside:  # the out-of-range vertex read zeros
        assert [c[-1] for c in got[0]] == [0.0, 0.0, 0.0, 0.0]


def test_fetch_of_a_float_buffer_is_exact():
    verts = np.arange(40, dtype=np.float32).reshape(5, 8)  # two vec4 per vertex
    vb = BoundVertexBuffer(verts.reshape(-1).view(np.uint8), 32, 0)
    elements = [
        pipe.VertexElement(src_offset=0, src_format=pipe.Format.R32G32B32A32_FLOAT),
        pipe.VertexElement(src_offset=16, src_format=pipe.Format.R32G32_FLOAT),
    ]
    index = np.array([4, 0, 2, 2], np.int64)
    pos, uv = fetch_attributes(elements, {0: vb}, index, np.zeros(4, np.int64), 0)
    assert [c.tolist() for c in pos] == [verts[index, k].tolist() for k in range(4)]
    assert [c.tolist() for c in uv] == [
        verts[index, 4].tolist(),
        verts[index, 5].tolist(),
        [0.0] * 4,
        [1.0] * 4,
    ]


@pytest.mark.parametrize(
    "fmt",
    [
        pipe.Format.R32_FLOAT,
        pipe.Format.R32G32_FLOAT,
        pipe.Format.R32G32B32_FLOAT,
        pipe.Format.R32G32B32A32_FLOAT,
    ],
)
def test_float32_elements_keep_their_bits(fmt):
    """float32 channels are the buffer's bytes as they are -- NaN payloads,
    signed zeros, subnormals and infinities too -- and missing ones (0, 0, 0, 1)."""
    desc = element_desc(pipe.VertexElement(src_format=fmt), 0)
    nch = desc.block_bytes // 4
    special = np.array([0x7FC00001, 0xFFC00000, 0x80000000, 0x00000001, 0x7F800000], np.uint32)
    words = np.random.default_rng(nch).integers(0, 1 << 32, (9, nch), dtype=np.uint64)
    words = words.astype(np.uint32)
    words.reshape(-1)[: special.size] = special[: words.size]
    raw = words.view(np.uint8).reshape(9, desc.block_bytes)
    chans = _convert(desc, raw)
    assert [c.dtype for c in chans] == [np.float32] * 4
    for k in range(4):
        if k < nch:
            assert chans[k].view(np.uint32).tolist() == words[:, k].tolist()
        else:
            assert chans[k].tolist() == [1.0 if k == 3 else 0.0] * 9
