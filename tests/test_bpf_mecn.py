"""The BPF MECN (bpf/mecn): its rules against the paper's tables, and, as root, real runs.

The rules (bpf/mecn/mecn_math.h, the lines the BPF programs run) are compiled as plain C
and checked on the paper's Tables 1–3 and §3's echo rule, and against a transcription of the
simulator's MECN receiver on random packet sequences. The runs need root, network namespaces, the kernel's
BTF and the built programs (``make -C bpf``), and skip with a plain message without them."""

from __future__ import annotations

import ctypes
import os
import subprocess
from pathlib import Path

import polars as pl
import pytest
from conftest import bpf_run_unavailable, kernel_c_compiler

import ecnlab
from ecnlab.emulate import bpf, emulate

ROOT = Path(__file__).resolve().parents[1]
MATH = ROOT / "bpf" / "mecn" / "mecn_math.h"
NONE, INCIPIENT, MODERATE = 0, 1, 2


class Echo(ctypes.Structure):
    _fields_ = [("echo", ctypes.c_uint8), ("first", ctypes.c_uint8)]


@pytest.fixture(scope="module")
def mecn(tmp_path_factory):
    cc = kernel_c_compiler()
    d = tmp_path_factory.mktemp("mecn_math")
    src = d / "m.c"
    src.write_text(
        "#include <linux/types.h>\n"
        f'#include "{MATH}"\n'
        "__u8 level_of_ecn(__u8 e) { return mecn_level_of_ecn(e); }\n"
        "__u8 level_of_echo(int c, int e) { return mecn_level_of_echo(c, e); }\n"
        "void on_data(struct mecn_echo *s, __u8 seen, int cwr) { mecn_on_data(s, seen, cwr); }\n"
        "__u32 ssthresh_of(__u32 c, __u8 l) { return mecn_ssthresh_of(c, l); }\n"
        "__u32 after_loss(__u32 t, __u32 c, int r) { return mecn_ssthresh_after_loss(t, c, r); }\n"
    )
    lib = d / "m.so"
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    so = ctypes.CDLL(str(lib))
    so.level_of_ecn.restype = so.level_of_echo.restype = ctypes.c_uint8
    so.level_of_ecn.argtypes = [ctypes.c_uint8]
    so.level_of_echo.argtypes = [ctypes.c_int, ctypes.c_int]
    so.on_data.argtypes = [ctypes.POINTER(Echo), ctypes.c_uint8, ctypes.c_int]
    so.ssthresh_of.restype = ctypes.c_uint32
    so.ssthresh_of.argtypes = [ctypes.c_uint32, ctypes.c_uint8]
    so.after_loss.restype = ctypes.c_uint32
    so.after_loss.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_int]
    return so


def test_codepoints_are_tables_1_and_2(mecn):
    # Table 1 as printed, (CE bit, ECT bit) -> state, with §2's bit numbers: ECT is bit 6 and
    # CE bit 7 of the TOS octet, i.e. the ECN field's high and low bit (RFC 3168 §5).
    table_1 = {(0, 1): NONE, (1, 0): INCIPIENT, (1, 1): MODERATE}
    for (ce, ect), level in table_1.items():
        assert mecn.level_of_ecn(ect << 1 | ce) == level, (ce, ect)
    # 00 is not MECN-capable and carries no level.
    assert mecn.level_of_ecn(0) == NONE
    # In RFC 3168's names: Linux's ECT(0) is "no congestion", ECT(1) incipient, CE moderate.
    assert [mecn.level_of_ecn(e) for e in (0b10, 0b01, 0b11)] == [NONE, INCIPIENT, MODERATE]
    # Table 2, (CWR, ECE): 00 none, 01 incipient, 11 moderate; CWR alone is no echo.
    assert mecn.level_of_echo(0, 0) == NONE
    assert mecn.level_of_echo(0, 1) == INCIPIENT
    assert mecn.level_of_echo(1, 1) == MODERATE
    assert mecn.level_of_echo(1, 0) == NONE


