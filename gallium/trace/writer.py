"""TraceWriter: compresses and writes records on a thread of its own.

The encoder hands over finished payloads (``put``); the writer thread
compresses them (zlib releases the GIL, so this overlaps with the
application; blobs of 64 KiB or more -- read-back render targets, textures --
at level 1: on a 512x512 frame of the demo 2.5 ms instead of 6.5 ms, for 1.9x
the bytes) and appends them to the file, in the order they were put.  The
queue is bounded in bytes: a producer that gets ahead by more than
``MAX_QUEUED`` bytes waits, so memory stays bounded however fast the
application records.  A write error (disk full...) is kept and raised on
the next ``put`` or on ``close``.
"""

from __future__ import annotations

import os
import threading
from collections import deque

from . import format as fmt

MAX_QUEUED = 256 << 20
BIG_BLOB = 64 << 10  # blobs this large (resource contents, mostly) are compressed at level 1


class TraceWriter:
    def __init__(self, path: str | os.PathLike, level: int = 6) -> None:
        self.level = level
        self._file = open(path, "wb")  # noqa: SIM115  (closed by close())
        self._file.write(fmt.MAGIC)
        self._queue: deque = deque()
        self._queued = 0
        self._cv = threading.Condition()
        self._error: BaseException | None = None
        self._closed = False
        self.bytes_written = len(fmt.MAGIC)
        self.records = 0
        self._thread = threading.Thread(target=self._run, name="gallium-trace-writer", daemon=True)
        self._thread.start()

    def put(self, rtype: int, raw: bytes | bytearray, blob_name: bytes | None = None) -> None:
        """Queue one record: a blob (``blob_name`` given) or a body of encoded values."""
        with self._cv:
            if self._error is not None:
                raise self._error
            while self._queued > MAX_QUEUED and self._error is None:
                self._cv.wait()
            self._queue.append((rtype, raw, blob_name))
            self._queued += len(raw)
            self._cv.notify_all()

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._queue and not self._closed:
                    self._cv.wait()
                if not self._queue:
                    return
                rtype, raw, name = self._queue.popleft()
            try:
                if name is not None:
                    level = min(self.level, 1) if len(raw) >= BIG_BLOB else self.level
                    payload, flags = fmt.pack_blob(name, raw, level)
                else:
                    payload, flags = fmt.pack_body(raw, self.level)
                rec = fmt.frame_record(rtype, payload, flags)
                self._file.write(rec)
                self.bytes_written += len(rec)
                self.records += 1
            except BaseException as exc:  # kept for the producer
                with self._cv:
                    self._error = exc
                    self._queue.clear()
                    self._queued = 0
                    self._cv.notify_all()
                return
            with self._cv:
                self._queued -= len(raw)
                self._cv.notify_all()

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._cv.notify_all()
        self._thread.join()
        self._file.close()
        if self._error is not None:
            raise self._error
