"""numpipe runs the TGSI that Mesa's softpipe printed for a corpus of GLSL programs.

The programs, their uniforms and textures are defined in tests/reference/tgsi/corpus.py;
tools/make_tgsi_corpus.py stored, for each, softpipe's TGSI dump (``*.vert.tgsi`` /
``*.frag.tgsi``), softpipe's 64x64 image (``*.png``) and the constant buffers softpipe
received (``*.json``).  Here each dump must parse, print back to an equal program, and,
drawn by numpipe's direct context over the same full-screen triangle with the same
constants and textures, give softpipe's image within 1 per channel.  No Mesa needed.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import get_screen
from PIL import Image

from gallium import pipe
from gallium.tgsi import parse

REF = Path(__file__).resolve().parents[1] / "reference" / "tgsi"


def _load_corpus():
    # Loaded under its own name: "corpus" alone is too generic for sys.modules.
    name = "numpipe_tgsi_corpus"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REF / "corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


corpus = _load_corpus()
ENTRIES = corpus.ENTRIES
IDS = [e.name for e in ENTRIES]
STAGES = (("vs", "vert", pipe.ShaderType.VERTEX), ("fs", "frag", pipe.ShaderType.FRAGMENT))

_WRAP = {"repeat": pipe.TexWrap.REPEAT, "clamp": pipe.TexWrap.CLAMP_TO_EDGE}
_FILTER = {"nearest": pipe.TexFilter.NEAREST, "linear": pipe.TexFilter.LINEAR}
_MIP = {
    "none": pipe.MipFilter.NONE,
    "nearest": pipe.MipFilter.NEAREST,
    "linear": pipe.MipFilter.LINEAR,
}
_COMPARE = {
    "<=": pipe.CompareFunc.LEQUAL,
    "<": pipe.CompareFunc.LESS,
    ">=": pipe.CompareFunc.GEQUAL,
    ">": pipe.CompareFunc.GREATER,
}
_TARGET = {
    "2d": pipe.TextureTarget.TEXTURE_2D,
    "depth": pipe.TextureTarget.TEXTURE_2D,
    "2d_array": pipe.TextureTarget.TEXTURE_2D_ARRAY,
    "3d": pipe.TextureTarget.TEXTURE_3D,
    "cube": pipe.TextureTarget.TEXTURE_CUBE,
}
_FORMAT = {
    "rgba8": pipe.Format.R8G8B8A8_UNORM,
    "rgba8i": pipe.Format.R8G8B8A8_SINT,
    "rgba8ui": pipe.Format.R8G8B8A8_UINT,
}


def _tgsi(name: str, ext: str) -> str:
    return (REF / f"{name}.{ext}.tgsi").read_text()


def _meta(name: str) -> dict:
    return json.loads((REF / f"{name}.json").read_text())


def _reference(name: str) -> np.ndarray:
    return np.asarray(Image.open(REF / f"{name}.png").convert("RGBA"))


def _texture_bytes(tex, level: int) -> np.ndarray:
    data = tex.level_data(level)
    if tex.kind == "depth":
        # GL_DEPTH_COMPONENT24 texels: Z24 in the low 24 bits of Z24_UNORM_S8_UINT.
        z24 = np.rint(data.astype(np.float64) * 0xFFFFFF).astype("<u4")
        return np.ascontiguousarray(z24).view(np.uint8)
    return np.ascontiguousarray(data).view(np.uint8)


def _bind_texture(screen, ctx, tex) -> None:
    fmt = pipe.Format.Z24_UNORM_S8_UINT if tex.kind == "depth" else _FORMAT[tex.fmt]
    w, h, d = tex.level_size(0)
    target = _TARGET[tex.kind]
    res = screen.resource_create(
        pipe.ResourceTemplate(
            target=target,
            format=fmt,
            width0=w,
            height0=h,
            depth0=d if tex.kind == "3d" else 1,
            array_size=d if tex.kind in ("2d_array", "cube") else 1,
            last_level=tex.levels - 1,
            bind=pipe.Bind.SAMPLER_VIEW,
        )
    )
    for level in range(tex.levels):
        lw, lh, ld = tex.level_size(level)
        ctx.texture_subdata(
            res,
            level,
            pipe.Transfer.WRITE,
            pipe.Box(0, 0, 0, lw, lh, ld),
            _texture_bytes(tex, level),
        )
    view = ctx.create_sampler_view(res, pipe.SamplerViewTemplate(format=fmt, target=target))
    # What Mesa's st_convert_sampler makes of the GL sampler state: min_lod =
    # max(GL_TEXTURE_MIN_LOD, 0), max_lod = GL_TEXTURE_MAX_LOD (1000), no bias.
    sampler = ctx.create_sampler_state(
        pipe.SamplerState(
            wrap_s=_WRAP[tex.wrap],
            wrap_t=_WRAP[tex.wrap],
            wrap_r=_WRAP[tex.wrap],
            min_img_filter=_FILTER[tex.min_filter],
            mag_img_filter=_FILTER[tex.mag_filter],
            min_mip_filter=_MIP[tex.mip],
            compare_mode=pipe.TexCompare.R_TO_TEXTURE if tex.compare else pipe.TexCompare.NONE,
            compare_func=_COMPARE[tex.compare] if tex.compare else pipe.CompareFunc.NEVER,
            min_lod=0.0,
            max_lod=1000.0,
        )
    )
    stage = pipe.ShaderType.VERTEX if tex.stage == "vertex" else pipe.ShaderType.FRAGMENT
    ctx.set_sampler_views(stage, tex.unit, [view])
    ctx.bind_sampler_states(stage, tex.unit, [sampler])


def render(entry) -> np.ndarray:
    """Draw ``entry`` with its stored TGSI on a direct numpipe context; RGBA8, row 0 = NDC -1."""
    screen = get_screen(2)
    ctx = screen.context_create(threaded=False)
    try:
        w, h = corpus.WIDTH, corpus.HEIGHT
        rt = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D,
                format=pipe.Format.R8G8B8A8_UNORM,
                width0=w,
                height0=h,
                bind=pipe.Bind.RENDER_TARGET,
            )
        )
        surf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=pipe.Format.R8G8B8A8_UNORM))
        ctx.set_framebuffer_state(pipe.FramebufferState(width=w, height=h, cbufs=[surf]))
        ctx.set_viewport_states(
            0, [pipe.ViewportState(scale=(w / 2, h / 2, 0.5), translate=(w / 2, h / 2, 0.5))]
        )
        # GL's default counter-clockwise front face on a user FBO is Gallium front_ccw = 0.
        ctx.bind_rasterizer_state(
            ctx.create_rasterizer_state(pipe.RasterizerState(front_ccw=False))
        )
        meta = _meta(entry.name)
        ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=_tgsi(entry.name, "vert"))))
        ctx.bind_fs_state(ctx.create_fs_state(pipe.ShaderState(tokens=_tgsi(entry.name, "frag"))))
        for key, _ext, stage in STAGES:
            consts = bytes.fromhex(meta[f"{key}_constants"])
            if consts:
                ctx.set_constant_buffer(
                    stage, 0, pipe.ConstantBuffer(user_buffer=np.frombuffer(consts, np.uint8))
                )
        for tex in entry.textures:
            _bind_texture(screen, ctx, tex)
        ctx.bind_vertex_elements_state(
            ctx.create_vertex_elements_state(
                [
                    pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                    pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                ]
            )
        )
        ctx.set_vertex_buffers(
            0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=entry.vertices())]
        )
        ctx.clear(pipe.Clear.COLOR0, color=corpus.CLEAR_COLOR, depth=1.0, stencil=0)
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
        ctx.flush()
        data, xfer = ctx.transfer_map(rt, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, w, h, 1))
        img = np.array(data[0])
        ctx.transfer_unmap(xfer)
        return img
    finally:
        ctx.destroy()


def describe_mismatch(img: np.ndarray, ref: np.ndarray) -> str:
    diff = np.abs(img.astype(np.int16) - ref.astype(np.int16))
    bad = np.argwhere(diff.max(axis=-1) > 1)
    lines = [
        f"{len(bad)} of {diff.shape[0] * diff.shape[1]} pixels differ by > 1; max {diff.max()}"
    ]
    worst = np.unravel_index(np.argmax(diff.max(axis=-1)), diff.shape[:2])
    for y, x in [tuple(worst)] + [tuple(p) for p in bad[:5]]:
        lines.append(
            f"  row {y} col {x}: numpipe {img[y, x].tolist()} softpipe {ref[y, x].tolist()}"
        )
    return "\n".join(lines)


def test_corpus_is_complete():
    assert len(ENTRIES) >= 40
    assert len(set(IDS)) == len(IDS)
    for e in ENTRIES:
        for ext in ("vert.tgsi", "frag.tgsi", "png", "json"):
            assert (REF / f"{e.name}.{ext}").is_file(), f"{e.name}.{ext}"
        assert set(corpus.OPCODES[e.name]) == {"vs", "fs"}


def test_reference_images_are_not_flat():
    # Guards against a vacuous comparison: every image has structure, and the
    # images of different programs differ.
    seen = {}
    for e in ENTRIES:
        ref = _reference(e.name)
        assert ref.shape == (corpus.HEIGHT, corpus.WIDTH, 4)
        assert len(np.unique(ref.reshape(-1, 4), axis=0)) >= 4, e.name
        key = ref.tobytes()
        assert key not in seen, f"{e.name} renders the same image as {seen.get(key)}"
        seen[key] = e.name


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_tgsi_parses_and_round_trips(entry):
    for key, ext, _stage in STAGES:
        text = _tgsi(entry.name, ext)
        shader = parse(text)
        assert shader.processor == {"vs": "VERT", "fs": "FRAG"}[key]
        assert parse(shader.to_text()) == shader
        numbered = [ln for ln in text.splitlines() if re.match(r"\s*\d+:", ln)]
        assert len(shader.instructions) == len(numbered)
        opcodes = {inst.opcode for inst in shader.instructions}
        assert opcodes == set(corpus.OPCODES[entry.name][key].split())


def test_constant_buffers_follow_the_declared_layout():
    # The stored buffers are exactly what corpus.pack_constants derives, and as
    # large as the CONST range each dump declares.
    for e in ENTRIES:
        meta = _meta(e.name)
        for key, ext, _stage in STAGES:
            src = e.vs if key == "vs" else e.fs
            state = e.fs_state if key == "fs" else ()
            consts = bytes.fromhex(meta[f"{key}_constants"])
            assert consts == corpus.pack_constants(src, e.uniforms, state), (e.name, key)
            decls = parse(_tgsi(e.name, ext)).declared("CONST")
            slots = sum(d.last - d.first + 1 for d in decls) if decls else 0
            assert slots * 16 == len(consts), (e.name, key)


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_matches_softpipe(entry):
    img = render(entry)
    ref = _reference(entry.name)
    assert img.shape == ref.shape
    diff = np.abs(img.astype(np.int16) - ref.astype(np.int16))
    assert int(diff.max()) <= 1, describe_mismatch(img, ref)