@pytest.mark.parametrize("cwnd, level, expected", [(100, INCIPIENT, 80), (100, MODERATE, 60), (10, INCIPIENT, 8), (10, MODERATE, 6), (2, MODERATE, 2), (3, INCIPIENT, 2)])
def test_reductions_are_table_3(mecn, cwnd, level, expected):
    # Incipient: -20 %, moderate: -40 % (truncated to whole segments, at least 2).
    assert mecn.ssthresh_of(cwnd, level) == expected


def _echoes(mecn, packets):
    s = Echo()
    out = []
    for seen, cwr in packets:
        mecn.on_data(ctypes.byref(s), seen, cwr)
        out.append(s.echo)
    return out


def test_echo_follows_section_3(mecn):
    # An incipient mark is echoed until CWR; the CWR segment's own mark counts after it.
    assert _echoes(mecn, [(INCIPIENT, 0), (NONE, 0), (NONE, 1), (NONE, 0)]) == [1, 1, 0, 0]
    assert _echoes(mecn, [(INCIPIENT, 0), (INCIPIENT, 1)]) == [1, 1]
    # §3: the level moved up before CWR came: CWR stops the first level, the higher one goes
    # on being echoed until the next CWR.
    assert _echoes(mecn, [(INCIPIENT, 0), (MODERATE, 0), (NONE, 1), (NONE, 0), (NONE, 1)]) == [1, 2, 2, 2, 0]
    # A lower level never replaces a higher one being echoed.
    assert _echoes(mecn, [(MODERATE, 0), (INCIPIENT, 0), (NONE, 1)]) == [2, 2, 0]


def test_echo_is_the_simulators_rule(mecn):
    # Random packet sequences through the BPF rules and through a transcription of the
    # simulator's MECN receiver (one data packet, then the ACK's echo).
    import random

    rng = random.Random(2)
    for _ in range(200):
        pkts = [(rng.choice([NONE, NONE, INCIPIENT, MODERATE]), int(rng.random() < 0.2)) for _ in range(30)]
        got = _echoes(mecn, pkts)
        echo = first = NONE
        want = []
        for seen, cwr in pkts:  # crates/ecnlab/src/schemes/mecn/codec.rs, data_in (first_level)
            if cwr:
                if echo > first:
                    first = echo
                else:
                    echo = first = NONE
            if seen > echo:
                if echo == NONE:
                    first = seen
                echo = seen
            want.append(echo)
        assert got == want, pkts


OPEN, DISORDER, CWR, RECOVERY = 0, 1, 2, 3


def kernel_round(mecn, cwnd: int, events: list[tuple[str, int]]) -> int:
    """ssthresh after ``events`` as the kernel drives the controller (net/ipv4/tcp_input.c):
    ("ece", level) enters CWR through tcp_enter_cwr, which asks ssthresh only from Open or
    Disorder; ("loss", _) enters Recovery through tcp_enter_recovery, which asks ssthresh only
    outside a reduction (tcp_in_cwnd_reduction: CWR or Recovery), then set_state(Recovery)
    with the old state still in place; ("shrink", n) is PRR taking the window down to n."""
    state, ssthresh = OPEN, 0
    for what, arg in events:
        if what == "shrink":
            cwnd = arg
        elif what == "ece" and state < CWR:
            ssthresh, state = mecn.ssthresh_of(cwnd, arg), CWR
        elif what == "loss" and state != RECOVERY:
            if state not in (CWR, RECOVERY):
                ssthresh = mecn.ssthresh_of(cwnd, NONE)
            ssthresh = mecn.after_loss(ssthresh, cwnd, state == CWR)
            state = RECOVERY
    return ssthresh


