"""``python -m gallium info | demo | trace info|dump | replay | bench``."""

from __future__ import annotations

import sys


def info() -> int:
    import gallium
    from gallium import pipe

    screen = gallium.create_screen()
    print(f"name:           {screen.get_name()}")
    print(f"vendor:         {screen.get_vendor()}")
    print(f"device vendor:  {screen.get_device_vendor()}")
    print(f"worker threads: {screen.pool.num_threads}")
    print("\ncaps (PIPE_CAP_*):")
    for cap in pipe.Cap:
        print(f"  {cap.name:48s} {screen.get_param(cap)}")
    print("\nfloat caps (PIPE_CAPF_*):")
    for cap in pipe.CapF:
        print(f"  {cap.name:48s} {screen.get_paramf(cap)}")
    for stage in (pipe.ShaderType.VERTEX, pipe.ShaderType.FRAGMENT):
        print(f"\n{stage.name.lower()} shader caps (PIPE_SHADER_CAP_*):")
        for cap in pipe.ShaderCap:
            print(f"  {cap.name:48s} {screen.get_shader_param(stage, cap)}")
    print("\nsupported formats (2D texture / render target / depth-stencil / vertex):")
    t2d = pipe.TextureTarget.TEXTURE_2D
    for fmt in pipe.Format:
        if fmt == pipe.Format.NONE or not screen.is_format_supported(fmt, t2d, 0, 0):
            continue
        rt = screen.is_format_supported(fmt, t2d, 0, pipe.Bind.RENDER_TARGET)
        zs = screen.is_format_supported(fmt, t2d, 0, pipe.Bind.DEPTH_STENCIL)
        vb = screen.is_format_supported(fmt, pipe.TextureTarget.BUFFER, 0, pipe.Bind.VERTEX_BUFFER)
        flags = "".join(["R" if rt else "-", "Z" if zs else "-", "V" if vb else "-"])
        print(f"  {flags} {fmt.name}")
    screen.destroy()
    return 0


def main(argv: list[str]) -> int:
    cmd = argv[1] if len(argv) > 1 else "info"
    if cmd == "info":
        return info()
    if cmd == "demo":
        from gallium.demo import main as demo_main

        return demo_main(argv[2:])
    if cmd == "trace":
        from gallium.trace.cli import trace_main

        return trace_main(argv[2:])
    if cmd == "replay":
        from gallium.trace.cli import replay_main

        return replay_main(argv[2:])
    if cmd == "bench":
        from bench.__main__ import main as bench_main

        return bench_main(argv[2:])
    print(
        "usage: python -m gallium info | demo | trace info|dump FILE "
        "| replay FILE --out DIR | bench",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
