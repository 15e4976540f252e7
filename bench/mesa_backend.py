"""Drive a bench scene through Mesa (llvmpipe or softpipe) with moderngl.

Used only inside a runner subprocess whose environment selects the driver
(``GALLIUM_DRIVER``, ``LP_NUM_THREADS``) before Mesa loads.  The GL state
mirrors :mod:`bench.numpipe_backend`: a user FBO with an RGBA8 colour
renderbuffer and a 24-bit depth renderbuffer (4-sample ones for the msaa
scenes, resolved into an RGBA8 renderbuffer with glBlitFramebuffer) (moderngl's
``depth_renderbuffer`` is GL_DEPTH_COMPONENT24; numpipe uses Z24_UNORM_S8_UINT,
the same 4 bytes per pixel), ``fbo.clear`` of colour and depth, one
``vao.render`` (or one compute dispatch), then ``ctx.finish()``.
moderngl's read-back row 0 is NDC y = -1, the same as numpipe's row 0.
"""

from __future__ import annotations

import numpy as np

from .scenes import SAXPY_BLOCK, XFB_COMPONENTS, Scene, SceneData, shader_source


def create_context():  # -> moderngl.Context
    import moderngl

    return moderngl.create_context(standalone=True, backend="egl")


class MesaScene:
    """A scene set up on a moderngl context, ready to run frames."""

    def __init__(self, gl, scene: Scene, data: SceneData, size: int) -> None:
        import moderngl

        self.gl = gl
        self.scene = scene
        self.data = data
        self.size = size
        self._objects: list = []
        if scene.kind == "compute":
            self.cs = self._keep(gl.compute_shader(shader_source(scene.program, "comp")))
            self.x = self._keep(gl.buffer(data.buffers["x"].tobytes()))
            self.y = self._keep(gl.buffer(data.buffers["y"].tobytes()))
            self.groups = data.invocations // SAXPY_BLOCK
            return
        stages = {
            "vertex_shader": shader_source(scene.program, "vert"),
            "fragment_shader": shader_source(scene.program, "frag"),
        }
        if scene.kind == "tess":
            stages["tess_control_shader"] = shader_source(scene.program, "tesc")
            stages["tess_evaluation_shader"] = shader_source(scene.program, "tese")
        if scene.kind == "xfb":
            stages["varyings"] = ("gl_Position", "v_color")
        prog = self._keep(gl.program(**stages))
        samples = scene.samples
        color = self._keep(gl.renderbuffer((size, size), 4, samples=samples, dtype="f1"))
        depth = self._keep(gl.depth_renderbuffer((size, size), samples=samples))
        self.fbo = self._keep(gl.framebuffer(color_attachments=[color], depth_attachment=depth))
        self.resolved = None
        if samples > 1:  # each frame ends with a resolve (glBlitFramebuffer) into this one
            out = self._keep(gl.renderbuffer((size, size), 4, dtype="f1"))
            self.resolved = self._keep(gl.framebuffer(color_attachments=[out]))
        vbo = self._keep(gl.buffer(data.vertices.astype("f4").tobytes()))
        names = [n for n in ("in_pos", "in_color", "in_uv") if n in prog]
        self.count = data.vertices.shape[0]
        if scene.kind == "many":
            self._setup_many(prog, vbo)
        else:
            self.vao = self._keep(gl.vertex_array(prog, [(vbo, "4f 4f", *names)]))
        if scene.kind == "xfb":
            self.captured = self._keep(gl.buffer(reserve=self.count * XFB_COMPONENTS * 4))
        if scene.textured:
            tex = data.texture
            assert tex is not None
            h, w = tex.shape[:2]
            self.tex = self._keep(gl.texture((w, h), 4, tex.tobytes()))
            self.tex.filter = (moderngl.LINEAR, moderngl.LINEAR)
            self.tex.repeat_x = False
            self.tex.repeat_y = False
            prog["tex"].value = 0
        self.flags = 0
        if scene.depth_test:
            self.flags |= moderngl.DEPTH_TEST
        if scene.blend:
            self.flags |= moderngl.BLEND
        self.moderngl = moderngl

    def _setup_many(self, prog, vbo) -> None:
        """One vertex array per program over the shared vertex and index
        buffers; each draw writes its transform to ``u_mvp`` first."""
        gl, data, scene = self.gl, self.data, self.scene
        ibo = self._keep(gl.buffer(data.indices.astype("u2").tobytes()))
        progs = [prog]
        if scene.mixed:
            progs.append(
                self._keep(
                    gl.program(
                        vertex_shader=shader_source("mvp-tint", "vert"),
                        fragment_shader=shader_source("mvp-tint", "frag"),
                    )
                )
            )
        self.vaos = [
            self._keep(
                gl.vertex_array(
                    p,
                    [(vbo, "4f 4f", "in_pos", "in_color")],
                    index_buffer=ibo,
                    index_element_size=2,
                )
            )
            for p in progs
        ]
        self.mvps = [p["u_mvp"] for p in progs]
        self.matrices = [m.tobytes() for m in data.transforms]

    def _keep(self, obj):
        self._objects.append(obj)
        return obj

    def _state(self) -> None:
        gl, mgl = self.gl, self.moderngl
        self.fbo.use()
        gl.viewport = (0, 0, self.size, self.size)
        gl.disable(mgl.DEPTH_TEST | mgl.BLEND | mgl.CULL_FACE)
        if self.flags:
            gl.enable(self.flags)
        if self.scene.depth_test:
            gl.depth_func = "<"
        if self.scene.blend:
            gl.blend_func = (
                mgl.SRC_ALPHA,
                mgl.ONE_MINUS_SRC_ALPHA,
                mgl.ONE,
                mgl.ONE_MINUS_SRC_ALPHA,
            )
        if self.scene.textured:
            self.tex.use(0)

    def frame(self) -> None:
        """One frame: clear + draw (or one dispatch), then glFinish."""
        if self.scene.kind == "many":
            self._frame_many()
            return
        if self.scene.kind == "compute":
            self.y.bind_to_storage_buffer(1)
            self.x.bind_to_storage_buffer(0)
            self.cs.run(self.groups)
            self.gl.finish()
            return
        self._state()
        if self.scene.kind == "xfb":  # (moderngl's transform: rasterizer discard on)
            self.vao.transform(self.captured, self.moderngl.TRIANGLES, vertices=self.count)
            self.gl.finish()
            return
        self.fbo.clear(0.0, 0.0, 0.0, 1.0, depth=1.0)
        if self.scene.kind == "tess":
            self.gl.patch_vertices = 4
            self.vao.render(self.moderngl.PATCHES, vertices=self.count)
        else:
            self.vao.render(self.moderngl.TRIANGLES, vertices=self.count)
        if self.resolved is not None:
            self.gl.copy_framebuffer(self.resolved, self.fbo)  # glBlitFramebuffer
        self.gl.finish()

    def _frame_many(self) -> None:
        """Clear, then each object: its transform, its draw (many-mixed: the
        blend on every other draw, the other program every fifth)."""
        gl, mgl = self.gl, self.moderngl
        self._state()
        gl.enable(mgl.CULL_FACE)
        gl.front_face = "ccw"
        gl.cull_face = "back"
        self.fbo.clear(0.0, 0.0, 0.0, 1.0, depth=1.0)
        vaos, mvps, tri = self.vaos, self.mvps, mgl.TRIANGLES
        if self.scene.mixed:
            gl.blend_func = (
                mgl.SRC_ALPHA,
                mgl.ONE_MINUS_SRC_ALPHA,
                mgl.ONE,
                mgl.ONE_MINUS_SRC_ALPHA,
            )
            cur = 0
            for i, m in enumerate(self.matrices):
                if i & 1:
                    gl.enable(mgl.BLEND)
                else:
                    gl.disable(mgl.BLEND)
                if i % 5 == 0:
                    cur = (i // 5) & 1
                mvps[cur].write(m)
                vaos[cur].render(tri)
        else:
            mvp, vao = mvps[0], vaos[0]
            for m in self.matrices:
                mvp.write(m)
                vao.render(tri)
        gl.finish()

    def read(self) -> np.ndarray:
        if self.scene.kind == "compute":
            return np.frombuffer(self.y.read(), np.float32).copy()
        if self.scene.kind == "xfb":  # a row of bytes a captured vertex
            raw = np.frombuffer(self.captured.read(), np.uint8)
            return raw.reshape(-1, XFB_COMPONENTS * 4).copy()
        fbo = self.fbo if self.resolved is None else self.resolved
        raw = fbo.read(components=4, alignment=1)
        return np.frombuffer(raw, np.uint8).reshape(self.size, self.size, 4).copy()

    def close(self) -> None:
        for obj in reversed(self._objects):
            try:
                obj.release()
            except Exception:
                pass
        self._objects.clear()
