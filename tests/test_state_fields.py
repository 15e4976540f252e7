"""Every field of the spec's rasterizer, blend, depth-stencil-alpha and
sampler states does something or is refused (issue 25, item 7).

Each field has a case below: a probe scene drawn with a base state and
again with the field changed, and what must follow --

- ``changes``: the output (colour, depth and stencil words, every sample)
  differs; the exact values are checked by the feature's own tests
  (tests/test_rasterizer_state.py, test_ff_reference.py's llvmpipe scenes,
  test_texture.py, test_msaa.py, ...), this one proves nothing is dropped;
- ``refused``: UnsupportedError at the create call, and the cap says 0;
- ``same``: the output is the base's, for the reason given -- the spec
  lets a driver ignore the field (``dither``), llvmpipe ignores it and
  numpipe follows llvmpipe's images (``poly_smooth``: the llvmpipe scene
  smooth_polygon_ignored in tests/test_ff_reference.py), or the field is
  read only under another field that is refused (``bounds_min``/``max``).

A field added to the state classes without a case fails
test_every_field_has_a_case.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from gallium import pipe
from gallium.pipe.errors import UnsupportedError

W = H = 16
T = pipe.TextureTarget
F = pipe.Format

VS = """VERT
DCL IN[0]
DCL IN[1]
DCL IN[2]
DCL OUT[0], POSITION
DCL OUT[1], COLOR
DCL OUT[2], BCOLOR
DCL OUT[3], GENERIC[0]
DCL OUT[4], PSIZE
IMM[0] FLT32 {1.0, 0.0, 0.5, 1.0}
IMM[1] FLT32 {5.0, 0.0, 0.0, 0.0}
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1], IN[1]
  2: MOV OUT[2], IMM[0]
  3: MOV OUT[3], IN[2]
  4: MOV OUT[4], IMM[1].xxxx
  5: END
"""
FS_COLOR = """FRAG
DCL IN[0], COLOR, COLOR
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""
FS_TWO = """FRAG
PROPERTY FS_COLOR0_WRITES_ALL_CBUFS 1
DCL IN[0], COLOR, COLOR
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""
FS_GENERIC = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""


def _fs_tex(target: str, op: str = "TEX") -> str:
    return f"""FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL SAMP[0]
DCL SVIEW[0], {target}, FLOAT
  0: {op} OUT[0], IN[0], SAMP[0], {target}
  1: END
