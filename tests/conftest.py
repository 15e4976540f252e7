"""Shared fixtures: one screen per worker count, contexts of both kinds."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE / "reference"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import gallium  # noqa: E402

_screens: dict[int, object] = {}


def get_screen(num_threads: int = 2):
    if num_threads not in _screens:
        _screens[num_threads] = gallium.create_screen(num_threads=num_threads)
    return _screens[num_threads]


@pytest.fixture
def screen():
    return get_screen(2)


@pytest.fixture(params=["direct", "threaded"])
def ctx(request, screen):
    c = screen.context_create(threaded=request.param == "threaded")
    yield c
    c.destroy()


@pytest.fixture
def direct_ctx(screen):
    c = screen.context_create(threaded=False)
    yield c
    c.destroy()


@pytest.fixture
def threaded_ctx(screen):
    c = screen.context_create(threaded=True)
    yield c
    c.destroy()
