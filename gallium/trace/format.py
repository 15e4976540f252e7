"""The trace file format: framing, checksums and the value codec (no I/O here).

A trace file is the 8-byte magic ``MAGIC`` followed by *records*.  Every
record is a 12-byte header and a payload::

    u8  type        HEADER, BLOB, CALLS, BOUNDARY, SNAPSHOT or END
    u8  flags       bit 0: the payload (after its size prefix) is zlib-compressed
    u16 reserved    0
    u32 length      bytes of payload that follow the header
    u32 crc32       of header bytes 0..7 and the payload

so a reader can walk the file record by record, check each one before it uses
it, and name the byte offset of the first one that is damaged or cut short.

Payloads:

* ``HEADER`` (the first record): one encoded value, a tuple
  ``(version, creator, methods, templates, enums, dtypes)``; the last four
  are the name tables that the ids of the encoded values below refer to, so a
  reader maps the writer's ids onto its own classes by name.
* ``BLOB``: ``digest (16 bytes) | raw size (u64) | data``: content stored
  once, named by its BLAKE2b-128 digest, which the reader checks after
  decompression.  Resource contents, user buffers over ``INLINE_MAX`` bytes
  and object definitions (the arguments of the ``create_*`` call that made
  an object) are blobs.
* ``CALLS``, ``BOUNDARY``, ``SNAPSHOT``, ``END``: ``raw size (u32) | data``,
  data being encoded values (see :mod:`gallium.trace.encoder` for what each
  holds).

Versions.  ``VERSION`` changes whenever what a record holds, or what a
recording leaves out, changes; a reader reads its own version only and names
both in its error (a trace is re-recorded, not converted).  Version 1 passed
the bindless handle calls through unrecorded (a replay of a program using
them was wrong); version 2 records them and adds the handles to SNAPSHOT.

Values are encoded with one tag byte each (``T_*`` below); integers as
zig-zag varints, floats as IEEE doubles, containers with their item count
first.  Decoding never builds anything but plain data, the pipe state
templates and enums named in the header, and numpy arrays of plain numeric
dtypes: no pickle, no code, no attribute lookups by name from the file.
Every count and size is checked against the bytes that remain before
anything is allocated, nesting is limited, and any violation is a
:class:`TraceFormatError` naming the record's file offset.
"""

from __future__ import annotations

import dataclasses
import enum
import struct
import zlib
from typing import Any

import numpy as np

from ..pipe import enums as _enums
from ..pipe import state as _state

MAGIC = b"\x89NPTRACE"
VERSION = 2

HEADER, BLOB, CALLS, BOUNDARY, SNAPSHOT, END = 1, 2, 3, 4, 5, 6
RECORD_NAMES = {
    HEADER: "HEADER",
    BLOB: "BLOB",
    CALLS: "CALLS",
    BOUNDARY: "BOUNDARY",
    SNAPSHOT: "SNAPSHOT",
    END: "END",
}
FLAG_ZLIB = 1

_RECORD = struct.Struct("<BBHII")
RECORD_HEADER_SIZE = _RECORD.size  # 12
DIGEST_SIZE = 16

# Limits a reader enforces before allocating (a writer never exceeds them).
MAX_PAYLOAD = 1 << 31  # stored bytes of one record
MAX_RAW = 1 << 31  # decompressed bytes of one record or blob
MAX_DEPTH = 48  # nesting of encoded values
MAX_NDIM = 8
INLINE_MAX = 256  # bytes objects up to this size stay inside the call record

# value tags
T_NONE, T_FALSE, T_TRUE, T_INT, T_FLOAT, T_STR, T_BYTES, T_BLOB = range(8)
T_LIST, T_TUPLE, T_TEMPLATE, T_ENUM, T_REF, T_ARRAY, T_SCALAR, T_OPAQUE = range(8, 16)

# numpy dtypes a trace may carry (user buffers, colours, data)
DTYPES = (
    "|b1",
    "|i1",
    "|u1",
    "<i2",
    "<u2",
    "<i4",
    "<u4",
    "<i8",
    "<u8",
    "<f2",
    "<f4",
    "<f8",
    ">i2",
    ">u2",
    ">i4",
    ">u4",
    ">i8",
    ">u8",
    ">f2",
    ">f4",
    ">f8",
)


