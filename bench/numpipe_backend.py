"""Drive a bench scene through numpipe's public Gallium API.

One frame is what an application does per frame: ``clear`` (colour and
depth/stencil) plus one ``draw_vbo`` (or one ``launch_grid``), then
``flush`` and a wait on its fence, so a frame's time covers the vertex
pipeline, binning and rasterization.  The vertex data lives in a buffer
resource uploaded once, as an application would keep it.  The context is the
threaded one unless ``threaded=False``.
"""

from __future__ import annotations

import numpy as np

import gallium
from gallium import pipe

from .scenes import SAXPY_BLOCK, XFB_COMPONENTS, Scene, SceneData, shader_source

# SRC_ALPHA / INV_SRC_ALPHA on colour, ONE / INV_SRC_ALPHA on alpha (the blend scenes')
OVER = pipe.RtBlendState(
    blend_enable=True,
    rgb_func=pipe.BlendFunc.ADD,
    rgb_src_factor=pipe.BlendFactor.SRC_ALPHA,
    rgb_dst_factor=pipe.BlendFactor.INV_SRC_ALPHA,
    alpha_func=pipe.BlendFunc.ADD,
    alpha_src_factor=pipe.BlendFactor.ONE,
    alpha_dst_factor=pipe.BlendFactor.INV_SRC_ALPHA,
)

COLOR_FMT = pipe.Format.R8G8B8A8_UNORM
ZS_FMT = pipe.Format.Z24_UNORM_S8_UINT


