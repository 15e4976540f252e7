"""``python -m gallium trace info|dump`` and ``python -m gallium replay``.

A damaged, truncated or hostile trace, or a call that fails on replay, is
reported in one line on stderr (with the file offset) and the command exits
with status 1; usage errors exit with 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from ..pipe.errors import PipeError
from .format import TraceFormatError


def trace_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m gallium trace", description="Inspect a trace.")
    sub = p.add_subparsers(dest="cmd", required=True)
    pi = sub.add_parser("info", help="frames, calls per kind, resources, bytes")
    pi.add_argument("file")
    pd = sub.add_parser("dump", help="the calls as text")
    pd.add_argument("file")
    pd.add_argument(
        "--frame", type=int, default=None, help="only frame N (and the state it starts from)"
    )
    pd.add_argument(
        "--full", action="store_true", help="print long values (shader text, arrays) whole"
    )
    args = p.parse_args(argv)
    from . import dump
    from .reader import TraceReader

    def run() -> None:
        with TraceReader(args.file) as reader:
            if args.cmd == "info":
                print(dump.info(reader))
            else:
                for line in dump.dump(reader, args.frame, args.full):
                    print(line)

    return _guarded(run)


def replay_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="python -m gallium replay",
        description="Re-execute a trace on numpipe and write each frame's colour buffer as PNG.",
    )
    p.add_argument("file")
    p.add_argument("--out", required=True, help="directory for the PNG files")
    p.add_argument("--frames", default=None, metavar="A:B", help="frames to render, a Python slice")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--threaded",
        dest="threaded",
        action="store_true",
        default=True,
        help="replay on threaded contexts (default)",
    )
    mode.add_argument(
        "--direct", dest="threaded", action="store_false", help="replay on direct contexts"
    )
    p.add_argument(
        "--targets",
        action="store_true",
        help="also write every colour buffer and the depth buffer of each frame",
    )
    p.add_argument(
        "--verify",
        action="store_true",
        help="check replayed resource contents against the recording as it goes",
    )
    p.add_argument(
        "--dask",
        metavar="CLUSTER",
        default=None,
        help="render on Dask workers: local:N (a LocalCluster of N processes) "
        "or tcp://HOST:PORT (a running scheduler)",
    )
    p.add_argument(
        "--scatter",
        action="store_true",
        help="with --dask: send the trace to the workers instead of letting them "
        "read FILE (the default for tcp:// schedulers)",
    )
    p.add_argument(
        "--shared-out",
        action="store_true",
        help="with --dask tcp://...: the workers write the PNGs into --out themselves "
        "(a directory they see under the same path; the default for local:N)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    out = Path(args.out)

    def run() -> None:
        if args.dask:
            from ..farm import replay_to_files

            written = replay_to_files(
                args.file,
                out,
                frames=args.frames,
                cluster=args.dask,
                threaded=args.threaded,
                targets=args.targets,
                scatter=True if args.scatter else None,
                progress=not args.quiet,
                shared_out=True if args.shared_out else None,
            )
        else:
            written = replay_local(
                args.file,
                out,
                args.frames,
                args.threaded,
                args.targets,
                args.verify,
                not args.quiet,
            )
        print(f"wrote {written} frame(s) to {out}")

    return _guarded(run)


def _guarded(fn) -> int:
    try:
        fn()
    except TraceFormatError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except (PipeError, ValueError, OSError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return 0


def replay_local(
    path: str, out: Path, frames: Any, threaded: bool, targets: bool, verify: bool, progress: bool
) -> int:
    from .images import frame_files, write_frame
    from .replay import Replayer, parse_frames

    with Replayer(path, threaded=threaded, verify=verify, targets=targets) as r:
        wanted = parse_frames(frames, r.frame_count)
        bar = Progress(len(wanted), enabled=progress)
        names = frame_files(r.frame_count)
        for img in r.frames(wanted):
            write_frame(out, names(img.index), img)
            bar.step()
        bar.done()
        return len(wanted)


class Progress:
    """A progress bar on stderr: a line redrawn on a terminal, a few lines otherwise."""

    def __init__(self, total: int, enabled: bool = True, label: str = "frames") -> None:
        self.total, self.enabled, self.label = total, enabled, label
        self.count = 0
        self.t0 = time.perf_counter()
        self.tty = sys.stderr.isatty()
        self._last = -1

    def step(self, n: int = 1) -> None:
        self.count += n
        if not self.enabled:
            return
        rate = self.count / max(time.perf_counter() - self.t0, 1e-9)
        width = 30
        fill = width * self.count // max(self.total, 1)
        line = (
            f"  [{'#' * fill:<{width}}] {self.count}/{self.total} {self.label}  "
            f"{rate:6.1f} {self.label}/s"
        )
        if self.tty:
            sys.stderr.write("\r" + line)
        else:
            tenth = 10 * self.count // max(self.total, 1)
            if tenth != self._last or self.count == self.total:
                self._last = tenth
                sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def done(self) -> None:
        if self.enabled and self.tty:
            sys.stderr.write("\n")
            sys.stderr.flush()