class TraceFormatError(ValueError):
    """The file is not a readable trace: damaged, truncated or hostile.

    ``offset`` is the file offset of the record (or byte) where the problem was
    found; the message always names it.
    """

    def __init__(self, message: str, offset: int | None = None) -> None:
        self.offset = offset
        if offset is not None:
            message = f"at offset {offset}: {message}"
        super().__init__(message)


# -------------------------------------------------------------------------- registries


def _templates() -> dict[str, type]:
    out = {}
    for name in dir(_state):
        obj = getattr(_state, name)
        if (
            isinstance(obj, type)
            and dataclasses.is_dataclass(obj)
            and obj.__module__ == _state.__name__
        ):
            out[name] = obj
    return dict(sorted(out.items()))


def _enum_classes() -> dict[str, type]:
    out = {}
    for name in dir(_enums):
        obj = getattr(_enums, name)
        if (
            isinstance(obj, type)
            and issubclass(obj, enum.Enum)
            and obj.__module__ == _enums.__name__
        ):
            out[name] = obj
    return dict(sorted(out.items()))


TEMPLATES: dict[str, type] = _templates()
ENUMS: dict[str, type] = _enum_classes()
TEMPLATE_FIELDS: dict[type, tuple[str, ...]] = {
    cls: tuple(f.name for f in dataclasses.fields(cls)) for cls in TEMPLATES.values()
}


def digest(data: Any) -> bytes:
    """The content name of ``data`` (a bytes-like object): BLAKE2b, 16 bytes."""
    import hashlib

    return hashlib.blake2b(data, digest_size=DIGEST_SIZE).digest()


# -------------------------------------------------------------------------- framing


def frame_record(rtype: int, payload: bytes | bytearray | memoryview, flags: int = 0) -> bytes:
    """Header + payload of one record, with its checksum."""
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"record payload of {len(payload)} bytes is over the format's limit")
    head = _RECORD.pack(rtype, flags, 0, len(payload), 0)[:8]
    crc = zlib.crc32(payload, zlib.crc32(head))
    return head + struct.pack("<I", crc) + bytes(payload)


def parse_record_header(head: bytes, offset: int) -> tuple[int, int, int, int]:
    """``(type, flags, length, crc)`` of a record header read at ``offset``."""
    if len(head) < RECORD_HEADER_SIZE:
        raise TraceFormatError(
            f"truncated record header ({len(head)} of {RECORD_HEADER_SIZE} bytes)", offset
        )
    rtype, flags, reserved, length, crc = _RECORD.unpack(head)
    if rtype not in RECORD_NAMES:
        raise TraceFormatError(f"unknown record type {rtype} (damaged file?)", offset)
    if flags & ~FLAG_ZLIB or reserved:
        raise TraceFormatError(f"bad record flags {flags:#x}/{reserved:#x} (damaged file?)", offset)
    if length > MAX_PAYLOAD:
        raise TraceFormatError(f"record length {length} is over the limit {MAX_PAYLOAD}", offset)
    return rtype, flags, length, crc


def check_crc(head: bytes, payload: bytes, crc: int, offset: int) -> None:
    if zlib.crc32(payload, zlib.crc32(head[:8])) != crc:
        raise TraceFormatError(
            f"{RECORD_NAMES.get(head[0], '?')} record fails its checksum (damaged file)", offset
        )


def pack_body(raw: bytes | bytearray, level: int) -> tuple[bytes, int]:
    """``raw size | data`` for CALLS/BOUNDARY/END payloads, compressed if it pays."""
    if len(raw) > MAX_RAW:
        raise ValueError("record is over the format's size limit")
    size = struct.pack("<I", len(raw))
    if len(raw) >= 64:
        packed = zlib.compress(raw, level)
        if len(packed) < len(raw):
            return size + packed, FLAG_ZLIB
    return size + bytes(raw), 0


def unpack_body(payload: bytes, flags: int, offset: int) -> bytes:
    if len(payload) < 4:
        raise TraceFormatError("record payload too short for its size field", offset)
    (size,) = struct.unpack_from("<I", payload)
    return _inflate(memoryview(payload)[4:], size, flags, offset)


def pack_blob(name: bytes, raw: bytes | memoryview, level: int) -> tuple[bytes, int]:
    head = name + struct.pack("<Q", len(raw))
    if len(raw) >= 64:
        packed = zlib.compress(raw, level)
        if len(packed) < len(raw):
            return head + packed, FLAG_ZLIB
    return head + bytes(raw), 0


