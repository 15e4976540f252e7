"""Run the shader-memory scenes with Mesa and store what it made of them.

Usage (needs Mesa's EGL, llvmpipe and softpipe, and moderngl; see
../shared/REFERENCE.md)::

    python tools/make_memory_reference.py [scene ...]

For each scene of ``tests/reference/memory/memory_scenes.py`` (see its docstring):
softpipe with ``SOFTPIPE_DEBUG=use_tgsi`` under ``GALLIUM_TRACE`` gives the
programs' TGSI and the shader-buffer and image slots Mesa bound; llvmpipe gives the
buffer's words, the image's texels and the framebuffer (softpipe's own results are
not used: in Mesa 22.3 its fragment shaders' buffer and image stores do not land).
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
OUT = ROOT / "tests" / "reference" / "memory"
sys.path.insert(0, str(OUT))
sys.path.insert(0, str(ROOT / "tools"))

import memory_scenes as scenes  # type: ignore[import-not-found]  # noqa: E402

SHADER_STORAGE_BARRIER = 0x2000
BARRIERS = 0xFFFFFFFF


def run(name: str) -> dict:
    import glcalls as G  # type: ignore[import-not-found]
    import moderngl
    import numpy as np

    scene = scenes.scene_by_name(name)
    W, H = scenes.WIDTH, scenes.HEIGHT
    ctx = moderngl.create_context(standalone=True, backend="egl")
    color = ctx.renderbuffer((W, H), 4, dtype="f1")
    depth = ctx.depth_renderbuffer((W, H))
    fbo = ctx.framebuffer(color_attachments=[color], depth_attachment=depth)
    fbo.use()
    ctx.viewport = (0, 0, W, H)
    fbo.clear(0.0, 0.0, 0.0, 1.0, depth=1.0)
    if scene.depth:
        ctx.enable(moderngl.DEPTH_TEST)
        ctx.depth_func = "<"
    gl = G.GLCalls()
    prog = gl.program({G.VERTEX_SHADER: scene.vs, G.FRAGMENT_SHADER: scene.fs})
    gl.glUseProgram(prog)
    vao = gl.gen("glGenVertexArrays")
    gl.glBindVertexArray(vao)
    gl.buffer(G.ARRAY_BUFFER, scene.vertices().astype("<f4").tobytes())
    gl.glEnableVertexAttribArray(0)
    gl.glVertexAttribPointer(0, 4, G.FLOAT, 0, 16, None)
    ssbo = gl.buffer(G.SHADER_STORAGE_BUFFER, bytes(4 * scene.ssbo_words))
    gl.glBindBufferBase(G.SHADER_STORAGE_BUFFER, 0, ssbo)
    tex = None
    if scene.image:
        tex = gl.gen("glGenTextures")
        gl.glBindTexture(G.TEXTURE_2D, tex)
        gl.glTexStorage2D(G.TEXTURE_2D, 1, G.R32UI, W, H)
        zeros = (ctypes.c_uint32 * (W * H))()
        gl.glTexSubImage2D(G.TEXTURE_2D, 0, 0, 0, W, H, 0x8D94, G.UNSIGNED_INT, zeros)
        gl.glBindImageTexture(0, tex, 0, 0, 0, G.READ_WRITE, G.R32UI)
        gl.glUniform1i(gl.glGetUniformLocation(prog, b"img"), 0)
    gl.glDrawArrays(G.TRIANGLES, 0, len(scene.triangles))
    gl.glMemoryBarrier(BARRIERS)
    gl.check("draw")
    gl.glFinish()
    words = gl.read_buffer(G.SHADER_STORAGE_BUFFER, ssbo, 4 * scene.ssbo_words)
    texels = b""
    if tex is not None:
        out = ctypes.create_string_buffer(4 * W * H)
        gl.glBindTexture(G.TEXTURE_2D, tex)
        gl.glGetTexImage(G.TEXTURE_2D, 0, 0x8D94, G.UNSIGNED_INT, out)  # (RED_INTEGER)
        texels = out.raw
    gl.check("read back")
    img = np.frombuffer(fbo.read(components=4, alignment=1), np.uint8).reshape(H, W, 4)
    return {
        "renderer": ctx.info["GL_RENDERER"],
        "buffer": words.hex(),
        "image": texels.hex(),
        "png": img.tobytes().hex(),
    }


def _value(node: ET.Element):
    tag = node.tag
    if tag in ("uint", "int"):
        return int(node.text or 0)
    if tag == "bool":
        return bool(int(node.text or 0))
    if tag in ("ptr", "enum", "string"):
        return node.text or ""
    if tag == "null":
        return None
    if tag == "array":
        return [_value(e[0]) if len(e) else None for e in node]
    if tag == "struct":
        return {m.get("name"): _value(m[0]) if len(m) else None for m in node}
    return node.text


def traced(trace: Path) -> dict:
    """The shaders bound at the (only) draw and the buffer/image slots used."""
    created: dict[str, dict] = {}
    bound: dict[str, str] = {}
    slots: dict[str, dict] = {"buffers": {}, "images": {}}
    at_draw: dict = {}
    for _, call in ET.iterparse(trace):
        if call.tag != "call":
            continue
        method = call.get("method")
        args = {a.get("name"): _value(a[0]) for a in call.findall("arg")}
        ret = call.find("ret")
        if method in ("create_vs_state", "create_fs_state"):
            created[_value(ret[0])] = args["state"]
        elif method in ("bind_vs_state", "bind_fs_state"):
            bound[method[5:7]] = args["state"]
        elif method == "set_shader_buffers":
            stage = args["shader"]
            for k, b in enumerate(args.get("buffers") or []):
                if b and b.get("buffer"):
                    slots["buffers"][f"{stage}:{args['start'] + k}"] = b["buffer_size"]
        elif method == "set_shader_images":
            stage = args["shader"]
            for k, v in enumerate(args.get("images") or []):
                if v and v.get("resource"):
                    slots["images"][f"{stage}:{args['start'] + k}"] = True
        elif method == "draw_vbo" and not at_draw:
            at_draw = {
                "shaders": {k: created.get(v) for k, v in bound.items()},
                "slots": json.loads(json.dumps(slots)),
            }
        call.clear()
    return at_draw


def _child(name: str, env: dict) -> dict:
    r = subprocess.run(
        [sys.executable, __file__, "--child", name],
        env=dict(os.environ, **env),
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        raise RuntimeError(f"{name}: child failed ({r.returncode}):\n{r.stderr[-4000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def generate(name: str) -> None:
    import numpy as np
    from PIL import Image

    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.xml"
        env = {"GALLIUM_DRIVER": "softpipe", "SOFTPIPE_DEBUG": "use_tgsi"}
        soft = _child(name, dict(env, GALLIUM_TRACE=str(trace)))
        info = traced(trace)
    llvm = _child(name, {"GALLIUM_DRIVER": "llvmpipe", "LP_NUM_THREADS": "0"})
    # (softpipe's results are not used: in Mesa 22.3 its fragment shaders'
    # buffer and image stores do not land -- its TGSI is what the test runs)
    del soft
    result = {"name": name, "renderer": llvm["renderer"], "slots": info["slots"]}
    for stage, state in info["shaders"].items():
        tgsi = state["tokens"]
        if not tgsi or not tgsi.startswith(("VERT", "FRAG")):
            raise RuntimeError(f"{name}: {stage} was not given as TGSI")
        (OUT / f"{name}.{stage}.tgsi").write_text(tgsi)
    result["buffer"] = llvm["buffer"]
    result["image"] = llvm["image"]
    (OUT / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n")
    W, H = scenes.WIDTH, scenes.HEIGHT
    img = np.frombuffer(bytes.fromhex(llvm["png"]), np.uint8).reshape(H, W, 4)
    Image.fromarray(img, "RGBA").save(OUT / f"{name}.png")


def main(argv: list[str]) -> int:
    if len(argv) > 2 and argv[1] == "--child":
        print(json.dumps(run(argv[2])))
        return 0
    names = argv[1:] or [s.name for s in scenes.SCENES]
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