def test_a_loss_inside_an_ecn_round_does_not_cut_again(mecn):
    # RFC 3168 §6.1.2 and the simulator's MECN (one reduction per round): an incipient cut
    # of a 100-segment window to 80, PRR bringing the window down to 90, then a loss in the
    # same round: ssthresh stays 80 (halving again, as every entry into Recovery did before,
    # gave 45).
    assert kernel_round(mecn, 100, [("ece", INCIPIENT), ("shrink", 90), ("loss", 0)]) == 80
    assert kernel_round(mecn, 100, [("ece", MODERATE), ("shrink", 70), ("loss", 0)]) == 60
    # A loss outside a round halves (Table 3), whatever the ACKs echoed before.
    assert kernel_round(mecn, 100, [("loss", 0)]) == 50
    assert kernel_round(mecn, 3, [("loss", 0)]) == 2
    assert mecn.after_loss(80, 90, 0) == 45 and mecn.after_loss(80, 90, 1) == 80


# ----------------------------------------------------------------------- runs (root)


_WHY_NOT = bpf_run_unavailable("mecn")
needs_bpf = pytest.mark.skipif(_WHY_NOT is not None, reason=_WHY_NOT or "")


@needs_bpf
def test_bpf_mecn_reads_both_levels_and_cuts_by_them():
    s = ecnlab.Scenario.from_file(ROOT / "scenarios" / "emulate_mecn.toml").to_dict()
    s["duration"] = "6s"
    s["topology"]["bottleneck"]["rate"] = "20Mbps"
    # The second flow starts after the first one's slow start: a SYN lost to RED's forced
    # drops is sent again without ECN by Linux (RFC 3168 §6.1.1.1), and its flow is then no
    # MECN flow.
    s["flows"][0].update(count=2, stagger="2s")
    r = emulate(ecnlab.Scenario(s))
    sim = ecnlab.run(ecnlab.Scenario(s))
    c = r.meta["bpf_controllers"]["mecn"]
    # It ran: the senders' data left as the kernel wrote it (ECT(0), Table 1's "no
    # congestion": nothing recoded), the receivers read the routers' levels and wrote their
    # echo, and the controllers cut by the level they got back.
    assert c["connections"] >= 2 and c["connections_without_ecn"] == 0
    assert c["data_recoded"] == 0 and c["data_in"] > 5000
    port = r.port("rl->rr")
    assert port["marked_pkts"] > 0 and c["data_in_marked"] > 0
    assert c["echoes_written"] > 0 and c["acks_ece"] > 0
    # Both levels: the receivers read incipient (01, ECT(1)) and moderate (11) marks as the
    # port made them, and the senders made ECN cuts of both levels (losses are counted
    # apart, in "losses").
    assert c["data_in_moderate"] > 0 and c["data_in_moderate"] <= port["marked_ce"]
    assert 0 < c["data_in_marked"] - c["data_in_moderate"] <= port["marked_ect1"]
    assert c["cuts_level1"] > 0 and c["cuts_level2"] > 0
    assert c["reductions"] == c["cuts_level1"] + c["cuts_level2"]
    # It filled the link; the receivers' kernels found nothing malformed in the rewritten
    # headers (an IP or TCP checksum left wrong would show here and stall the flows).
    def carried(res) -> float:
        delivered = res.timeseries.filter((pl.col("kind") == "delivery_bps") & (pl.col("time_s") >= 2.5))
        per_flow = delivered.group_by("entity").agg(pl.col("value").mean())["value"]
        assert per_flow.len() == 2
        return per_flow.sum()

    # Once both run (past the first flow's slow start, whose overshoot into RED's forced
    # drops the kernel repairs), the two flows carry what the simulated MECN senders carry
    # on the same network (15.6 of the 20 Mb/s: MECN's cuts at 20 packets of average queue
    # leave the link idle at times), within the emulation's noise on a loaded machine.
    assert carried(r) > 0.7 * carried(sim) > 0.5 * 20e6
    assert r.meta["host_stack_errors"] == 0
    assert all(g > 3e6 for g in r.flows["goodput_bps"])
    assert not [n for n in bpf.registered() if n.startswith(f"e{os.getpid()}_")]