def blob_head(payload: bytes, offset: int) -> tuple[bytes, int]:
    """``(digest, raw size)`` of a BLOB payload, checked."""
    if len(payload) < DIGEST_SIZE + 8:
        raise TraceFormatError("BLOB record too short for its digest and size", offset)
    name = bytes(payload[:DIGEST_SIZE])
    (size,) = struct.unpack_from("<Q", payload, DIGEST_SIZE)
    if size > MAX_RAW:
        raise TraceFormatError(f"blob size {size} is over the limit {MAX_RAW}", offset)
    return name, size


def unpack_blob(payload: bytes, flags: int, offset: int) -> tuple[bytes, bytes]:
    name, size = blob_head(payload, offset)
    raw = _inflate(memoryview(payload)[DIGEST_SIZE + 8 :], size, flags, offset)
    if digest(raw) != name:
        raise TraceFormatError(f"blob {name.hex()} does not match its digest (damaged)", offset)
    return name, raw


def _inflate(data: memoryview, size: int, flags: int, offset: int) -> bytes:
    if size > MAX_RAW:
        raise TraceFormatError(f"record size {size} is over the limit {MAX_RAW}", offset)
    if not flags & FLAG_ZLIB:
        if len(data) != size:
            raise TraceFormatError(f"record holds {len(data)} bytes, its size field {size}", offset)
        return bytes(data)
    d = zlib.decompressobj()
    try:
        out = d.decompress(data, size + 1)  # never more than the size it claims (+1 to see it)
    except zlib.error as exc:
        raise TraceFormatError(f"compressed data is damaged ({exc})", offset) from None
    if len(out) != size or not d.eof or d.unconsumed_tail or d.unused_data:
        raise TraceFormatError(
            f"compressed data does not inflate to its stated {size} bytes", offset
        )
    return out


# -------------------------------------------------------------------------- encoding


class Opaque:
    """A value that cannot be stored (a Python callable): kept as its description."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"<opaque {self.text}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Opaque) and other.text == self.text

    __hash__ = None  # type: ignore[assignment]


class Ref:
    """A reference to a traced object by its id, as a decoded value."""

    __slots__ = ("tid",)

    def __init__(self, tid: int) -> None:
        self.tid = tid

    def __repr__(self) -> str:
        return f"#{self.tid}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Ref) and other.tid == self.tid

    def __hash__(self) -> int:
        return hash(("ref", self.tid))


class BlobRef:
    """A decoded reference to a blob (resolved by the reader on demand)."""

    __slots__ = ("name",)

    def __init__(self, name: bytes) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<blob {self.name.hex()[:12]}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BlobRef) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


class Raw:
    """An already encoded value: the encoder splices its bytes as they are."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


# Markers of the recorder's snapshots (snapshot.py): plain objects, which the
# garbage collector does not track, heading tuples the encoder reads as
# (TEMPLATE_MARK, class index, values), (LIST_MARK, items), (REF_MARK, id).
TEMPLATE_MARK = object()
LIST_MARK = object()
REF_MARK = object()

TEMPLATE_IDS = {cls: i for i, cls in enumerate(TEMPLATES.values())}
_ENUM_IDS = {cls: i for i, cls in enumerate(ENUMS.values())}
_DTYPE_IDS = {np.dtype(s): i for i, s in enumerate(DTYPES)}
_pack_d = struct.Struct("<d").pack


def _varint(out: bytearray, n: int) -> None:
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


