"""TraceContext: the recording ``pipe_context`` (see recorder.py for how recording works).

Every method forwards the call to the wrapped context unchanged, then appends
its record.  Before forwarding, the calls that read or write resources
*touch* them (``Recorder.touch``: contents named at a resource's first use in
a segment); the bound resources a draw or a grid uses are touched once per
segment and again only after a binding changes.  The hottest state calls are
written out by hand (a template snapshot inline, no generic dispatch): they
are what the recording-cost figure measures (bench/tc.py ``trace``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..pipe.enums import Clear, Flush, ShaderType, Transfer
from ..pipe.state import BlendColor, StencilRef
from . import calls, recorder
from . import snapshot as snap
from .calls import OPS
from .format import TEMPLATE_IDS
from .recorder import _OP_WRITE, Kwargs, ResInfo

_EOF = int(Flush.END_OF_FRAME)
_WRITE = int(Transfer.WRITE)
_PERSISTENT = int(Transfer.PERSISTENT)
_COMPUTE = int(ShaderType.COMPUTE)
_USER_BUFFERS = (bytes, bytearray, memoryview, np.ndarray)
_BLEND_COLOR = TEMPLATE_IDS[BlendColor]
_RECS = 256  # records kept for reuse per context (then forgotten, all at once)
_STENCIL_REF = TEMPLATE_IDS[StencilRef]


class TraceContext:
    """A ``pipe_context`` that records every call (module doc)."""

    def __init__(self, screen: Any, pipe: Any) -> None:
        tr = screen._tr
        self._tr = tr
        self._pend = tr.pend
        self._snap = tr.snap
        self._objs = tr.objs
        self._pipe = self._inner = pipe
        self.screen = screen
        self._tid = tr.register(self, "context").tid
        self._limit = tr.pending_calls_limit
        self._recs: dict[int, tuple] = {}  # records of the hottest calls, for reuse
        # the wrapped context's hottest methods, bound once
        self._f_set_blend_color = pipe.set_blend_color
        self._f_set_stencil_ref = pipe.set_stencil_ref
        self._f_set_sample_mask = pipe.set_sample_mask
        self._f_bind_blend_state = pipe.bind_blend_state
        self._f_bind_depth_stencil_alpha_state = pipe.bind_depth_stencil_alpha_state
        self._f_bind_rasterizer_state = pipe.bind_rasterizer_state
        self._f_bind_vs_state = pipe.bind_vs_state
        self._f_bind_fs_state = pipe.bind_fs_state
        self._f_bind_vertex_elements_state = pipe.bind_vertex_elements_state
        self._masks: dict[int, tuple] = {}
        # resources bound for draws and grids: key -> (ResInfo, written, compute stage)
        self._bound: dict[Any, tuple[ResInfo, bool, bool]] = {}
        self._draw_seg = -1  # segment in which the bound resources were last touched by a draw
        self._grid_seg = -1
        self._outputs: list[tuple[ResInfo, bool, int]] = []  # fb: (res, full-size, clear bits)
        self._render_cond = False
        self._window_rects = False
        self._maps: dict[int, Any] = {}  # id(transfer) -> mapped data (written at unmap)
        # open persistent mappings for writing: [transfer, data, bytes last recorded,
        # the resource's info, whether the mapping covers the whole resource]
        self._persistent: list[list] = []
        # bindless handles this context made: handle -> (ResInfo or None, image?)
        self._handles: dict[int, tuple[ResInfo | None, bool]] = {}

    # ------------------------------------------------------------------ helpers

    def _res(self, res: Any) -> ResInfo | None:
        info = self._tr.objs.get(id(res))
        if info is not None:
            return info.res
        return self._tr.resource_info(self, res)

    def _touch(self, res: Any, write: bool, full: bool = False) -> None:
        info = self._res(res)
        if info is not None:
            self._tr.touch(self, info, write, full)

    def _touch_bound(self, compute: bool) -> None:
        tr = self._tr
        for info, write, stage_compute in list(self._bound.values()):
            if stage_compute == compute:
                tr.touch(self, info, write)
        if compute:
            self._grid_seg = tr.segment
        else:
            self._draw_seg = tr.segment

    def _bind(self, key: Any, res: Any, write: bool, compute: bool = False) -> None:
        info = self._res(res) if res is not None else None
        if info is None:
            self._bound.pop(key, None)
            return
        self._bound[key] = (info, write, compute)
        if compute:
            self._grid_seg = -1
        else:
            self._draw_seg = -1

    def _persistent_writes(self) -> None:
        """Record what the application wrote through persistent mappings since the last
        look (before the work that may read it).  The write is a touch of the resource
        like any other: its contents are named first if this segment has not used it
        yet (read now, they hold the new bytes in the mapped box, which the write then
        puts there again, and the old ones elsewhere: the state at this point)."""
        for entry in self._persistent:
            xfer, data, last, info, full = entry
            now = np.ascontiguousarray(data).tobytes()
            if now != last:
                entry[2] = now
                if info is not None:
                    self._tr.touch(self, info, True, full)
                self._pend.append((_OP_WRITE, self._tid, (self._snap.value(xfer), now), None))

    def _record(self, name: str, args: tuple, result: Any = None) -> None:
        snap_ = self._snap
        self._pend.append((OPS[name], self._tid, snap_.args(args), snap_.value(result)))
        tr = self._tr
        if len(self._pend) >= self._limit or tr.pending_bytes >= tr.pending_bytes_limit:
            tr.drain()

    def _data(self, data: Any) -> Any:
        self._tr.pending_bytes += snap.nbytes(data)
        return data

    # ------------------------------------------------------------------ hot state calls

    # The hottest state calls record flat tuples of plain values (see recorder.FLAT_*):
    # the garbage collector stops tracking those at once, as it does not nested ones.
    # A call repeated with the same argument object (a CSO bound again, the same colour
    # tuple, the same mask) appends the very record it appended before: nothing is
    # allocated or kept per call (``self._recs``: id of the argument + a per-method
    # number, 0-7, below the 16 that separate two objects' ids -> (record, argument),
    # the argument held so that its id stays its own).
    # They are written out in full: this is the recording cost that bench.tc's trace
    # figure measures against the threaded context's own call.

    def _remember(self, key: int, rec: tuple, arg: Any) -> tuple:
        recs = self._recs
        if len(recs) >= _RECS:
            recs.clear()
        recs[key] = (rec, arg)
        return rec

    def set_blend_color(self, color):
        self._f_set_blend_color(color)
        pend = self._pend
        if type(color) is BlendColor:
            c = color.color
            hit = self._recs.get(id(c))
            if hit is not None:
                pend.append(hit[0])
            elif type(c) is tuple:
                pend.append(
                    self._remember(id(c), (_FLAT_BLEND_COLOR, self._tid, _BLEND_COLOR, *c), c)
                )
            else:
                pend.append((_FLAT_BLEND_COLOR, self._tid, _BLEND_COLOR, *c))
        else:
            pend.append((_OP_SET_BLEND_COLOR, self._tid, (self._snap.value(color),), None))
        if len(pend) >= self._limit:
            self._tr.drain()

    def set_stencil_ref(self, ref):
        self._f_set_stencil_ref(ref)
        pend = self._pend
        if type(ref) is StencilRef:
            v = ref.ref_value
            hit = self._recs.get(id(v) + 7)
            if hit is not None:
                pend.append(hit[0])
            elif type(v) is tuple:
                pend.append(
                    self._remember(id(v) + 7, (_FLAT_STENCIL_REF, self._tid, _STENCIL_REF, *v), v)
                )
            else:
                pend.append((_FLAT_STENCIL_REF, self._tid, _STENCIL_REF, *v))
        else:
            pend.append((_OP_SET_STENCIL_REF, self._tid, (self._snap.value(ref),), None))
        if len(pend) >= self._limit:
            self._tr.drain()

    def set_sample_mask(self, mask):
        self._f_set_sample_mask(mask)
        pend = self._pend
        hit = self._masks.get(mask)
        if hit is None:
            hit = (_FLAT_SAMPLE_MASK, self._tid, mask)
            if type(mask) is int and len(self._masks) < _RECS:
                self._masks[mask] = hit
        pend.append(hit)
        if len(pend) >= self._limit:
            self._tr.drain()

    def _bind_record(self, flat: int, key: int, cso: Any) -> tuple:
        info = self._objs.get(id(cso))
        if info is not None:
            return self._remember(key, (flat, self._tid, info.tid), cso)
        if cso is None:
            return (flat, self._tid, 0)
        # a CSO this recorder did not see made: recorded as it is
        return (flat - recorder.FLAT_REF, self._tid, (self._snap.value(cso),), None)

    def bind_blend_state(self, cso):
        self._f_bind_blend_state(cso)
        key = id(cso) + 1
        hit = self._recs.get(key)
        pend = self._pend
        pend.append(hit[0] if hit is not None else self._bind_record(_FLAT_BIND_BLEND, key, cso))
        if len(pend) >= self._limit:
            self._tr.drain()

    def bind_depth_stencil_alpha_state(self, cso):
        self._f_bind_depth_stencil_alpha_state(cso)
        key = id(cso) + 2
        hit = self._recs.get(key)
        pend = self._pend
        pend.append(hit[0] if hit is not None else self._bind_record(_FLAT_BIND_DSA, key, cso))
        if len(pend) >= self._limit:
            self._tr.drain()

    def bind_rasterizer_state(self, cso):
        self._f_bind_rasterizer_state(cso)
        key = id(cso) + 3
        hit = self._recs.get(key)
        pend = self._pend
        pend.append(hit[0] if hit is not None else self._bind_record(_FLAT_BIND_RAST, key, cso))
        if len(pend) >= self._limit:
            self._tr.drain()

    def bind_vs_state(self, cso):
        self._f_bind_vs_state(cso)
        key = id(cso) + 4
        hit = self._recs.get(key)
        pend = self._pend
        pend.append(hit[0] if hit is not None else self._bind_record(_FLAT_BIND_VS, key, cso))
        if len(pend) >= self._limit:
            self._tr.drain()

    def bind_fs_state(self, cso):
        self._f_bind_fs_state(cso)
        key = id(cso) + 5
        hit = self._recs.get(key)
        pend = self._pend
        pend.append(hit[0] if hit is not None else self._bind_record(_FLAT_BIND_FS, key, cso))
        if len(pend) >= self._limit:
            self._tr.drain()

    def bind_vertex_elements_state(self, cso):
        self._f_bind_vertex_elements_state(cso)
        key = id(cso) + 6
        hit = self._recs.get(key)
        pend = self._pend
        pend.append(hit[0] if hit is not None else self._bind_record(_FLAT_BIND_VE, key, cso))
        if len(pend) >= self._limit:
            self._tr.drain()

    # ------------------------------------------------------------------ bindings of resources

    def set_framebuffer_state(self, state):
        self._pipe.set_framebuffer_state(state)
        for key in [k for k in self._bound if k[0] == "fb"]:
            del self._bound[key]
        outputs = []
        for i, surf in enumerate([*state.cbufs, state.zsbuf]):
            sinfo = self._tr.objs.get(id(surf)) if surf is not None else None
            if sinfo is None or sinfo.res is None:
                continue
            info = sinfo.res
            zs = i == len(state.cbufs)
            self._bound["fb", i] = (info, True, False)
            b = info.boxes[0]
            full = info.single and (state.width, state.height) == (b.width, b.height)
            if zs:
                bits = (int(Clear.DEPTH) if info.depth else 0) | (
                    int(Clear.STENCIL) if info.stencil else 0
                )
            else:
                bits = int(Clear.COLOR0) << i
            outputs.append((info, full, bits))
        self._outputs = outputs
        self._draw_seg = -1
        self._record("set_framebuffer_state", ((state),))

    def set_vertex_buffers(self, start_slot, buffers):
        self._pipe.set_vertex_buffers(start_slot, buffers)
        for i, vb in enumerate(buffers):
            buf = getattr(vb, "buffer", None) if vb is not None else None
            if buf is None or isinstance(buf, _USER_BUFFERS):
                self._bound.pop(("vb", start_slot + i), None)
                self._tr.pending_bytes += snap.nbytes(buf)
            else:
                self._bind(("vb", start_slot + i), buf, False)
        self._record("set_vertex_buffers", (start_slot, (list(buffers))))

    def set_constant_buffer(self, shader, index, cb):
        self._pipe.set_constant_buffer(shader, index, cb)
        buf = getattr(cb, "buffer", None) if cb is not None else None
        key = ("cb", int(shader), index)
        if buf is not None:
            self._bind(key, buf, False, int(shader) == _COMPUTE)
        elif key in self._bound:
            del self._bound[key]
        user = getattr(cb, "user_buffer", None) if cb is not None else None
        if user is not None:
            self._tr.pending_bytes += snap.nbytes(user)
        self._record("set_constant_buffer", (shader, index, (cb)))

    def set_sampler_views(self, shader, start, views):
        self._pipe.set_sampler_views(shader, start, views)
        objs = self._tr.objs
        compute = int(shader) == _COMPUTE
        for i, view in enumerate(views):
            vinfo = objs.get(id(view)) if view is not None else None
            key = ("view", int(shader), start + i)
            if vinfo is None or vinfo.res is None:
                self._bound.pop(key, None)
            else:
                self._bound[key] = (vinfo.res, False, compute)
                self._draw_seg = self._grid_seg = -1
        self._record("set_sampler_views", (shader, start, list(views)))

    def set_shader_buffers(self, shader, start, buffers):
        self._pipe.set_shader_buffers(shader, start, buffers)
        compute = int(shader) == _COMPUTE
        for i, b in enumerate(buffers):
            self._bind(("ssbo", int(shader), start + i), getattr(b, "buffer", None), True, compute)
        self._record("set_shader_buffers", (shader, start, (list(buffers))))

    def set_shader_images(self, shader, start, images):
        self._pipe.set_shader_images(shader, start, images)
        compute = int(shader) == _COMPUTE
        for i, v in enumerate(images):
            self._bind(
                ("image", int(shader), start + i), getattr(v, "resource", None), True, compute
            )
        self._record("set_shader_images", (shader, start, (list(images))))

    def set_stream_output_targets(self, targets, offsets):
        self._pipe.set_stream_output_targets(targets, offsets)
        for key in [k for k in self._bound if k[0] == "so"]:
            del self._bound[key]
        for i, t in enumerate(targets):
            tinfo = self._tr.objs.get(id(t)) if t is not None else None
            if tinfo is not None and tinfo.res is not None:
                self._bound["so", i] = (tinfo.res, True, False)
        self._draw_seg = -1
        self._record("set_stream_output_targets", (list(targets), (list(offsets))))

    def set_global_binding(self, first, count, resources, handles):
        self._pipe.set_global_binding(first, count, resources, handles)
        for i in range(count):
            res = None if resources is None else resources[i]
            self._bind(("global", first + i), res, True, True)
        # (the handles as the driver left them: a replay writes its own copies)
        res = None if resources is None else list(resources[:count])
        hs = None if handles is None else [None if h is None else h.copy() for h in handles[:count]]
        self._record("set_global_binding", (first, count, res, hs))

    def render_condition(self, query, condition=False, mode=0):
        self._pipe.render_condition(query, condition, mode)
        self._render_cond = query is not None
        self._record("render_condition", (query, condition, mode))

    def set_window_rectangles(self, include, rects):
        self._pipe.set_window_rectangles(include, rects)
        self._window_rects = bool(include) or len(rects) > 0
        self._record("set_window_rectangles", (include, (list(rects))))

    # ------------------------------------------------------------------ work

    def draw_vbo(self, info):
        tr = self._tr
        if self._draw_seg != tr.segment:
            self._touch_bound(False)
        index = info.index
        if index is not None and info.index_size:
            if id(index) in tr.objs:
                self._touch(index, False)
            else:
                tr.pending_bytes += snap.nbytes(index)
        indirect = info.indirect
        if indirect is not None:
            for b in (
                getattr(indirect, "buffer", None),
                getattr(indirect, "indirect_draw_count", None),
            ):
                if b is not None:
                    self._touch(b, False)
        if info.count_from_stream_output is not None:
            tr.broken = True  # the target's fill level is GPU state: not captured
        if self._persistent:
            self._persistent_writes()
        self._pipe.draw_vbo(info)
        tr.renders = True
        self._pend.append((_OP_DRAW_VBO, self._tid, (self._snap.template(info),), None))
        if len(self._pend) >= self._limit or tr.pending_bytes >= tr.pending_bytes_limit:
            tr.drain()

    def clear(self, buffers, color=None, depth=1.0, stencil=0, scissor_state=None):
        tr = self._tr
        bits = int(buffers)
        whole = scissor_state is None and not self._render_cond and not self._window_rects
        for info, full_size, need in self._outputs:
            if bits & need:
                tr.touch(self, info, True, whole and full_size and bits & need == need)
        if self._persistent:
            self._persistent_writes()
        self._pipe.clear(buffers, color, depth, stencil, scissor_state)
        tr.renders = True
        self._record("clear", (buffers, (color), depth, stencil, (scissor_state)))

    def clear_render_target(
        self, dst, color, dstx, dsty, width, height, render_condition_enabled=False
    ):
        sinfo = self._tr.objs.get(id(dst))
        if sinfo is not None and sinfo.res is not None:
            self._tr.touch(self, sinfo.res, True, False)
        self._pipe.clear_render_target(
            dst, color, dstx, dsty, width, height, render_condition_enabled
        )
        self._tr.renders = True
        self._record(
            "clear_render_target",
            (dst, (color), dstx, dsty, width, height, render_condition_enabled),
        )

    def clear_depth_stencil(
        self,
        dst,
        clear_flags,
        depth,
        stencil,
        dstx,
        dsty,
        width,
        height,
        render_condition_enabled=False,
    ):
        sinfo = self._tr.objs.get(id(dst))
        if sinfo is not None and sinfo.res is not None:
            self._tr.touch(self, sinfo.res, True, False)
        self._pipe.clear_depth_stencil(
            dst, clear_flags, depth, stencil, dstx, dsty, width, height, render_condition_enabled
        )
        self._tr.renders = True
        self._record(
            "clear_depth_stencil",
            (dst, clear_flags, depth, stencil, dstx, dsty, width, height, render_condition_enabled),
        )

    def clear_buffer(self, resource, offset, size, value):
        info = self._res(resource)
        if info is not None:
            self._tr.touch(self, info, True, offset == 0 and size == info.width0 and info.single)
        self._pipe.clear_buffer(resource, offset, size, value)
        self._tr.renders = True
        self._record("clear_buffer", (resource, offset, size, self._data(value)))

    def clear_texture(self, resource, level, box, data):
        self._touch(resource, True)
        self._pipe.clear_texture(resource, level, box, data)
        self._tr.renders = True
        self._record("clear_texture", (resource, level, (box), self._data(data)))

    def resource_copy_region(self, dst, dst_level, dstx, dsty, dstz, src, src_level, src_box):
        self._touch(src, False)
        self._touch(dst, True)
        if self._persistent:
            self._persistent_writes()
        self._pipe.resource_copy_region(dst, dst_level, dstx, dsty, dstz, src, src_level, src_box)
        self._tr.renders = True
        self._record(
            "resource_copy_region",
            (dst, dst_level, dstx, dsty, dstz, src, src_level, (src_box)),
        )

    def blit(self, info):
        src = getattr(getattr(info, "src", None), "resource", None)
        dst = getattr(getattr(info, "dst", None), "resource", None)
        if src is not None:
            self._touch(src, False)
        if dst is not None:
            self._touch(dst, True)
        if self._persistent:
            self._persistent_writes()
        self._pipe.blit(info)
        self._tr.renders = True
        self._record("blit", ((info),))

    def get_query_result_resource(self, query, wait, result_type, index, resource, offset):
        self._touch(resource, True)
        self._pipe.get_query_result_resource(query, wait, result_type, index, resource, offset)
        self._record(
            "get_query_result_resource", (query, wait, result_type, index, resource, offset)
        )

    def launch_grid(self, info):
        tr = self._tr
        if self._grid_seg != tr.segment:
            self._touch_bound(True)
        indirect = getattr(info, "indirect", None)
        if indirect is not None:
            self._touch(indirect, False)
        if self._persistent:
            self._persistent_writes()
        self._pipe.launch_grid(info)
        tr.renders = True
        self._record("launch_grid", ((info),))

    def generate_mipmap(self, resource, format, base_level, last_level, first_layer, last_layer):
        self._touch(resource, True)
        ok = self._pipe.generate_mipmap(
            resource, format, base_level, last_level, first_layer, last_layer
        )
        self._tr.renders = True
        self._record(
            "generate_mipmap",
            (resource, format, base_level, last_level, first_layer, last_layer),
            (ok),
        )
        return ok

    def buffer_subdata(self, resource, usage, offset, data):
        info = self._res(resource)
        if info is not None:
            full = offset == 0 and snap.nbytes(data) >= info.width0 and info.single
            self._tr.touch(self, info, True, full)
        self._pipe.buffer_subdata(resource, usage, offset, data)
        self._record("buffer_subdata", (resource, usage, offset, self._data(data)))

    def texture_subdata(self, resource, level, usage, box, data, stride=0, layer_stride=0):
        info = self._res(resource)
        if info is not None:
            self._tr.touch(self, info, True, info.covers(level, box))
        self._pipe.texture_subdata(resource, level, usage, box, data, stride, layer_stride)
        self._record(
            "texture_subdata",
            (resource, level, usage, (box), self._data(data), stride, layer_stride),
        )

    # ------------------------------------------------------------------ transfers

    def _map_touch(self, resource, level, usage, box) -> None:
        if int(usage) & _WRITE:
            info = self._res(resource)
            if info is not None:
                self._tr.touch(self, info, True, info.covers(level, box))

    def _mapped(self, resource, level, usage, box, result):
        data, xfer = result
        if xfer is not None:
            self._tr.register(xfer, "transfer")
            if int(usage) & _WRITE:
                self._maps[id(xfer)] = data
                if int(usage) & _PERSISTENT:
                    info = self._res(resource)
                    full = info is not None and info.covers(level, box)
                    now = np.ascontiguousarray(data).tobytes()
                    self._persistent.append([xfer, data, now, info, full])
        self._record("transfer_map", (resource, level, usage, (box)), xfer)
        return result

    def transfer_map(self, resource, level, usage, box):
        self._map_touch(resource, level, usage, box)
        return self._mapped(
            resource, level, usage, box, self._pipe.transfer_map(resource, level, usage, box)
        )

    async def transfer_map_async(self, resource, level, usage, box):
        self._map_touch(resource, level, usage, box)
        result = await self._pipe.transfer_map_async(resource, level, usage, box)
        return self._mapped(resource, level, usage, box, result)

    def transfer_flush_region(self, transfer, box):
        self._pipe.transfer_flush_region(transfer, box)
        self._record("transfer_flush_region", (transfer, (box)))

    def transfer_unmap(self, transfer):
        data = self._maps.pop(id(transfer), None)
        payload = None
        if data is not None:
            payload = np.ascontiguousarray(data).tobytes()
            self._tr.pending_bytes += len(payload)
            self._persistent = [e for e in self._persistent if e[0] is not transfer]
        self._pipe.transfer_unmap(transfer)
        self._record("transfer_unmap", (transfer, payload))

    # ------------------------------------------------------------------ flush

    def flush(self, flags=0):
        tr = self._tr
        eof = bool(int(flags) & _EOF)
        boundary = eof or (tr.renders and not tr.eof_seen)
        if boundary:
            # what the frame shows: contents of its outputs even if it never touched them
            for info, _full, _bits in self._outputs:
                tr.touch(self, info, False)
        if self._persistent:
            self._persistent_writes()
        fence = self._pipe.flush(flags)
        if fence is not None:
            tr.register(fence, "fence")
        self._pend.append((_OP_FLUSH, self._tid, (flags,), self._snap.value(fence)))
        if boundary:
            tr.end_segment(self, eof)
        tr.drain()
        return fence

    def fence_finish(self, fence, timeout_ns):
        ok = self._pipe.fence_finish(fence, timeout_ns)
        self._record("fence_finish", (fence, timeout_ns), ok)
        return ok

    # ------------------------------------------------------------------ queries (answers recorded)

    def get_query_result(self, query, wait=True):
        result = self._pipe.get_query_result(query, wait)
        self._record("get_query_result", (query, wait), (result))
        return result

    async def get_query_result_async(self, query):
        result = await self._pipe.get_query_result_async(query)
        self._record("get_query_result", (query, True), (result))
        return result

    # ------------------------------------------------------------------ creation

    def _create(self, name: str, obj: Any, args: tuple, res: Any = None) -> Any:
        info = self._res(res) if res is not None else None
        self._tr.register(obj, name, info)
        self._record(name, args, obj)
        return obj

    def create_surface(self, resource, templ):
        surf = self._pipe.create_surface(resource, templ)
        return self._create(
            "create_surface", surf, (resource, self._snap.template(templ)), resource
        )

    def create_sampler_view(self, resource, templ):
        view = self._pipe.create_sampler_view(resource, templ)
        return self._create(
            "create_sampler_view", view, (resource, self._snap.template(templ)), resource
        )

    def create_stream_output_target(self, resource, buffer_offset, buffer_size):
        t = self._pipe.create_stream_output_target(resource, buffer_offset, buffer_size)
        return self._create(
            "create_stream_output_target", t, (resource, buffer_offset, buffer_size), resource
        )

    def create_query(self, query_type, index=0):
        q = self._pipe.create_query(query_type, index)
        return self._create("create_query", q, (query_type, index))

    def create_vertex_elements_state(self, elements):
        cso = self._pipe.create_vertex_elements_state(elements)
        return self._create(
            "create_vertex_elements_state", cso, (self._snap.value(list(elements)),)
        )

    # ------------------------------------------------------------------ bindless handles

    # A handle is a number the application writes into buffers that shaders read: it is
    # recorded as the call's result, and the replay checks that it makes the same one
    # (replay.py).  A resident handle's resource is used by every draw and grid, as a
    # bound view or image is: it joins the bound resources touched by draws and grids
    # (its contents named at its first use in a segment) until it stops being resident.

    def create_texture_handle(self, view, state):
        vinfo = self._tr.objs.get(id(view))
        handle = self._pipe.create_texture_handle(view, state)
        self._handles[handle] = (vinfo.res if vinfo is not None else None, False)
        self._record("create_texture_handle", (view, self._snap.value(state)), handle)
        return handle

    def create_image_handle(self, image):
        res = getattr(image, "resource", None)
        info = self._res(res) if res is not None else None  # (adopted before the record)
        handle = self._pipe.create_image_handle(image)
        self._handles[handle] = (info, True)
        self._record("create_image_handle", (self._snap.value(image),), handle)
        return handle

    def _resident(self, handle: int, resident: bool) -> None:
        info, image = self._handles.get(handle, (None, False))
        for compute in (False, True):
            key = ("handle", handle, compute)
            if resident and info is not None:
                self._bound[key] = (info, image, compute)  # an image handle's may be written
            else:
                self._bound.pop(key, None)
        if resident:
            self._draw_seg = self._grid_seg = -1

    def delete_texture_handle(self, handle):
        self._pipe.delete_texture_handle(handle)
        self._resident(handle, False)
        self._handles.pop(handle, None)
        self._record("delete_texture_handle", (handle,))

    def delete_image_handle(self, handle):
        self._pipe.delete_image_handle(handle)
        self._resident(handle, False)
        self._handles.pop(handle, None)
        self._record("delete_image_handle", (handle,))

    def make_texture_handle_resident(self, handle, resident):
        self._pipe.make_texture_handle_resident(handle, resident)
        self._resident(handle, bool(resident))
        self._record("make_texture_handle_resident", (handle, resident))

    def make_image_handle_resident(self, handle, access, resident):
        self._pipe.make_image_handle_resident(handle, access, resident)
        self._resident(handle, bool(resident))
        self._record("make_image_handle_resident", (handle, access, resident))

    def destroy(self):
        self._tr.drain()
        self._pipe.destroy()
        self._record("destroy", ())
        self._tr.drain()

    def __getattr__(self, name: str) -> Any:
        # non-contract attributes of the wrapped context (threaded stats, ready_async...)
        if name.startswith("__") or name in ("_pipe", "_inner", "_tr"):
            raise AttributeError(name)
        return getattr(self._pipe, name)

    def __repr__(self) -> str:
        return f"<TraceContext over {self._pipe!r}>"


def _create_method(name: str):
    op = OPS[name]

    def method(self, state):
        cso = getattr(self._pipe, name)(state)
        self._tr.register(cso, name)
        snap_ = self._snap
        self._pend.append((op, self._tid, (snap_.value(state),), snap_.value(cso)))
        return cso

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``{name}``: forwarded, the new object registered, recorded."
    return method


def _plain_method(name: str):
    op = OPS[name]

    def method(self, *args, **kw):
        result = getattr(self._pipe, name)(*args, **kw)
        a = self._snap.args(args)
        if kw:
            a = (*a, Kwargs({k: self._snap.value(v) for k, v in kw.items()}))
        self._pend.append((op, self._tid, a, self._snap.value(result)))
        if len(self._pend) >= self._limit:
            self._tr.drain()
        return result

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``{name}``: forwarded and recorded."
    return method


for _name, _kind in calls.CONTEXT_METHODS.items():
    if _name in TraceContext.__dict__:
        continue
    if _kind == calls.CREATE:
        setattr(TraceContext, _name, _create_method(_name))
    else:
        setattr(TraceContext, _name, _plain_method(_name))
# Mesa's C names of the CSO destroyers (``delete_*_state``): the same calls, recorded so
for _name in calls.CONTEXT_METHODS:
    if _name.startswith("destroy_") and _name.endswith("_state"):
        setattr(TraceContext, "delete_" + _name[len("destroy_") :], getattr(TraceContext, _name))

_OP_SET_BLEND_COLOR = OPS["set_blend_color"]
_OP_SET_STENCIL_REF = OPS["set_stencil_ref"]
_OP_SET_SAMPLE_MASK = OPS["set_sample_mask"]
_FLAT_BLEND_COLOR = recorder.FLAT_TEMPLATE + _OP_SET_BLEND_COLOR
_FLAT_STENCIL_REF = recorder.FLAT_TEMPLATE + _OP_SET_STENCIL_REF
_FLAT_SAMPLE_MASK = recorder.FLAT_VALUES + _OP_SET_SAMPLE_MASK
_FLAT_BIND_BLEND = recorder.FLAT_REF + OPS["bind_blend_state"]
_FLAT_BIND_DSA = recorder.FLAT_REF + OPS["bind_depth_stencil_alpha_state"]
_FLAT_BIND_RAST = recorder.FLAT_REF + OPS["bind_rasterizer_state"]
_FLAT_BIND_VS = recorder.FLAT_REF + OPS["bind_vs_state"]
_FLAT_BIND_FS = recorder.FLAT_REF + OPS["bind_fs_state"]
_FLAT_BIND_VE = recorder.FLAT_REF + OPS["bind_vertex_elements_state"]
_OP_DRAW_VBO = OPS["draw_vbo"]
_OP_FLUSH = OPS["flush"]
