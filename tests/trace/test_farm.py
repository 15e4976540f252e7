"""Farming replays out to a Dask LocalCluster of two worker processes."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from gallium import farm, trace

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from recordings import record_cubes  # noqa: E402

FRAMES = 20


@pytest.fixture(scope="module")
def cubes(tmp_path_factory):
    path = tmp_path_factory.mktemp("farm") / "cubes.trace"
    record_cubes(path, FRAMES, size=96, clear_every=4)
    local = list(trace.replay(path))
    return path, local


@pytest.fixture(scope="module")
def client():
    with farm.cluster_client("local:2") as c:
        c.wait_for_workers(2)
        yield c


def test_two_worker_processes_render_what_one_process_renders(cubes, client):
    path, local = cubes
    got = list(farm.replay(path, cluster=client))
    assert len(got) == FRAMES
    assert all(np.array_equal(a, b) for a, b in zip(got, local))
    pids = set(client.run(os.getpid).values())
    assert len(pids) == 2 and os.getpid() not in pids  # two processes, not this one


def test_scattered_trace_and_a_frame_range(cubes, client):
    path, local = cubes
    got = list(farm.replay(path.read_bytes(), "5:17", cluster=client, run=3))
    assert all(np.array_equal(a, b) for a, b in zip(got, local[5:17])) and len(got) == 12


def test_a_scheduler_address_gets_the_trace_scattered(cubes, client, tmp_path):
    """``tcp://host:port`` (here the test cluster's own scheduler): a client of its own,
    the trace sent as bytes (its workers may not see this machine's files), the PNGs sent
    back to be written here."""
    path, local = cubes
    address = client.scheduler.address
    assert address.startswith("tcp://")
    got = list(farm.replay(path, "2:5", cluster=address))
    assert all(np.array_equal(a, b) for a, b in zip(got, local[2:5])) and len(got) == 3
    n = farm.replay_to_files(path, tmp_path / "out", "0:2", cluster=address)
    assert n == 2 and sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "frame_000000.png",
        "frame_000001.png",
    ]


def test_a_worker_killed_mid_run_loses_nothing(cubes, client):
    path, local = cubes
    frames = farm.replay(path, cluster=client, run=1)
    got = [next(frames)]
    busy = client.processing()
    victim = max(busy, key=lambda w: len(busy[w]))
    assert busy[victim], "the victim had frames to render when it was killed"
    pid = client.run(os.getpid, workers=[victim])[victim]
    os.kill(pid, signal.SIGKILL)
    got += list(frames)
    assert len(got) == FRAMES
    assert all(np.array_equal(a, b) for a, b in zip(got, local))
    deadline = time.monotonic() + 30
    while victim in client.scheduler_info()["workers"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert victim not in client.scheduler_info()["workers"]  # it really went away


def test_files_from_the_farm_equal_local_files(cubes, client, tmp_path):
    from gallium.trace.cli import replay_local

    path, _ = cubes
    replay_local(str(path), tmp_path / "local", "0:6", True, False, False, False)
    # written by the workers (they share this machine's files), and sent back
    n = farm.replay_to_files(path, tmp_path / "farm", "0:6", cluster=client)
    m = farm.replay_to_files(path, tmp_path / "sent", "0:6", cluster=client, shared_out=False)
    assert n == m == 6
    names = sorted(p.name for p in (tmp_path / "local").iterdir())
    assert names == [f"frame_{i:06d}.png" for i in range(6)]
    for d in ("farm", "sent"):
        assert names == sorted(p.name for p in (tmp_path / d).iterdir())
        for name in names:
            assert (tmp_path / "local" / name).read_bytes() == (tmp_path / d / name).read_bytes()


def _clear_to(screen, level):
    """A user render function: a 4x4 target cleared to a grey level, read back."""
    from gallium import pipe

    ctx = screen.context_create(threaded=False)
    rt = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=pipe.Format.R8G8B8A8_UNORM,
            width0=4,
            height0=4,
            bind=pipe.Bind.RENDER_TARGET,
        )
    )
    surf = ctx.create_surface(rt, pipe.SurfaceTemplate(format=pipe.Format.R8G8B8A8_UNORM))
    ctx.set_framebuffer_state(pipe.FramebufferState(width=4, height=4, cbufs=[surf]))
    ctx.clear(pipe.Clear.COLOR0, color=(level / 255, level / 255, level / 255, 1.0))
    ctx.flush()
    data, xfer = ctx.transfer_map(rt, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, 4, 4, 1))
    img = np.array(data[0])
    ctx.transfer_unmap(xfer)
    ctx.destroy()
    return img, os.getpid()


def test_map_runs_a_user_function_with_each_workers_screen(client, tmp_path):
    results = farm.map(_clear_to, range(0, 256, 16), cluster=client)
    assert [int(img[0, 0, 0]) for img, _ in results] == list(range(0, 256, 16))
    for (img, _), lv in zip(results, range(0, 256, 16)):
        assert img[3, 3].tolist() == [lv, lv, lv, 255]
    assert {pid for _, pid in results} <= set(client.run(os.getpid).values())
    paths = farm.map(lambda s, lv: _clear_to(s, lv)[0], [10, 20], cluster=client, out=tmp_path)
    assert [p.name for p in paths] == ["item_000000.png", "item_000001.png"]
