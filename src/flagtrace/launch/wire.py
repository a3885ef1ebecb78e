"""The frames between flagtrace and its remote agent (``--via``), written and read by both: the
client imports this module; the agent receives its source ahead of its own on the transport's
stdin (agent.py), so both sides run this very code.

A frame is: tag (1 byte), length (8 bytes, big-endian), payload. The agent's stdout starts with
MAGIC + a nonce, so that whatever a login shell printed before it can be skipped.

Standard library only, Python >= 3.9.
"""
import struct

MAGIC = b"\x00\x01flagtrace-agent-1\x01"
LENGTH = struct.Struct(">Q")


def frame(tag, payload):
    """The bytes of one frame (``payload``: bytes, or text sent as UTF-8)."""
    if isinstance(payload, str):
        payload = payload.encode("utf-8")
    return tag + LENGTH.pack(len(payload)) + payload


def read_exact(stream, n):
    chunks = []
    while n:
        data = stream.read(n)
        if not data:
            raise EOFError
        chunks.append(data)
        n -= len(data)
    return b"".join(chunks)


def read_frame(stream):
    """(tag, payload); EOFError at the end of the stream (also in the middle of a frame)."""
    tag = stream.read(1)
    if not tag:
        raise EOFError
    (size,) = LENGTH.unpack(read_exact(stream, 8))
    return tag, read_exact(stream, size)


class Prefixed:
    """A stream whose first bytes were already read (the part after the MAGIC marker)."""

    def __init__(self, head, stream):
        self.head = head
        self.stream = stream

    def read(self, n):
        if self.head:
            out, self.head = self.head[:n], self.head[n:]
            return out
        return self.stream.read(n)
