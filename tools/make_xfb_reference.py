"""Run the transform feedback scenes with Mesa and store what it made of them.

Usage (needs Mesa's EGL, llvmpipe and softpipe, and moderngl; see
../shared/REFERENCE.md)::

    python tools/make_xfb_reference.py [scene ...]

For each scene of ``tests/reference/xfb/xfb_scenes.py`` (see its docstring) two child
processes run the scene's steps through raw GL (tools/glcalls.py):

* softpipe, ``SOFTPIPE_DEBUG=use_tgsi`` and ``GALLIUM_TRACE``: the trace records every
  ``pipe_context`` call; the shaders bound at each of the scene's draws (its
  ``draw_vbo`` calls, in order) are the programs' ``pipe_shader_state``: their TGSI
  is written to ``<name>.p<k>.vs.tgsi`` / ``.gs.tgsi`` and their
  ``pipe_stream_output_info`` into ``<name>.json``;
* llvmpipe: the transform feedback buffers' bytes after the scene and the query
  results, into ``<name>.json``.

Both runs' buffers and queries must agree (the script stops otherwise): the TGSI
programs and llvmpipe's compiled ones compute the same words.
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
OUT = ROOT / "tests" / "reference" / "xfb"
sys.path.insert(0, str(OUT))
sys.path.insert(0, str(ROOT / "tools"))

import xfb_scenes as scenes  # type: ignore[import-not-found]  # noqa: E402

_QUERY_KINDS = {
    "generated": 0x8C87,
    "written": 0x8C88,
    "overflow": 0x82EC,
    "stream_overflow": 0x82ED,
}


def run(name: str) -> dict:
    """Run a scene on the current GL context; returns buffers and queries."""
    import glcalls as G  # type: ignore[import-not-found]
    import moderngl
    import numpy as np

    scene = scenes.scene_by_name(name)
    ctx = moderngl.create_context(standalone=True, backend="egl")
    fbo = ctx.framebuffer(color_attachments=[ctx.renderbuffer((64, 64))])
    fbo.use()
    gl = G.GLCalls()
    progs = []
    for p in scene.programs:
        stages = {G.VERTEX_SHADER: p.vs}
        if p.gs:
            stages[G.GEOMETRY_SHADER] = p.gs
        progs.append(gl.program(stages, list(p.varyings), p.separate))
    vao = gl.gen("glGenVertexArrays")
    gl.glBindVertexArray(vao)
    vbo = gl.buffer(G.ARRAY_BUFFER, scene.vertices.astype("<f4").tobytes())
    ibo = None
    if scene.indices:
        ibo = gl.buffer(G.ELEMENT_ARRAY_BUFFER, np.array(scene.indices, "<u4").tobytes())
        gl.glEnable(G.PRIMITIVE_RESTART_FIXED_INDEX)
    bufs = [
        gl.buffer(G.TRANSFORM_FEEDBACK_BUFFER, bytes([scenes.FILL]) * size)
        for size in scene.buffers
    ]
    tfos = [gl.gen("glGenTransformFeedbacks") for _ in range(2)]
    if scene.flatshade_first:
        gl.glProvokingVertex(G.FIRST_VERTEX_CONVENTION)
    queries: dict[tuple, int] = {}
    results = []
    for step in scene.steps:
        op = step[0]
        if op == "program":
            gl.glUseProgram(progs[step[1]])
            if len(step) > 2:  # attribute 0 from a transform feedback buffer
                buf = bufs[step[2][1]]
                gl.glBindBuffer(G.ARRAY_BUFFER, buf)
                gl.glEnableVertexAttribArray(0)
                gl.glVertexAttribPointer(0, 4, G.FLOAT, 0, step[3], None)
                gl.glDisableVertexAttribArray(1)
            else:
                gl.glBindBuffer(G.ARRAY_BUFFER, vbo)
                for loc in (0, 1):
                    gl.glEnableVertexAttribArray(loc)
                    gl.glVertexAttribPointer(loc, 4, G.FLOAT, 0, 32, ctypes.c_void_p(16 * loc))
            if ibo is not None:
                gl.glBindBuffer(G.ELEMENT_ARRAY_BUFFER, ibo)
        elif op == "discard":
            (gl.glEnable if step[1] else gl.glDisable)(G.RASTERIZER_DISCARD)
        elif op == "begin":
            tfo = tfos[step[3] if len(step) > 3 else 0]
            gl.glBindTransformFeedback(G.TRANSFORM_FEEDBACK, tfo)
            for binding, b, offset, size in step[2]:
                size = size or scene.buffers[b] - offset
                gl.glBindBufferRange(G.TRANSFORM_FEEDBACK_BUFFER, binding, bufs[b], offset, size)
            gl.glBeginTransformFeedback(G.MODES[step[1]])
        elif op == "pause":
            gl.glPauseTransformFeedback()
        elif op == "resume":
            gl.glResumeTransformFeedback()
        elif op == "end":
            gl.glEndTransformFeedback()
        elif op == "draw":
            _, mode, first, count, inst = step
            gl.glDrawArraysInstanced(G.MODES[mode], first, count, inst)
        elif op == "draw_indexed":
            _, mode, first, count, inst = step
            gl.glDrawElementsInstanced(
                G.MODES[mode], count, G.UNSIGNED_INT, ctypes.c_void_p(4 * first), inst
            )
        elif op == "draw_auto":
            _, mode, tfo, stream = step
            gl.glDrawTransformFeedbackStream(G.MODES[mode], tfos[tfo], stream)
        elif op == "query":
            q = queries[(step[1], step[2])] = gl.gen("glGenQueries")
            gl.glBeginQueryIndexed(_QUERY_KINDS[step[1]], step[2], q)
        elif op == "end_query":
            gl.glEndQueryIndexed(_QUERY_KINDS[step[1]], step[2])
            results.append([step[1], step[2], queries[(step[1], step[2])]])
        else:
            raise ValueError(f"unknown step {step!r}")
        gl.check(repr(step))
    gl.glFinish()
    out = {
        "renderer": ctx.info["GL_RENDERER"],
        "buffers": [
            gl.read_buffer(G.TRANSFORM_FEEDBACK_BUFFER, b, size).hex()
            for b, size in zip(bufs, scene.buffers)
        ],
        "queries": [[kind, index, gl.query_result(q)] for kind, index, q in results],
    }
    gl.check("read back")
    return out


# ----------------------------------------------------------------------------- trace


def _value(node: ET.Element):
    """A trace XML value as Python data."""
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


def shaders_at_draws(trace: Path) -> list[dict]:
    """For each draw_vbo of the trace, in order: the shader states bound."""
    created: dict[str, dict] = {}
    bound: dict[str, str | None] = {"vs": None, "gs": None}
    draws = []
    for _, call in ET.iterparse(trace):
        if call.tag != "call":
            continue
        method = call.get("method")
        args = {a.get("name"): _value(a[0]) for a in call.findall("arg")}
        ret = call.find("ret")
        if method in ("create_vs_state", "create_gs_state"):
            created[_value(ret[0])] = args["state"]
        elif method in ("bind_vs_state", "bind_gs_state"):
            bound[method[5:7]] = args["state"]
        elif method == "draw_vbo":
            draws.append({k: created.get(v) if v else None for k, v in bound.items()})
        call.clear()
    return draws


# ----------------------------------------------------------------------------- driver


def child(name: str) -> None:
    print(json.dumps(run(name)))


def _run_child(name: str, env: dict) -> dict:
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
    scene = scenes.scene_by_name(name)
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.xml"
        soft = _run_child(
            name,
            {
                "GALLIUM_DRIVER": "softpipe",
                "SOFTPIPE_DEBUG": "use_tgsi",
                "GALLIUM_TRACE": str(trace),
            },
        )
        draws = shaders_at_draws(trace)
    llvm = _run_child(name, {"GALLIUM_DRIVER": "llvmpipe", "LP_NUM_THREADS": "0"})
    if soft["buffers"] != llvm["buffers"] or soft["queries"] != llvm["queries"]:
        raise RuntimeError(f"{name}: softpipe and llvmpipe disagree:\n{soft}\n{llvm}")
    # the draws of the scene in order, and the program each one used
    draw_programs = []
    current = None
    for step in scene.steps:
        if step[0] == "program":
            current = step[1]
        elif step[0] in ("draw", "draw_indexed", "draw_auto"):
            draw_programs.append(current)
    if len(draws) != len(draw_programs):
        raise RuntimeError(f"{name}: {len(draws)} traced draws, {len(draw_programs)} steps")
    programs: dict[int, dict] = {}
    for k, states in zip(draw_programs, draws):
        entry = {}
        for stage, state in states.items():
            if state is None:
                continue
            tgsi = state["tokens"]
            if not tgsi or not tgsi.startswith(("VERT", "GEOM")):
                raise RuntimeError(f"{name}: program {k} {stage} was not given as TGSI")
            path = OUT / f"{name}.p{k}.{stage}.tgsi"
            path.write_text(tgsi)
            entry[stage] = path.name
            so = state["stream_output"]
            if so["num_outputs"]:
                entry["stream_output"] = so
        if programs.setdefault(k, entry) != entry:
            raise RuntimeError(f"{name}: program {k} was bound with different shaders")
    result = {
        "name": name,
        "renderer": llvm["renderer"],
        "programs": [programs[k] for k in sorted(programs)],
        "buffers": llvm["buffers"],
        "queries": llvm["queries"],
    }
    (OUT / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n")


def main(argv: list[str]) -> int:
    if len(argv) > 2 and argv[1] == "--child":
        child(argv[2])
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
