"""Resource sizes against the screen's caps: ``can_create_resource`` says
exactly what ``resource_create`` does, and a refused template allocates
nothing (screen.py ``_check_template``)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gallium
import gallium.numpipe.screen as screen_mod
from gallium import pipe
from gallium.pipe.errors import PipeError, PipeValueError

T = pipe.TextureTarget
RGBA8 = pipe.Format.R8G8B8A8_UNORM
RGBA32F = pipe.Format.R32G32B32A32_FLOAT
GIB = 1 << 30


@pytest.fixture(scope="module")
def screen():
    s = gallium.create_screen(num_threads=0)
    yield s
    s.destroy()


@pytest.fixture
def no_allocation(screen, monkeypatch):
    """Fail the test if any storage is allocated."""

    def allocate(nbytes):
        raise AssertionError(f"{nbytes} bytes allocated for a refused resource")

    monkeypatch.setattr(screen, "allocate_storage", allocate)


def _templ(target, width0, height0=1, depth0=1, array_size=1, fmt=RGBA8, **kw):
    return pipe.ResourceTemplate(
        target=target,
        format=fmt,
        width0=width0,
        height0=height0,
        depth0=depth0,
        array_size=array_size,
        **kw,
    )


def test_the_caps_say_what_the_checks_use(screen):
    assert screen.get_param(pipe.Cap.MAX_TEXTURE_2D_LEVELS) == 15
    assert screen.get_param(pipe.Cap.MAX_TEXTURE_3D_LEVELS) == 12
    assert screen.get_param(pipe.Cap.MAX_TEXTURE_CUBE_LEVELS) == 13
    assert screen.get_param(pipe.Cap.MAX_TEXTURE_ARRAY_LAYERS) == 2048
    assert screen.max_resource_bytes == min(2 * GIB, screen_mod._memory_bytes())
    assert (
        screen.get_compute_param(pipe.ShaderIR.TGSI, pipe.ComputeCap.MAX_MEM_ALLOC_SIZE)
        == screen.max_resource_bytes
    )


# (template at a cap, the same one step beyond, the error's text)
AT_AND_BEYOND = [
    (
        _templ(T.TEXTURE_1D, 16384),
        _templ(T.TEXTURE_1D, 16385),
        "templ.width0 must be <= 16384 for TEXTURE_1D (PIPE_CAP_MAX_TEXTURE_2D_LEVELS); got 16385",
    ),
    (
        _templ(T.TEXTURE_2D, 16, 16384),
        _templ(T.TEXTURE_2D, 16, 16385),
        "templ.height0 must be <= 16384 for TEXTURE_2D (PIPE_CAP_MAX_TEXTURE_2D_LEVELS); got 16385",
    ),
    (
        _templ(T.TEXTURE_RECT, 16384, 4),
        _templ(T.TEXTURE_RECT, 16385, 4),
        "templ.width0 must be <= 16384 for TEXTURE_RECT (PIPE_CAP_MAX_TEXTURE_2D_LEVELS); "
        "got 16385",
    ),
    (
        _templ(T.TEXTURE_3D, 4, 4, 2048),
        _templ(T.TEXTURE_3D, 4, 4, 2049),
        "templ.depth0 must be <= 2048 for TEXTURE_3D (PIPE_CAP_MAX_TEXTURE_3D_LEVELS); got 2049",
    ),
    (
        _templ(T.TEXTURE_3D, 2048, 4, 4),
        _templ(T.TEXTURE_3D, 2049, 4, 4),
        "templ.width0 must be <= 2048 for TEXTURE_3D (PIPE_CAP_MAX_TEXTURE_3D_LEVELS); got 2049",
    ),
    (
        _templ(T.TEXTURE_CUBE, 4096, 4096, array_size=6, fmt=pipe.Format.R8_UNORM),
        _templ(T.TEXTURE_CUBE, 4097, 4097, array_size=6, fmt=pipe.Format.R8_UNORM),
        "templ.width0 must be <= 4096 for TEXTURE_CUBE (PIPE_CAP_MAX_TEXTURE_CUBE_LEVELS); "
        "got 4097",
    ),
    (
        _templ(T.TEXTURE_2D_ARRAY, 4, 4, array_size=2048),
        _templ(T.TEXTURE_2D_ARRAY, 4, 4, array_size=2049),
        "templ.array_size must be <= 2048 (PIPE_CAP_MAX_TEXTURE_ARRAY_LAYERS); got 2049",
    ),
    (
        _templ(T.TEXTURE_1D_ARRAY, 4, array_size=2048),
        _templ(T.TEXTURE_1D_ARRAY, 4, array_size=10**9),
        "templ.array_size must be <= 2048 (PIPE_CAP_MAX_TEXTURE_ARRAY_LAYERS); got 1000000000",
    ),
    (
        _templ(T.TEXTURE_CUBE_ARRAY, 4, 4, array_size=2046),
        _templ(T.TEXTURE_CUBE_ARRAY, 4, 4, array_size=2052),
        "templ.array_size must be <= 2048 (PIPE_CAP_MAX_TEXTURE_ARRAY_LAYERS); got 2052",
    ),
    (
        _templ(T.BUFFER, 1 << 20, fmt=pipe.Format.NONE),
        _templ(T.BUFFER, (1 << 31) + 1, fmt=pipe.Format.NONE),
        "templ.width0 must be <= 2147483648 bytes for a buffer; got 2147483649",
    ),
]


@pytest.mark.parametrize(("ok", "bad", "message"), AT_AND_BEYOND, ids=lambda x: None)
def test_every_dimension_is_checked_against_its_cap(screen, monkeypatch, ok, bad, message):
    assert screen.can_create_resource(ok)
    res = screen.resource_create(ok)
    assert (res.width0, res.height0, res.depth0) == (ok.width0, ok.height0, ok.depth0)
    screen.resource_destroy(res)

    def allocate(nbytes):
        raise AssertionError(f"{nbytes} bytes allocated for a refused resource")

    monkeypatch.setattr(screen, "allocate_storage", allocate)
    assert not screen.can_create_resource(bad)
    with pytest.raises(PipeValueError) as info:
        screen.resource_create(bad)
    assert str(info.value) == message


@pytest.mark.parametrize(
    "templ",
    [
        _templ(T.TEXTURE_3D, 2048, 2048, 2048, fmt=RGBA32F),  # 128 GiB
        _templ(T.TEXTURE_2D_ARRAY, 16384, 16384, array_size=2048, fmt=RGBA32F),  # 8 TiB
        _templ(T.TEXTURE_2D, 16384, 16384, fmt=RGBA32F, last_level=14),  # 5.3 GiB with mips
    ],
)
def test_the_total_size_is_bounded(screen, no_allocation, templ):
    assert not screen.can_create_resource(templ)
    with pytest.raises(PipeValueError) as info:
        screen.resource_create(templ)
    text = str(info.value)
    assert text.startswith("templ needs ")
    assert "bytes of storage; one resource holds at most 2147483648 bytes" in text


def test_the_size_bound_is_the_machines_memory_when_less(screen, monkeypatch):
    monkeypatch.setattr(screen_mod, "_memory_bytes", lambda: 1 << 20)
    assert screen.max_resource_bytes == 1 << 20
    # 512 x 512 RGBA8: rows of 2048 bytes, exactly 1 MiB
    exact = _templ(T.TEXTURE_2D, 512, 512)
    over = _templ(T.TEXTURE_2D, 512, 513)
    assert screen.can_create_resource(exact)
    assert screen.resource_create(exact).size == 1 << 20
    assert not screen.can_create_resource(over)
    with pytest.raises(PipeValueError, match=r"^templ needs 1050624 bytes of storage; .* 1048576 "):
        screen.resource_create(over)
    monkeypatch.setattr(screen_mod, "_memory_bytes", lambda: 64 * GIB)
    assert screen.max_resource_bytes == 2 * GIB


HOSTILE = st.one_of(
    st.integers(-2, 40),
    st.integers(0, 1 << 16),
    st.sampled_from([2047, 2048, 2049, 4096, 4097, 16384, 16385, 1 << 31, 10**9, 1 << 64]),
)


@settings(
    max_examples=300,
    deadline=timedelta(seconds=2),
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    target=st.sampled_from(list(T)[:-1]),
    fmt=st.sampled_from([RGBA8, RGBA32F, pipe.Format.R8_UNORM, pipe.Format.NONE]),
    width0=HOSTILE,
    height0=HOSTILE,
    depth0=HOSTILE,
    array_size=HOSTILE,
    last_level=st.integers(-1, 16),
    bind=st.sampled_from([0, pipe.Bind.SAMPLER_VIEW, pipe.Bind.RENDER_TARGET]),
)
def test_resource_create_refuses_exactly_what_can_create_resource_refuses(
    screen, monkeypatch, target, fmt, width0, height0, depth0, array_size, last_level, bind
):
    monkeypatch.setattr(screen_mod, "_memory_bytes", lambda: 1 << 22)  # keep real ones small
    templ = pipe.ResourceTemplate(
        target=target,
        format=fmt,
        width0=width0,
        height0=height0,
        depth0=depth0,
        array_size=array_size,
        last_level=last_level,
        bind=bind,
    )
    can = screen.can_create_resource(templ)
    try:
        res = screen.resource_create(templ)
    except PipeError:
        assert not can
    else:
        assert can
        assert 0 < res.size <= 1 << 22
        assert res.storage.size >= res.size
        screen.resource_destroy(res)
