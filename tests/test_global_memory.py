"""GLOBAL memory: ``set_global_binding`` and MEMORY[], GLOBAL in compute programs.

Buffer k of the binding occupies the 32-bit addresses from ``(k + 1) << 26``
(64 MiB windows; PIPE_COMPUTE_CAP_ADDRESS_BITS 32); ``set_global_binding``
adds that base to the offset the caller left in each handle, the program
finds the addresses in its INPUT memory (as OpenCL kernel arguments), and
loads, stores and atomics reach the buffers' bytes.  An address in no bound
buffer, or past its end, loads zero and stores nothing.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import get_screen

from gallium import pipe

U32 = np.uint32

# out[i] = a[i] + b[i] (a, b, out three global buffers whose addresses are INPUT
# words 0, 1, 2); ATOMUADD 1 on the word at INPUT word 3's address
# (a fourth buffer), its old value into oldv[i] (INPUT word 4's address).
# (A LOAD's channels are consecutive words: .y is the word after .x's.)
PROG = """COMP
PROPERTY CS_FIXED_BLOCK_WIDTH 64
PROPERTY CS_FIXED_BLOCK_HEIGHT 1
PROPERTY CS_FIXED_BLOCK_DEPTH 1
DCL SV[0], THREAD_ID
DCL SV[1], BLOCK_ID
DCL MEMORY[0], GLOBAL
DCL MEMORY[1], INPUT
DCL TEMP[0..5]
IMM[0] UINT32 {0, 4, 8, 12}
IMM[1] UINT32 {16, 64, 1, 0}
  0: LOAD TEMP[0], MEMORY[1], IMM[0].xxxx
  1: LOAD TEMP[1].x, MEMORY[1], IMM[1].xxxx
  2: UMAD TEMP[2].x, SV[1].xxxx, IMM[1].yyyy, SV[0].xxxx
  3: UMUL TEMP[2].x, TEMP[2].xxxx, IMM[0].yyyy
  4: UADD TEMP[3].x, TEMP[0].xxxx, TEMP[2].xxxx
  5: LOAD TEMP[4].x, MEMORY[0], TEMP[3].xxxx
  6: UADD TEMP[3].y, TEMP[0].yyyy, TEMP[2].xxxx
  7: LOAD TEMP[5].x, MEMORY[0], TEMP[3].yyyy
  8: UADD TEMP[4].x, TEMP[4].xxxx, TEMP[5].xxxx
  9: UADD TEMP[3].z, TEMP[0].zzzz, TEMP[2].xxxx
 10: STORE MEMORY[0].x, TEMP[3].zzzz, TEMP[4].xxxx
 11: ATOMUADD TEMP[4].z, MEMORY[0], TEMP[0].wwww, IMM[1].zzzz
 12: UADD TEMP[3].w, TEMP[1].xxxx, TEMP[2].xxxx
 13: STORE MEMORY[0].x, TEMP[3].wwww, TEMP[4].zzzz
 14: END
"""


def _buffer(screen, ctx, data):
    data = np.ascontiguousarray(data)
    res = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.BUFFER, format=pipe.Format.NONE, width0=data.nbytes,
            bind=pipe.Bind.GLOBAL,
        )
    )  # fmt: skip
    ctx.buffer_subdata(res, pipe.Transfer.WRITE, 0, data)
    return res


def _read(ctx, res):
    data, xfer = ctx.transfer_map(res, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, res.width0, 1, 1))
    out = np.array(data).view(U32)
    ctx.transfer_unmap(xfer)
    return out


@pytest.fixture(params=[("direct", 2), ("threaded", 2), ("direct", 0)])
def gctx(request):
    kind, workers = request.param
    screen = get_screen(workers)
    ctx = screen.context_create(threaded=kind == "threaded")
    yield screen, ctx
    ctx.destroy()


def _run(screen, ctx, n_blocks: int, offsets=(0, 0, 0, 0, 0)):
    n = 64 * n_blocks
    rng = np.random.default_rng(3)
    a = rng.integers(0, 1 << 30, n, dtype=U32)
    b = rng.integers(0, 1 << 30, n, dtype=U32)
    bufs = [
        _buffer(screen, ctx, a),
        _buffer(screen, ctx, b),
        _buffer(screen, ctx, np.zeros(n, U32)),
        _buffer(screen, ctx, np.uint32([7, 0, 0, 0])),
        _buffer(screen, ctx, np.zeros(n, U32)),
    ]
    args = np.zeros(5, U32)
    handles = [args[i : i + 1] for i in range(5)]  # uint32_t * into the kernel's input
    for h, off in zip(handles, offsets):
        h[0] = off
    ctx.set_global_binding(0, 5, bufs, handles)
    ctx.bind_compute_state(ctx.create_compute_state(pipe.ComputeState(prog=PROG, req_input_mem=20)))
    ctx.launch_grid(pipe.GridInfo(block=(64, 1, 1), grid=(n_blocks, 1, 1), input=args.tobytes()))
    return a, b, args, bufs


def test_loads_stores_and_atomics_reach_the_bound_buffers(gctx):
    screen, ctx = gctx
    a, b, args, bufs = _run(screen, ctx, 3)
    ra, rb, out, counter, old = (_read(ctx, r) for r in bufs)
    assert args.tolist() == [(k + 1) << 26 for k in range(5)]  # each slot's base
    assert np.array_equal(out, (a + b).astype(U32))
    assert np.array_equal(ra, a) and np.array_equal(rb, b)
    # the atomic counter: one increment an invocation, the old values in lane order
    assert counter.tolist() == [7 + 192, 0, 0, 0]
    assert np.array_equal(old, np.arange(7, 7 + 192, dtype=U32))


def test_handles_keep_the_offsets_the_caller_put_there(gctx):
    """A handle's value is an offset into its buffer: base + offset."""
    screen, ctx = gctx
    a, b, args, bufs = _run(screen, ctx, 1, offsets=(4, 0, 8, 4, 0))
    out, counter, old = (_read(ctx, r) for r in bufs[2:])
    assert args.tolist() == [(1 << 26) + 4, 2 << 26, (3 << 26) + 8, (4 << 26) + 4, 5 << 26]
    want = np.zeros(64, U32)
    want[2:] = (a[1:63] + b[:62]).astype(U32)  # a from word 1, out from word 2
    want[:2] = 0
    # lanes 62 and 63 store past out's end (words 64 and 65): dropped
    assert np.array_equal(out, want)
    # a[63]'s address (word 64) is past a's end: loads zero; lane 63 wrote nothing
    assert counter.tolist() == [7, 64, 0, 0]  # word 1 counted, word 0 untouched
    assert np.array_equal(old, np.arange(64, dtype=U32))


