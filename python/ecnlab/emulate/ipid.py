"""How hosts number their packets, as UNO's routers see it: IP-ID sequences from captures.

UNO spreads a router's load level over the IP-ID residues (mod 8) of consecutive packets; a
sender learns the level once a block of its packets has covered all eight residues. How long
a block is depends on the numbering: eight packets if each connection counts up by one, more
if the counter is shared or random. This reads the pcap files of a simulated and an emulated
run (``ecnlab emulate SCENARIO --compare-sim`` with ``[measure] pcap``) and reports, per TCP
flow, the share of data packets whose IP-ID is one more than the flow's previous one and the
length of the blocks::

    python -m ecnlab.emulate.ipid DIR [PORT]

The captures are read by :mod:`ecnlab.pcapfile`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

from ..pcapfile import tcp_segments

__all__ = ["data_packets", "flow_stats", "compare_dir"]

Key = tuple[int, int, int, int]


def data_packets(path: str | Path) -> Iterator[tuple[Key, int]]:
    """(flow key (src, dst, sport, dport), IP-ID) of every TCP packet carrying data, in
    capture order."""
    for t in tcp_segments(path):
        if t.payload > 0:
            yield (t.src, t.dst, t.sport, t.dport), t.ip_id


def flow_stats(path: str | Path) -> list[dict]:
    """Per data-carrying flow: packets, the share of IP-IDs one above the flow's previous,
    and the blocks of consecutive packets that cover all eight residues (count, mean and
    largest length, share of exactly eight)."""
    seqs: dict[Key, list[int]] = {}
    for key, ident in data_packets(path):
        seqs.setdefault(key, []).append(ident)
    out = []
    for key, ids in seqs.items():
        steps = sum(1 for a, b in zip(ids, ids[1:]) if (b - a) & 0xFFFF == 1)
        blocks: list[int] = []
        seen = 0
        n = 0
        for i in ids:
            seen |= 1 << (i % 8)
            n += 1
            if seen == 0xFF:
                blocks.append(n)
                seen, n = 0, 0
        out.append(
            {
                "flow": key,
                "packets": len(ids),
                "plus_one": steps / (len(ids) - 1) if len(ids) > 1 else None,
                "blocks": len(blocks),
                "block_mean": sum(blocks) / len(blocks) if blocks else None,
                "block_max": max(blocks) if blocks else None,
                "block_eight": sum(1 for b in blocks if b == 8) / len(blocks) if blocks else None,
            }
        )
    return sorted(out, key=lambda r: -r["packets"])


def compare_dir(directory: str | Path, port_file: str = "rl_to_rr.pcap") -> str:
    """A markdown table of the simulated and the emulated capture of one port."""
    d = Path(directory)
    lines = [
        "| run | packets | IP-ID +1 | blocks | mean block | longest | blocks of 8 |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for side in ("sim", "emulation"):
        path = d / side / "pcap" / port_file
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no capture (add the port to [measure] pcap)")
        for k, r in enumerate(flow_stats(path)):
            mean = "–" if r["block_mean"] is None else f"{r['block_mean']:.2f}"
            eight = "–" if r["block_eight"] is None else f"{r['block_eight']:.3f}"
            lines.append(
                f"| {side} flow {k} | {r['packets']} | {r['plus_one']:.4f} | {r['blocks']} | {mean} | {r['block_max']} | {eight} |"
            )
    return "\n".join(lines) + "\n"


def _main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    try:
        print(compare_dir(argv[0], *(argv[1:2])), end="")
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
