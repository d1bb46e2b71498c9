"""How messages travel between the processes: pickled, each behind its length.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import pickle
import struct
from typing import BinaryIO

from pytest_mlir_snippets.protocol.answers import Response
from pytest_mlir_snippets.protocol.requests import Request

_HEADER = struct.Struct("<Q")


def write_message(stream: BinaryIO, message: Request | Response) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def read_message(stream: BinaryIO) -> object:
    """The next message, or None at end of stream."""
    header = _read_exactly(stream, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    data = _read_exactly(stream, size)
    return None if data is None else pickle.loads(data)


def _read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_request(stream: BinaryIO) -> Request | None:
    """The next request, or None at end of stream."""
    message = read_message(stream)
    if message is not None and not isinstance(message, Request):
        raise TypeError(f"not a request: {type(message).__name__}")
    return message


def read_response(stream: BinaryIO) -> Response | None:
    """The next response, or None at end of stream."""
    message = read_message(stream)
    if message is not None and not isinstance(message, Response):
        raise TypeError(f"not a response: {type(message).__name__}")
    return message
