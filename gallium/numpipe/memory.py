"""Shader buffers and images of the graphics stages (vertex, tessellation,
geometry, fragment): ``ExecEnv.memory`` of their kernels.

Theory of operation
-------------------
A draw captures, when it is queued, the shader buffers and images bound to
each stage whose program declares BUFFER or IMAGE registers, as a
:class:`StageMemory`: byte views of the buffers' and images' storage at that
moment (a threaded context's buffer invalidation swaps storage; the draw
keeps the bytes its call saw).  Vertex-side kernels run on the thread that
runs the context's draw queue; a fragment kernel runs on the worker that owns
its band, and several workers may run bands of one scene at once, so every
operation takes the object's lock: loads, stores and atomics of different
bands never interleave inside one another.  Within a kernel call lanes act
in lane order (gallium/tgsi/memory_api.py); the rasterizer orders a pixel's
fragments by primitive, so the last primitive's store to a location lands
last.  Between bands (and so between workers) the order of operations is not
fixed, as on any GPU: the final value of an atomic counter is, the values
each invocation saw are not.

The semantics are compute's (gallium/numpipe/compute.py ComputeMemory):
byte addresses, out-of-range loads read zero, stores and atomics outside a
buffer do nothing, images through their format's pack/unpack.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ..pipe.errors import UnsupportedError
from ..tgsi.memory_api import (
    MemoryRequest,
    atomic_words,
    execute_by_unit,
    load_words,
    store_words,
)
from .compute import ImageUnit, buffer_views, image_units

U32 = np.uint32
_EMPTY = np.zeros(0, np.uint8)


def declares_memory(shader: Any) -> bool:
    """Whether a program declares shader buffers or images."""
    return any(d.file in ("BUFFER", "IMAGE") for d in shader.declarations)


def writes_memory(shader: Any) -> bool:
    """Whether a program stores to or atomically updates a buffer or image."""
    for inst in shader.instructions:
        op = inst.opcode
        if op == "STORE" and inst.dst and inst.dst[0].reg.file in ("BUFFER", "IMAGE"):
            return True
        if op.startswith("ATOM") and inst.src and inst.src[0].reg.file in ("BUFFER", "IMAGE"):
            return True
    return False


class StageMemory:
    """The shader buffers and images one stage of a draw sees."""

    def __init__(self, buffers: dict, images: dict, resources: list) -> None:
        self.buffers: dict[int, np.ndarray] = buffers
        self.images: dict[int, ImageUnit] = images
        self.resources = resources  # the Resources behind them
        self.lock = threading.Lock()

    @classmethod
    def capture(cls, buffers: dict, images: dict) -> StageMemory:
        """The bindings ``buffers`` (slot -> ShaderBuffer) and ``images``
        (slot -> ImageView) as views of their resources' current storage."""
        resources = [b.buffer for b in buffers.values()] + [v.resource for v in images.values()]
        return cls(buffer_views(buffers), image_units(images), resources)

    def execute(self, req: MemoryRequest) -> list[Any] | None:
        with self.lock:
            return execute_by_unit(req, self._unit)

    def _unit(self, req: MemoryRequest, unit: int, mask: np.ndarray) -> list[Any] | None:
        if req.file == "IMAGE":
            image = self.images.get(unit)
            if image is None:  # unbound: loads read 0, stores are dropped
                return None if req.op == "store" else [np.zeros(req.n, U32) for _ in range(4)]
            return image.execute(req, mask)
        if req.file != "BUFFER":
            raise UnsupportedError(f"{req.file} memory outside compute programs")
        buf = self.buffers.get(unit, _EMPTY)
        if req.op == "size":
            z = U32(0)
            return [U32(buf.size), z, z, z]
        off = np.broadcast_to(np.asarray(req.offset, np.int64), (req.n,))
        if req.op == "load":
            return load_words(buf, off, mask, req.writemask)
        if req.op == "store":
            store_words(buf, off, mask, req.writemask, req.values or [])
            return None
        if req.op == "atomic":
            old = atomic_words(buf, off, mask, req)
            return [old, old, old, old]
        raise UnsupportedError(f"memory op {req.op}")
