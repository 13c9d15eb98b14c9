"""The one piece of protobuf's wire format the binary readers read by hand: a base-128 varint."""

from __future__ import annotations


def varint(data: bytes, pos: int) -> tuple[int, int]:
    """(the unsigned varint starting at data[pos], the position after it); IndexError when it runs off the
    end. Hand-worked: b"\\x96\\x01" at 0 -> (150, 2)."""
    result = shift = 0
    while True:
        byte = data[pos]
        result |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return result, pos
        shift += 7
