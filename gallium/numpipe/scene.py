"""Scenes: everything one flush asks the rasterizer to do.

Theory of operation
-------------------
A context records clears and set-up triangles into its current
:class:`Scene` on the driver thread; ``flush`` hands the scene to the screen's
worker pool and starts a new one.  A scene is fixed to one framebuffer.  The
framebuffer is cut into tiles of 64x64 pixels; the unit of work is a *band*,
one to eight rows of tiles across the whole width (``band_height``; narrower
for scenes of many medium-sized triangles, chosen at flush), because a
kernel call over a band (64-512 rows x width pixels) is big enough to amortise
numpy's per-call overhead while bands still balance well across workers.

Each draw is *binned* when it is added: a CSR index gives, for every band,
the triangles whose bounding box touches it, in submission order.  A worker
executing band b walks the command list in order and applies each command to
its band only, so

* a band is written by exactly one worker (no locks on pixels);
* per pixel, commands and triangles apply in submission order;
* the result is bit-identical for any number of workers.

Everything a worker reads is captured in the scene when the command is
recorded: render-target arrays, constant-buffer bytes, sampler-view arrays,
CSO state.  The worker never looks at the context, which has moved on.  A
layered framebuffer's targets beyond each surface's first layer are made
when a primitive first goes to that layer (``layer_targets``, on the
recording thread); a draw command on such a layer names it
(``DrawCmd.layer``) and a band draws it into that layer's targets.

Layering: the draw module (gallium/draw/) adds set-up primitives, the
rasterizer (workers/) reads them; a scene imports neither.  The worker pool
runs a scene through :class:`workers.job.SceneJob`, which knows how a band
is rasterized.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..draw.primitives import TriangleSet, concat_triangle_sets, select_triangles
from ..pipe.errors import add_origin_note
from ..pipe.fence import Fence
from ..util.format import DepthLayout, FormatDesc, depth_layout

TILE = 64

# Draws whose fragment states differ may share a command (DrawCmd.states);
# off, such draws get commands of their own, as a reference for tests.
MULTISTATE = True

# A triangle whose bounding box covers at least this many pixels of a band is
# rasterized by the dense path, smaller ones by the sparse one (workers/raster.py
# takes the same figure); the narrow-band rule below counts the sparse ones.
DENSE_MIN_PIXELS = 16384


BAND_PIXELS = 1 << 19  # at most, unless one row of tiles has more


def band_height(width: int, height: int) -> int:
    """Rows per band: whole tiles, as many as fit in ``BAND_PIXELS`` pixels
    across the width, at most 8 and at most a half of the height (so two
    workers have a band each).  Depends on the framebuffer only, never on
    the number of workers (results do not depend on it either); a scene of
    many medium-sized triangles re-cuts its bands narrower when it is
    flushed (:func:`narrow_band_height`, Scene.wants_narrow_bands).

    Bigger calls mean fewer GIL hand-offs between workers (they ping-pong the
    GIL at every numpy call boundary): on 1024x1024, 256-row bands made two
    workers 1.5x faster than 128-row bands on full-screen fills and blends,
    and 512-row bands (one per worker) another 5-20% on fill, blend, texture
    and small triangles.  A fragment shader that runs the TGSI kernel shades
    at most ``SHADE_LANES`` lanes a call whatever the band (see
    workers/raster.py), so its temporaries stay in cache."""
    tiles = min(8, height // (2 * TILE), BAND_PIXELS // (TILE * max(1, width)))
    return TILE * max(1, tiles)


# Narrow bands for scenes of many medium-sized triangles (see
# Scene.wants_narrow_bands): at most this many pixels (their depth words
# and colours, 0.5 MiB each, stay in a core's L2 while the sparse path
# scatters and gathers into them).
NARROW_BAND_PIXELS = 1 << 17
# ... when the small triangles' bounding boxes cover at least the
# framebuffer once and this many pixels each on average.
NARROW_MIN_BOX_PIXELS = 64


def narrow_band_height(width: int, height: int) -> int:
    """Rows per band for such scenes: whole tiles, at most NARROW_BAND_PIXELS
    pixels (at least one tile row), at most a half of the height."""
    tiles = min(8, height // (2 * TILE), NARROW_BAND_PIXELS // (TILE * max(1, width)))
    return TILE * max(1, tiles)


@dataclass
class ColorTarget:
    """A colour surface as the rasterizer writes it."""

    desc: FormatDesc
    raw: np.ndarray  # (H, W, block_bytes) uint8 view of the surface
    kind: str  # "unorm8" (4 x 8-bit UNORM), "float32", "generic"
    typed: np.ndarray | None  # (H, W, C) uint8 / float32 view for the fast kinds
    perm: tuple[int, ...]  # RGBA component -> memory channel for the fast kinds
    resource: Any = None
    words: np.ndarray | None = None  # (H, W) uint32 view of 4-byte pixels


@dataclass
class DepthTarget:
    """A depth/stencil surface."""

    layout: DepthLayout
    words: np.ndarray  # (H, W) view of the pixel words (z float32 for split formats)
    stencil: np.ndarray | None  # (H, W) uint8 view for Z32_FLOAT_S8X24_UINT, else None
    resource: Any = None


@dataclass
class OcclusionCounter:
    """Samples that passed, summed over every band and scene a query spans."""

    count: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, n: int) -> None:
        if n:
            with self.lock:
                self.count += n


@dataclass
class ClearCmd:
    colors: list[tuple[int, np.ndarray]]  # (cbuf index, packed pixel value)
    depth_word: Any  # value for the depth bits, or None
    stencil: int | None
    zs_mask_keep: int  # bits of the zs word to keep (depth-only / stencil-only clears)
    # the other layers of layered surfaces: (ColorTarget, packed pixel value)
    # and DepthTargets, cleared like the bound ones
    extra_colors: list[tuple[ColorTarget, np.ndarray]] = field(default_factory=list)
    extra_zs: list[DepthTarget] = field(default_factory=list)
    # (x0, y0, x1, y1), ends excluded: the clear's scissor rectangle within the
    # framebuffer; None: all of it
    rect: tuple[int, int, int, int] | None = None

    def arrays(self) -> list[np.ndarray]:
        """The arrays of the extra targets (for the band processes' check)."""
        out = [t.raw for t, _ in self.extra_colors]
        for zs in self.extra_zs:
            out.append(zs.words)
            if zs.stencil is not None:
                out.append(zs.stencil)
        return out


class MarkerCmd:
    """A point in the command stream whose time each band records when it gets there.

    ``time_ns`` (max over bands) is when every command before the marker has
    been processed on every band: what PIPE_QUERY_TIMESTAMP asks for.
    """

    def __init__(self, nbands: int, clock) -> None:
        self.band_ns = np.zeros(nbands, np.int64)
        self.clock = clock

    def run(self, band: int) -> None:
        self.band_ns[band] = self.clock()

    @property
    def time_ns(self) -> int:
        return int(self.band_ns.max())


@dataclass
class DrawCmd:
    """Set-up triangles plus the fragment state they are shaded with.

    While the scene records, consecutive draws are collected in ``parts``;
    ``finish`` joins them and bins the triangles.  Draws whose states shade
    alike share ``state``.  Draws whose states differ (but whose triangles
    carry the same inputs) make a *multi-state* command: ``states`` lists
    the states and ``tri_state[t]`` (after ``join``) says which one shades
    triangle t.  The rasterizer handles a band's triangles of such a command
    either all at once (workers/multistate.py) or run by run of equal state,
    each run exactly as a command of its own.
    """

    state: Any  # workers.fragment.FragmentState (the first, for multi-state commands)
    parts: list[TriangleSet]
    tris: TriangleSet | None = None
    band_start: np.ndarray | None = None  # CSR: band b's triangles are
    band_tris: np.ndarray | None = None  # band_tris[band_start[b]:band_start[b+1]]

    # (small triangles' bounding-box pixels, their count, the other
    # triangles' bounding-box pixels): see box_pixels
    boxes: tuple[float, int, float] | None = None
    # multi-state commands: every state, each part's state indices (while
    # recording: one int per part, or an array with one per triangle), and
    # after join one index per triangle
    states: list | None = None
    part_states: list | None = None
    tri_state: np.ndarray | None = None
    # the framebuffer layer the triangles go to (a LAYER output chose it;
    # Scene.layers holds that layer's targets)
    layer: int = 0

    def join(self) -> None:
        self.tris = concat_triangle_sets(self.parts)
        if self.states is not None:
            self.tri_state = np.concatenate(
                [
                    np.full(p.count, s, np.int32) if isinstance(s, int) else s
                    for p, s in zip(self.parts, self.part_states)
                ]
            )
            self.part_states = None
        self.parts = []

    def state_index(self, state: Any) -> int:
        """The index of ``state`` in ``states`` (made multi-state if needed)."""
        if self.states is None:
            self.states = [self.state]
            self.part_states = [0] * len(self.parts)
        ids = self.__dict__.setdefault("_state_ids", {id(self.state): 0})
        i = ids.get(id(state))
        if i is None:  # (states is kept alive by the command: ids stay unique)
            i = ids[id(state)] = len(self.states)
            self.states.append(state)
        return i

    def box_pixels(self) -> tuple[float, int, float]:
        """Bounding-box pixels of the joined triangles that take the sparse
        path (boxes under DENSE_MIN_PIXELS), how many those are, and the
        other triangles' box pixels (computed once)."""
        if self.boxes is None:
            b = self.tris.bbox.astype(np.int64)
            area = (b[:, 2] - b[:, 0] + 1) * (b[:, 3] - b[:, 1] + 1)
            small = area < DENSE_MIN_PIXELS
            small_px = float(area[small].sum())
            self.boxes = (small_px, int(np.count_nonzero(small)), float(area.sum()) - small_px)
        return self.boxes

    def finish(self, nbands: int, rows: int) -> None:
        if self.parts:
            self.join()
        self.band_start, self.band_tris = bin_by_band(self.tris, nbands, rows)

    def triangles_in_band(self, band: int) -> np.ndarray:
        return self.band_tris[self.band_start[band] : self.band_start[band + 1]]


def bin_by_band(tris: TriangleSet, nbands: int, rows: int = TILE) -> tuple[np.ndarray, np.ndarray]:
    """CSR of triangle indices per band (bands are ``rows`` rows tall)."""
    if tris.count == 0:
        return np.zeros(nbands + 1, np.int64), np.zeros(0, np.int64)
    if tris.count <= 8:  # a few big triangles: Python lists (~10 numpy calls cost ~60 us)
        spans = [(int(y0) // rows, int(y1) // rows) for y0, y1 in tris.bbox[:, [1, 3]].tolist()]
        per_band = [[t for t, (b0, b1) in enumerate(spans) if b0 <= b <= b1] for b in range(nbands)]
        starts = [0]
        for ids in per_band:
            starts.append(starts[-1] + len(ids))
        flat = [t for ids in per_band for t in ids]
        return np.array(starts, np.int64), np.array(flat, np.int64)
    b0 = tris.bbox[:, 1].astype(np.int64) // rows
    b1 = tris.bbox[:, 3].astype(np.int64) // rows
    counts = b1 - b0 + 1
    tri_of = np.repeat(np.arange(tris.count), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    band_of = b0[tri_of] + (np.arange(tri_of.size) - first)
    order = np.argsort(band_of, kind="stable")
    band_tris = tri_of[order]
    band_start = np.zeros(nbands + 1, np.int64)
    np.cumsum(np.bincount(band_of, minlength=nbands)[:nbands], out=band_start[1:])
    return band_start, band_tris


class Scene:
    """One flush's worth of rasterization work for one framebuffer."""

    def __init__(
        self,
        width: int,
        height: int,
        cbufs: list[ColorTarget | None],
        zsbuf: DepthTarget | None,
        label: str = "",
    ) -> None:
        self.width = width
        self.height = height
        self.cbufs = cbufs
        self.zsbuf = zsbuf
        self.commands: list[ClearCmd | DrawCmd | MarkerCmd] = []
        self.band_rows = band_height(width, height)
        self.nbands = max(1, -(-height // self.band_rows))
        self.fence = Fence(label=label)
        self.resources: set[Any] = set()
        self.errors: list[BaseException] = []
        self._error_lock = threading.Lock()
        self.on_complete: list[Any] = []
        self.triangles = 0
        self.counters: set[OcclusionCounter] = set()
        self._proc_lock = threading.Lock()  # guards the band processes' blob (workers/bandproc.py)
        # Multisampling: the targets of samples 1.. (cbufs and zsbuf are
        # sample 0's); the rasterizer makes one pass a sample (workers/msaa.py).
        self.samples = 1
        self.sample_cbufs: list[list[ColorTarget | None]] = []
        self.sample_zs: list[DepthTarget | None] = []
        # Layered rendering: cbufs, zsbuf and the sample targets are layer 0's
        # (each surface's first layer); a draw command on layer L > 0 uses
        # layers[L] = (cbufs, zsbuf, sample_cbufs, sample_zs), made by
        # layer_source(L) when a primitive first goes to L (layer_targets).
        # Primitives choose layers up to max_layer.
        self.max_layer = 0
        self.layers: dict[int, tuple] = {}
        self.layer_source: Any = None

    def set_samples(
        self, samples: int, cbufs: list[list[ColorTarget | None]], zs: list[DepthTarget | None]
    ) -> None:
        """Make the scene multisampled: ``cbufs[s - 1]`` / ``zs[s - 1]`` are sample s's."""
        self.samples = samples
        self.sample_cbufs = cbufs
        self.sample_zs = zs

    # -- recording (driver thread) ------------------------------------------------

    @property
    def empty(self) -> bool:
        return not self.commands

    def add_clear(self, cmd: ClearCmd) -> None:
        self.commands.append(cmd)

    def layer_targets(self, layer: int) -> tuple:
        """Layer ``layer``'s targets (made on first use, on the recording thread)."""
        got = self.layers.get(layer)
        if got is None:
            got = self.layers[layer] = self.layer_source(layer)
        return got

    def add_marker(self, clock) -> MarkerCmd:
        marker = MarkerCmd(self.nbands, clock)
        self.commands.append(marker)
        return marker

    def add_draw(self, state: Any, tris: TriangleSet, join: bool = True, layer: int = 0) -> bool:
        """Append a draw; it joins the previous command when nothing comes
        between them, their triangles carry the same inputs, go to the same
        ``layer`` and ``join`` allows it (one command for many draws saves
        the rasterizer per-command work in every band): as one more part
        shaded with the command's state when no fragment-visible state tells
        them apart, otherwise as a part with a state of its own (a
        multi-state command).  Returns whether it was joined.  ``state``
        decides what "alike" means (``state.shades_like(other)``:
        workers/fragment.py)."""
        if tris.count == 0:
            return False
        if layer:
            self.layer_targets(layer)
        self.triangles += tris.count
        last = self._joinable(tris, layer) if join else None
        if last is None:
            self.commands.append(DrawCmd(state, [tris], layer=layer))
            return False
        if last.states is None and (last.state is state or state.shades_like(last.state)):
            last.parts.append(tris)
            return True
        if not MULTISTATE or self.samples > 1:  # (workers/msaa.py: one state a command)
            self.commands.append(DrawCmd(state, [tris], layer=layer))
            return False
        index = last.state_index(state)
        last.parts.append(tris)
        last.part_states.append(index)
        return True

    def add_draws(
        self, states: list, tris: TriangleSet, tri_state: np.ndarray, layer: int = 0
    ) -> bool:
        """Append the triangles of consecutive draws with different states:
        ``states[tri_state[t]]`` shades triangle t (triangles in submission
        order), on ``layer``.  The same as adding each draw's triangles in
        turn.  Returns whether they joined the previous command."""
        if tris.count == 0:
            return False
        if not MULTISTATE or self.samples > 1:  # draw by draw (runs of one state)
            cuts = (np.flatnonzero(tri_state[1:] != tri_state[:-1]) + 1).tolist()
            joined = []
            for a, b in zip([0, *cuts], [*cuts, tris.count]):
                part = select_triangles(tris, np.arange(a, b))
                joined.append(self.add_draw(states[int(tri_state[a])], part, layer=layer))
            return joined[0]
        if layer:
            self.layer_targets(layer)
        self.triangles += tris.count
        last = self._joinable(tris, layer)
        joined = last is not None
        if last is None:
            last = DrawCmd(states[0], [], layer=layer)
            last.states, last.part_states = [states[0]], []
            self.commands.append(last)
        remap = np.array([last.state_index(s) for s in states], np.int32)
        last.parts.append(tris)
        last.part_states.append(remap[tri_state])
        return joined

    def _joinable(self, tris: TriangleSet, layer: int = 0) -> DrawCmd | None:
        """The last command, when a draw of ``tris`` on ``layer`` may join it."""
        last = self.commands[-1] if self.commands else None
        if (
            isinstance(last, DrawCmd)
            and last.layer == layer
            and last.parts
            and last.parts[0].inputs.shape[1:] == tris.inputs.shape[1:]
            and np.array_equal(last.parts[0].perspective, tris.perspective)
            and (last.parts[0].zoffset is None) == (tris.zoffset is None)
            and last.parts[0].smooth == tris.smooth
        ):
            return last
        return None

    def finish_recording(self) -> None:
        """Join the draws, choose the bands, bin the draws (driver thread,
        before the scene is submitted)."""
        draws = [cmd for cmd in self.commands if isinstance(cmd, DrawCmd) and cmd.parts]
        for cmd in draws:
            cmd.join()
        if self.wants_narrow_bands():
            self._set_band_rows(narrow_band_height(self.width, self.height))
        for cmd in draws:
            cmd.finish(self.nbands, self.band_rows)

    def wants_narrow_bands(self) -> bool:
        """Whether the scene is mostly medium-sized triangles: their bounding
        boxes cover the framebuffer at least once and average at least
        NARROW_MIN_BOX_PIXELS pixels.  Their fragments' depth tests and
        colour stores scatter and gather all over a band's rows, which then
        stay in the L2 when a band is NARROW_BAND_PIXELS pixels: measured on
        the bench's medium scene (10,000 triangles of ~900 box pixels),
        frames alternating with 512-row bands: 2-8% faster on two workers
        (their band processes), 6-17% on one, and the same bytes.  Not for big triangles (the
        fill: each band's fixed costs and GIL hand-offs, 50% slower in
        8 bands; 16 blended layers 6-13%) nor tiny ones (100,000 triangles
        of ~20 box pixels: no faster, their cost is per triangle)."""
        draws = [cmd for cmd in self.commands if isinstance(cmd, DrawCmd) and cmd.tris is not None]
        if sum(cmd.tris.count for cmd in draws) * DENSE_MIN_PIXELS < self.width * self.height:
            return False  # too few triangles to cover it once (no numpy calls)
        small_px, small_n = 0.0, 0
        for cmd in draws:
            px, n, _ = cmd.box_pixels()
            small_px += px
            small_n += n
        return small_px >= self.width * self.height and small_px >= NARROW_MIN_BOX_PIXELS * small_n

    def _set_band_rows(self, rows: int) -> None:
        """Re-cut the bands (recording is over, nothing is binned yet)."""
        self.band_rows = rows
        self.nbands = max(1, -(-self.height // rows))
        for cmd in self.commands:
            if isinstance(cmd, MarkerCmd):
                cmd.band_ns = np.zeros(self.nbands, np.int64)

    # -- execution (the worker pool, through workers.job.SceneJob) ------------------

    def unit_failed(self, unit: int, exc: BaseException) -> None:
        where = f"a rasterizer worker (band {unit})" if unit >= 0 else "the worker pool"
        add_origin_note(exc, where)
        with self._error_lock:
            self.errors.append(exc)

    def complete(self) -> None:
        for cb in self.on_complete:
            try:
                cb(self)
            except BaseException as exc:  # pragma: no cover - defensive
                self.unit_failed(-1, exc)
        self.fence.signal()


def make_depth_target(
    resource: Any, level: int, layer: int, storage: np.ndarray, sample: int = 0
) -> DepthTarget:
    layout = depth_layout(resource.format)
    if layout.split:
        raw = resource.level_view(level, layer, 1, storage=storage, sample=sample)[0]
        words = raw[..., 0:4].view(np.float32)[..., 0]
        stencil = raw[..., 4]
        return DepthTarget(layout, words, stencil, resource)
    words = resource.typed_view(layout.word, 1, level, layer, storage=storage, sample=sample)
    return DepthTarget(layout, words, None, resource)


def make_color_target(
    resource: Any,
    level: int,
    layer: int,
    storage: np.ndarray,
    desc: FormatDesc | None = None,
    sample: int = 0,
) -> ColorTarget:
    """The target for one layer of a level (one sample of it), in ``desc``'s
    format (default: the resource's)."""
    desc = resource.desc if desc is None else desc
    raw = resource.level_view(level, layer, 1, storage=storage, sample=sample)[0]
    names = [c.name for c in desc.channels]
    if (
        desc.layout == "array"
        and all(c.bits == 8 and c.type == "UNORM" for c in desc.channels if c.name != "X")
        and len(names) == 4
        and set(names) <= {"R", "G", "B", "A", "X"}
    ):
        typed = resource.typed_view(np.uint8, 4, level, layer, storage=storage, sample=sample)
        perm = tuple(names.index(ch) if ch in names else -1 for ch in "RGBA")
        words = resource.typed_view(np.uint32, 1, level, layer, storage=storage, sample=sample)
        return ColorTarget(desc, raw, "unorm8", typed, perm, resource, words)
    if (
        desc.layout == "array"
        and all(c.type == "FLOAT" and c.bits == 32 for c in desc.channels)
        and set(names) <= {"R", "G", "B", "A"}
        and names == ["R", "G", "B", "A"][: len(names)]
    ):
        typed = resource.typed_view(
            np.float32, len(names), level, layer, storage=storage, sample=sample
        )
        if typed.ndim == 2:
            typed = typed[..., None]
        perm = tuple(range(len(names)))
        return ColorTarget(desc, raw, "float32", typed, perm, resource)
    return ColorTarget(desc, raw, "generic", None, (), resource)


def scene_error_source(scene: Scene) -> BaseException | None:
    with scene._error_lock:
        return scene.errors[0] if scene.errors else None