class Encoder:
    """Encode snapshotted values into bytes.

    ``ref`` maps a live object to its trace id (``None``: not a traced object);
    ``blob`` stores a bytes-like object and returns its digest.  Both are
    provided by the caller, which owns the object table and the blob store.
    ``seen``: a list that the ids of already snapshotted references
    (``(REF_MARK, id)``) are appended to (``ref`` notes the others itself).
    """

    def __init__(self, ref, blob, seen: list | None = None) -> None:
        self.out = bytearray()
        self._ref = ref
        self._blob = blob
        self._seen = seen

    def take(self) -> bytearray:
        out, self.out = self.out, bytearray()
        return out

    def value(self, v: Any) -> None:
        out = self.out
        t = type(v)
        if t is int:
            if 0 <= v < 64:
                out.append(T_INT)
                out.append(v << 1)
            else:
                out.append(T_INT)
                _varint(out, (v << 1) if v >= 0 else ((-v << 1) - 1))
        elif t is tuple:
            mark = v[0] if v else None
            if mark is TEMPLATE_MARK:
                out.append(T_TEMPLATE)
                _varint(out, v[1])
                self._items(v[2])
            elif mark is REF_MARK:
                out.append(T_REF)
                _varint(out, v[1])
                if self._seen is not None:
                    self._seen.append(v[1])
            elif mark is LIST_MARK:
                out.append(T_LIST)
                self._items(v[1])
            else:
                out.append(T_TUPLE)
                self._items(v)
        elif v is None:
            out.append(T_NONE)
        elif t is float:
            out.append(T_FLOAT)
            out += _pack_d(v)
        elif t in _ENUM_IDS:
            out.append(T_ENUM)
            _varint(out, _ENUM_IDS[t])
            iv = int(v)
            _varint(out, (iv << 1) if iv >= 0 else ((-iv << 1) - 1))
        elif t is bool:
            out.append(T_TRUE if v else T_FALSE)
        elif t is list:
            out.append(T_LIST)
            self._items(v)
        elif t is str:
            b = v.encode("utf-8", "surrogatepass")
            out.append(T_STR)
            _varint(out, len(b))
            out += b
        elif t is bytes:
            self._bytes(v)
        elif t is np.ndarray:
            self._array(v)
        elif t is Raw:
            out += v.data
        elif t is Ref:
            out.append(T_REF)
            _varint(out, v.tid)
        elif t is BlobRef:
            out.append(T_BLOB)
            out += v.name
        elif isinstance(v, np.generic):
            if v.dtype in _DTYPE_IDS:
                out.append(T_SCALAR)
                _varint(out, _DTYPE_IDS[v.dtype])
                out += v.tobytes()
            else:
                self.value(v.item())
        elif isinstance(v, Opaque):
            out.append(T_OPAQUE)
            self.value(v.text)
        elif isinstance(v, (bytearray, memoryview)):
            self._bytes(bytes(v))
        elif t in TEMPLATE_FIELDS:  # an unsnapshotted template (tests, decoded values)
            out.append(T_TEMPLATE)
            _varint(out, TEMPLATE_IDS[t])
            self._items(tuple(getattr(v, f) for f in TEMPLATE_FIELDS[t]))
        elif isinstance(v, bool):
            self.value(bool(v))
        elif isinstance(v, int):  # an int subclass that is not a pipe enum
            self.value(int(v))
        elif isinstance(v, float):
            self.value(float(v))
        else:
            tid = self._ref(v)
            if tid is not None:
                out.append(T_REF)
                _varint(out, tid)
            elif hasattr(v, "to_text"):  # a parsed TGSI shader: stored as its text
                self.value(v.to_text())
            else:
                out.append(T_OPAQUE)
                self.value(f"{type(v).__module__}.{type(v).__qualname__}")

    def _items(self, items: Any) -> None:
        """A count and the items; small ints, floats and None written inline (the
        common leaves, without a call each)."""
        out = self.out
        _varint(out, len(items))
        value = self.value
        for x in items:
            t = type(x)
            if t is int and 0 <= x < 64:
                out.append(T_INT)
                out.append(x << 1)
            elif t is float:
                out.append(T_FLOAT)
                out += _pack_d(x)
            elif x is None:
                out.append(T_NONE)
            else:
                value(x)

    def _bytes(self, b: bytes) -> None:
        out = self.out
        if len(b) <= INLINE_MAX:
            out.append(T_BYTES)
            _varint(out, len(b))
            out += b
        else:
            out.append(T_BLOB)
            out += self._blob(b)

    def _array(self, a: np.ndarray) -> None:
        dt = a.dtype
        if dt not in _DTYPE_IDS:
            if dt.kind in "biuf" and dt.isnative is False:
                a = a.astype(dt.newbyteorder("="))
            elif dt.kind in "biuf":
                a = a.astype(dt.newbyteorder("<"))
            else:
                raise TypeError(f"arrays of dtype {dt} cannot be recorded")
            dt = a.dtype
        out = self.out
        out.append(T_ARRAY)
        _varint(out, _DTYPE_IDS[dt])
        _varint(out, a.ndim)
        for d in a.shape:
            _varint(out, d)
        self._bytes(np.ascontiguousarray(a).tobytes())


