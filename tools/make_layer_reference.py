"""Render the layered-rendering / viewport-array scenes with Mesa and store them.

Usage (needs Mesa's EGL, llvmpipe and softpipe, and moderngl; see
../shared/REFERENCE.md)::

    python tools/make_layer_reference.py [scene ...]

For each scene of ``tests/reference/layers/layer_scenes.py`` (see its docstring),
in child processes: llvmpipe (``LP_NUM_THREADS=0``, ``LP_PERF=no_rast_linear``)
renders the goldens -- every layer of every colour target (a multisampled one
resolved layer by layer with ``glBlitFramebuffer``) and the depth layers -- and
softpipe with ``SOFTPIPE_DEBUG=use_tgsi`` under ``GALLIUM_TRACE`` gives the TGSI of
the shaders bound at each draw (``<program>.<stage>.tgsi``, one file per program
of ``layer_scenes.PROGRAMS``; softpipe renders single-sampled, its images are not
used).  ``<scene>.json`` names the renderer.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "reference" / "layers"
sys.path.insert(0, str(OUT))
sys.path.insert(0, str(ROOT / "tools"))

import layer_scenes as scenes  # type: ignore[import-not-found]  # noqa: E402

STAGES = {"vs": 0x8B31, "fs": 0x8B30, "gs": 0x8DD9, "tes": 0x8E87}
_written: set[str] = set()  # the TGSI files this run wrote


def run(name: str, driver: str) -> dict:
    import glcalls as G  # type: ignore[import-not-found]
    import moderngl
    import numpy as np

    scene = scenes.scene_by_name(name)
    W, H, L = scenes.WIDTH, scenes.HEIGHT, scene.layers
    samples = scene.samples if driver == "llvmpipe" else 1
    ctx = moderngl.create_context(standalone=True, backend="egl")
    gl = G.GLCalls()

    def texture(target: int, fmt: int, depth: int, ms: int = 1) -> int:
        tex = gl.gen("glGenTextures")
        gl.glBindTexture(target, tex)
        if ms > 1:
            gl.glTexStorage3DMultisample(target, ms, fmt, W, H, depth, 1)
        else:
            gl.glTexStorage3D(target, 1, fmt, W, H, depth)
        return tex

    color_target = G.TEXTURE_2D_MULTISAMPLE_ARRAY if samples > 1 else G.TEXTURE_2D_ARRAY
    if scene.texture == "3d":
        color_target = G.TEXTURE_3D
    color = texture(color_target, G.RGBA8, L, samples)
    fbo = gl.gen("glGenFramebuffers")
    gl.glBindFramebuffer(G.FRAMEBUFFER, fbo)
    gl.glFramebufferTexture(G.FRAMEBUFFER, G.COLOR_ATTACHMENT0, color, 0)
    second = None
    if scene.second_layers:
        second = texture(G.TEXTURE_2D_ARRAY, G.RGBA8, scene.second_layers)
        gl.glFramebufferTexture(G.FRAMEBUFFER, G.COLOR_ATTACHMENT0 + 1, second, 0)
    bufs = (ctypes.c_uint * 2)(G.COLOR_ATTACHMENT0, G.COLOR_ATTACHMENT0 + 1)
    gl.glDrawBuffers(scene.targets, bufs)
    depth = None
    if scene.depth:
        depth = texture(G.TEXTURE_2D_ARRAY, G.DEPTH_COMPONENT32F, L)
        gl.glFramebufferTexture(G.FRAMEBUFFER, G.DEPTH_ATTACHMENT, depth, 0)
        gl.glEnable(G.DEPTH_TEST)
        gl.glDepthFunc(0x0201)  # GL_LESS
    status = gl.glCheckFramebufferStatus(G.FRAMEBUFFER)
    if status != G.FRAMEBUFFER_COMPLETE:
        raise RuntimeError(f"framebuffer incomplete: 0x{status:x}")
    for i, (x, y, w, h, n, f) in enumerate(scenes.VIEWPORTS):
        gl.glViewportIndexedf(i, x, y, w, h)
        gl.glDepthRangeIndexed(i, n, f)
        gl.glScissorIndexed(i, *scenes.SCISSORS[i])
    if scene.first:
        gl.glProvokingVertex(G.FIRST_VERTEX_CONVENTION)
    gl.glPointSize(scene.point_size)
    gl.glLineWidth(scene.line_width)
    if scene.depth_clamp:
        gl.glEnable(G.DEPTH_CLAMP)
    gl.glPolygonMode(G.FRONT_AND_BACK, G.POLYGON_MODES[scene.polygon_mode])
    zero = (ctypes.c_float * 4)(0.0, 0.0, 0.0, 0.0)
    for t in range(scene.targets):
        gl.glClearBufferfv(G.COLOR, t, zero)
    if depth is not None:
        one = (ctypes.c_float * 1)(1.0)
        gl.glClearBufferfv(G.DEPTH, 0, one)
    if scene.scissor:  # (after the clears: a scissored clear is a draw in Mesa)
        gl.glEnable(G.SCISSOR_TEST)
    programs: dict[str, int] = {}
    for d in scene.draws:
        prog = programs.get(d.program)
        if prog is None:
            src = scenes.PROGRAMS[d.program].glsl(driver)
            prog = programs[d.program] = gl.program({STAGES[k]: v for k, v in src.items()})
        gl.glUseProgram(prog)
        vao = gl.gen("glGenVertexArrays")
        gl.glBindVertexArray(vao)
        gl.buffer(G.ARRAY_BUFFER, d.vertices.astype("<f4").tobytes())
        gl.glEnableVertexAttribArray(0)
        gl.glVertexAttribPointer(0, 4, G.FLOAT, 0, 32, None)
        gl.glEnableVertexAttribArray(1)
        gl.glVertexAttribPointer(1, 4, G.FLOAT, 0, 32, ctypes.c_void_p(16))
        if "li" in src_names(d):
            gl.buffer(G.ARRAY_BUFFER, d.li.astype("<i4").tobytes())
            gl.glEnableVertexAttribArray(2)
            gl.glVertexAttribIPointer(2, 2, G.INT, 8, None)
        mode = G.MODES[d.mode]
        if d.patch_vertices:
            gl.glPatchParameteri(G.PATCH_VERTICES, d.patch_vertices)
            outer = (ctypes.c_float * 4)(*d.tess_levels[:4])
            inner = (ctypes.c_float * 2)(*d.tess_levels[4:])
            gl.glPatchParameterfv(G.PATCH_DEFAULT_OUTER_LEVEL, outer)
            gl.glPatchParameterfv(G.PATCH_DEFAULT_INNER_LEVEL, inner)
        if d.indices is not None:
            gl.buffer(G.ELEMENT_ARRAY_BUFFER, d.indices.astype("<u2").tobytes())
            gl.glDrawElementsInstanced(mode, d.indices.size, G.UNSIGNED_SHORT, None, d.instances)
        else:
            gl.glDrawArraysInstanced(mode, 0, d.vertices.shape[0], d.instances)
        gl.check(f"draw {d.program}")
    gl.glFinish()

    def read(target: int, tex: int, fmt: int, kind: int, size: int, count: int) -> bytes:
        out = ctypes.create_string_buffer(size * count)
        gl.glBindTexture(target, tex)
        gl.glGetTexImage(target, 0, fmt, kind, out)
        return out.raw

    if samples > 1:  # resolve layer by layer
        resolved = texture(G.TEXTURE_2D_ARRAY, G.RGBA8, L)
        src, dst = gl.gen("glGenFramebuffers"), gl.gen("glGenFramebuffers")
        for layer in range(L):
            gl.glBindFramebuffer(G.READ_FRAMEBUFFER, src)
            gl.glFramebufferTextureLayer(G.READ_FRAMEBUFFER, G.COLOR_ATTACHMENT0, color, 0, layer)
            gl.glBindFramebuffer(G.DRAW_FRAMEBUFFER, dst)
            gl.glFramebufferTextureLayer(
                G.DRAW_FRAMEBUFFER, G.COLOR_ATTACHMENT0, resolved, 0, layer
            )
            gl.glDisable(G.SCISSOR_TEST)
            gl.glBlitFramebuffer(0, 0, W, H, 0, 0, W, H, G.COLOR_BUFFER_BIT, G.NEAREST)
        gl.check("resolve")
        color, color_target = resolved, G.TEXTURE_2D_ARRAY
    out = {"renderer": ctx.info["GL_RENDERER"]}
    colour = [read(color_target, color, G.RGBA, G.UNSIGNED_BYTE, 4 * W * H, L)]
    if second is not None:
        n = scene.second_layers
        colour.append(read(G.TEXTURE_2D_ARRAY, second, G.RGBA, G.UNSIGNED_BYTE, 4 * W * H, n))
    out["color"] = [c.hex() for c in colour]
    if depth is not None:
        out["depth"] = read(
            G.TEXTURE_2D_ARRAY, depth, G.DEPTH_COMPONENT, G.FLOAT, 4 * W * H, L
        ).hex()
    gl.check("read back")
    del np
    return out


def src_names(d) -> str:  # type: ignore[no-untyped-def]
    """The vertex shader's text (does it read ``li``?)."""
    return scenes.PROGRAMS[d.program].vs


