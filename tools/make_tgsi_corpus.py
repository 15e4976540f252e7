"""Compile the TGSI corpus with Mesa's softpipe and store its TGSI, images and constants.

Usage (needs Mesa's EGL/softpipe and moderngl, see ../shared/REFERENCE.md)::

    python tools/make_tgsi_corpus.py               # every entry of tests/reference/tgsi/corpus.py
    python tools/make_tgsi_corpus.py NAME [NAME...]  # only these entries
    python tools/make_tgsi_corpus.py --list          # names

For each entry this runs one child process with ``GALLIUM_DRIVER=softpipe
SOFTPIPE_DEBUG=vs,fs,use_tgsi`` (set before Mesa loads).  The child creates the GL
context, writes a marker on fd 2 (context creation itself dumps Mesa's internal
blit/clear shaders), compiles and draws the program on a 64x64 RGBA8 renderbuffer and
saves ``<name>.png`` (rows as ``fbo.read()`` returns them: row 0 = NDC y -1, which is
also numpipe's row 0).  The parent takes the dumps after the marker from the child's
stderr and writes ``<name>.vert.tgsi`` and ``<name>.frag.tgsi``, and ``<name>.json``
with the packed constant buffer of each stage, the opcodes and the renderer string.

The constant buffers are packed by ``corpus.pack_constants`` (Mesa 22.3's layout, see
the corpus docstring); this script checks the layout against each dump: the declared
``CONST[0][0..n-1]`` range must be exactly the packed size, and the ``SAMP`` slots
must be the entry's texture units.  Any mismatch stops the script.  Finally the
``OPCODES`` block at the end of corpus.py is rewritten from the dumps.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "reference" / "tgsi"
sys.path.insert(0, str(OUT))

import corpus  # type: ignore[import-not-found]  # noqa: E402

MARKER = "@@@@ numpipe corpus program @@@@"
_END = re.compile(r"^\s*\d+: END\s*$")
_INST = re.compile(r"^\s*\d+:\s+([A-Z0-9_]+)")
_CONST_DCL = re.compile(r"^DCL CONST\[0\]\[(\d+)(?:\.\.(\d+))?\]", re.M)
_SAMP_DCL = re.compile(r"^DCL SAMP\[(\d+)\]", re.M)


# ----------------------------------------------------------------------------- child


def _upload_texture(gl, tex_def):
    import moderngl
    import numpy as np

    kind, levels = tex_def.kind, tex_def.levels
    data0 = tex_def.level_data(0)
    w, h, d = tex_def.level_size(0)
    dtype = {"rgba8": "f1", "rgba8i": "i1", "rgba8ui": "u1"}[tex_def.fmt]
    if kind == "depth":
        tex = gl.depth_texture((w, h), data0.astype("<f4").tobytes())
    elif kind == "2d":
        tex = gl.texture((w, h), 4, data0.tobytes(), dtype=dtype)
    elif kind == "2d_array":
        tex = gl.texture_array((w, h, d), 4, data0.tobytes(), dtype=dtype)
    elif kind == "3d":
        tex = gl.texture3d((w, h, d), 4, data0.tobytes(), dtype=dtype)
    elif kind == "cube":
        tex = gl.texture_cube((w, h), 4, data0.tobytes(), dtype=dtype)
    else:
        raise ValueError(f"texture kind {kind!r}")
    if levels > 1:
        tex.build_mipmaps(0, levels - 1)
        for lvl in range(1, levels):
            tex.write(np.ascontiguousarray(tex_def.level_data(lvl)).tobytes(), level=lvl)
    names = {"nearest": moderngl.NEAREST, "linear": moderngl.LINEAR}
    mip_names = {
        ("nearest", "nearest"): moderngl.NEAREST_MIPMAP_NEAREST,
        ("linear", "nearest"): moderngl.LINEAR_MIPMAP_NEAREST,
        ("nearest", "linear"): moderngl.NEAREST_MIPMAP_LINEAR,
        ("linear", "linear"): moderngl.LINEAR_MIPMAP_LINEAR,
    }
    if tex_def.mip == "none":
        min_f = names[tex_def.min_filter]
    else:
        min_f = mip_names[(tex_def.min_filter, tex_def.mip)]
    tex.filter = (min_f, names[tex_def.mag_filter])
    rep = tex_def.wrap == "repeat"
    for attr in ("repeat_x", "repeat_y", "repeat_z"):
        if hasattr(tex, attr):
            setattr(tex, attr, rep)
    if tex_def.compare is not None:
        tex.compare_func = tex_def.compare
    tex.use(tex_def.unit)
    return tex


def child(name: str) -> None:
    import moderngl
    import numpy as np
    from PIL import Image

    entry = corpus.entry_by_name(name)
    gl = moderngl.create_context(standalone=True, backend="egl")
    color = gl.renderbuffer((corpus.WIDTH, corpus.HEIGHT), 4, dtype="f1")
    fbo = gl.framebuffer(color_attachments=[color])
    fbo.use()
    gl.viewport = (0, 0, corpus.WIDTH, corpus.HEIGHT)
    fbo.clear(*corpus.CLEAR_COLOR)
    # Textures first: generating mipmaps compiles Mesa's own blit shaders, whose dumps
    # must come before the marker.
    textures = [_upload_texture(gl, t) for t in entry.textures]
    gl.finish()
    sys.stderr.flush()
    os.write(2, (MARKER + "\n").encode())
    prog = gl.program(vertex_shader=entry.vs, fragment_shader=entry.fs)
    seen = set()
    for src in (entry.vs, entry.fs):
        for typ, uname, arr in corpus.declared_uniforms(src):
            if uname in seen:
                continue
            seen.add(uname)
            if uname not in prog:
                raise SystemExit(f"{name}: uniform {uname} was optimised away; use it")
            prog[uname].write(corpus.gl_uniform_bytes(typ, arr, entry.uniforms[uname]))
    for t in entry.textures:
        prog[t.uniform].value = t.unit
    vbo = gl.buffer(entry.vertices().tobytes())
    if "in_attr" in prog:
        vao = gl.vertex_array(prog, [(vbo, "4f 4f", "in_pos", "in_attr")])
    else:
        vao = gl.vertex_array(prog, [(vbo, "4f 16x", "in_pos")])
    vao.render(moderngl.TRIANGLES, vertices=3)
    data = np.frombuffer(fbo.read(components=4, alignment=1), np.uint8)
    img = data.reshape(corpus.HEIGHT, corpus.WIDTH, 4)
    Image.fromarray(img, "RGBA").save(OUT / f"{name}.png")
    gl.finish()
    del textures
    sys.stderr.flush()
    os.write(2, b"@@@@ end @@@@\n")
    print(json.dumps({"renderer": gl.info["GL_RENDERER"], "version": gl.info["GL_VERSION"]}))


# ----------------------------------------------------------------------------- parent


def split_dumps(stderr: str) -> dict[str, str]:
    """The VERT and FRAG programs printed after the marker, by processor name."""
    if MARKER not in stderr:
        raise RuntimeError("marker not found in the child's stderr:\n" + stderr[-2000:])
    text = stderr.split(MARKER + "\n", 1)[1].split("@@@@ end @@@@", 1)[0]
    dumps: dict[str, str] = {}
    cur: list[str] | None = None
    for line in text.splitlines():
        if cur is None:
            if line in ("VERT", "FRAG"):
                cur = [line]
            continue
        cur.append(line)
        if _END.match(line):
            proc = cur[0]
            if proc in dumps:
                raise RuntimeError(f"more than one {proc} program was dumped")
            dumps[proc] = "\n".join(cur) + "\n"
            cur = None
    if set(dumps) != {"VERT", "FRAG"}:
        raise RuntimeError(f"expected one VERT and one FRAG dump, got {sorted(dumps)}")
    return dumps


def opcodes_of(tgsi: str) -> list[str]:
    ops = set()
    for line in tgsi.splitlines():
        m = _INST.match(line)
        if m:
            op = m.group(1)
            for suffix in ("_PRECISE", "_SAT"):
                op = op.removesuffix(suffix)
            ops.add(op)
    return sorted(ops)


def check_layout(name: str, stage: str, tgsi: str, consts: bytes, units: list[int]) -> None:
    slots = len(consts) // 16
    m = _CONST_DCL.search(tgsi)
    declared = 0 if m is None else int(m.group(2) or m.group(1)) + 1
    if m is not None and int(m.group(1)) != 0:
        raise RuntimeError(f"{name} {stage}: CONST range does not start at 0")
    if declared != slots:
        raise RuntimeError(
            f"{name} {stage}: dump declares {declared} constant slots, the packing has {slots}"
        )
    samps = sorted(int(s) for s in _SAMP_DCL.findall(tgsi))
    if samps != sorted(units):
        raise RuntimeError(f"{name} {stage}: dump samplers {samps}, entry units {sorted(units)}")


def generate(name: str) -> dict:
    env = dict(os.environ, GALLIUM_DRIVER="softpipe", SOFTPIPE_DEBUG="vs,fs,use_tgsi")
    r = subprocess.run(
        [sys.executable, __file__, "--child", name], env=env, capture_output=True, text=True
    )
    if r.returncode != 0:
        raise RuntimeError(f"{name}: child failed ({r.returncode}):\n{r.stderr[-4000:]}")
    meta = json.loads(r.stdout.strip().splitlines()[-1])
    dumps = split_dumps(r.stderr)
    entry = corpus.entry_by_name(name)
    result = {"name": name, **meta}
    for proc, stage, src, ext in (
        ("VERT", "vertex", entry.vs, "vert"),
        ("FRAG", "fragment", entry.fs, "frag"),
    ):
        tgsi = dumps[proc]
        state = entry.fs_state if proc == "FRAG" else ()
        consts = corpus.pack_constants(src, entry.uniforms, state)
        units = [t.unit for t in entry.textures if t.stage == stage]
        check_layout(name, stage, tgsi, consts, units)
        (OUT / f"{name}.{ext}.tgsi").write_text(tgsi)
        key = "vs" if proc == "VERT" else "fs"
        result[f"{key}_constants"] = consts.hex()
        result[f"{key}_opcodes"] = opcodes_of(tgsi)
    (OUT / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


def _wrap_words(words: list[str], indent: str, width: int = 100) -> list[str]:
    """Greedy-fill string literals (as ruff format leaves them) of at most ``width`` columns."""
    room = width - len(indent) - 2
    lines, cur = [], ""
    for w in words:
        if cur and len(cur) + len(w) + 1 > room:
            lines.append(cur)
            cur = ""
        cur += w + " "
    if cur:
        lines.append(cur)
    lines[-1] = lines[-1].rstrip()
    return [f'{indent}"{line}"' for line in lines]


def write_opcode_block() -> None:
    """Rewrite the OPCODES block of corpus.py from the stored json files."""
    lines = ["OPCODES: dict[str, dict[str, str]] = {"]
    for e in corpus.ENTRIES:
        path = OUT / f"{e.name}.json"
        if not path.exists():
            continue
        meta = json.loads(path.read_text())
        lines.append(f'    "{e.name}": {{')
        for key in ("vs", "fs"):
            words = meta[f"{key}_opcodes"]
            body = _wrap_words(words, " " * 12)
            if len(body) == 1 and len(body[0]) - 12 + 14 <= 100:
                lines.append(f'        "{key}": {body[0].strip()},')
            else:
                lines.append(f'        "{key}": (')
                lines += body
                lines.append("        ),")
        lines.append("    },")
    lines.append("}")
    path = OUT / "corpus.py"
    text = path.read_text()
    begin = text.index("# BEGIN GENERATED OPCODES")
    begin = text.index("\n", begin) + 1
    end = text.index("# END GENERATED OPCODES")
    path.write_text(text[:begin] + "\n".join(lines) + "\n" + text[end:])


def main(argv: list[str]) -> int:
    if len(argv) > 2 and argv[1] == "--child":
        child(argv[2])
        return 0
    if len(argv) > 1 and argv[1] == "--list":
        print("\n".join(e.name for e in corpus.ENTRIES))
        return 0
    names = argv[1:] or [e.name for e in corpus.ENTRIES]
    failed = []
    union: set[str] = set()
    for name in names:
        try:
            res = generate(name)
        except Exception as exc:  # report every broken entry, then fail
            failed.append(name)
            print(f"{name}: FAILED: {exc}")
            continue
        union.update(res["vs_opcodes"], res["fs_opcodes"])
        print(f"{name}: VS {' '.join(res['vs_opcodes'])} | FS {' '.join(res['fs_opcodes'])}")
    write_opcode_block()
    print(f"{len(names) - len(failed)} entries written; opcodes: {' '.join(sorted(union))}")
    if failed:
        print("failed: " + " ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
