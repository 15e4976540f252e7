"""The trace format: values round-trip; damaged, truncated and hostile files are refused
clearly (a TraceFormatError naming the offset), never rendered, never a crash."""

from __future__ import annotations

import struct
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gallium import pipe, trace
from gallium.trace import format as fmt
from gallium.trace.calls import OPS
from gallium.trace.encoder import header_value
from gallium.trace.format import BlobRef, Ref, TraceFormatError

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from recordings import record_cubes  # noqa: E402
from test_bindless_trace import record as record_bindless  # noqa: E402

TRACES = ["small_trace", "bindless_trace"]


@pytest.fixture(scope="module")
def small_trace(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("fmt") / "small.trace"
    record_cubes(path, 3, size=16, clear_every=2)
    return path.read_bytes()


@pytest.fixture(scope="module")
def bindless_trace(tmp_path_factory) -> bytes:
    """Bindless handles made, resident, deleted over five frames (test_bindless_trace.py)."""
    path = tmp_path_factory.mktemp("fmt") / "bindless.trace"
    record_bindless(path, threaded=False)
    return path.read_bytes()


def _records(data: bytes) -> list[tuple[int, int, int]]:
    """(offset, type, total length) of every record of a valid file."""
    out, off = [], len(fmt.MAGIC)
    while off < len(data):
        rtype, _, length, _ = fmt.parse_record_header(data[off : off + 12], off)
        out.append((off, rtype, 12 + length))
        off += 12 + length
    return out


def _read_everything(data: bytes) -> None:
    """Open a trace and decode every part of it (calls, snapshots, definitions, blobs)."""
    r = trace.TraceReader(data)
    for seg in r.segments:
        for call in r.calls(seg.index):
            for a in call.args:
                if isinstance(a, BlobRef):
                    r.blob(a.name)
        if seg.index > 0:
            objects, _, _, _ = r.snapshot(seg.index)
            for _, _, definition, _ in objects:
                r.definition(definition)


# -------------------------------------------------------------------------- values


def test_values_round_trip():
    tables = fmt.Tables.current(["m"])
    rt_view = pipe.Bind.RENDER_TARGET | pipe.Bind.SAMPLER_VIEW
    value = (
        None, True, False, 0, -1, 2**63, -(2**62), 1.5, float("-inf"), "tgsi\ntext", b"\x00\xff",
        [1, [2, (3,)]], pipe.Format.R8G8B8A8_UNORM, rt_view,
        np.float32(0.1), np.arange(6, dtype=np.uint16).reshape(2, 3), Ref(7),
        pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, count=3, index=Ref(4)),
        pipe.FramebufferState(width=2, height=2, cbufs=[Ref(1), None]),
    )  # fmt: skip
    back = fmt.decode_value(fmt.encode_value(value), tables, 0)
    assert back[:12] == value[:12]
    assert type(back[12]) is pipe.Format and back[13] == value[13] and type(back[13]) is pipe.Bind
    assert back[14] == np.float32(0.1) and back[14].dtype == np.float32
    assert back[15].dtype == np.uint16 and back[15].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert back[16:] == value[16:]


def test_template_gaining_a_field_still_reads():
    """A trace written when DrawInfo had fewer fields reads with the defaults."""
    fields = fmt.TEMPLATE_FIELDS[pipe.Box]
    templates = [(n, f if n != "Box" else fields[:5]) for n, f in fmt.template_table()]
    tables = fmt.Tables([], templates, list(fmt.ENUMS), list(fmt.DTYPES))
    box_id = list(fmt.TEMPLATES).index("Box")
    data = bytes([fmt.T_TEMPLATE, box_id, 5]) + b"".join(
        fmt.encode_value(v) for v in (1, 2, 3, 4, 5)
    )
    assert fmt.decode_value(data, tables, 0) == pipe.Box(1, 2, 3, 4, 5, 0)


# -------------------------------------------------------------------------- damage


def test_a_valid_trace_reads_whole(small_trace):
    _read_everything(small_trace)
    kinds = [t for _, t, _ in _records(small_trace)]
    assert kinds[0] == fmt.HEADER and kinds[-1] == fmt.END
    assert kinds.count(fmt.BOUNDARY) == kinds.count(fmt.SNAPSHOT) == 3


@pytest.mark.parametrize("which", TRACES)
def test_truncation_at_each_record_is_named(request, which):
    small_trace = request.getfixturevalue(which)
    for off, rtype, length in _records(small_trace):
        with pytest.raises(TraceFormatError, match=f"^at offset {off}: truncated") as e:
            trace.TraceReader(small_trace[: off + length - 1])
        assert e.value.offset == off
        if rtype != fmt.HEADER:
            with pytest.raises(TraceFormatError, match=r"without its END record|has no SNAPSHOT"):
                trace.TraceReader(small_trace[:off])