"""


def _v(x, y, z=0.0, w=1.0, c=(1.0, 1.0, 1.0, 1.0), g=(0.0, 0.0, 0.0, 1.0)):
    return [x * w, y * w, z * w, w, *c, *g]


# triangles: one of each winding, colours beyond [0, 1] and alpha 0.75, depth
# crossing both planes
TRIS = [
    _v(-0.9, -0.9, -1.4, c=(1.6, -0.3, 0.2, 0.75)),
    _v(0.85, -0.7, 0.2, c=(0.1, 0.9, 0.4, 0.75)),
    _v(-0.6, 0.9, 0.5, c=(0.3, 0.2, 1.5, 0.75)),
    _v(0.9, 0.9, 1.4, c=(0.9, 0.5, 0.1, 0.75)),
    _v(0.7, -0.95, 0.3, c=(0.6, 0.1, 0.8, 0.75)),
    _v(-0.3, 0.1, 0.4, c=(0.2, 0.7, 0.9, 0.75)),
]
LINES = [
    _v(-0.87, -0.61, 0.2, c=(1.4, 0.2, 0.3, 0.75)),
    _v(0.81, 0.13, -0.3, c=(0.1, 0.8, 0.3, 0.75)),
    _v(-0.52, 0.88, 0.6, c=(0.2, 0.4, 0.9, 0.75)),
    _v(0.63, -0.83, 0.1, c=(0.9, 0.9, 0.2, 0.75)),
]
# window [2.5, 10.5] x [3.5, 11.5]: every edge through pixel centres
RECT = [
    _v(x / 8 - 1, y / 8 - 1, 0.2, c=(0.4, 0.8, 0.2, 0.75))
    for x, y in ((2.5, 3.5), (10.5, 3.5), (10.5, 11.5), (2.5, 3.5), (10.5, 11.5), (2.5, 11.5))
]
POINTS = [
    _v(-0.53, -0.47, 0.1, c=(1.0, 0.2, 0.3, 0.75)),
    _v(0.41, 0.37, -0.2, c=(0.2, 1.0, 0.3, 0.75)),
    _v(-1.02, 0.31, 0.0, c=(0.3, 0.2, 1.0, 0.75)),  # (centre just left of the viewport)
]


def _quad(s0, t0, s1, t1, r=0.5, q=1.0):
    corners = [(-1, -1, s0, t0), (1, -1, s1, t0), (1, 1, s1, t1), (-1, 1, s0, t1)]
    v = [_v(x, y, 0.0, g=(s, t, r, q)) for x, y, s, t in corners]
    return [v[0], v[1], v[2], v[0], v[2], v[3]]


# sampler probes: (texture kind, FS target, quad)
TEX = {
    "min": ("mips", "2D", _quad(-0.3, -0.2, 2.2, 1.9)),  # minified, wrapping
    "mag": ("mips", "2D", _quad(0.1, 0.15, 0.45, 0.5)),  # magnified
    "aniso": ("mips", "2D", _quad(0.0, 0.0, 6.0, 0.7)),  # squashed in s
    "texels": ("mips", "2D", _quad(0.0, 0.0, 3.0, 3.0)),  # unnormalized coordinates or not
    "3d": ("3d", "3D", _quad(0.1, 0.1, 0.9, 0.9, r=1.6)),  # r outside [0, 1]
    "cube": ("cube", "CUBE", _quad(-0.999, -0.999, 0.999, 0.999, r=1.0)),  # +Z face edges
    "shadow": ("depth", "SHADOW2D", _quad(0.0, 0.0, 1.0, 1.0, r=0.5)),
}


class Probe:
    """Draws the probe scenes with given states on a fresh target and
    returns what they wrote (colour, depth/stencil words, every sample)."""

    def __init__(self, screen, ctx):
        self.screen, self.ctx = screen, ctx

    def _target(self, fmt, bind, samples=1, w=W, h=H):
        return self.screen.resource_create(
            pipe.ResourceTemplate(
                target=T.TEXTURE_2D, format=fmt, width0=w, height0=h, nr_samples=samples,
                bind=bind,
            )
        )  # fmt: skip

    def _bytes(self, res) -> bytes:
        ctx = self.ctx
        if res.nr_samples > 1:
            ctx.flush().wait()
            return b"".join(
                res.typed_view(np.uint32, 1, sample=s).tobytes() for s in range(res.nr_samples)
            )
        box = pipe.Box(0, 0, 0, res.width0, res.height0, 1)
        data, xfer = ctx.transfer_map(res, 0, pipe.Transfer.READ, box)
        out = np.array(data[0]).tobytes()
        ctx.transfer_unmap(xfer)
        return out

    def draw(self, probe, rast=None, blend=None, dsa=None, sampler=None, extra=None) -> bytes:
        ctx = self.ctx
        extra = extra or {}
        samples = 4 if probe == "msaa" else 1
        cfmt = F.R8G8B8A8_UNORM if samples > 1 else F.R32G32B32A32_FLOAT
        ncb = 2 if probe == "two_rt" else 1
        cbufs = [self._target(cfmt, pipe.Bind.RENDER_TARGET, samples) for _ in range(ncb)]
        zs = None
        if samples == 1:
            zs = self._target(F.Z24_UNORM_S8_UINT, pipe.Bind.DEPTH_STENCIL)
        ctx.set_framebuffer_state(
            pipe.FramebufferState(
                width=W, height=H,
                cbufs=[ctx.create_surface(c, pipe.SurfaceTemplate(format=cfmt)) for c in cbufs],
                zsbuf=None if zs is None else ctx.create_surface(
                    zs, pipe.SurfaceTemplate(format=zs.format)
                ),
            )
        )  # fmt: skip
        zs_, zt = extra.get("zrange", (0.5, 0.5))  # (the viewport's depth scale, translate)
        ctx.set_viewport_states(
            0, [pipe.ViewportState(scale=(W / 2, H / 2, zs_), translate=(W / 2, H / 2, zt))]
        )
        ctx.set_scissor_states(0, [pipe.ScissorState(3, 2, 11, 13)])
        ctx.set_clip_state(pipe.ClipState(ucp=[(1.0, 0.3, 0.0, 0.2)] + [(0.0,) * 4] * 7))
        ctx.set_polygon_stipple(
            pipe.PolyStipple(stipple=[0x5A5A3C3C ^ (r * 0x01010101) for r in range(32)])
        )
        ctx.set_stencil_ref(pipe.StencilRef(extra.get("stencil_ref", (1, 2))))
        ctx.set_blend_color(pipe.BlendColor((0.25, 0.5, 0.75, 0.4)))
        rs = pipe.RasterizerState(**(rast or {}))
        ctx.bind_rasterizer_state(ctx.create_rasterizer_state(rs))
        b = dict(blend or {})
        rts = [pipe.RtBlendState(**rt) for rt in b.pop("rt", [{}])]
        ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(rt=rts, **b)))
        d = dict(dsa if dsa is not None else DEPTH_ON)
        stencil = d.pop("stencil", [{}, {}])
        ctx.bind_depth_stencil_alpha_state(
            ctx.create_depth_stencil_alpha_state(
                pipe.DepthStencilAlphaState(
                    depth=pipe.DepthState(**d.get("depth", {})),
                    stencil=[pipe.StencilState(**s) for s in stencil],
                    alpha=pipe.AlphaState(**d.get("alpha", {})),
                )
            )
        )
        ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=VS)))
        mode = {"lines": pipe.Prim.LINE_STRIP, "points": pipe.Prim.POINTS}.get(
            probe, pipe.Prim.TRIANGLES
        )
        verts = {"lines": LINES, "points": POINTS, "rect": RECT}.get(probe, TRIS)
        fs = FS_TWO if probe == "two_rt" else extra.get("fs", FS_COLOR)
        if probe.startswith("tex_"):
            kind, target, verts = TEX[probe[4:]]
            fs = _fs_tex(target)
            self._texture(kind, sampler or {})
        ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=fs)))
        ctx.bind_vertex_elements_state(
            ctx.create_vertex_elements_state(
                [pipe.VertexElement(16 * i, 0, 0, F.R32G32B32A32_FLOAT) for i in range(3)]
            )
        )
        data = np.array(verts, np.float32)
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=48, buffer_offset=0, buffer=data)])
        ctx.clear(
            pipe.Clear.COLOR | (pipe.Clear.DEPTHSTENCIL if zs is not None else 0),
            color=(0.2, 0.3, 0.4, 0.5),
            depth=0.6,
            stencil=0,
        )
        ctx.draw_vbo(pipe.DrawInfo(mode=mode, start=0, count=len(verts)))
        return b"".join(self._bytes(r) for r in [*cbufs, *([zs] if zs is not None else [])])

    def _texture(self, kind, sampler) -> None:
        ctx, rng = self.ctx, np.random.default_rng(7)
        if kind == "depth":
            res = self.screen.resource_create(
                pipe.ResourceTemplate(
                    target=T.TEXTURE_2D, format=F.Z32_FLOAT, width0=8, height0=8,
                    bind=pipe.Bind.SAMPLER_VIEW,
                )
            )  # fmt: skip
            z = np.linspace(0.2, 0.8, 64, dtype=np.float32).reshape(8, 8)
            ctx.texture_subdata(res, 0, 0, pipe.Box(0, 0, 0, 8, 8, 1), z, 32, 0)
        else:
            target = {"mips": T.TEXTURE_2D, "3d": T.TEXTURE_3D, "cube": T.TEXTURE_CUBE}[kind]
            size, depth = (16, 1) if kind == "mips" else (4, 4 if kind == "3d" else 1)
            layers = 6 if kind == "cube" else 1
            levels = 5 if kind == "mips" else 1
            res = self.screen.resource_create(
                pipe.ResourceTemplate(
                    target=target, format=F.R8G8B8A8_UNORM, width0=size, height0=size,
                    depth0=depth, array_size=layers, last_level=levels - 1,
                    bind=pipe.Bind.SAMPLER_VIEW,
                )
            )  # fmt: skip
            for lv in range(levels):
                s = max(size >> lv, 1)
                d = max(depth >> lv, 1) * layers
                texels = rng.integers(0, 256, (d, s, s, 4), dtype=np.uint8)
                ctx.texture_subdata(
                    res, lv, 0, pipe.Box(0, 0, 0, s, s, d), texels, 4 * s, 4 * s * s
                )
        view = ctx.create_sampler_view(res, pipe.SamplerViewTemplate(format=res.format))
        ctx.set_sampler_views(pipe.ShaderType.FRAGMENT, 0, [view])
        base = {
            "min_img_filter": pipe.TexFilter.NEAREST,
            "mag_img_filter": pipe.TexFilter.NEAREST,
            "min_mip_filter": pipe.MipFilter.NEAREST,
            "max_lod": 10.0,
        }
        base.update(sampler)
        cso = ctx.create_sampler_state(pipe.SamplerState(**base))
        ctx.bind_sampler_states(pipe.ShaderType.FRAGMENT, 0, [cso])


LINEAR, NEAREST = pipe.TexFilter.LINEAR, pipe.TexFilter.NEAREST
CF, SO, BF = pipe.CompareFunc, pipe.StencilOp, pipe.BlendFactor
DEPTH_ON = {"depth": {"enabled": True, "writemask": True, "func": CF.ALWAYS}}
STENCIL_ON = {"enabled": True, "func": CF.ALWAYS, "zpass_op": SO.REPLACE, "writemask": 0xFF}
OFFSET = {"offset_tri": True, "offset_units": 3.0, "offset_scale": 2.0}


def _blend_rt(**rt):
    base = {
        "blend_enable": True,
        "rgb_src_factor": BF.SRC_ALPHA,
        "rgb_dst_factor": BF.INV_SRC_ALPHA,
        "alpha_src_factor": BF.ONE,
        "alpha_dst_factor": BF.ZERO,
    }
    base.update(rt)
    return {"rt": [base]}


def _stencil(face: int, **fields):
    s = [dict(STENCIL_ON), {}]
    if face == 1:
        s[1] = dict(STENCIL_ON)
    s[face].update(fields)
    return {**DEPTH_ON, "stencil": s}


def _c(state, path, probe, base, changed, outcome="changes", note=""):
    return (state, path, probe, base, changed, outcome, note)


PM, SC = pipe.PolygonMode, pipe.SpriteCoord
POINT_MODE = {"fill_front": PM.POINT, "fill_back": PM.POINT, "offset_units": 50.0}
LINE_MODE = {"fill_front": PM.LINE, "fill_back": PM.LINE, "offset_units": 50.0}
SPRITE = {"point_size": 4.0, "sprite_coord_enable": 1, "point_quad_rasterization": True}
QUAD_POINT = {"point_size": 4.0, "point_quad_rasterization": True}
STIPPLED = {"line_stipple_enable": True, "line_stipple_pattern": 0x0F0F}
UNCLIPPED = {"depth_clip_near": False, "depth_clip_far": False}
LIN = {"min_img_filter": LINEAR, "mag_img_filter": LINEAR}
BORDER = {"wrap_s": pipe.TexWrap.CLAMP_TO_BORDER}

# fmt: off
# (state, field path, probe, base, changed, outcome, note); outcome "changes",
# "refused" or "same" (the note says why)
R, B, D, S = "rasterizer", "blend", "dsa", "sampler"
CASES = [
    _c(R, "flatshade", "tris", {}, {"flatshade": True}),
    _c(R, "light_twoside", "tris", {}, {"light_twoside": True}),
    _c(R, "clamp_vertex_color", "tris", {}, {"clamp_vertex_color": True}),
    _c(R, "clamp_fragment_color", "tris", {}, {"clamp_fragment_color": True}),
    _c(R, "front_ccw", "tris", {"cull_face": pipe.Face.BACK},
       {"cull_face": pipe.Face.BACK, "front_ccw": True}),
    _c(R, "cull_face", "tris", {}, {"cull_face": pipe.Face.FRONT}),
    _c(R, "fill_front", "tris", {}, {"fill_front": PM.LINE}),
    _c(R, "fill_back", "tris", {}, {"fill_back": PM.POINT}),
    _c(R, "offset_point", "tris", POINT_MODE, {**POINT_MODE, "offset_point": True}),
    _c(R, "offset_line", "tris", LINE_MODE, {**LINE_MODE, "offset_line": True}),
    _c(R, "offset_tri", "tris", {"offset_units": 50.0}, {"offset_units": 50.0, "offset_tri": True}),
    _c(R, "scissor", "tris", {}, {"scissor": True}),
    _c(R, "poly_smooth", "tris", {}, {"poly_smooth": True}, "same",
       "llvmpipe draws polygons unsmoothed (llvmpipe scene smooth_polygon_ignored)"),
    _c(R, "poly_stipple_enable", "tris", {}, {"poly_stipple_enable": True}),
    _c(R, "point_smooth", "points", {"point_size": 4.0}, {"point_size": 4.0, "point_smooth": True}),
    _c(R, "sprite_coord_mode", "points", SPRITE, {**SPRITE, "sprite_coord_mode": SC.LOWER_LEFT},
       note="fs:generic"),
    _c(R, "point_quad_rasterization", "points", {"point_size": 2.5},
       {"point_size": 2.5, "point_quad_rasterization": True}),
    _c(R, "point_tri_clip", "points", QUAD_POINT, {**QUAD_POINT, "point_tri_clip": True}),
    _c(R, "point_size_per_vertex", "points", {}, {"point_size_per_vertex": True}),
    _c(R, "multisample", "msaa", {}, {"multisample": True}),
    _c(R, "force_persample_interp", "msaa", {"multisample": True},
       {"multisample": True, "force_persample_interp": True}),
    _c(R, "line_smooth", "lines", {}, {"line_smooth": True}),
    _c(R, "line_stipple_enable", "lines", {"line_stipple_pattern": 0x0F0F}, STIPPLED),
    _c(R, "line_last_pixel", "lines", {}, {"line_last_pixel": True}),
    _c(R, "flatshade_first", "tris", {"flatshade": True},
       {"flatshade": True, "flatshade_first": True}),
    _c(R, "half_pixel_center", "tris", {}, {"half_pixel_center": False}),
    _c(R, "bottom_edge_rule", "rect", {}, {"bottom_edge_rule": True}),
    _c(R, "rasterizer_discard", "tris", {}, {"rasterizer_discard": True}),
    _c(R, "depth_clip", "tris", {}, {"depth_clip": False}),
    _c(R, "clip_halfz", "tris", {}, {"clip_halfz": True}),
    _c(R, "offset_units_unscaled", "tris", OFFSET, {**OFFSET, "offset_units_unscaled": True}),
    _c(R, "clip_plane_enable", "tris", {}, {"clip_plane_enable": 1}),
    _c(R, "line_stipple_factor", "lines", STIPPLED, {**STIPPLED, "line_stipple_factor": 2}),
    # (0xFFFF: every pixel lit, as without the stipple)
    _c(R, "line_stipple_pattern", "lines", {**STIPPLED, "line_stipple_pattern": 0xFFFF},
       {**STIPPLED, "line_stipple_pattern": 0x3333}),
    _c(R, "sprite_coord_enable", "points", QUAD_POINT, {**QUAD_POINT, "sprite_coord_enable": 1},
       note="fs:generic"),
    _c(R, "line_width", "lines", {}, {"line_width": 3.0}),
    _c(R, "point_size", "points", {}, {"point_size": 3.0}),
    _c(R, "offset_units", "tris", {"offset_tri": True}, {"offset_tri": True, "offset_units": 9.0}),
    _c(R, "offset_scale", "tris", {"offset_tri": True}, {"offset_tri": True, "offset_scale": 4.0}),
    _c(R, "offset_clamp", "tris", OFFSET, {**OFFSET, "offset_clamp": 1e-5}),
    _c(R, "depth_clip_near", "tris", {}, {"depth_clip_near": False}),
    _c(R, "depth_clip_far", "tris", {}, {"depth_clip_far": False}),
    _c(R, "depth_clamp", "tris", UNCLIPPED, {**UNCLIPPED, "depth_clamp": True}, note="zrange"),
    # -- blend
    _c(B, "independent_blend_enable", "two_rt", {"rt": [{}, {"colormask": 0x3}]},
       {"rt": [{}, {"colormask": 0x3}], "independent_blend_enable": True}),
    # (logic ops act on UNORM and integer targets: the RGBA8 one)
    _c(B, "logicop_enable", "msaa", {"logicop_func": pipe.LogicOp.XOR},
       {"logicop_func": pipe.LogicOp.XOR, "logicop_enable": True}),
    _c(B, "logicop_func", "msaa", {"logicop_enable": True, "logicop_func": pipe.LogicOp.XOR},
       {"logicop_enable": True, "logicop_func": pipe.LogicOp.NAND}),
    _c(B, "dither", "tris", {}, {"dither": True}, "same",
       "blend.rst: dithering is implementation-dependent and may be ignored; llvmpipe ignores it"),
    # (alpha 0.75 keeps 3 of 4 samples)
    _c(B, "alpha_to_coverage", "msaa", {}, {"alpha_to_coverage": True}, note="multisample"),
    _c(B, "alpha_to_one", "tris", {}, {"alpha_to_one": True}),  # (depth-tested: not early)
    _c(B, "rt.blend_enable", "tris", {"rt": [{"rgb_src_factor": BF.SRC_ALPHA,
       "rgb_dst_factor": BF.INV_SRC_ALPHA}]}, _blend_rt()),
    _c(B, "rt.rgb_func", "tris", _blend_rt(), _blend_rt(rgb_func=pipe.BlendFunc.SUBTRACT)),
    _c(B, "rt.rgb_src_factor", "tris", _blend_rt(), _blend_rt(rgb_src_factor=BF.CONST_COLOR)),
    _c(B, "rt.rgb_dst_factor", "tris", _blend_rt(), _blend_rt(rgb_dst_factor=BF.ONE)),
    _c(B, "rt.alpha_func", "tris", _blend_rt(), _blend_rt(alpha_func=pipe.BlendFunc.MIN)),
    _c(B, "rt.alpha_src_factor", "tris", _blend_rt(), _blend_rt(alpha_src_factor=BF.DST_ALPHA)),
    _c(B, "rt.alpha_dst_factor", "tris", _blend_rt(), _blend_rt(alpha_dst_factor=BF.ONE)),
    _c(B, "rt.colormask", "tris", {}, {"rt": [{"colormask": 0x5}]}),
    # -- depth, stencil, alpha
    _c(D, "depth.enabled", "tris", {"depth": {"writemask": True, "func": CF.LESS}},
       {"depth": {"enabled": True, "writemask": True, "func": CF.LESS}}),
    _c(D, "depth.writemask", "tris", {"depth": {"enabled": True, "func": CF.ALWAYS}},
       {"depth": {"enabled": True, "func": CF.ALWAYS, "writemask": True}}),
    _c(D, "depth.func", "tris", DEPTH_ON,
       {"depth": {"enabled": True, "writemask": True, "func": CF.GREATER}}),
    _c(D, "depth.bounds_test", "tris", {}, {"depth": {"bounds_test": True}}, "refused",
       "PIPE_CAP_DEPTH_BOUNDS_TEST is 0 (llvmpipe has none either)"),
    _c(D, "depth.bounds_min", "tris", {}, {"depth": {"bounds_min": 0.5}}, "same",
       "read only by bounds_test, which is refused"),
    _c(D, "depth.bounds_max", "tris", {}, {"depth": {"bounds_max": 0.5}}, "same",
       "read only by bounds_test, which is refused"),
]
for _face in (0, 1):
    _p = f"stencil[{_face}]."
    _off = dict(STENCIL_ON, enabled=False, zpass_op=SO.INVERT)
    CASES += [
        _c(D, _p + "enabled", "tris",
           {**DEPTH_ON, "stencil": [_off, _off] if _face == 0 else [STENCIL_ON, _off]},
           _stencil(_face, zpass_op=SO.INVERT)),
        _c(D, _p + "func", "tris", _stencil(_face), _stencil(_face, func=CF.NEVER)),
        _c(D, _p + "fail_op", "tris", _stencil(_face, func=CF.NEVER),
           _stencil(_face, func=CF.NEVER, fail_op=SO.INVERT)),
        _c(D, _p + "zpass_op", "tris", _stencil(_face), _stencil(_face, zpass_op=SO.DECR_WRAP)),
        _c(D, _p + "zfail_op", "tris",
           {**_stencil(_face), "depth": {"enabled": True, "func": CF.NEVER}},
           {**_stencil(_face, zfail_op=SO.INVERT), "depth": {"enabled": True, "func": CF.NEVER}}),
        _c(D, _p + "valuemask", "tris", _stencil(_face, func=CF.EQUAL, valuemask=0),
           _stencil(_face, func=CF.EQUAL, valuemask=0xFF)),
        _c(D, _p + "writemask", "tris", _stencil(_face), _stencil(_face, writemask=0x0C)),
    ]
CASES += [
    _c(D, "alpha.enabled", "tris", {"alpha": {"func": CF.NEVER}},
       {"alpha": {"enabled": True, "func": CF.NEVER}}),
    _c(D, "alpha.func", "tris", {"alpha": {"enabled": True, "func": CF.ALWAYS}},
       {"alpha": {"enabled": True, "func": CF.LESS, "ref_value": 0.5}}),
    _c(D, "alpha.ref_value", "tris",
       {"alpha": {"enabled": True, "func": CF.LESS, "ref_value": 0.5}},
       {"alpha": {"enabled": True, "func": CF.LESS, "ref_value": 0.9}}),
    # -- sampler
    _c(S, "wrap_s", "tex_min", {}, {"wrap_s": pipe.TexWrap.CLAMP_TO_EDGE}),
    _c(S, "wrap_t", "tex_min", {}, {"wrap_t": pipe.TexWrap.MIRROR_REPEAT}),
    _c(S, "wrap_r", "tex_3d", {}, {"wrap_r": pipe.TexWrap.CLAMP_TO_EDGE}),
    _c(S, "min_img_filter", "tex_min", {}, {"min_img_filter": LINEAR}),
    _c(S, "min_mip_filter", "tex_min", {}, {"min_mip_filter": pipe.MipFilter.LINEAR}),
    _c(S, "mag_img_filter", "tex_mag", {}, {"mag_img_filter": LINEAR}),
    _c(S, "compare_mode", "tex_shadow", {"compare_func": CF.LESS},
       {"compare_func": CF.LESS, "compare_mode": 1}),
    _c(S, "compare_func", "tex_shadow", {"compare_mode": 1, "compare_func": CF.LESS},
       {"compare_mode": 1, "compare_func": CF.GREATER}),
    _c(S, "normalized_coords", "tex_texels", {"min_mip_filter": pipe.MipFilter.NONE},
       {"min_mip_filter": pipe.MipFilter.NONE, "normalized_coords": False}),
    _c(S, "max_anisotropy", "tex_aniso", LIN, {**LIN, "max_anisotropy": 16}),
    _c(S, "seamless_cube_map", "tex_cube", LIN, {**LIN, "seamless_cube_map": True}),
    _c(S, "lod_bias", "tex_min", {}, {"lod_bias": 1.5}),
    _c(S, "min_lod", "tex_min", {}, {"min_lod": 2.0}),
    _c(S, "max_lod", "tex_min", {}, {"max_lod": 0.0}),
    _c(S, "border_color", "tex_min", BORDER, {**BORDER, "border_color": (0.9, 0.1, 0.6, 0.3)}),
]
# fmt: on

_CLASSES = {
    R: [("", pipe.RasterizerState)],
    B: [("", pipe.BlendState), ("rt.", pipe.RtBlendState)],
    D: [
        ("depth.", pipe.DepthState),
        ("stencil[0].", pipe.StencilState),
        ("stencil[1].", pipe.StencilState),
        ("alpha.", pipe.AlphaState),
    ],
    S: [("", pipe.SamplerState)],
}
# fields that hold other states, walked through their classes above
_CONTAINERS = {(B, "rt"), (D, "depth"), (D, "stencil"), (D, "alpha")}


def test_every_field_has_a_case():
    have = {(state, path) for state, path, *_ in CASES}
    missing = [
        (state, prefix + f.name)
        for state, classes in _CLASSES.items()
        for prefix, cls in classes
        for f in dataclasses.fields(cls)
        if (state, f.name) not in _CONTAINERS and (state, prefix + f.name) not in have
    ]
    assert missing == []
    assert len(have) == len(CASES)  # (one case a field)
    dsa_fields = {f.name for f in dataclasses.fields(pipe.DepthStencilAlphaState)}
    assert dsa_fields == {"depth", "stencil", "alpha"}


def _draw_kwargs(state, probe, kwargs, note):
    kw = {}
    if state == R:
        kw["rast"] = kwargs
    elif state == B:
        kw["blend"] = kwargs
    elif state == D:
        kw["dsa"] = kwargs
    else:
        kw["sampler"] = kwargs
    if note == "fs:generic":
        kw["extra"] = {"fs": FS_GENERIC}
    if note == "zrange":  # (depth range [0.3, 0.7]: clamping shows in the words)
        kw["extra"] = {"zrange": (0.2, 0.5)}
    if note == "multisample":
        kw["rast"] = {"multisample": True}
    return kw


@pytest.mark.parametrize("case", CASES, ids=[f"{state}.{path}" for state, path, *_ in CASES])
def test_each_field_works_or_is_refused(screen, ctx, case):
    state, path, probe, base, changed, outcome, note = case
    p = Probe(screen, ctx)
    before = p.draw(probe, **_draw_kwargs(state, probe, base, note))
    if outcome == "refused":
        with pytest.raises(UnsupportedError):
            p.draw(probe, **_draw_kwargs(state, probe, changed, note))
        return
    after = p.draw(probe, **_draw_kwargs(state, probe, changed, note))
    if outcome == "changes":
        assert after != before, f"{state}.{path} changed nothing"
    else:
        assert after == before, note