def encode_value(v: Any, ref=lambda o: None, blob=None) -> bytes:
    """Encode one value that holds no traced objects and no big buffers."""

    def no_blob(b: bytes) -> bytes:
        raise ValueError("this value may not hold buffers over INLINE_MAX bytes")

    enc = Encoder(ref, blob or no_blob)
    enc.value(v)
    return bytes(enc.out)


# -------------------------------------------------------------------------- decoding


class Tables:
    """The writer's name tables mapped onto this reader's classes.

    Templates are matched by class name and then field by field, so a trace
    stays readable when a template gains a field (it takes its default) and
    fails clearly when a field it uses is unknown here.
    """

    def __init__(self, methods=(), templates=(), enums=(), dtypes=()) -> None:
        self.methods = [str(m) for m in methods]
        self.templates: list[tuple[type, tuple[str, ...]] | None] = []
        self.template_names: list[str] = []
        for entry in templates:
            name, fields = entry
            cls = TEMPLATES.get(name)
            known = TEMPLATE_FIELDS.get(cls, ())
            ok = cls is not None and all(f in known for f in fields)
            self.templates.append((cls, tuple(fields)) if ok else None)
            self.template_names.append(str(name))
        self.enums = [ENUMS.get(n) for n in enums]
        self.dtypes = [np.dtype(s) if s in DTYPES else None for s in dtypes]

    @classmethod
    def current(cls, methods=()) -> Tables:
        return cls(methods, template_table(), list(ENUMS), list(DTYPES))

    @classmethod
    def from_header(cls, header: Any, offset: int) -> Tables:
        """The tables of a decoded HEADER value, shape-checked."""
        try:
            _version, _creator, methods, templates, enums, dtypes = header[:6]
            ok = all(type(m) is str for m in methods) and all(type(e) is str for e in enums)
            ok = ok and all(type(d) is str for d in dtypes)
            ok = ok and all(
                type(n) is str and all(type(f) is str for f in fs) for n, fs in templates
            )
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise TraceFormatError("HEADER record does not hold the expected name tables", offset)
        return cls(methods, templates, enums, dtypes)


def template_table() -> list[tuple[str, tuple[str, ...]]]:
    return [(name, TEMPLATE_FIELDS[cls]) for name, cls in TEMPLATES.items()]