def test_not_a_trace():
    with pytest.raises(TraceFormatError, match="at offset 0: not a numpipe trace"):
        trace.TraceReader(b"GIF89a...")
    with pytest.raises(TraceFormatError, match="at offset 0: truncated"):
        trace.TraceReader(fmt.MAGIC[:5])


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@pytest.mark.parametrize("which", TRACES)
@given(data=st.data())
def test_any_flipped_byte_is_detected(request, which, data):
    small_trace = request.getfixturevalue(which)
    pos = data.draw(st.integers(0, len(small_trace) - 1))
    flip = data.draw(st.integers(1, 255))
    damaged = bytearray(small_trace)
    damaged[pos] ^= flip
    with pytest.raises(TraceFormatError) as e:
        _read_everything(bytes(damaged))
    assert e.value.offset is not None and e.value.offset <= pos
    assert str(e.value).startswith(f"at offset {e.value.offset}: ")


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@pytest.mark.parametrize("which", TRACES)
@given(data=st.data())
def test_cut_or_spliced_files_are_refused(request, which, data):
    small_trace = request.getfixturevalue(which)
    cut = data.draw(st.integers(0, len(small_trace) - 1))
    junk = data.draw(st.binary(min_size=0, max_size=64))
    with pytest.raises(TraceFormatError) as e:
        _read_everything(small_trace[:cut] + junk)
    assert e.value.offset is not None


# -------------------------------------------------------------------------- hostile records


_SCREEN_DEF = fmt.encode_value(("@screen", ("numpipe",), None))
_CONTEXT_DEF = fmt.encode_value(("context_create", (None, 0), None))


def _file(*records: tuple[int, bytes]) -> bytes:
    """A trace file: the HEADER, the definitions of screen #1 and context #2, ``records``."""
    out = bytearray(fmt.MAGIC)
    out += fmt.frame_record(fmt.HEADER, *fmt.pack_body(fmt.encode_value(header_value()), 6))
    for d in (_SCREEN_DEF, _CONTEXT_DEF):
        out += fmt.frame_record(fmt.BLOB, *fmt.pack_blob(fmt.digest(d), d, 6))
    for rtype, raw in records:
        out += fmt.frame_record(rtype, *fmt.pack_body(raw, 6))
    return bytes(out)


def _first(data: bytes, rtype: int) -> int:
    return next(off for off, t, _ in _records(data) if t == rtype)


def _raw_call(op: int, target: int, args: bytes, result: bytes = bytes([fmt.T_NONE])) -> bytes:
    head = bytes([fmt.T_TUPLE, 5]) + fmt.encode_value(op) + fmt.encode_value(target)
    return head + args + bytes([fmt.T_NONE]) + result


def _call(op: str, args: bytes) -> bytes:
    return _raw_call(OPS[op], 2, args)


def _screen_and_context() -> bytes:
    """The calls that make screen #1 and context #2."""
    make_screen = _raw_call(
        OPS["@screen"],
        0,
        fmt.encode_value((BlobRef(fmt.digest(_SCREEN_DEF)),)),
        fmt.encode_value(Ref(1)),
    )
    make_ctx = _raw_call(
        OPS["context_create"], 1, fmt.encode_value((BlobRef(fmt.digest(_CONTEXT_DEF)),)),
        fmt.encode_value(Ref(2)),
    )  # fmt: skip
    return make_screen + make_ctx


def _calls_file(*values: bytes, end: tuple = (0, 1, False)) -> bytes:
    body = fmt.encode_value(0) + b"".join(values)
    return _file((fmt.CALLS, body), (fmt.END, fmt.encode_value(end)))


def _args(*tags: int) -> bytes:
    """The start of a one-argument tuple: ``(`` then the given tag bytes."""
    return bytes([fmt.T_TUPLE, 1, *tags])