def test_unbound_and_foreign_addresses_load_zero_and_store_nothing(gctx):
    screen, ctx = gctx
    a, _, args, bufs = _run(screen, ctx, 1)
    ctx.set_global_binding(1, 1, None, None)  # b unbound: its window reads zero
    ctx.set_global_binding(4, 1, [None], [None])  # and oldv's: those stores go nowhere
    inp = args.copy()
    inp[3] = 33 << 26  # the counter's address: a window past every slot
    ctx.launch_grid(pipe.GridInfo(block=(64, 1, 1), grid=(1, 1, 1), input=inp.tobytes()))
    out, counter, old = (_read(ctx, r) for r in bufs[2:])
    assert np.array_equal(out, a)  # a + 0
    assert counter.tolist() == [7 + 64, 0, 0, 0]  # the first grid's increments only
    assert np.array_equal(old, np.arange(7, 7 + 64, dtype=U32))  # the first grid's


def test_caps_report_global_memory():
    screen = get_screen(1)
    ir = pipe.ShaderIR.TGSI
    assert screen.get_compute_param(ir, pipe.ComputeCap.ADDRESS_BITS) == 32
    assert screen.get_compute_param(ir, pipe.ComputeCap.MAX_GLOBAL_SIZE) == 32 << 26
    assert screen.support.max_global_buffers == 32


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
@pytest.mark.parametrize(
    ("args", "error", "says"),
    [
        (lambda buf: (30, 3, [buf] * 3, [np.zeros(1, U32)] * 3), ValueError, "count must be in"),
        (lambda buf: (0, 1, [buf], [np.zeros(1, np.int64)]), TypeError, "handles[0] must be"),
        (lambda buf: (0, 1, [buf], [[0]]), TypeError, "handles[0] must be a writable"),
        (lambda buf: (0, 2, [buf], [np.zeros(1, U32)]), ValueError, "at least count (2)"),
        (lambda buf: (0, 1, None, [np.zeros(1, U32)]), ValueError, "handles must be None"),
        (lambda buf: (0, 1, ["buf"], [np.zeros(1, U32)]), TypeError, "resources[0] must be"),
    ],
    ids=["past-32", "int64-handle", "list-handle", "short", "handles-without", "not-a-buffer"],
)
def test_bad_bindings_raise_at_the_call(threaded, args, error, says):
    screen = get_screen(1)
    ctx = screen.context_create(threaded=threaded)
    try:
        buf = _buffer(screen, ctx, np.zeros(4, U32))
        with pytest.raises(error) as info:
            ctx.set_global_binding(*args(buf))
        assert says in str(info.value)
        assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET
    finally:
        ctx.destroy()


def test_a_buffer_past_the_window_is_unsupported():
    screen = get_screen(1)
    ctx = screen.context_create()
    try:
        big = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.BUFFER, format=pipe.Format.NONE,
                width0=(1 << 26) + 4, bind=pipe.Bind.GLOBAL,
            )
        )  # fmt: skip
        with pytest.raises(pipe.UnsupportedError, match="at most 67108864 bytes"):
            ctx.set_global_binding(0, 1, [big], [np.zeros(1, U32)])
    finally:
        ctx.destroy()
