"""A dense, unmasked, unblended write of a pass-through colour to a 4-byte
UNORM8 target computes its four channels already interleaved, one matrix
product and one contiguous cast per chunk of rows
(fragment.store_planes_interleaved).  Its bytes must be those of the
channel-by-channel stores (PlaneColour.store_unorm8) in every channel order,
row pitch and gradient; rectangles it cannot take exactly are left to them."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import bind_passthrough, draw_and_read, make_target

import workers.fragment as fragment
import workers.raster as raster
from gallium import pipe

F32 = np.float32
PERMS = [(0, 1, 2, 3), (2, 1, 0, 3), (3, 2, 1, 0), (1, 2, 3, 0)]
# the stores themselves (render() patches spies over them)
REAL = {
    name: getattr(fragment, name) for name in ("store_planes_interleaved", "store_planes_float32")
}


def plane_colour(scaled, x0, y0, w, h):
    """A PlaneColour over columns x0.. and rows y0.. with the given scaled
    planes (rows 0..2: a0', dadx', dady' per channel)."""
    px = np.arange(x0, x0 + w, dtype=np.int64)
    py = np.arange(y0, y0 + h, dtype=np.int64)
    coef = np.zeros((3, 4), F32)  # (unused by the UNORM8 stores)
    return fragment.PlaneColour(coef, px, py, np.asarray(scaled, F32))


def channel_stores(colour, shape, perm):
    """The per-channel stores' bytes: (h, w, 4) uint8, RGBA i -> byte perm[i]."""
    out = np.zeros(shape, np.uint8)
    for i in range(4):
        colour.store_unorm8(i, out[..., perm[i]])
    return out


def mixed_stored_unorm8(colour, perm) -> np.ndarray:
    """store_mixed_interleaved of ``colour`` into a rectangle of a wider,
    taller surface: asserts it is taken, gives the channel stores' bytes and
    leaves the surface around it alone; returns those bytes."""
    h, w = colour.sel.shape
    want = channel_stores(colour, (h, w, 4), perm)
    surface = np.full((h + 2, w + 40, 4), 7, np.uint8)
    pixels = surface[1 : 1 + h, 30 : 30 + w]
    assert fragment.store_mixed_interleaved(pixels, pixels.view(np.uint32)[..., 0], colour, perm)
    assert np.array_equal(pixels, want)
    mask = np.ones(surface.shape[:2], bool)
    mask[1 : 1 + h, 30 : 30 + w] = False
    assert (surface[mask] == 7).all()
    return want


def stored_float(store, colour, nch: int) -> np.ndarray:
    """``store(view, colour)`` into an (h, w, nch) rectangle of a wider,
    taller float32 surface: asserts it is taken, gives the stack's bits and
    leaves the surface around it alone; returns the stack's values."""
    h, w = colour.shape[1:]
    want = np.moveaxis(colour.stack()[:nch], 0, -1).copy()
    surface = np.full((h + 4, w + 30, nch), 7.5, F32)  # a row pitch wider than the rectangle
    view = surface[1 : 1 + h, 20 : 20 + w]
    assert store(view, colour)
    assert np.array_equal(view.view(np.uint32), want.view(np.uint32))  # bit for bit
    mask = np.ones(surface.shape[:2], bool)
    mask[1 : 1 + h, 20 : 20 + w] = False
    assert (surface[mask] == 7.5).all()
    return want


def tricky_planes(rng):
    """Planes whose sums land within a few float32 steps of whole numbers all
    over the rectangle: a0' just below an integer, dadx' a whole number of
    1/8 steps, dady' tiny and of either sign (so rounding decides the byte)."""
    s = np.zeros((3, 4))
    s[0] = np.floor(rng.uniform(50, 120, 4)) + 0.9999995
    s[1] = np.round(rng.uniform(-1, 1, 4) * 8) / 8 / 16
    s[2] = rng.choice([-1, 1], 4) * rng.uniform(1e-7, 4e-7, 4)
    return s


CASES = {
    "tricky": tricky_planes,
    "gradients": lambda rng: np.array(
        [rng.uniform(60, 190, 4), rng.uniform(-0.05, 0.05, 4), rng.uniform(-0.05, 0.05, 4)]
    ),
    # a flat alpha and a flat red: channels with no column term
    "flat channels": lambda rng: np.array(
        [[40.5, 100.25, 30.0, 255.5], [0.0, 0.07, -0.03, 0.0], [0.0, 0.11, 0.05, 0.0]]
    ),
    "all flat": lambda rng: np.array([[1.5, 2.5, 3.5, 255.5], [0.0] * 4, [0.0] * 4]),
}


@pytest.mark.parametrize("perm", PERMS, ids=lambda p: "".join(map(str, p)))
@pytest.mark.parametrize("case", list(CASES))
def test_interleaved_bytes_are_the_channel_stores(case, perm):
    rng = np.random.default_rng(len(case) * 31 + perm[0])
    scaled = CASES[case](rng)
    h, w = 150, 700  # chunks of 46 rows: a call of two, a call of one, 12 rows left
    colour = plane_colour(scaled, 37, 11, w, h)
    want = channel_stores(colour, (h, w, 4), perm)
    surface = np.full((h + 3, w + 90, 4), 7, np.uint8)  # a row pitch wider than the rectangle
    pixels = surface[2 : 2 + h, 50 : 50 + w]
    assert fragment.store_planes_interleaved(pixels, colour, perm)
    assert np.array_equal(pixels, want)
    # nothing outside the rectangle is touched
    mask = np.ones(surface.shape[:2], bool)
    mask[2 : 2 + h, 50 : 50 + w] = False
    assert (surface[mask] == 7).all()
    # not vacuous: many distinct bytes in every varying channel
    for c in [c for c in range(4) if scaled[1][c]]:
        assert len(np.unique(want[..., perm[c]])) > 3


def test_tricky_planes_round_both_ways():
    """The tricky planes really sit on the edge: the exact sums truncate
    differently from the float32 sums at some pixels (so a product that
    rounded otherwise, or not at all, would store other bytes)."""
    colour = plane_colour(tricky_planes(np.random.default_rng(5)), 0, 0, 512, 64)
    rows, cols, _, _ = colour._scaled_lines()
    exact = np.floor(rows[:, None, :].astype(np.float64) + cols[:, :, None].astype(np.float64))
    f32 = np.floor(rows[:, None, :] + cols[:, :, None])
    assert (exact != f32).sum() > 100


def test_a_chunk_boundary_inside_a_tall_narrow_rectangle():
    """Narrow rectangles take many rows a chunk; every chunk's rows land in
    their own rows of the target."""
    scaled = CASES["gradients"](np.random.default_rng(3))
    h, w = 2100, 40  # 819 rows a chunk: one call of two chunks, 462 rows left
    colour = plane_colour(scaled, 0, 0, w, h)
    want = channel_stores(colour, (h, w, 4), PERMS[1])
    pixels = np.zeros((h, w, 4), np.uint8)
    assert fragment.store_planes_interleaved(pixels, colour, PERMS[1])
    assert np.array_equal(pixels, want)


def _left_alone(pixels, colour, perm=(0, 1, 2, 3)):
    before = pixels.copy()
    with np.errstate(invalid="ignore"):  # (write_color's, for NaN planes)
        taken = fragment.store_planes_interleaved(pixels, colour, perm)
    return not taken and np.array_equal(pixels, before)


def test_rectangles_it_cannot_take_are_left_to_the_channel_stores(monkeypatch):
    good = np.array([[10.5, 20.5, 30.5, 255.5], [0.1, 0.1, 0.1, 0.0], [0.1, 0.1, 0.1, 0.0]])
    # too few pixels
    small = fragment.INTERLEAVED_MIN_PIXELS - 1
    assert _left_alone(np.zeros((1, small, 4), np.uint8), plane_colour(good, 0, 0, small, 1))
    big = (128, 128)
    # a channel that needs clamping (above 255.99; below 0)
    for c, a0 in ((1, 250.0), (2, -3.0)):
        over = good.copy()
        over[0, c] = a0
        assert _left_alone(np.zeros((*big, 4), np.uint8), plane_colour(over, 0, 0, *big))
    # a NaN or infinite gradient (its column terms times 0 would be NaN)
    for bad in (np.nan, np.inf):
        nan = good.copy()
        nan[2, 0] = bad
        assert _left_alone(np.zeros((*big, 4), np.uint8), plane_colour(nan, 0, 0, *big))
    # pixels that are not runs of whole 4-byte words
    wide = np.zeros((128, 256, 4), np.uint8)
    assert _left_alone(wide[:, ::2], plane_colour(good, 0, 0, *big))
    # a BLAS that failed the exactness check
    monkeypatch.setattr(fragment, "_exact", [False])
    assert _left_alone(np.zeros((*big, 4), np.uint8), plane_colour(good, 0, 0, *big))


def test_this_blas_sums_exactly():
    """numpy's BLAS here computes the products as np.add's float32 sums (else
    the interleaved stores are never used, and the fill is ~1.5x slower)."""
    assert fragment._check_exact()


FORMATS = [
    pipe.Format.R8G8B8A8_UNORM,
    pipe.Format.B8G8R8A8_UNORM,
    pipe.Format.A8B8G8R8_UNORM,
    pipe.Format.R8G8B8X8_UNORM,  # padding byte: stored per channel, X kept
]
FILL = [
    [-1, -1, 0.5, 1.0, 1, 0, 0, 1],
    [3, -1, 0.5, 1.0, 0, 1, 0, 1],
    [-1, 3, 0.5, 1.0, 0, 0, 1, 1],
]


def render(screen, monkeypatch, fmt, minimum, threaded=False, colormask=0xF):
    """The fill on a 256x192 ``fmt`` target (cleared first) with rectangles of
    ``minimum`` pixels or more for the interleaved stores; returns the
    target's bytes and what each call of the store for ``fmt``'s kind
    returned (store_planes_interleaved or store_planes_float32)."""
    name = "store_planes_float32" if fmt in FLOAT_FORMATS else "store_planes_interleaved"
    real = REAL[name]
    taken = []

    def spy(*args):
        done = real(*args)
        taken.append(done)
        return done

    monkeypatch.setattr(fragment, name, spy)
    monkeypatch.setattr(fragment, "INTERLEAVED_MIN_PIXELS", minimum)
    ctx = screen.context_create(threaded=threaded)
    try:
        rt, _ = make_target(screen, ctx, 256, 192, fmt=fmt)
        bind_passthrough(ctx)
        blend = pipe.BlendState(rt=[pipe.RtBlendState(colormask=colormask)])
        ctx.bind_blend_state(ctx.create_blend_state(blend))
        ctx.clear(pipe.Clear.COLOR0, color=(0.3, -0.5, 2.0, 0.25))
        out = draw_and_read(ctx, FILL, rt)[0]
    finally:
        ctx.destroy()
    return out, taken


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_the_fill_through_a_context(screen, monkeypatch, fmt, threaded):
    want, never = render(screen, monkeypatch, fmt, 1 << 40, threaded)
    got, taken = render(screen, monkeypatch, fmt, 8192, threaded)
    assert never == [False] * len(never)
    assert np.array_equal(got, want)
    if fmt == pipe.Format.R8G8B8X8_UNORM:
        assert taken == []  # three channels: never asked
    else:
        assert taken and all(taken)  # every band's rectangle
    assert len(np.unique(got.reshape(-1, 4), axis=0)) > 1000


# -- float targets: the product written straight into the pixels ----------------------

# (R32G32B32_FLOAT is no render target, as in llvmpipe: three channels only
# in the direct tests)
FLOAT_FORMATS = [pipe.Format.R32G32B32A32_FLOAT, pipe.Format.R32G32_FLOAT, pipe.Format.R32_FLOAT]


def float_colour(coef, x0, y0, w, h):
    px = np.arange(x0, x0 + w, dtype=np.int64)
    py = np.arange(y0, y0 + h, dtype=np.int64)
    with np.errstate(over="ignore"):  # (the UNORM8 prescale of a huge plane)
        return fragment.PlaneColour(np.asarray(coef, F32), px, py)


def float_planes(rng):
    """Float planes with values of every magnitude: exact sums and roundings."""
    coef = np.zeros((3, 4))
    coef[0] = rng.uniform(-3, 3, 4) * 10.0 ** rng.integers(-3, 4, 4)
    coef[1] = rng.uniform(-1, 1, 4) * 10.0 ** rng.integers(-6, 0, 4)
    coef[2] = rng.uniform(-1, 1, 4) * 10.0 ** rng.integers(-6, 0, 4)
    coef[2, 3] = 0.0  # a channel flat in y
    return coef


@pytest.mark.parametrize("nch", [4, 3, 2, 1])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_float_interleaved_bits_are_the_stack(nch, seed):
    coef = float_planes(np.random.default_rng(seed))
    colour = float_colour(coef, 13, 29, 700, 150)
    want = stored_float(fragment.store_planes_float32, colour, nch)
    assert len(np.unique(want[..., 0])) > 1000


def _float_left_alone(view, colour):
    before = view.copy()
    with np.errstate(invalid="ignore", over="ignore"):
        taken = fragment.store_planes_float32(view, colour)
    return not taken and np.array_equal(view.view(np.uint32), before.view(np.uint32))


def test_float_planes_it_cannot_take_exactly_are_left_to_the_stack(monkeypatch):
    good = np.array([[0.5, 0.25, 2.0, 1.0], [1e-3, 2e-3, 0.0, 0.0], [1e-3, 0.0, 3e-3, 0.0]])
    big = (128, 128)
    small = fragment.INTERLEAVED_MIN_PIXELS - 1
    assert _float_left_alone(np.zeros((1, small, 4), F32), float_colour(good, 0, 0, small, 1))
    for row, col, value in ((0, 1, np.nan), (1, 0, np.inf), (2, 2, np.nan), (2, 1, 1e38)):
        bad = good.copy()
        bad[row, col] = value  # a NaN row term, an infinite one, a NaN or overflowing column
        assert _float_left_alone(np.zeros((*big, 4), F32), float_colour(bad, 0, 0, *big))
    # a row term of -0 (a0 + dadx*x at x = 0): with a -0 column term (dady*y
    # at y = 0) np.add keeps -0, which a product's sum of zeros need not
    for dady in (-1e-3, 1e-3, -0.0, 0.0):
        neg = good.copy()
        neg[:, 0] = [-0.0, -0.0, dady]
        assert _float_left_alone(np.zeros((*big, 4), F32), float_colour(neg, 0, 0, *big))
    # -0 column terms with +0 row terms: the sums are +0 both ways
    ok = good.copy()
    ok[:, 0] = [0.0, 0.0, -1e-3]
    view = np.zeros((*big, 4), F32)
    colour = float_colour(ok, 0, 0, *big)
    assert fragment.store_planes_float32(view, colour)
    want = np.moveaxis(colour.stack(), 0, -1)
    assert np.array_equal(view.view(np.uint32), want.view(np.uint32))
    assert (np.signbit(want[0, :, 0]) == [False] * big[1]).all()  # (+0 + -0 at y = 0)
    wide = np.zeros((128, 256, 4), F32)
    assert _float_left_alone(wide[:, ::2], float_colour(good, 0, 0, *big))
    monkeypatch.setattr(fragment, "_exact", [False])
    assert _float_left_alone(np.zeros((*big, 4), F32), float_colour(good, 0, 0, *big))


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
@pytest.mark.parametrize("fmt", FLOAT_FORMATS, ids=lambda f: f.name)
def test_the_fill_into_float_targets(screen, monkeypatch, fmt, threaded):
    want, never = render(screen, monkeypatch, fmt, 1 << 40, threaded=threaded)
    got, taken = render(screen, monkeypatch, fmt, 8192, threaded=threaded)
    assert never == [False] * len(never)
    assert taken and all(taken)
    assert got.tobytes() == want.tobytes()
    values = np.frombuffer(got.tobytes(), F32)
    assert len(np.unique(values)) > 1000


def test_a_masked_float_channel_takes_the_stack(screen, monkeypatch):
    """Red masked off: the write leaves red as cleared, so it is not the
    interleaved store's (which writes every channel)."""
    fmt = pipe.Format.R32G32B32A32_FLOAT
    got, taken = render(screen, monkeypatch, fmt, 8192, colormask=0xE)
    assert taken == []
    assert (np.frombuffer(got.tobytes(), F32).reshape(-1, 4)[:, 0] == F32(0.3)).all()
    want, _ = render(screen, monkeypatch, fmt, 1 << 40, colormask=0xE)
    assert got.tobytes() == want.tobytes()


# -- two triangles' planes over one rectangle (MixedPlaneColour) ----------------------


def mixed_colour(rng, w, h, parts):
    """Two close planes (the halves of a clipped triangle round differently)
    over a w x h rectangle, split by a diagonal edge inside the crossed part."""
    base = np.array(
        [rng.uniform(40, 200, 4), rng.uniform(-0.05, 0.05, 4), rng.uniform(-0.05, 0.05, 4)]
    )
    other = base + rng.normal(0, 1e-4, base.shape)
    a = plane_colour(base, 5, 9, w, h)
    b = plane_colour(other, 5, 9, w, h)
    y, x = np.mgrid[0:h, 0:w]
    sel = x * h < (h - y) * w  # a above the diagonal
    for x0, x1, kind in parts:
        if kind != 2:
            sel[:, x0:x1] = kind == 0
    return fragment.MixedPlaneColour(a, b, sel, parts)


@pytest.mark.parametrize("perm", PERMS, ids=lambda p: "".join(map(str, p)))
@pytest.mark.parametrize("parts", [None, "three"], ids=["all crossed", "three parts"])
def test_mixed_interleaved_bytes_are_the_channel_stores(perm, parts):
    rng = np.random.default_rng(perm[0] + 17)
    h, w = 140, 600
    runs = [(0, w, 2)] if parts is None else [(0, 150, 0), (150, 420, 2), (420, w, 1)]
    colour = mixed_colour(rng, w, h, runs)
    want = mixed_stored_unorm8(colour, perm)
    # not vacuous: both planes' bytes are in the result, and they differ somewhere
    assert not np.array_equal(channel_stores(colour.a, want.shape, perm), want)


def test_mixed_planes_needing_a_clamp_are_left_to_the_channel_stores():
    rng = np.random.default_rng(3)
    colour = mixed_colour(rng, 300, 100, [(0, 300, 2)])
    colour.b.scaled[0, 1] = 300.0  # b's green beyond 255.99
    colour.b._lines = None
    pixels = np.zeros((100, 300, 4), np.uint8)
    assert not fragment.store_mixed_interleaved(
        pixels, pixels.view(np.uint32)[..., 0], colour, PERMS[0]
    )
    assert not pixels.any()


# arbitrary corner colours: the clipped halves' planes round differently
MIXED_FILL = [
    [-1, -1, 0.5, 1.0, 0.83, 0.21, 0.35, 1],
    [3, -1, 0.5, 1.0, 0.12, 0.77, 0.41, 1],
    [-1, 3, 0.5, 1.0, 0.29, 0.33, 0.91, 1],
]


def mixed_fill(screen, monkeypatch, store: str, fmt, threaded: bool) -> bytes:
    """MIXED_FILL on a 384x128 ``fmt`` target with the channel stores and with
    ``store`` (a fragment function, spied on): asserts that every band's
    rectangle took ``store`` and that both give the same bytes; returns them."""
    real = getattr(fragment, store)
    taken = []

    def spy(*args):
        done = real(*args)
        taken.append(done)
        return done

    monkeypatch.setattr(fragment, store, spy)
    out = {}
    for minimum in (1 << 40, 8192):
        monkeypatch.setattr(fragment, "INTERLEAVED_MIN_PIXELS", minimum)
        ctx = screen.context_create(threaded=threaded)
        try:
            rt, _ = make_target(screen, ctx, 384, 128, fmt=fmt)
            bind_passthrough(ctx)
            ctx.clear(pipe.Clear.COLOR0, color=(0.3, 0.3, 0.3, 0.3))
            out[minimum] = draw_and_read(ctx, MIXED_FILL, rt)[0]
        finally:
            ctx.destroy()
        if minimum == 8192:
            assert taken and all(taken)  # every band's rectangle
        else:
            assert taken == [False] * len(taken)
            taken.clear()
    assert out[8192].tobytes() == out[1 << 40].tobytes()
    return out[8192].tobytes()


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_a_fill_of_two_different_planes_through_a_context(screen, monkeypatch, threaded):
    got = mixed_fill(
        screen, monkeypatch, "store_mixed_interleaved", pipe.Format.B8G8R8A8_UNORM, threaded
    )
    assert len(np.unique(np.frombuffer(got, np.uint32))) > 1000


# -- two triangles' planes into a float target ------------------------------------------


def mixed_float_colour(rng, w, h, parts):
    """Two close float planes (as mixed_colour) split by a diagonal edge."""
    base = float_planes(rng)
    other = base * (1 + rng.normal(0, 1e-5, base.shape))
    a = float_colour(base, 5, 9, w, h)
    b = float_colour(other, 5, 9, w, h)
    y, x = np.mgrid[0:h, 0:w]
    sel = x * h < (h - y) * w
    for x0, x1, kind in parts:
        if kind != 2:
            sel[:, x0:x1] = kind == 0
    return fragment.MixedPlaneColour(a, b, sel, parts)


@pytest.mark.parametrize("nch", [4, 2, 1])
@pytest.mark.parametrize("parts", [None, "three"], ids=["all crossed", "three parts"])
def test_mixed_float_bits_are_the_stack(nch, parts):
    rng = np.random.default_rng(nch + 40)
    h, w = 130, 520
    runs = [(0, w, 2)] if parts is None else [(0, 140, 0), (140, 400, 2), (400, w, 1)]
    colour = mixed_float_colour(rng, w, h, runs)
    want = stored_float(fragment.store_mixed_float32, colour, nch)
    # not vacuous: the planes' sums differ where the edge crosses
    only_a = np.moveaxis(colour.a.stack()[:nch], 0, -1)
    assert not np.array_equal(only_a.view(np.uint32), want.view(np.uint32))


def test_mixed_float_planes_it_cannot_take_exactly_are_left_alone():
    rng = np.random.default_rng(5)
    for row, col, value in ((0, 2, np.nan), (1, 1, np.inf), (0, 0, -0.0)):
        colour = mixed_float_colour(rng, 300, 100, [(0, 300, 2)])
        colour.b.coef[row, col] = value  # b's planes only
        if value == 0:
            colour.b.coef[1, col] = -0.0  # a row term of -0 at x = 0 (px starts at 5: -0*5 is -0)
        colour.b._float_lines = None
        view = np.full((100, 300, 4), 3.0, F32)
        with np.errstate(invalid="ignore", over="ignore"):
            assert not fragment.store_mixed_float32(view, colour)
        assert (view == 3.0).all()


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
@pytest.mark.parametrize("fmt", FLOAT_FORMATS, ids=lambda f: f.name)
def test_a_fill_of_two_different_planes_into_float_targets(screen, monkeypatch, fmt, threaded):
    got = mixed_fill(screen, monkeypatch, "store_mixed_float32", fmt, threaded)
    assert len(np.unique(np.frombuffer(got, F32))) > 1000


# -- a half-plane's two sides: each row's own columns, strip by strip ------------------


def edge_case(rng, w, h, steep):
    """A shared edge across a w x h rectangle at (5, 9): (c, dx, dy) of
    ``c - dx*x + dy*y > 0`` (1/256-pixel units, either direction), crossing
    every row (steep: a few columns a strip) or leaving rows wholly one side."""
    dx = int(rng.integers(200, 3000)) * int(rng.choice([-1, 1]))
    dy = int(rng.integers(1, 3000)) * int(rng.choice([-1, 1]))
    if steep:
        dy = dy // 40 or 1
    xm, ym = 5 + w // 2, 9 + h // 2  # the edge through the middle, give or take
    c = dx * xm - dy * ym + int(rng.integers(-5000, 5000))
    return c, dx, dy


def edge_mixed(colour_a, colour_b, c, dx, dy, w, h, parts, with_counts):
    px = np.arange(5, 5 + w, dtype=np.int64)
    py = np.arange(9, 9 + h, dtype=np.int64)
    sel, counts = raster._edge_sides(c, dx, dy, px, py, parts)
    return fragment.MixedPlaneColour(
        colour_a, colour_b, sel, parts, dx > 0, counts if with_counts else None
    )


@pytest.mark.parametrize("seed", range(6))
def test_edge_sides_are_the_edge_function(seed):
    rng = np.random.default_rng(seed)
    w, h = int(rng.integers(40, 300)), int(rng.integers(10, 150))
    c, dx, dy = edge_case(rng, w, h, seed % 2 == 0)
    px = np.arange(5, 5 + w, dtype=np.int64)
    py = np.arange(9, 9 + h, dtype=np.int64)
    want = ((c - dx * px)[None, :] + (dy * py)[:, None]) > 0
    parts = [None, [(0, w // 3, 0), (w // 3, w - 7, 2), (w - 7, w, 1)]][seed % 2]
    sel, counts = raster._edge_sides(c, dx, dy, px, py, parts)
    for p0, p1, kind in [(0, w, 2)] if parts is None else parts:
        if kind == 2:
            assert np.array_equal(sel[:, p0:p1], want[:, p0:p1])
            assert counts[p0, p1].tolist() == want[:, p0:p1].sum(1).tolist()
        else:
            assert (sel[:, p0:p1] == (kind == 0)).all()
    assert 0 < want.sum() < want.size  # the edge crosses the rectangle


@pytest.mark.parametrize("steep", [True, False], ids=["steep", "shallow"])
@pytest.mark.parametrize("seed", range(4))
def test_half_plane_mixed_stores_are_the_channel_stores(seed, steep):
    rng = np.random.default_rng(seed + 90)
    h, w = 101, 530  # (not whole strips of MIXED_STRIP_ROWS)
    perm = PERMS[seed]
    c, dx, dy = edge_case(rng, w, h, steep)
    parts = [None, [(0, 90, 0), (90, 470, 2), (470, w, 1)]][seed % 2]
    base = np.array(
        [rng.uniform(40, 200, 4), rng.uniform(-0.05, 0.05, 4), rng.uniform(-0.05, 0.05, 4)]
    )
    a = plane_colour(base, 5, 9, w, h)
    b = plane_colour(base + rng.normal(0, 1e-4, base.shape), 5, 9, w, h)
    for with_counts in (True, False):
        colour = edge_mixed(a, b, c, dx, dy, w, h, parts, with_counts)
        want = mixed_stored_unorm8(colour, perm)
        assert not np.array_equal(channel_stores(a, want.shape, perm), want)  # (b's pixels)
    # float targets: the stack's bits
    fa = float_colour(float_planes(rng), 5, 9, w, h)
    fb = float_colour(fa.coef * (1 + rng.normal(0, 1e-5, (3, 4))), 5, 9, w, h)
    for nch in (4, 2, 1):
        colour = edge_mixed(fa, fb, c, dx, dy, w, h, parts, True)
        stored_float(fragment.store_mixed_float32, colour, nch)
