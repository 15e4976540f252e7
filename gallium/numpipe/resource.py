"""Resources: buffers and textures, and how their bytes are laid out.

A :class:`Resource` is created by the screen and shared by every context of
that screen (context.rst, "Using several contexts").  Its bytes live in one
``numpy.uint8`` array, the *storage*.  Textures store each mip level after the
previous one; within a level each layer (array slice, cube face or 3D slice)
follows the previous, and rows are padded to a multiple of 64 bytes, so a
level/layer is a strided ``(height, width, bytes_per_pixel)`` view.

The storage of a buffer may be swapped for fresh storage (the threaded
context's DISCARD_WHOLE_RESOURCE path): work that captured the old array keeps
reading it, later work sees the new one.  Anything that runs later than the
call that looked it up (a scene on the worker pool) therefore captures the
arrays it needs, never the Resource.

Busy tracking: ``pending`` holds the fences of submitted scenes that read or
write the resource; the resource is busy on the GPU side while any of them is
unsignalled.  Contexts keep their own note of the resources their unflushed
scene references.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass

import numpy as np

from ..pipe import checks
from ..pipe import objects as contract
from ..pipe.enums import Bind, Format, TextureTarget, Usage
from ..pipe.errors import bad_value, check_int
from ..pipe.fence import Fence
from ..pipe.state import Box, ResourceTemplate
from ..util.format import FormatDesc

ROW_ALIGN = 64
_ids = itertools.count(1)

_LAYERED = {
    TextureTarget.TEXTURE_1D_ARRAY,
    TextureTarget.TEXTURE_2D_ARRAY,
    TextureTarget.TEXTURE_CUBE,
    TextureTarget.TEXTURE_CUBE_ARRAY,
}


@dataclass(frozen=True, slots=True)
class LevelLayout:
    """Where one mip level lives inside the storage."""

    offset: int
    width: int
    height: int
    layers: int  # depth for 3D, array_size for arrays/cubes, else 1
    row_stride: int
    layer_stride: int

    @property
    def size(self) -> int:
        return self.layer_stride * self.layers


class Resource(contract.Resource):
    """``pipe_resource``: a buffer or texture owned by a screen (the contract's
    fields and rules are :class:`gallium.pipe.objects.Resource`'s)."""

    def __init__(self, screen: object, templ: ResourceTemplate, desc: FormatDesc | None) -> None:
        super().__init__(screen, templ, desc.block_bytes if desc is not None else 1)
        self.id = next(_ids)
        self.usage = Usage(templ.usage)
        self.bind = Bind(templ.bind)
        self.desc = desc
        self.levels, size = texture_layout(templ, self.block_bytes)
        # A multisample resource keeps sample s of every level after sample
        # s - 1 (llvmpipe's layout): level_view(..., sample=s) is sample s,
        # and everything that knows no samples sees sample 0.
        self.samples = max(1, self.nr_samples)
        self.sample_stride = size // self.samples
        self.size = size
        allocate = getattr(screen, "allocate_storage", None)
        self._storage = (
            np.zeros(max(size, 1), dtype=np.uint8) if allocate is None else allocate(max(size, 1))
        )
        self.pending: list[Fence] = []

    # -- pickling (band processes) ---------------------------------------------------

    # What a band process needs of a resource a scene references: its layout
    # and storage.  The screen, the lock, pending fences and the threaded
    # frontend's bookkeeping belong to the process that owns the resource; the
    # copy a band process gets is detached from them.
    _DETACHED = ("screen", "lock", "pending", "tc")

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in self._DETACHED}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.screen = None
        self.lock = threading.Lock()
        self.pending = []
        self.tc = None

    # -- storage ---------------------------------------------------------------

    @property
    def storage(self) -> np.ndarray:
        return self._storage

    def replace_storage(self, new: np.ndarray) -> None:
        """Swap in new storage (same size).  Captured views keep the old array."""
        if new.shape != self._storage.shape or new.dtype != np.uint8:
            raise ValueError("replacement storage must match the resource size")
        self._storage = new

    # -- busy tracking -----------------------------------------------------------

    def add_pending(self, fence: Fence) -> None:
        with self.lock:
            self.pending = [f for f in self.pending if not f.signalled]
            if fence not in self.pending:
                self.pending.append(fence)

    def pending_fences(self) -> list[Fence]:
        with self.lock:
            self.pending = [f for f in self.pending if not f.signalled]
            return list(self.pending)

    @property
    def busy(self) -> bool:
        return bool(self.pending_fences())

    # -- layout and views -----------------------------------------------------------

    @property
    def is_buffer(self) -> bool:
        return self.target == TextureTarget.BUFFER

    def level_layout(self, level: int) -> LevelLayout:
        level = check_int("level", level)
        if not 0 <= level <= self.last_level:
            raise bad_value("level", f"must be in 0..{self.last_level} for this resource", level)
        return self.levels[level]

    def level_view(
        self,
        level: int = 0,
        first_layer: int = 0,
        num_layers: int | None = None,
        storage: np.ndarray | None = None,
        sample: int = 0,
    ) -> np.ndarray:
        """Raw bytes of a level (of one sample) as ``(layers, height, width,
        block_bytes)`` (a view)."""
        lay = self.level_layout(level)
        store = self._storage if storage is None else storage
        if num_layers is None:
            num_layers = lay.layers - first_layer
        start = lay.offset + first_layer * lay.layer_stride + sample * self.sample_stride
        bb = self.block_bytes
        return np.lib.stride_tricks.as_strided(
            store[start:],
            shape=(num_layers, lay.height, lay.width, bb),
            strides=(lay.layer_stride, lay.row_stride, bb, 1),
            writeable=True,
        )

    def typed_view(
        self,
        dtype: np.dtype | type,
        channels: int,
        level: int = 0,
        layer: int = 0,
        storage: np.ndarray | None = None,
        sample: int = 0,
    ) -> np.ndarray:
        """One layer of a level (of one sample) as ``(height, width[, channels])`` of ``dtype``."""
        lay = self.level_layout(level)
        store = self._storage if storage is None else storage
        dt = np.dtype(dtype)
        start = lay.offset + layer * lay.layer_stride + sample * self.sample_stride
        count = lay.layer_stride // dt.itemsize
        flat = store[start : start + lay.layer_stride].view(dt)[:count]
        row_items = lay.row_stride // dt.itemsize
        shape: tuple[int, ...]
        if channels == 1:
            shape = (lay.height, lay.width)
            strides = (row_items * dt.itemsize, dt.itemsize)
        else:
            shape = (lay.height, lay.width, channels)
            strides = (row_items * dt.itemsize, channels * dt.itemsize, dt.itemsize)
        return np.lib.stride_tricks.as_strided(flat, shape=shape, strides=strides, writeable=True)

    def check_box(self, level: int, box: Box, arg: str = "box") -> None:
        """Raise unless ``box`` lies inside ``level`` (context.rst Transfers)."""
        checks.check_box(self, level, box, arg)

    def __repr__(self) -> str:
        dims = f"{self.width0}" if self.is_buffer else f"{self.width0}x{self.height0}"
        return f"<Resource #{self.id} {self.target.name} {self.format.name} {dims}>"