class Decoder:
    """Decode one encoded value from ``data`` (bytes of one record)."""

    def __init__(self, data: bytes, tables: Tables, offset: int) -> None:
        self.data = data
        self.pos = 0
        self.tables = tables
        self.offset = offset

    def fail(self, why: str) -> TraceFormatError:
        return TraceFormatError(f"{why} (byte {self.pos} of the record's data)", self.offset)

    def varint(self) -> int:
        data, pos, n, shift = self.data, self.pos, 0, 0
        while True:
            if pos >= len(data):
                raise self.fail("value runs past the end of its record")
            b = data[pos]
            pos += 1
            n |= (b & 0x7F) << shift
            if b < 0x80:
                break
            shift += 7
            if shift > 63:
                raise self.fail("integer is over 64 bits")
        self.pos = pos
        return n

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) if not n & 1 else -((n + 1) >> 1)

    def count(self, min_item: int = 1) -> int:
        """A count of items of at least ``min_item`` bytes each, checked against what is left."""
        n = self.varint()
        if n * min_item > len(self.data) - self.pos:
            raise self.fail(f"count {n} is larger than the record's remaining bytes")
        return n

    def raw(self, n: int) -> bytes:
        if n > len(self.data) - self.pos:
            raise self.fail(f"{n} bytes run past the end of the record")
        b = self.data[self.pos : self.pos + n]
        self.pos += n
        return bytes(b)

    def done(self) -> None:
        if self.pos != len(self.data):
            raise self.fail(f"{len(self.data) - self.pos} stray bytes after the value")

    def value(self, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise self.fail("values nested too deeply")
        if self.pos >= len(self.data):
            raise self.fail("value runs past the end of its record")
        tag = self.data[self.pos]
        self.pos += 1
        if tag == T_NONE:
            return None
        if tag == T_FALSE:
            return False
        if tag == T_TRUE:
            return True
        if tag == T_INT:
            return self.zigzag()
        if tag == T_FLOAT:
            return struct.unpack("<d", self.raw(8))[0]
        if tag == T_STR:
            try:
                return self.raw(self.count()).decode("utf-8", "surrogatepass")
            except UnicodeDecodeError:
                raise self.fail("string is not UTF-8") from None
        if tag == T_BYTES:
            return self.raw(self.count())
        if tag == T_BLOB:
            return BlobRef(self.raw(DIGEST_SIZE))
        if tag == T_LIST:
            return [self.value(depth + 1) for _ in range(self.count())]
        if tag == T_TUPLE:
            return tuple(self.value(depth + 1) for _ in range(self.count()))
        if tag == T_TEMPLATE:
            return self._template(depth)
        if tag == T_ENUM:
            i = self.varint()
            v = self.zigzag()
            if i >= len(self.tables.enums) or self.tables.enums[i] is None:
                raise self.fail(f"unknown enum id {i}")
            cls = self.tables.enums[i]
            try:
                return cls(v)
            except ValueError:
                raise self.fail(f"{v} is not a {cls.__name__}") from None
        if tag == T_REF:
            return Ref(self.varint())
        if tag == T_ARRAY:
            return self._array(depth)
        if tag == T_SCALAR:
            dt = self._dtype()
            return np.frombuffer(self.raw(dt.itemsize), dt)[0]
        if tag == T_OPAQUE:
            text = self.value(depth + 1)
            if type(text) is not str:
                raise self.fail("opaque value without its description")
            return Opaque(text)
        raise self.fail(f"unknown value tag {tag}")

    def _dtype(self) -> np.dtype:
        i = self.varint()
        if i >= len(self.tables.dtypes) or self.tables.dtypes[i] is None:
            raise self.fail(f"unknown dtype id {i}")
        return self.tables.dtypes[i]

    def _template(self, depth: int) -> Any:
        i = self.varint()
        entry = self.tables.templates[i] if i < len(self.tables.templates) else None
        if entry is None:
            name = self.tables.template_names[i] if i < len(self.tables.template_names) else i
            raise self.fail(f"unknown state template {name!r} (or one of its fields)")
        cls, names = entry
        n = self.count()
        if n != len(names):
            raise self.fail(f"{cls.__name__} with {n} fields; its table lists {len(names)}")
        vals = [self.value(depth + 1) for _ in range(n)]
        return cls(**dict(zip(names, vals)))

    def _array(self, depth: int) -> Any:
        dt = self._dtype()
        ndim = self.varint()
        if ndim > MAX_NDIM:
            raise self.fail(f"array of {ndim} dimensions")
        shape = tuple(self.varint() for _ in range(ndim))
        size = dt.itemsize
        for d in shape:
            size *= d
            if size > MAX_RAW:
                raise self.fail(f"array of shape {shape} is over the size limit")
        payload = self.value(depth + 1)
        if type(payload) is bytes:
            if len(payload) != size:
                raise self.fail(f"array of shape {shape} holds {len(payload)} bytes")
            return np.frombuffer(payload, dt).reshape(shape).copy()
        if isinstance(payload, BlobRef):
            return ArrayRef(payload, dt, shape, size)
        raise self.fail("array without its data")


class ArrayRef:
    """A decoded array whose data is a blob (the reader resolves it)."""

    __slots__ = ("blob", "dtype", "nbytes", "shape")

    def __init__(self, blob: BlobRef, dtype: np.dtype, shape: tuple, nbytes: int) -> None:
        self.blob, self.dtype, self.shape, self.nbytes = blob, dtype, shape, nbytes

    def __repr__(self) -> str:
        return f"<array {self.dtype} {self.shape} in {self.blob!r}>"

    def build(self, raw: bytes) -> np.ndarray:
        if len(raw) != self.nbytes:
            raise TraceFormatError(
                f"blob {self.blob.name.hex()} holds {len(raw)} bytes; the array needs {self.nbytes}"
            )
        return np.frombuffer(raw, self.dtype).reshape(self.shape).copy()


def decode_value(data: bytes, tables: Tables, offset: int) -> Any:
    d = Decoder(data, tables, offset)
    v = d.value()
    d.done()
    return v