def traced(trace: Path) -> list[dict]:
    """The shaders' tokens bound at each draw_vbo of a GALLIUM_TRACE file."""
    created: dict[str, str] = {}
    bound: dict[str, str] = {}
    draws: list[dict] = []
    for _, call in ET.iterparse(trace):
        if call.tag != "call":
            continue
        method = call.get("method") or ""
        if (
            method.startswith("create_")
            and method.endswith("_state")
            and method[7:9]
            in (
                "vs",
                "gs",
                "fs",
            )
        ):
            ret = call.find("ret")
            state = next(a for a in call.findall("arg") if a.get("name") == "state")
            tokens = state.find(".//member[@name='tokens']")
            created[ret[0].text or ""] = (tokens[0].text or "") if tokens is not None else ""
        elif method in ("bind_vs_state", "bind_gs_state", "bind_fs_state"):
            arg = next(a for a in call.findall("arg") if a.get("name") == "state")
            bound[method[5:7]] = arg[0].text or ""
        elif method == "draw_vbo":
            draws.append({k: created.get(v) for k, v in bound.items() if created.get(v)})
        call.clear()
    return draws


def _child(name: str, driver: str, env: dict) -> dict:
    r = subprocess.run(
        [sys.executable, __file__, "--child", name, driver],
        env=dict(os.environ, **env),
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        raise RuntimeError(f"{name}: {driver} child failed ({r.returncode}):\n{r.stderr[-4000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def generate(name: str) -> None:
    import numpy as np

    scene = scenes.scene_by_name(name)
    needs_tgsi = any(scenes.PROGRAMS[d.program].tgsi is None for d in scene.draws)
    if needs_tgsi:
        with tempfile.TemporaryDirectory() as tmp:
            trace = Path(tmp) / "trace.xml"
            env = {"GALLIUM_DRIVER": "softpipe", "SOFTPIPE_DEBUG": "use_tgsi"}
            _child(name, "softpipe", dict(env, GALLIUM_TRACE=str(trace)))
            bound = traced(trace)
        if len(bound) != len(scene.draws):
            raise RuntimeError(f"{name}: {len(bound)} draws traced, {len(scene.draws)} made")
        for d, shaders in zip(scene.draws, bound):
            for stage, tokens in shaders.items():
                if not tokens.startswith(("VERT", "GEOM", "FRAG")):
                    raise RuntimeError(f"{name}: {d.program}'s {stage} was not given as TGSI")
                path = OUT / f"{d.program}.{stage}.tgsi"
                if path.name in _written and path.read_text() != tokens:
                    raise RuntimeError(f"{name}: {d.program}'s {stage} differs between scenes")
                path.write_text(tokens)
                _written.add(path.name)
    env = {"GALLIUM_DRIVER": "llvmpipe", "LP_NUM_THREADS": "0", "LP_PERF": "no_rast_linear"}
    llvm = _child(name, "llvmpipe", env)
    W, H = scenes.WIDTH, scenes.HEIGHT
    layers = [scene.layers, scene.second_layers]
    colour = np.zeros((scene.targets, scene.layers, H, W, 4), np.uint8)
    for t, data in enumerate(llvm["color"]):
        a = np.frombuffer(bytes.fromhex(data), np.uint8).reshape(layers[t], H, W, 4)
        colour[t, : layers[t]] = a[: scene.layers]
    np.save(OUT / f"{name}.color.npy", colour)
    if "depth" in llvm:
        d = np.frombuffer(bytes.fromhex(llvm["depth"]), np.float32).reshape(scene.layers, H, W)
        np.save(OUT / f"{name}.depth.npy", d)
    (OUT / f"{name}.json").write_text(
        json.dumps({"name": name, "renderer": llvm["renderer"]}, indent=1) + "\n"
    )


def main(argv: list[str]) -> int:
    if len(argv) > 3 and argv[1] == "--child":
        print(json.dumps(run(argv[2], argv[3])))
        return 0
    names = argv[1:] or [s.name for s in scenes.scenes()]
    failed = []
    for name in names:
        try:
            generate(name)
            print(f"{name}: written")
        except Exception as exc:
            failed.append(name)
            print(f"{name}: FAILED: {exc}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
