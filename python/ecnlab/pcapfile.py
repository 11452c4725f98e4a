"""Reading the TCP segments of a pcap file: ecnlab's captures (LINKTYPE_RAW, bare IPv4) and
ns-3's point-to-point ones (LINKTYPE_PPP, a 2-byte header before IPv4).

Standard library only, so scripts can load this file by path without the compiled core.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Iterator, NamedTuple

__all__ = ["TcpSegment", "tcp_segments"]

#: Link-layer bytes before the IPv4 header, by link type.
_LINK_HEADER = {101: 0, 9: 2}


class TcpSegment(NamedTuple):
    src: int
    dst: int
    sport: int
    dport: int
    ip_id: int
    #: The IP header's two ECN bits (3 = CE).
    ecn: int
    #: TCP payload bytes.
    payload: int


def tcp_segments(path: str | Path) -> Iterator[TcpSegment]:
    """Every IPv4 TCP segment in the file, in capture order; other records are skipped."""
    data = Path(path).read_bytes()
    if len(data) < 24:
        raise ValueError(f"{path}: not a pcap file (too short)")
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        endian = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        endian = ">"
    else:
        raise ValueError(f"{path}: not a pcap file (magic {magic.hex()})")
    (link,) = struct.unpack(endian + "I", data[20:24])
    if link not in _LINK_HEADER:
        raise ValueError(f"{path}: link type {link}; expected 101 (raw IPv4) or 9 (PPP)")
    skip = _LINK_HEADER[link]
    off = 24
    while off + 16 <= len(data):
        (caplen,) = struct.unpack(endian + "I", data[off + 8 : off + 12])
        ip = data[off + 16 + skip : off + 16 + caplen]
        off += 16 + caplen
        if len(ip) < 40 or ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        ihl = (ip[0] & 0x0F) * 4
        if len(ip) < ihl + 20:
            continue
        total, ident = struct.unpack("!HH", ip[2:6])
        src, dst = struct.unpack("!II", ip[12:20])
        sport, dport = struct.unpack("!HH", ip[ihl : ihl + 4])
        payload = total - ihl - (ip[ihl + 12] >> 4) * 4
        yield TcpSegment(src, dst, sport, dport, ident, ip[1] & 3, payload)