class NumpipeScene:
    """A scene set up on a fresh numpipe screen and context, ready to run frames."""

    def __init__(
        self,
        scene: Scene,
        data: SceneData,
        size: int,
        num_threads: int | None = None,
        threaded: bool = True,
        screen: object | None = None,
    ) -> None:
        self.scene = scene
        self.data = data
        self.size = size
        self.own_screen = screen is None
        self.screen = gallium.create_screen(num_threads) if screen is None else screen
        self.ctx = self.screen.context_create(threaded=threaded)
        self.rt = None
        try:
            if scene.kind == "compute":
                self._setup_compute()
            else:
                self._setup_draw()
                if scene.kind == "many":
                    self._setup_many()
        except BaseException:
            self.close(discard_errors=True)
            raise

    # ------------------------------------------------------------------ setup

    def _buffer(self, data: np.ndarray, bind: pipe.Bind) -> object:
        res = self.screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.BUFFER,
                format=pipe.Format.NONE,
                width0=data.nbytes,
                bind=bind,
            )
        )
        self.ctx.buffer_subdata(res, pipe.Transfer.WRITE, 0, data)
        return res

    def _setup_draw(self) -> None:
        ctx, screen, size, scene = self.ctx, self.screen, self.size, self.scene
        samples = scene.samples
        self.rt = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D,
                format=COLOR_FMT,
                width0=size,
                height0=size,
                nr_samples=samples,
                bind=pipe.Bind.RENDER_TARGET | (pipe.Bind.SAMPLER_VIEW if samples else 0),
            )
        )
        zs = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D,
                format=ZS_FMT,
                width0=size,
                height0=size,
                nr_samples=samples,
                bind=pipe.Bind.DEPTH_STENCIL,
            )
        )
        self.resolved = None
        if samples > 1:  # each frame ends with a resolve into this one
            self.resolved = screen.resource_create(
                pipe.ResourceTemplate(
                    target=pipe.TextureTarget.TEXTURE_2D,
                    format=COLOR_FMT,
                    width0=size,
                    height0=size,
                    bind=pipe.Bind.RENDER_TARGET | pipe.Bind.SAMPLER_VIEW,
                )
            )
            box = pipe.Box(0, 0, 0, size, size, 1)
            self.resolve = pipe.BlitInfo(
                dst=pipe.BlitImage(self.resolved, 0, box, COLOR_FMT),
                src=pipe.BlitImage(self.rt, 0, box, COLOR_FMT),
                mask=pipe.Mask.RGBA,
                filter=pipe.TexFilter.NEAREST,
            )
        cbuf = ctx.create_surface(self.rt, pipe.SurfaceTemplate(format=COLOR_FMT))
        zsurf = ctx.create_surface(zs, pipe.SurfaceTemplate(format=ZS_FMT))
        ctx.set_framebuffer_state(
            pipe.FramebufferState(width=size, height=size, cbufs=[cbuf], zsbuf=zsurf)
        )
        half = size / 2
        ctx.set_viewport_states(
            0, [pipe.ViewportState(scale=(half, half, 0.5), translate=(half, half, 0.5))]
        )
        so = pipe.StreamOutputInfo()
        if scene.kind == "xfb":  # gl_Position and the colour, interleaved
            so = pipe.StreamOutputInfo(
                num_outputs=2,
                stride=[XFB_COMPONENTS, 0, 0, 0],
                output=[
                    pipe.StreamOutput(register_index=0, num_components=4),
                    pipe.StreamOutput(register_index=1, num_components=4, dst_offset=4),
                ],
            )
        vs_text = shader_source(scene.program, "vs")
        vs = ctx.create_vs_state(pipe.ShaderState(tokens=vs_text, stream_output=so))
        fs = ctx.create_fs_state(pipe.ShaderState(tokens=shader_source(scene.program, "fs")))
        ctx.bind_vs_state(vs)
        ctx.bind_fs_state(fs)
        if scene.kind == "tess":
            tcs = pipe.ShaderState(tokens=shader_source(scene.program, "tcs"))
            tes = pipe.ShaderState(tokens=shader_source(scene.program, "tes"))
            ctx.bind_tcs_state(ctx.create_tcs_state(tcs))
            ctx.bind_tes_state(ctx.create_tes_state(tes))
        # GL's ccw on a user FBO is Gallium's cw (mesa_conventions.md section 3); nothing is
        # culled here, so this only keeps the state identical to what Mesa runs.
        ctx.bind_rasterizer_state(
            ctx.create_rasterizer_state(
                pipe.RasterizerState(
                    front_ccw=False,
                    multisample=samples > 1,
                    rasterizer_discard=scene.kind == "xfb",
                )
            )
        )
        dsa = pipe.DepthStencilAlphaState(
            depth=pipe.DepthState(
                enabled=scene.depth_test, writemask=scene.depth_test, func=pipe.CompareFunc.LESS
            )
        )
        ctx.bind_depth_stencil_alpha_state(ctx.create_depth_stencil_alpha_state(dsa))
        rt_blend = OVER if scene.blend else pipe.RtBlendState()
        ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState(rt=[rt_blend])))
        if scene.textured:
            self._setup_texture()
        ve = ctx.create_vertex_elements_state(
            [
                pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
            ]
        )
        ctx.bind_vertex_elements_state(ve)
        vbuf = self._buffer(self.data.vertices, pipe.Bind.VERTEX_BUFFER)
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=vbuf)])
        n = self.data.vertices.shape[0]
        self.draw = pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=n)
        if scene.kind == "tess":
            self.draw = pipe.DrawInfo(mode=pipe.Prim.PATCHES, count=n, vertices_per_patch=4)
        if scene.kind == "xfb":
            size = n * XFB_COMPONENTS * 4
            self.captured = screen.resource_create(
                pipe.ResourceTemplate(
                    target=pipe.TextureTarget.BUFFER,
                    format=pipe.Format.NONE,
                    width0=size,
                    bind=pipe.Bind.STREAM_OUTPUT,
                )
            )
            self.targets = [ctx.create_stream_output_target(self.captured, 0, size)]

    def _setup_many(self) -> None:
        """One index and vertex buffer for every object, back faces culled;
        the frame sets each object's transform and draws it (see frame)."""
        ctx, data, scene = self.ctx, self.data, self.scene
        ctx.bind_rasterizer_state(
            ctx.create_rasterizer_state(
                pipe.RasterizerState(front_ccw=False, cull_face=pipe.Face.BACK)
            )
        )
        vbuf = self._buffer(data.vertices, pipe.Bind.VERTEX_BUFFER)
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=vbuf)])
        ibuf = self._buffer(data.indices, pipe.Bind.INDEX_BUFFER)
        self.draw = pipe.DrawInfo(
            mode=pipe.Prim.TRIANGLES, start=0, count=data.indices.size, index_size=2, index=ibuf
        )
        self.fss = [ctx.create_fs_state(pipe.ShaderState(tokens=shader_source("mvp", "fs")))]
        self.blends = [ctx.create_blend_state(pipe.BlendState(rt=[pipe.RtBlendState()]))]
        if scene.mixed:
            tint = shader_source("mvp-tint", "fs")
            self.fss.append(ctx.create_fs_state(pipe.ShaderState(tokens=tint)))
            self.blends.append(ctx.create_blend_state(pipe.BlendState(rt=[OVER])))
        ctx.bind_fs_state(self.fss[0])
        ctx.bind_blend_state(self.blends[0])
        self.cbs = [pipe.ConstantBuffer(user_buffer=m) for m in data.transforms]

    def _setup_texture(self) -> None:
        ctx, tex = self.ctx, self.data.texture
        assert tex is not None
        h, w = tex.shape[:2]
        res = self.screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D,
                format=COLOR_FMT,
                width0=w,
                height0=h,
                bind=pipe.Bind.SAMPLER_VIEW,
            )
        )
        ctx.texture_subdata(res, 0, pipe.Transfer.WRITE, pipe.Box(0, 0, 0, w, h, 1), tex)
        view = ctx.create_sampler_view(res, pipe.SamplerViewTemplate(format=COLOR_FMT))
        sampler = ctx.create_sampler_state(
            pipe.SamplerState(
                wrap_s=pipe.TexWrap.CLAMP_TO_EDGE,
                wrap_t=pipe.TexWrap.CLAMP_TO_EDGE,
                wrap_r=pipe.TexWrap.CLAMP_TO_EDGE,
                min_img_filter=pipe.TexFilter.LINEAR,
                mag_img_filter=pipe.TexFilter.LINEAR,
                min_mip_filter=pipe.MipFilter.NONE,
            )
        )
        ctx.bind_sampler_states(pipe.ShaderType.FRAGMENT, 0, [sampler])
        ctx.set_sampler_views(pipe.ShaderType.FRAGMENT, 0, [view])

    def _setup_compute(self) -> None:
        ctx = self.ctx
        cs = ctx.create_compute_state(pipe.ComputeState(prog=shader_source("saxpy", "cs")))
        ctx.bind_compute_state(cs)
        x = self._buffer(self.data.buffers["x"], pipe.Bind.SHADER_BUFFER)
        y = self._buffer(self.data.buffers["y"], pipe.Bind.SHADER_BUFFER)
        n = self.data.buffers["x"].nbytes
        # Mesa numbered the SSBOs y = BUFFER[0], x = BUFFER[1] (see shaders/saxpy.cs.tgsi)
        ctx.set_shader_buffers(
            pipe.ShaderType.COMPUTE,
            0,
            [pipe.ShaderBuffer(y, 0, n), pipe.ShaderBuffer(x, 0, n)],
        )
        self.y = y
        self.grid = pipe.GridInfo(
            block=(SAXPY_BLOCK, 1, 1), grid=(self.data.invocations // SAXPY_BLOCK, 1, 1)
        )

    # ------------------------------------------------------------------ frames

    def frame(self) -> None:
        """One frame: clear + draw (or one dispatch), flush, wait for the fence."""
        ctx = self.ctx
        if self.scene.kind == "compute":
            ctx.launch_grid(self.grid)
        elif self.scene.kind == "many":
            ctx.clear(
                pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL,
                color=(0.0, 0.0, 0.0, 1.0),
                depth=1.0,
                stencil=0,
            )
            vertex, draw, cbs = pipe.ShaderType.VERTEX, self.draw, self.cbs
            if self.scene.mixed:
                blends, fss = self.blends, self.fss
                for i, cb in enumerate(cbs):
                    ctx.bind_blend_state(blends[i & 1])
                    if i % 5 == 0:
                        ctx.bind_fs_state(fss[(i // 5) & 1])
                    ctx.set_constant_buffer(vertex, 0, cb)
                    ctx.draw_vbo(draw)
            else:
                for cb in cbs:
                    ctx.set_constant_buffer(vertex, 0, cb)
                    ctx.draw_vbo(draw)
        elif self.scene.kind == "xfb":  # capture from the start, every frame
            ctx.set_stream_output_targets(self.targets, [0])
            ctx.draw_vbo(self.draw)
        else:
            ctx.clear(
                pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL,
                color=(0.0, 0.0, 0.0, 1.0),
                depth=1.0,
                stencil=0,
            )
            ctx.draw_vbo(self.draw)
            if self.resolved is not None:
                ctx.blit(self.resolve)
        fence = ctx.flush()
        self.screen.fence_finish(None, fence, pipe.PIPE_TIMEOUT_INFINITE)

    def read(self) -> np.ndarray:
        """The colour buffer (row 0 = NDC y -1), or the compute scene's y buffer."""
        if self.scene.kind == "compute":
            n = self.data.buffers["y"].nbytes
            data, xfer = self.ctx.transfer_map(
                self.y, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, n, 1, 1)
            )
            out = np.array(data).view(np.float32)
        elif self.scene.kind == "xfb":  # a row of bytes a captured vertex
            n = self.captured.width0
            data, xfer = self.ctx.transfer_map(
                self.captured, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, n, 1, 1)
            )
            out = np.array(data).reshape(-1, XFB_COMPONENTS * 4)
        else:
            s = self.size
            data, xfer = self.ctx.transfer_map(
                self.rt if self.resolved is None else self.resolved,
                0,
                pipe.Transfer.READ,
                pipe.Box(0, 0, 0, s, s, 1),
            )
            out = np.array(data[0])
        self.ctx.transfer_unmap(xfer)
        return out

    @property
    def workers(self) -> int:
        return int(self.screen.pool.num_threads)

    def close(self, discard_errors: bool = False) -> None:
        """Destroy the context (and the screen if this scene made it).

        With ``discard_errors`` the errors still pending from a failed frame
        (numpipe reports one per failed band, one per sync point) are dropped.
        """
        try:
            for _ in range(64 if discard_errors else 1):
                try:
                    self.ctx.destroy()
                    break
                except gallium.PipeError:
                    if not discard_errors:
                        raise
        finally:
            if self.own_screen:
                self.screen.destroy()