_BIG = b"\x80\x80\x80\x80\x80\x80\x80\x80\x40"  # a varint of 2**62
_BOX = list(fmt.TEMPLATES).index("Box")
_PRIM = list(fmt.ENUMS).index("Prim")
HOSTILE = {
    "a list claiming 2**40 items": (_args(fmt.T_LIST) + b"\x80\x80\x80\x80\x80\x20", "count"),
    "values nested 10,000 deep": (
        bytes([fmt.T_TUPLE, 1]) + bytes([fmt.T_LIST, 1]) * 10_000 + bytes([fmt.T_NONE]),
        "nested too deeply",
    ),
    "an integer of 100 bytes": (_args(fmt.T_INT) + b"\xff" * 100 + b"\x01", "over 64 bits"),
    "an array of 2**62 elements": (_args(fmt.T_ARRAY, 2, 2) + _BIG * 2, "size limit"),
    "an array whose data is short": (
        _args(fmt.T_ARRAY, 2, 1, 100, fmt.T_BYTES, 3) + b"abc",
        "holds 3 bytes",
    ),
    "an unknown tag": (_args(99), "unknown value tag 99"),
    "an unknown template": (_args(fmt.T_TEMPLATE, 120, 0), "unknown state template"),
    "a template with too few fields": (
        _args(fmt.T_TEMPLATE, _BOX, 2, fmt.T_NONE, fmt.T_NONE),
        "Box with 2 fields",
    ),
    "an enum value out of range": (
        _args(fmt.T_ENUM, _PRIM) + fmt.encode_value(1000)[1:],
        "is not a Prim",
    ),
    "a string that is not UTF-8": (_args(fmt.T_STR, 2, 0xC3, 0x28), "not UTF-8"),
    "a string longer than its record": (_args(fmt.T_STR, 0xE8, 0x07, 65), "count 1000"),
    "an unknown dtype": (_args(fmt.T_SCALAR, 77), "unknown dtype"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_values_are_refused_at_their_record(case):
    args, message = HOSTILE[case]
    data = _calls_file(_call("set_sample_mask", args))
    calls_offset = _first(data, fmt.CALLS)
    with pytest.raises(TraceFormatError, match=message) as e:
        _read_everything(data)
    assert e.value.offset == calls_offset


def test_hostile_records():
    # a compressed body that claims 100 bytes and inflates to 10 MB: stopped at 101
    bomb = zlib.compress(b"\x00" * (10 << 20))
    payload = struct.pack("<I", 100) + bomb
    end = fmt.frame_record(fmt.END, *fmt.pack_body(fmt.encode_value((0, 0, False)), 6))
    data = _file() + fmt.frame_record(fmt.CALLS, payload, fmt.FLAG_ZLIB) + end
    with pytest.raises(TraceFormatError, match="does not inflate to its stated 100 bytes"):
        _read_everything(data)
    # a blob whose contents do not match its name
    name = bytes(16)
    blob = fmt.frame_record(fmt.BLOB, *fmt.pack_blob(name, b"x" * 100, 6))
    data2 = _calls_file(_call("buffer_subdata", _args(fmt.T_BLOB) + name))
    at = _first(data2, fmt.CALLS)
    spliced = data2[:at] + blob + data2[at:]
    with pytest.raises(TraceFormatError, match="does not match its digest") as e:
        _read_everything(spliced)
    assert e.value.offset == at
    # a record whose length runs past the end of the file
    head = struct.pack("<BBHI", fmt.CALLS, 0, 0, 1 << 30)
    bad = fmt.MAGIC + head + struct.pack("<I", zlib.crc32(head)) + b"xx"
    with pytest.raises(TraceFormatError, match="runs past the end of the file"):
        trace.TraceReader(bad)
    # a call naming a method this reader does not know, a reference to a blob not stored
    with pytest.raises(TraceFormatError, match="unknown method"):
        _read_everything(_calls_file(_raw_call(999, 2, fmt.encode_value(()))))
    with pytest.raises(TraceFormatError, match="is referenced but not in the trace"):
        _read_everything(_calls_file(_call("buffer_subdata", _args(fmt.T_BLOB) + bytes(16))))


def test_hostile_calls_do_not_reach_the_driver_unchecked(tmp_path):
    """Well-formed records with nonsense in them fail on replay with a replay error."""
    cases = [
        _call("draw_vbo", fmt.encode_value(("not a DrawInfo",))),
        _call("bind_blend_state", fmt.encode_value((Ref(99),))),
        _call("set_sample_mask", fmt.encode_value(())),
    ]
    for case in cases:
        data = _file(
            (fmt.CALLS, fmt.encode_value(0) + _screen_and_context() + case),
            (fmt.BOUNDARY, fmt.encode_value((0, True, True, False, Ref(2), None, True, [], 3))),
            (fmt.SNAPSHOT, fmt.encode_value((1, [], [], [], []))),
            (fmt.END, fmt.encode_value((1, 3, True))),
        )
        with pytest.raises(trace.TraceReplayError, match="call 2 "):
            list(trace.replay(data, threaded=False))


@settings(max_examples=300, deadline=None)
@given(body=st.binary(min_size=0, max_size=200))
def test_random_call_bodies_only_ever_give_format_errors(body):
    data = _calls_file(body)
    try:
        _read_everything(data)
    except TraceFormatError as e:
        assert e.offset is not None


# -------------------------------------------------------------------------- bindless handles


def test_a_trace_of_another_format_version_is_refused():
    old = (1, *header_value()[1:])
    data = fmt.MAGIC + fmt.frame_record(fmt.HEADER, *fmt.pack_body(fmt.encode_value(old), 6))
    with pytest.raises(
        TraceFormatError, match=r"^at offset 8: trace format version 1; this reader reads version 2"
    ):
        trace.TraceReader(data)


_TEX_HANDLE = OPS["create_texture_handle"]
_RESIDENT = OPS["make_texture_handle_resident"]
_H = (1 << 32) | 1


def _snapshot_file(handles: list, ncalls: int = 2) -> tuple[bytes, int]:
    """Screen #1, context #2 (2 calls), the end of frame 0, then the SNAPSHOT that starts
    frame 1 (no calls) holding ``handles``; returns the file and that SNAPSHOT's offset."""
    objects = [
        (Ref(1), Ref(0), BlobRef(fmt.digest(_SCREEN_DEF)), False),
        (Ref(2), Ref(1), BlobRef(fmt.digest(_CONTEXT_DEF)), False),
    ]
    data = _file(
        (fmt.CALLS, fmt.encode_value(0) + _screen_and_context()),
        (fmt.BOUNDARY, fmt.encode_value((0, True, True, False, Ref(2), None, True, [], ncalls))),
        (fmt.SNAPSHOT, fmt.encode_value((1, objects, [], [], handles))),
        (fmt.BOUNDARY, fmt.encode_value((1, True, True, False, Ref(2), None, True, [], 2))),
        (fmt.SNAPSHOT, fmt.encode_value((2, objects, [], [], []))),
        (fmt.END, fmt.encode_value((2, 2, True))),
    )
    return data, _first(data, fmt.SNAPSHOT)


_ENTRY = (_TEX_HANDLE, (Ref(5), None), None)
HOSTILE_HANDLES = {
    "more handles made than calls": ([(Ref(2), 3, [], [])], "made 3 handles in 2 calls"),
    "2**62 handles made": ([(Ref(2), 1 << 62, [], [])], "handles in 2 calls"),
    "a count that is no integer": ([(Ref(2), "2", [], [])], "made '2' handles"),
    "a live handle made after the count": ([(Ref(2), 1, [(_H, 2, _ENTRY)], [])], "shape"),
    "two live handles made as one": (
        [(Ref(2), 2, [(_H, 1, _ENTRY), (_H + 1, 1, _ENTRY)], [])], "shape",
    ),
    "a handle that is no integer": ([(Ref(2), 1, [(1.5, 1, _ENTRY)], [])], "shape"),
    "a resident handle that is not live": (
        [(Ref(2), 1, [(_H, 1, _ENTRY)], [(_H + 1, (_RESIDENT, (_H + 1, True), None))])], "shape",
    ),
    "an entry that is no call": ([(Ref(2), 1, [(_H, 1, ("x", (), None))], [])], "shape"),
    "a context that is no reference": ([(2, 1, [], [])], "shape"),
}  # fmt: skip


def test_a_handle_count_is_bounded_by_the_calls_the_file_holds():
    """A boundary may claim any number of calls; the records before it hold at most one
    call per 10 decoded bytes, and no more handles than that were made (a replay that
    starts there makes them all again)."""
    size = len(fmt.encode_value(0) + _screen_and_context())
    bound = size // 10
    data, offset = _snapshot_file([(Ref(2), bound + 1, [], [])], ncalls=1 << 40)
    with pytest.raises(TraceFormatError, match=f"made {bound + 1} handles in {bound} calls") as e:
        _read_everything(data)
    assert e.value.offset == offset
    _read_everything(_snapshot_file([(Ref(2), bound, [], [])], ncalls=1 << 40)[0])


@pytest.mark.parametrize("case", sorted(HOSTILE_HANDLES))
def test_hostile_handle_snapshots_are_refused_at_their_record(case):
    handles, message = HOSTILE_HANDLES[case]
    data, offset = _snapshot_file(handles)
    with pytest.raises(TraceFormatError, match=message) as e:
        _read_everything(data)
    assert e.value.offset == offset


def test_a_snapshot_handle_entry_of_another_kind_fails_on_replay():
    """A well-formed snapshot whose live handle's entry names a state call: a format error
    when a frame starts there (and the frame from the beginning replays)."""
    entry = (OPS["set_sample_mask"], (1,), None)
    data, _ = _snapshot_file([(Ref(2), 1, [(_H, 1, entry)], [])])
    _read_everything(data)
    with trace.Replayer(data, threaded=False) as r:
        assert r.frame_count == 2 and r.start_frame(1) == 1
        with pytest.raises(TraceFormatError, match="'set_sample_mask' is no handle call"):
            r.frame(1)
