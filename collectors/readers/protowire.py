"""The pieces of protobuf's wire format the binary readers read by hand: a base-128 varint, and a message's
fields by number (for the small records of a format whose reader should not need its writer installed)."""

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


def fields(data: bytes) -> dict[int, list[int | bytes]]:
    """A message's fields by number: a varint as an int, a length-delimited field (a string, bytes, a nested
    message) and a fixed 64- or 32-bit field as their bytes, each repeated field in order. ValueError on a
    message that runs off its end or uses a group (wire types 3, 4). Hand-worked: b"\x08\x96\x01\x12\x02hi"
    -> {1: [150], 2: [b"hi"]}."""
    out: dict[int, list[int | bytes]] = {}
    pos, n = 0, len(data)
    try:
        while pos < n:
            key, pos = varint(data, pos)
            wire, width = key & 7, None
            if wire == 0:
                value, pos = varint(data, pos)
            elif wire == 2:
                width, pos = varint(data, pos)
            elif wire in (1, 5):
                width = 8 if wire == 1 else 4
            else:
                raise ValueError(f"wire type {wire} at byte {pos}")
            if width is not None:
                if pos + width > n:
                    raise ValueError(f"a field of {width} bytes runs past the message's end")
                value, pos = data[pos:pos + width], pos + width
            out.setdefault(key >> 3, []).append(value)
    except IndexError:
        raise ValueError("a varint runs past the message's end") from None
    return out
