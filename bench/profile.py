"""Profile numpipe on one bench scene: ``python -m bench.profile SCENE [options]``.

Runs the scene on the *direct* context with ``num_threads=0`` (the worker
pool's units run on the flushing thread), so a single-thread profiler sees
all the work -- vertex pipeline, binning, rasterization, shading, fragment
operations -- in one call tree.  This is a CPU-time breakdown; how the work
overlaps across the driver thread and the workers is what ``python -m bench``
measures.  Needs pyinstrument (``pip install pyinstrument``); for the threaded
picture use py-spy on a normal run instead, e.g.
``py-spy record --threads -o prof.svg -- python -m bench.runner memory medium 1024``.

Options: ``--frames N`` (default 2, after one warm-up frame), ``--html PATH``,
``--size N``, ``--threads N`` (worker pool size; default 0 as explained).
"""

from __future__ import annotations

import argparse
import sys

from .numpipe_backend import NumpipeScene
from .scenes import SCENES


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.profile")
    p.add_argument("scene", choices=sorted(SCENES))
    p.add_argument("--frames", type=int, default=2)
    p.add_argument("--size", type=int, default=1024)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--html", metavar="PATH")
    args = p.parse_args(argv)
    try:
        from pyinstrument import Profiler
    except ImportError:
        print("pyinstrument is not installed: pip install pyinstrument", file=sys.stderr)
        return 2
    scene = SCENES[args.scene]
    s = NumpipeScene(
        scene, scene.build(args.size), args.size, num_threads=args.threads, threaded=False
    )
    try:
        s.frame()  # warm-up: shader compilation is not what a frame costs
        prof = Profiler(interval=0.0005)
        prof.start()
        for _ in range(args.frames):
            s.frame()
        prof.stop()
    finally:
        s.close()
    print(prof.output_text(unicode=False, color=False, show_all=False))
    if args.html:
        with open(args.html, "w") as f:
            f.write(prof.output_html())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
