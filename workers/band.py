"""Rasterize one band of a scene: its commands, in order.

``execute_band(scene, band)`` is what the worker pool (workers/job.py) and
the band processes (workers/bandproc.py) run for a unit.  It walks the
scene's commands in submission order and applies each to the band's rows:
clears (colour clears deferred to the band's next write of the target:
``ResidentColour``), timestamp markers, and draws -- a draw of one fragment
state through workers/raster.py, a multi-state command (many draws with
different fragment states) through workers/multistate.py, every draw of a
multisampled scene once per sample through workers/msaa.py.  A draw command
on a layer other than the first (a LAYER output chose it) draws into that
layer's targets (``layer_scene``).  Everything here runs on one worker thread
and touches only its own band of the framebuffer.
"""

from __future__ import annotations

import copy
import threading

from gallium.numpipe.scene import ClearCmd, DrawCmd, MarkerCmd, Scene

from .fragment import ResidentColour, fill_rows, set_resident_colour
from .msaa import draw_samples
from .multistate import draw_multistate
from .raster import _clear_depth_stencil, _draw

# Colour clears wait for the band's next write to the target, which may
# replace every byte (ResidentColour.defer_clear).
DEFER_CLEARS = True


def execute_band(scene: Scene, band: int) -> None:
    y0 = band * scene.band_rows
    y1 = min(scene.height, y0 + scene.band_rows)
    resident = ResidentColour()
    set_resident_colour(resident)
    # the one word every depth/stencil pixel of the band holds, while known
    # (after a clear that sets whole words, until a draw touches the band)
    zs_word: int | None = None
    try:
        for cmd in scene.commands:
            if isinstance(cmd, DrawCmd):
                ids = cmd.triangles_in_band(band)
                if ids.size:
                    target = scene
                    if cmd.layer:  # (zs_word is what the first layer's rows hold)
                        target, zs_word = layer_scene(scene, cmd.layer), None
                    if scene.samples > 1:  # one pass per sample (workers/msaa.py)
                        draw_samples(target, cmd, ids, y0, y1, band)
                    elif cmd.tri_state is None:
                        _draw(target, cmd, ids, y0, y1, band, zs_word)
                    else:
                        draw_multistate(target, cmd, ids, y0, y1, band, zs_word)
                    zs_word = None
            elif isinstance(cmd, ClearCmd) and cmd.rect is not None:
                zs_word = _clear_rect(scene, cmd, resident, y0, y1, zs_word)
            elif isinstance(cmd, ClearCmd):
                for index, packed in cmd.colors:
                    target = scene.cbufs[index]
                    if target is None:
                        continue
                    if DEFER_CLEARS:
                        resident.defer_clear(target, packed, y0, y1)
                    else:
                        resident.drop(target)
                        fill_rows(target.raw[y0:y1], packed)
                zs_word = _clear_depth_stencil(scene.zsbuf, cmd, y0, y1, zs_word)
                for target, packed in cmd.extra_colors:  # other layers and samples
                    if DEFER_CLEARS:
                        resident.defer_clear(target, packed, y0, y1)
                    else:
                        resident.drop(target)
                        fill_rows(target.raw[y0:y1], packed)
                for zs in cmd.extra_zs:
                    _clear_depth_stencil(zs, cmd, y0, y1)
            elif isinstance(cmd, MarkerCmd):
                resident.release_all()  # every command before it has landed
                cmd.run(band)
    finally:
        set_resident_colour(None)
        resident.release_all()


def _clear_rect(scene: Scene, cmd: ClearCmd, resident: ResidentColour, y0: int, y1: int, known):
    """A scissored clear: its rectangle's pixels in the band's rows, every
    target (the deferred clears and kept rectangles of the colour targets
    written out first).  Returns what the band's depth/stencil rows are known
    to hold after it (see _clear_depth_stencil)."""
    x0, ry0, x1, ry1 = cmd.rect
    ry0, ry1 = max(ry0, y0), min(ry1, y1)
    if ry0 >= ry1 or x0 >= x1:
        return known
    idx = (slice(ry0, ry1), slice(x0, x1))
    colours = [(scene.cbufs[i], packed) for i, packed in cmd.colors]
    for target, packed in [*colours, *cmd.extra_colors]:
        if target is None:
            continue
        resident.before_partial(target, idx)
        fill_rows(target.raw[idx], packed)
    cols = slice(x0, x1)
    known = _clear_depth_stencil(scene.zsbuf, cmd, ry0, ry1, known, cols)
    for zs in cmd.extra_zs:
        _clear_depth_stencil(zs, cmd, ry0, ry1, None, cols)
    return known


_views_lock = threading.Lock()


def layer_scene(scene: Scene, layer: int) -> Scene:
    """``scene`` with layer ``layer``'s targets as its framebuffer (made once
    per scene and layer; ``scene.layers`` holds the targets)."""
    views = scene.__dict__.get("_layer_views")
    if views is None:
        with _views_lock:
            views = scene.__dict__.setdefault("_layer_views", {})
    got = views.get(layer)
    if got is None:
        got = copy.copy(scene)
        for cached in ("_layer_views", "_sample_views", "_proc_blob"):
            got.__dict__.pop(cached, None)  # (the copy's own caches)
        got.cbufs, got.zsbuf, got.sample_cbufs, got.sample_zs = scene.layers[layer]
        with _views_lock:
            got = views.setdefault(layer, got)
    return got
