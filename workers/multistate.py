"""Multi-state commands: many draws with different fragment states, one command.

Theory of operation
-------------------
A scene joins consecutive draws whose triangles carry the same inputs into
one command even when their fragment states differ (gallium/numpipe/scene.py
``DrawCmd.states``; ``tri_state[t]`` names triangle t's state).  A band's
triangles of such a command come in submission order, each with its state.

When every state the band meets is one whose fragments' fates are decided by
the depth test alone (early depth: no stencil, alpha test, KILL or depth
output, nothing that reads the destination but blending; depth writes on;
LESS, LEQUAL, GREATER or GEQUAL, the same for all), none takes derivatives,
the depth buffer holds integer depth, and every triangle is small (the
sparse path), the band's fragments are resolved all at once:

1. every fragment -- one per covered pixel of every triangle, in submission
   order -- with its depth in the buffer's quantized form;
2. the fragments sorted by pixel, stably (two 16-bit radix passes), so each
   pixel's fragments stand in submission order;
3. a running minimum (maximum) over each pixel's depths, starting from the
   buffer's, gives every fragment's fate: exactly the sequential depth test
   with depth writes.  The last value is the pixel's new depth;
4. a pixel's colour depends only on its last passing fragment whose state
   *replaces* the colour (no blending, every channel of every buffer
   written) and the passing fragments after it.  Only those are shaded and
   written, in rounds: round k writes every pixel's k-th such fragment,
   shaded and blended by its own state, onto what round k-1 left.  States
   that differ only in their constants (a colour uniform set per draw) are
   shaded by one kernel call that reads each lane's constants from its own
   state (gallium.tgsi.runtime.LaneConstants) and written by one call.

Every fragment meets the same depth test, and every pixel the same writes in
the same order, as when each draw is rasterized after the previous one, so
the bytes are the same; occlusion counters count every passing fragment of
their state.  Otherwise the band's triangles go run by run of equal state
through the single-state rasterizer (workers/raster.py), each run exactly as
a command of its own.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from gallium.numpipe.scene import DENSE_MIN_PIXELS
from gallium.tgsi.runtime import lane_constant_buffers

from .fragment import same_but_constants, target_run
from .raster import (
    _MAX_FUNCS,
    _MIN_FUNCS,
    _colour_writes,
    _draw,
    _expand,
    _PixelGeom,
    _quantized,
    _row_spans,
    _shade,
    _winners_layout,
)

# Depth keys of different pixels are kept apart by this much in the running
# minimum (quantized depths are below 2**31: _winners_layout).
_SEGMENT = np.int64(1) << 32


class _Run:
    """A run of a multi-state command's triangles with one state: what
    workers.raster._draw reads of a command."""

    __slots__ = ("state", "tris")

    def __init__(self, state: Any, tris: Any) -> None:
        self.state = state
        self.tris = tris


def draw_multistate(scene, cmd, ids: np.ndarray, y0: int, y1: int, band: int, zs_word=None):
    """Rasterize the multi-state command's triangles ``ids`` in the band's
    rows y0..y1 - 1 (``zs_word``: as workers.raster._draw takes it)."""
    tstate = np.take(cmd.tri_state, ids)
    if _all_at_once(scene, cmd, ids, tstate, y0, y1):
        _resolve(scene, cmd, ids, y0, y1)
        return
    cuts = (np.flatnonzero(tstate[1:] != tstate[:-1]) + 1).tolist()
    known = zs_word  # (the band's words are known only to the first run)
    for a, b in zip([0, *cuts], [*cuts, ids.size]):
        run = _Run(cmd.states[int(tstate[a])], cmd.tris)
        _draw(scene, run, ids[a:b], y0, y1, band, known)
        known = None


def _all_at_once(scene, cmd, ids, tstate, y0: int, y1: int) -> bool:
    zs = scene.zsbuf
    if zs is None or not _winners_layout(zs):
        return False
    used = np.unique(tstate).tolist()
    ok = cmd.__dict__.setdefault("_state_ok", {})
    first = cmd.states[used[0]]
    d0 = first.dsa.depth
    for s in used:
        st = cmd.states[s]
        good = ok.get(s)
        if good is None:
            good = ok[s] = _resolvable(st)
        d = st.dsa.depth
        if not good or d.func != d0.func or st.depth_clamp != first.depth_clamp:
            return False
    bb = cmd.tris.bbox[ids]
    rows = np.minimum(bb[:, 3], y1 - 1) - np.maximum(bb[:, 1], y0) + 1
    area = (bb[:, 2] - bb[:, 0] + 1).astype(np.int64) * rows
    return bool((area < DENSE_MIN_PIXELS).all())


def _resolvable(state) -> bool:
    """A state whose fragments the depth test alone decides (see the module doc)."""
    d = state.dsa.depth
    f = int(d.func)
    return bool(
        state.early_z
        and not state.needs_quads
        and d.writemask
        and (f in _MIN_FUNCS or f in _MAX_FUNCS)
        and not state.sample_mask_zero
        and state.logicop is None
        and state.memory is None  # (shader memory: every fragment in its own order)
        and not state.early_tests
        and state.smooth is None
        and not state.kernel.uses_fbfetch
    )


def _replaces(state, scene) -> bool:
    """Whether a fragment of ``state`` leaves nothing of the colour before it."""
    if state.blend_enabled or state.logicop is not None:
        return False
    for i, target in enumerate(scene.cbufs):
        if target is None:
            continue
        if i >= len(state.color_outputs) or state.color_outputs[i] is None:
            return False
        if (int(state.blend[i].colormask) & 0xF) != 0xF:
            return False
    return True


def radix_order(key: np.ndarray) -> np.ndarray:
    """The stable sorting permutation of non-negative keys below 2**32: two
    16-bit radix passes (numpy's stable sort of 16-bit integers is a radix
    sort, several times faster than its sort of wider ones)."""
    o = np.argsort((key & 0xFFFF).astype(np.uint16), kind="stable")
    if int(key.max(initial=0)) < (1 << 16):
        return o
    hi = np.take(key, o) >> 16
    return np.take(o, np.argsort(hi.astype(np.uint16), kind="stable"))


def _resolve(scene, cmd, ids: np.ndarray, y0: int, y1: int) -> None:
    ts = cmd.tris
    states = cmd.states
    bb = ts.bbox[ids].astype(np.int64)
    ya = np.maximum(bb[:, 1], y0)
    yb = np.minimum(bb[:, 3], y1 - 1)
    pk, y, xl, xr = _row_spans(ts, ids, ya, yb, bb[:, 0], bb[:, 2])
    count = np.maximum(xr - xl + 1, 0)
    if not count.any():
        return
    owner, px = _expand(xl, count)
    py = np.take(y, owner)
    tri = np.take(np.take(ids, pk), owner)
    n = px.size
    geom = _PixelGeom(px, py, tri)
    z = geom.depth(ts)
    first_state = states[int(cmd.tri_state[ids[0]])]
    zs = scene.zsbuf
    layout = zs.layout
    zq = _quantized(first_state, layout, z, n)
    use_min = int(first_state.dsa.depth.func) in _MIN_FUNCS
    or_equal = _MIN_FUNCS.get(
        int(first_state.dsa.depth.func), _MAX_FUNCS.get(int(first_state.dsa.depth.func))
    )
    run, rw = target_run(zs)
    base = y0 * rw
    key = py - y0
    key *= rw
    key += px  # the band's word of each fragment
    order = radix_order(key)
    ks = np.take(key, order)
    starts = np.empty(n, bool)
    starts[0] = True
    np.not_equal(ks[1:], ks[:-1], out=starts[1:])
    first = np.flatnonzero(starts)
    nseg = first.size
    sizes = np.diff(np.append(first, n))
    seg = np.repeat(np.arange(nseg, dtype=np.int64), sizes)
    # the pixels' words and stored depths
    flat = np.take(ks, first)
    flat += base
    words = run[flat]
    stored = words >> np.asarray(layout.z_shift, words.dtype) if layout.z_shift else words
    if not layout.z_at_top:
        stored = stored & np.asarray((1 << layout.z_bits) - 1, words.dtype)
    stored = stored.astype(np.int64)
    # each pixel: its stored depth, then its fragments' depths, in order; a
    # running minimum over all of them (maximum: negated) with the pixels
    # kept apart by falling offsets
    m = n + nseg
    stored_at = first + np.arange(nseg)
    frag_at = np.arange(n, dtype=np.int64)
    frag_at += seg
    frag_at += 1
    v = np.empty(m, np.int64)
    sign = 1 if use_min else -1
    v[stored_at] = stored * sign
    v[frag_at] = np.take(zq, order) * sign
    offsets = np.repeat((nseg - np.arange(nseg, dtype=np.int64)) * _SEGMENT, sizes + 1)
    v += offsets
    cm = np.minimum.accumulate(v)
    mine = np.take(v, frag_at)
    before = np.take(cm, frag_at - 1)
    passed = mine <= before if or_equal else mine < before
    # new depths: the running value at each pixel's last fragment
    last_at = stored_at + sizes
    new = (np.take(cm, last_at) - np.take(offsets, last_at)) * sign
    new = new.astype(words.dtype)
    if layout.z_shift:
        new <<= np.asarray(layout.z_shift, words.dtype)
    if layout.s_bits:
        new |= words & np.asarray(layout.s_mask, words.dtype)
    run[flat] = new
    # occlusion counters: every passing fragment of their state
    fstate = np.take(np.take(cmd.tri_state, tri), order)  # per sorted fragment
    nstates = len(states)
    if any(s.counters for s in states):
        counts = np.bincount(fstate[passed], minlength=nstates)
        for s, st in enumerate(states):
            for counter in st.counters:
                counter.add(int(counts[s]))
    if not passed.any():
        return
    # the fragments that reach the colour: a pixel's last passing fragment
    # that replaces it, and the passing fragments after it
    replaces = cmd.__dict__.get("_replaces")
    if replaces is None:
        replaces = cmd.__dict__["_replaces"] = np.array([_replaces(st, scene) for st in states])
    j = np.arange(n, dtype=np.int64)
    cand = np.where(passed & np.take(replaces, fstate), j, -1)
    last_rep = np.maximum.reduceat(cand, first)
    live = passed & (j >= np.take(last_rep, seg))
    lj = np.flatnonzero(live)
    c = np.cumsum(live)
    before_seg = np.take(c, first) - np.take(live, first)
    rank = np.take(c, lj) - 1 - np.take(np.take(before_seg, seg), lj)
    frag = np.take(order, lj)  # the live fragments, by pixel
    lstate = np.take(fstate, lj)
    groups, group_of = _groups(cmd)
    lgroup = np.take(group_of, lstate)
    # the live fragments by (round, group), each run in pixel order: round by
    # round, group by group, one kernel call and one write per run
    rg = rank * len(groups)
    rg += lgroup
    by_run = radix_order(rg)
    rg = np.take(rg, by_run)
    cuts = (np.flatnonzero(rg[1:] != rg[:-1]) + 1).tolist()
    for a, b in zip([0, *cuts], [*cuts, rg.size]):
        pick = by_run[a:b]
        sel = np.take(frag, pick)
        members = groups[int(rg[a]) % len(groups)]
        st = states[members[0]]
        shader = st if len(members) == 1 else _lane_state(states, members, np.take(lstate, pick))
        sgeom = _PixelGeom(np.take(px, sel), np.take(py, sel), np.take(tri, sel))
        outputs, _, _ = _shade(shader, ts, sgeom, sel.size, None, None, np.take(z, sel))
        _colour_writes(scene, st, (sgeom.py, sgeom.px), False, None, outputs)


def _groups(cmd) -> tuple[list[list[int]], np.ndarray]:
    """The command's states in groups that differ only in their constants
    (workers.fragment.same_but_constants): each group's fragments are shaded
    by one kernel call and written by one call.  Made once per command."""
    got = cmd.__dict__.get("_groups")
    if got is None:
        states = cmd.states
        reps: list[int] = []
        groups: list[list[int]] = []
        group_of = np.empty(len(states), np.int32)
        for i, st in enumerate(states):
            for g, r in enumerate(reps):
                if same_but_constants(states[r], st):
                    groups[g].append(i)
                    group_of[i] = g
                    break
            else:
                reps.append(i)
                groups.append([i])
                group_of[i] = len(groups) - 1
        got = cmd.__dict__["_groups"] = (groups, group_of)
    return got


def _lane_state(states: list, members: list[int], lane_states: np.ndarray):
    """A copy of the group's first state whose constants each lane reads from
    its own state's (``lane_states``: the state of each lane)."""
    row = np.full(len(states), -1, np.int64)
    row[members] = np.arange(len(members))
    shader = copy.copy(states[members[0]])
    shader.consts = lane_constant_buffers(
        [states[m].consts for m in members], np.take(row, lane_states)
    )
    return shader