def texture_layout(templ: ResourceTemplate, block_bytes: int) -> tuple[list[LevelLayout], int]:
    """Where each mip level of a (normalized) template lives, and the storage's
    size in bytes (all its samples): computed without allocating anything, so
    the screen checks the size before a resource is made."""
    target = TextureTarget(templ.target)
    width0, height0 = int(templ.width0), int(templ.height0)
    if target == TextureTarget.BUFFER:
        return [LevelLayout(0, width0, 1, 1, width0, width0)], width0
    levels: list[LevelLayout] = []
    size = 0
    for level in range(int(templ.last_level) + 1):
        w = max(1, width0 >> level)
        h = max(1, height0 >> level)
        if target == TextureTarget.TEXTURE_3D:
            layers = max(1, int(templ.depth0) >> level)
        else:
            layers = int(templ.array_size)
        row = -(-w * block_bytes // ROW_ALIGN) * ROW_ALIGN
        lstride = row * h
        levels.append(LevelLayout(size, w, h, layers, row, lstride))
        size += lstride * layers
    # (a multisample resource: every sample's levels after the last's)
    return levels, size * max(1, int(templ.nr_samples))


def normalize_template(templ: ResourceTemplate) -> ResourceTemplate:
    """Validate a template and fill the dimensions its target does not use.

    Zero ``height0``/``depth0``/``array_size`` mean 1 where the target has no
    such dimension; where it does, zero is an error.
    """
    if not isinstance(templ, ResourceTemplate):
        from ..pipe.errors import bad_type

        raise bad_type("templ", "a pipe.ResourceTemplate", templ)
    from .objects import check_fields

    check_fields(templ, "templ")
    target = TextureTarget(templ.target)
    if target in (TextureTarget.MAX_TEXTURE_TYPES,):
        raise bad_value("templ.target", "must be a real texture target", templ.target)
    width, height, depth, layers = templ.width0, templ.height0, templ.depth0, templ.array_size
    if width <= 0:
        raise bad_value("templ.width0", "must be >= 1", width)
    uses_height = target not in (
        TextureTarget.BUFFER,
        TextureTarget.TEXTURE_1D,
        TextureTarget.TEXTURE_1D_ARRAY,
    )
    if uses_height:
        if height <= 0:
            raise bad_value("templ.height0", f"must be >= 1 for {target.name}", height)
    else:
        if height not in (0, 1):
            raise bad_value("templ.height0", f"must be 1 for {target.name}", height)
        height = 1
    if target == TextureTarget.TEXTURE_3D:
        if depth <= 0:
            raise bad_value("templ.depth0", "must be >= 1 for TEXTURE_3D", depth)
    else:
        if depth not in (0, 1):
            raise bad_value("templ.depth0", f"must be 1 for {target.name}", depth)
        depth = 1
    if target == TextureTarget.TEXTURE_CUBE:
        if layers not in (0, 6):
            raise bad_value("templ.array_size", "must be 6 for TEXTURE_CUBE", layers)
        layers = 6
        if width != height:
            raise bad_value("templ.width0", "must equal height0 for a cube map", width)
    elif target == TextureTarget.TEXTURE_CUBE_ARRAY:
        if layers <= 0 or layers % 6:
            raise bad_value("templ.array_size", "must be a positive multiple of 6", layers)
    elif target in _LAYERED:
        if layers <= 0:
            raise bad_value("templ.array_size", f"must be >= 1 for {target.name}", layers)
    else:
        if layers not in (0, 1):
            raise bad_value("templ.array_size", f"must be 1 for {target.name}", layers)
        layers = 1
    if templ.last_level < 0:
        raise bad_value("templ.last_level", "must be >= 0", templ.last_level)
    if target == TextureTarget.BUFFER and templ.last_level != 0:
        raise bad_value("templ.last_level", "must be 0 for a buffer", templ.last_level)
    max_levels = max(width, height, depth).bit_length()
    if templ.last_level >= max_levels:
        raise bad_value(
            "templ.last_level",
            f"must be < {max_levels} for a {width}x{height}x{depth} texture",
            templ.last_level,
        )
    return ResourceTemplate(
        target=target,
        format=templ.format,
        width0=width,
        height0=height,
        depth0=depth,
        array_size=layers,
        last_level=templ.last_level,
        nr_samples=templ.nr_samples,
        nr_storage_samples=templ.nr_storage_samples,
        usage=templ.usage,
        bind=templ.bind,
        flags=templ.flags,
    )


def format_desc_or_error(fmt: object, arg: str = "templ.format") -> FormatDesc | None:
    """The format's description; PIPE_FORMAT_NONE is allowed (buffers) and gives None."""
    try:
        f = Format(fmt)  # type: ignore[arg-type]
    except ValueError:
        raise bad_value(arg, "must be a pipe.Format", fmt) from None
    if f == Format.NONE:
        return None
    from ..util.format import try_describe

    desc = try_describe(f)
    if desc is None:
        raise bad_value(arg, "is a format numpipe cannot store (compressed or planar)", f.name)
    return desc
