"""SceneJob: a scene's bands as the worker pool's units.

The pool (workers/pool.py) runs *jobs*; a scene (gallium/numpipe/scene.py) is
data that knows nothing of the rasterizer.  A :class:`SceneJob` joins the two:
its units are the scene's bands, each rasterized by
:func:`workers.band.execute_band`, or -- for a heavy scene on a pool with band
processes -- by a worker's band process (``wants_process``, workers/bandproc.py).
Completion and errors are the scene's own (``Scene.complete`` signals its fence).
"""

from __future__ import annotations

from typing import Any


class SceneJob:
    """The pool's view of one submitted scene."""

    __slots__ = ("_proc_ok", "scene")

    def __init__(self, scene: Any) -> None:
        self.scene = scene
        self._proc_ok: bool | None = None

    def unit_count(self) -> int:
        scene = self.scene
        return scene.nbands if scene.commands else 0

    def run_unit(self, unit: int, worker: int) -> None:
        from . import band

        band.execute_band(self.scene, unit)

    def wants_process(self) -> bool:
        """Whether a band process should rasterize this scene's bands: enough
        work to pay for the transfer, and every target in shared memory
        (workers/bandproc.py).  Decided once, before the first band runs."""
        ok = self._proc_ok
        if ok is None:
            from . import bandproc, shared

            scene = self.scene
            # the estimate first: it settles light scenes in a few microseconds;
            # fragment shaders' buffers and images stay with this process
            ok = bandproc.estimated_work_ms(
                scene
            ) >= bandproc.MIN_WORK_MS and not _uses_shader_memory(scene)
            if ok:
                arrays = [t.raw for t in scene.cbufs if t is not None]
                if scene.zsbuf is not None:
                    arrays.append(scene.zsbuf.words)
                    if scene.zsbuf.stencil is not None:
                        arrays.append(scene.zsbuf.stencil)
                from gallium.numpipe.scene import ClearCmd

                for cmd in scene.commands:
                    if isinstance(cmd, ClearCmd):
                        arrays += cmd.arrays()
                sample_sets = [(scene.sample_cbufs, scene.sample_zs)]
                for cbufs, zs, scbufs, szs in scene.layers.values():  # other layers'
                    sample_sets.append(([cbufs, *scbufs], [zs, *szs]))
                for cbuf_rows, zss in sample_sets:
                    for targets in cbuf_rows:
                        arrays += [t.raw for t in targets if t is not None]
                    for zs in zss:
                        if zs is not None:
                            arrays.append(zs.words)
                            if zs.stencil is not None:
                                arrays.append(zs.stencil)
                ok = all(shared.locate(a) is not None for a in arrays)
            self._proc_ok = ok
        return ok

    def unit_failed(self, unit: int, exc: BaseException) -> None:
        self.scene.unit_failed(unit, exc)

    def complete(self) -> None:
        self.scene.complete()


def _uses_shader_memory(scene) -> bool:
    """Whether a draw of the scene has a fragment shader with buffers or images
    (their storage is this process's: a band process would write a copy)."""
    for cmd in scene.commands:
        states = getattr(cmd, "states", None) or [getattr(cmd, "state", None)]
        if any(getattr(st, "memory", None) is not None for st in states):
            return True
    return False
