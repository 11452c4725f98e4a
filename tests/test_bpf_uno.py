"""The BPF UNO/UCP1 (bpf/uno): its rules against the paper and the simulator, and, as root, a run.

The rules (bpf/uno/uno_math.h, the lines the BPF programs run) are compiled as plain C and
checked on hand-computed cases of §III-A's equations and Fig. 1's levels, and against
transcriptions of the simulator's codec and controller (crates/ecnlab/src/schemes/uno/codec.rs,
controller.rs and vcp/controller.rs) in floating point on random sequences: the receiver's
report, the sender's blocks (per segment in the simulator, per GSO frame here), the decision
with a router heard or not, and the window under MI, AI and MD with VCP's freeze; and the
values the programs feed that arithmetic (the header's constants against the simulator's
defaults, the kernel's fields through the controller's step, the one call that passes them).
The runs need root, network namespaces, the kernel's BTF and the built programs
(``make -C bpf``), and skip with a plain message without them."""

from __future__ import annotations

import ctypes
import math
import os
import random
import subprocess
from pathlib import Path

import pytest
from conftest import bpf_run_unavailable, kernel_c_compiler

import ecnlab
from ecnlab.emulate import bpf, emulate

ROOT = Path(__file__).resolve().parents[1]
MATH = ROOT / "bpf" / "uno" / "uno_math.h"
SEG = 65536
T_RHO_US = 200_000
HIGH, OVERLOAD, NO_ROUTER = 6, 7, 8
MI, AI, HOLD = 0, 1, 2
IDLE, FREEZE, AI_AFTER_MD = 0, 1, 2


class Report(ctypes.Structure):
    _fields_ = [("ident", ctypes.c_uint16), ("load", ctypes.c_uint8), ("valid", ctypes.c_uint8)]


class Rx(ctypes.Structure):
    _fields_ = [("pending", Report), ("last", Report), ("pending_ce", ctypes.c_uint8)]


class Block(ctypes.Structure):
    _fields_ = [("covered", ctypes.c_uint8), ("max_level1", ctypes.c_uint8), ("ce", ctypes.c_uint8)]


class Decider(ctypes.Structure):
    _fields_ = [("block", Block), ("router_heard", ctypes.c_uint8), ("silent_blocks", ctypes.c_uint8)]


class Frame(ctypes.Structure):
    _fields_ = [
        ("start", ctypes.c_uint32),
        ("end", ctypes.c_uint32),
        ("ident", ctypes.c_uint16),
        ("size", ctypes.c_uint16),
        ("segs", ctypes.c_uint16),
        ("done", ctypes.c_uint16),
    ]


RING = 512


class Sender(ctypes.Structure):
    _fields_ = [
        ("d", Decider),
        ("una_valid", ctypes.c_uint8),
        ("una", ctypes.c_uint32),
        ("loss_gen", ctypes.c_uint32),
        ("loss_seen", ctypes.c_uint32),
        ("forget_to", ctypes.c_uint32),
        ("head", ctypes.c_uint32),
        ("tail", ctypes.c_uint32),
        ("ring", Frame * RING),
    ]


class Ctl(ctypes.Structure):
    _fields_ = [
        ("cwnd", ctypes.c_uint64),
        ("until_us", ctypes.c_uint64),
        ("ai_rem", ctypes.c_uint64),
        ("mi_rem", ctypes.c_uint32),
        ("written", ctypes.c_uint32),
        ("decisions_seen", ctypes.c_uint32),
        ("phase", ctypes.c_uint8),
        ("level", ctypes.c_uint8),
    ]


@pytest.fixture(scope="module")
def uno(tmp_path_factory):
    cc = kernel_c_compiler()
    d = tmp_path_factory.mktemp("uno_math")
    src = d / "m.c"
    src.write_text(
        "#include <linux/types.h>\n"
        f'#include "{MATH}"\n'
        "__u32 ln1p_xi(int l) { return uno_ln1p_xi[l]; }\n"
        "void rx_data(struct uno_rx *rx, __u16 id, __u8 ecn) { uno_rx_data(rx, id, ecn); }\n"
        "int rx_ack(struct uno_rx *rx, struct uno_report *o, __u8 *ce) { return uno_rx_ack(rx, o, ce); }\n"
        "__u8 residues(__u16 id, __u32 n) { return uno_residues(id, n); }\n"
        "void block_report(struct uno_block *b, __u16 id, int ece, int ae) { uno_block_report(b, id, ece, ae); }\n"
        "int block_cover(struct uno_decider *d, __u8 c) { return uno_block_cover(d, c); }\n"
        "void block_forget(struct uno_decider *d) { uno_block_forget(d); }\n"
        "int frame_cover(struct uno_frame *f, __u32 ack, __u8 *c) { return uno_frame_cover(f, ack, c); }\n"
        "__u64 exp_fx(__u64 x) { return uno_exp_fx(x); }\n"
        "__u64 mi_increment(__u8 l, __u64 rtt, __u64 t) { return uno_mi_increment(l, rtt, t); }\n"
        "__u64 ai_increment(__u64 w, __u64 rtt, __u64 t) { return uno_ai_increment(w, rtt, t); }\n"
        "int on_decision(struct uno_ctl *c, __u8 l, __u64 now, __u64 rtt, __u64 t, int *md) { return uno_on_decision(c, l, now, rtt, t, md); }\n"
        "int default_action(struct uno_ctl *c, __u64 now, __u64 rtt) { return uno_default_action(c, now, rtt); }\n"
        "void grow(struct uno_ctl *c, int a, __u32 acked, __u64 rtt, __u64 t) { uno_grow(c, a, acked, rtt, t); }\n"
        "int sender_sent(struct uno_sender *s, __u32 seq, __u32 len, __u16 id, __u16 segs, __u16 size) { return uno_sender_sent(s, seq, len, id, segs, size); }\n"
        "void sender_loss(struct uno_sender *s) { uno_sender_loss(s); }\n"
        "int sender_ack(struct uno_sender *s, __u32 ack, __u16 id, int ece, int ae) { return uno_sender_ack(s, ack, id, ece, ae); }\n"
        "void ctl_init(struct uno_ctl *c, __u32 w) { uno_ctl_init(c, w); }\n"
        "__u64 rtt_us(__u32 srtt_x8) { return uno_rtt_us(srtt_x8); }\n"
        "__u32 cong_avoid_ack(struct uno_ctl *c, __u32 w, __u32 clamp, __u32 srtt_x8, __u64 now, __u32 acked, __u32 n, __u8 l, int *a, int *md) { return uno_cong_avoid_ack(c, w, clamp, srtt_x8, now, acked, n, l, a, md); }\n"
        "double constant(int i) { double v[] = { UNO_T_RHO_US / 1e6, UNO_ALPHA, (double)UNO_BETA_NUM / UNO_BETA_DEN, UNO_INITIAL_LEVEL, UNO_MAX_RTT_RATIO_X2 / 2.0, UNO_INITIAL_RTT_US / 1e6, sizeof(struct uno_sender), sizeof(struct uno_ctl), UNO_MAX_SEGMENTS_PER_ACK }; return v[i]; }\n"
    )
    lib = d / "m.so"
    subprocess.run([cc, "-O2", "-Wall", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    so = ctypes.CDLL(str(lib))
    P = ctypes.POINTER
    for name, res, args in [
        ("ln1p_xi", ctypes.c_uint32, [ctypes.c_int]),
        ("rx_data", None, [P(Rx), ctypes.c_uint16, ctypes.c_uint8]),
        ("rx_ack", ctypes.c_int, [P(Rx), P(Report), P(ctypes.c_uint8)]),
        ("residues", ctypes.c_uint8, [ctypes.c_uint16, ctypes.c_uint32]),
        ("block_report", None, [P(Block), ctypes.c_uint16, ctypes.c_int, ctypes.c_int]),
        ("block_cover", ctypes.c_int, [P(Decider), ctypes.c_uint8]),
        ("block_forget", None, [P(Decider)]),
        ("frame_cover", ctypes.c_int, [P(Frame), ctypes.c_uint32, P(ctypes.c_uint8)]),
        ("exp_fx", ctypes.c_uint64, [ctypes.c_uint64]),
        ("mi_increment", ctypes.c_uint64, [ctypes.c_uint8, ctypes.c_uint64, ctypes.c_uint64]),
        ("ai_increment", ctypes.c_uint64, [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64]),
        ("on_decision", ctypes.c_int, [P(Ctl), ctypes.c_uint8, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64, P(ctypes.c_int)]),
        ("default_action", ctypes.c_int, [P(Ctl), ctypes.c_uint64, ctypes.c_uint64]),
        ("grow", None, [P(Ctl), ctypes.c_int, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_uint64]),
        ("sender_sent", ctypes.c_int, [P(Sender), ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint16, ctypes.c_uint16, ctypes.c_uint16]),
        ("sender_loss", None, [P(Sender)]),
        ("sender_ack", ctypes.c_int, [P(Sender), ctypes.c_uint32, ctypes.c_uint16, ctypes.c_int, ctypes.c_int]),
        ("ctl_init", None, [P(Ctl), ctypes.c_uint32]),
        ("rtt_us", ctypes.c_uint64, [ctypes.c_uint32]),
        (
            "cong_avoid_ack",
            ctypes.c_uint32,
            [P(Ctl), ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint8, P(ctypes.c_int), P(ctypes.c_int)],
        ),
        ("constant", ctypes.c_double, [ctypes.c_int]),
    ]:
        fn = getattr(so, name)
        fn.restype, fn.argtypes = res, args
    # The Python mirrors of the header's structures have the C layout.
    assert (so.constant(6), so.constant(7)) == (ctypes.sizeof(Sender), ctypes.sizeof(Ctl))
    return so


# ------------------------------------------------------------------ §III-A, Fig. 1 by hand


def xi(level: int) -> float:
    """§III-A: ξ(σ) = 0.15 (1 − σ)/σ at the level's midpoint (the simulator's default)."""
    sigma = (level + 0.5) * 0.8 / 6
    return 0.15 * (1 - sigma) / sigma


def test_xi_constants_are_the_papers_at_the_midpoints(uno):
    # By hand: level 0 σ = 1/15, ξ = 2.1; level 1 σ = 0.2, ξ = 0.6; level 4 σ = 0.6, ξ = 0.1.
    assert xi(0) == pytest.approx(2.1) and xi(1) == pytest.approx(0.6) and xi(4) == pytest.approx(0.1)
    for level in range(6):
        assert uno.ln1p_xi(level) / 2**24 == pytest.approx(math.log1p(xi(level)), abs=1e-6)


@pytest.mark.parametrize("x", [0.0, 1e-4, 0.01, 0.1, 0.125, 0.2, 0.5, 1.0, 1.1314, 2.0, 2.83])
def test_exp_is_e_to_the_x(uno, x):
    got = uno.exp_fx(round(x * 2**24)) / 2**24
    assert got == pytest.approx(math.exp(round(x * 2**24) / 2**24), rel=1e-5)


def test_mi_ai_md_by_hand(uno):
    # MI at rtt = t_ρ: ξ itself per segment (level 0: 2.1, level 5: 0.15·4/11).
    assert uno.mi_increment(0, T_RHO_US, T_RHO_US) / SEG == pytest.approx(2.1, rel=1e-4)
    assert uno.mi_increment(5, T_RHO_US, T_RHO_US) / SEG == pytest.approx(0.15 * 4 / 11, rel=1e-3)
    # rtt 100 ms: (1 + ξ)^0.5 − 1 (level 0: √3.1 − 1 = 0.76068).
    assert uno.mi_increment(0, 100_000, T_RHO_US) / SEG == pytest.approx(math.sqrt(3.1) - 1, rel=1e-4)
    # rtt 1 s: the exponent capped at 2.5 (1.1^2.5 − 1 = 0.26906 at level 4).
    assert uno.mi_increment(4, 1_000_000, T_RHO_US) / SEG == pytest.approx(1.1**2.5 - 1, rel=1e-4)
    # AI: α (rtt/t_ρ) / cwnd = 3·0.5/10 = 0.15 per segment.
    assert uno.ai_increment(10 * SEG, 100_000, T_RHO_US) / SEG == pytest.approx(0.15, rel=1e-4)
    # MD: 10 → 8.75, then held for one t_ρ, AI for one RTT, then idle.
    c = Ctl(cwnd=10 * SEG, level=5)
    md = ctypes.c_int()
    assert uno.on_decision(ctypes.byref(c), OVERLOAD, 1_000_000, 50_000, T_RHO_US, ctypes.byref(md)) == HOLD
    assert md.value == 1 and c.cwnd / SEG == 8.75 and c.phase == FREEZE
    assert uno.on_decision(ctypes.byref(c), OVERLOAD, 1_150_000, 50_000, T_RHO_US, ctypes.byref(md)) == HOLD and md.value == 0
    assert uno.default_action(ctypes.byref(c), 1_210_000, 50_000) == AI and c.phase == AI_AFTER_MD
    assert uno.default_action(ctypes.byref(c), 1_260_000, 50_000) == HOLD and c.phase == IDLE
    # No UNO router: AI.
    assert uno.on_decision(ctypes.byref(c), NO_ROUTER, 2_000_000, 50_000, T_RHO_US, ctypes.byref(md)) == AI


def test_residues_of_consecutive_ip_ids(uno):
    assert uno.residues(0, 1) == 0b1 and uno.residues(6, 3) == 0b11000001
    assert uno.residues(13, 4) == 0b11100000 | 0b1 and uno.residues(5, 8) == 0xFF and uno.residues(3, 40) == 0xFF
    assert uno.residues(0xFFFF, 2) == 0b10000001


# ------------------------------------------------------------------ the simulator, transcribed


class SimReceiver:
    """codec.rs data_in / ack_out for one bit."""

    def __init__(self) -> None:
        self.pending: tuple[int, bool] | None = None
        self.last: tuple[int, bool] | None = None
        self.ce = False

    @staticmethod
    def rank(r: tuple[int, bool]) -> tuple[int, int]:
        return (2, r[0] & 7) if r[1] else (0, 0)

    def data(self, ident: int, ecn: int) -> None:
        self.ce |= ecn == 3
        r = (ident, ecn == 2)
        self.pending = r if self.pending is None else (self.pending if self.rank(self.pending) > self.rank(r) else r)
        self.last = r

    def ack(self):
        if self.pending is None and self.last is None:
            return None
        r = self.pending if self.pending is not None else self.last
        self.pending, ce, self.ce = None, self.ce, False
        return r, ce


def test_receiver_report_is_the_simulators(uno):
    rng = random.Random(11)
    for _ in range(300):
        rx, sim = Rx(), SimReceiver()
        ident = rng.randrange(1 << 16)
        for _ in range(60):
            if rng.random() < 0.65:
                ecn = rng.choice([1, 1, 1, 2, 2, 3])
                uno.rx_data(ctypes.byref(rx), ident, ecn)
                sim.data(ident, ecn)
                ident = (ident + rng.choice([1, 1, 1, 2])) & 0xFFFF
            else:
                out, ce = Report(), ctypes.c_uint8()
                got = uno.rx_ack(ctypes.byref(rx), ctypes.byref(out), ctypes.byref(ce))
                want = sim.ack()
                assert bool(got) == (want is not None)
                if want:
                    assert (out.ident, bool(out.load), bool(ce.value)) == (want[0][0], want[0][1], want[1])


class SimSender:
    """codec.rs ack_in / decide for one bit: a deque of (end, ident) per segment."""

    def __init__(self) -> None:
        self.sent: list[tuple[int, int]] = []
        self.covered, self.max_level, self.ce = 0, None, False
        self.heard, self.silent = False, 0

    def send(self, end: int, ident: int) -> None:
        self.sent.append((end, ident))

    def loss(self) -> None:
        """codec.rs forget_block: the segments in flight and the block are dropped."""
        self.sent.clear()
        self.covered, self.max_level, self.ce = 0, None, False

    def ack(self, ack: int, ident: int, ece: bool, ae: bool, new: bool):
        if ece:
            self.max_level = ident & 7 if self.max_level is None else max(self.max_level, ident & 7)
        self.ce |= ae
        if not new:
            return None
        covered = 0
        while self.sent and ((ack - self.sent[0][0]) & 0xFFFFFFFF) < 1 << 31:
            covered |= 1 << (self.sent.pop(0)[1] & 7)
        if not covered:
            return None
        self.covered |= covered
        if self.covered != 0xFF:
            return None
        ml, ce = self.max_level, self.ce
        self.covered, self.max_level, self.ce = 0, None, False
        if ml is not None:
            self.heard, self.silent = True, 0
        if ce:
            return OVERLOAD
        if ml is not None:
            return ml
        if self.heard and self.silent + 1 < 4:
            self.silent += 1
            return "skip"
        self.heard, self.silent = False, 0
        return NO_ROUTER


def test_blocks_of_gso_frames_are_the_simulators_blocks_of_segments(uno):
    # The sender's path as the BPF runs it (uno_sender_sent / _ack / _loss over the ring of
    # frames) against the simulator's per-segment one: frames of 1-6 segments of 1448 bytes
    # (a GSO frame's segments count up from its IP-ID; the last may be shorter); ACKs at
    # segment boundaries and inside segments, duplicates among them (whose reports count
    # too); losses, which discard the block and everything in flight (codec.rs
    # forget_block); reports echo routers at random levels, some CE.
    rng = random.Random(5)
    decisions = {"level": 0, "skip": 0, NO_ROUTER: 0, "after loss": 0}
    for trial in range(300):
        snd, sim = Sender(), SimSender()
        seq = rng.randrange(1 << 32)
        una = seq
        ident = rng.randrange(1 << 16)
        ends: list[int] = []
        router = rng.random() < 0.8
        lost = False
        for _ in range(100):
            r = rng.random()
            if r < 0.03:
                uno.sender_loss(ctypes.byref(snd))
                sim.loss()
                lost = True
            elif r < 0.5 or not ends or ends[-1] == una:
                segs = rng.randint(1, 6)
                size = 1448
                last = rng.choice([size, rng.randint(1, size)])
                length = size * (segs - 1) + last
                assert uno.sender_sent(ctypes.byref(snd), seq & 0xFFFFFFFF, length, ident, segs, size)
                for i in range(segs):
                    e = seq + (i + 1) * size if i < segs - 1 else seq + length
                    sim.send(e & 0xFFFFFFFF, (ident + i) & 0xFFFF)
                    ends.append(e)
                seq += length
                ident = (ident + segs) & 0xFFFF
            else:
                pending = [e for e in ends if e > una]
                new = rng.random() < 0.85 and bool(pending)
                if new:
                    ack = rng.choice(pending[: rng.randint(1, min(len(pending), 8))])
                    if rng.random() < 0.3:
                        ack -= rng.randint(1, 1447)
                        new = ack > una
                if not new:
                    ack = una
                rid = rng.randrange(1 << 16)
                ece = router and rng.random() < 0.3
                ae = rng.random() < 0.02
                want = sim.ack(ack & 0xFFFFFFFF, rid, ece, ae, new)
                r = uno.sender_ack(ctypes.byref(snd), ack & 0xFFFFFFFF, rid, int(ece), int(ae))
                got = None if r == -1 else "skip" if r == -2 else r
                assert got == want, f"trial {trial}"
                una = max(una, ack)
                if want is not None:
                    decisions["skip" if want == "skip" else NO_ROUTER if want == NO_ROUTER else "level"] += 1
                    decisions["after loss"] += lost
                    lost = False
    # The sequences reached every kind of decision, and decisions after losses.
    assert all(n > 20 for n in decisions.values()), decisions


def test_a_loss_discards_the_block_and_the_frames_in_flight(uno):
    # By hand: four one-segment frames (IP-IDs 0-3) and an ACK of them with an overload
    # report (IP-ID residue 7); a loss; then frames with IP-IDs 4-11. Without the discard,
    # residues 4-7 would complete the block and decide the overload reported before the
    # loss; with it, the block starts after the loss and needs all of 4-11 (a new report).
    snd = Sender()
    for i in range(4):
        uno.sender_sent(ctypes.byref(snd), 1000 * i, 1000, i, 1, 0)
    assert uno.sender_ack(ctypes.byref(snd), 4000, 7, 1, 0) == -1
    assert snd.d.block.covered == 0x0F and snd.d.block.max_level1 == 8
    uno.sender_loss(ctypes.byref(snd))
    for i in range(4, 12):
        uno.sender_sent(ctypes.byref(snd), 1000 * i, 1000, i, 1, 0)
    assert uno.sender_ack(ctypes.byref(snd), 8000, 3, 1, 0) == -1  # residues 4-7 only
    assert snd.d.block.covered == 0xF0 and snd.d.block.max_level1 == 4
    assert uno.sender_ack(ctypes.byref(snd), 12000, 3, 1, 0) == 3
    # A loss with frames in flight: the frames sent before it never complete a block.
    snd = Sender()
    for i in range(8):
        uno.sender_sent(ctypes.byref(snd), 1000 * i, 1000, i, 1, 0)
    uno.sender_loss(ctypes.byref(snd))
    assert uno.sender_ack(ctypes.byref(snd), 8000, 6, 1, 0) == -1 and snd.d.block.covered == 0


class SimUcp:
    """controller.rs Ucp over vcp/controller.rs Vcp (MI, AI, MD, freeze), window in segments."""

    def __init__(self, cwnd: float, max_segments_per_ack: int) -> None:
        self.cwnd, self.level, self.phase, self.until = cwnd, 5, IDLE, 0
        self.max_segments_per_ack = max_segments_per_ack

    def advance(self, now: int, rtt: int) -> None:
        while True:
            if self.phase == FREEZE and now >= self.until:
                self.phase, self.until = AI_AFTER_MD, self.until + rtt
            elif self.phase == AI_AFTER_MD and now >= self.until:
                self.phase = IDLE
            else:
                return

    def ack(self, now: int, rtt: int, acked: int, level: int | None) -> None:
        ratio = rtt / T_RHO_US
        action = None
        if level is not None:
            self.level = level
            self.advance(now, rtt)
            if level < 6:
                action = MI
            elif level in (HIGH, NO_ROUTER):
                action = AI
            elif self.phase == IDLE:
                self.cwnd = max(self.cwnd * 0.875, 1.0)
                self.phase, self.until = FREEZE, now + T_RHO_US
                action = HOLD
            else:
                action = HOLD if self.phase == FREEZE else AI
        self.advance(now, rtt)
        # The window laws count an ACK for max_segments_per_ack segments at most
        # (cc::AckEvent::law_segments).
        acked = min(acked, self.max_segments_per_ack)
        if action is None:
            action = MI if self.level < 6 else AI if self.level in (HIGH, NO_ROUTER) or self.phase == AI_AFTER_MD else HOLD
        if action == MI:
            self.cwnd += ((1 + xi(self.level)) ** min(ratio, 2.5) - 1) * acked
        elif action == AI:
            self.cwnd += 3.0 * ratio / self.cwnd * acked


def test_controller_is_the_simulators(uno):
    # Through the kernel's entry point (uno_cong_avoid_ack), ACKs of 1-4 segments: its limit on
    # the segments an ACK counts for is the simulator's default, taken from the simulator.
    max_segments = _sim_defaults()["max_segments_per_ack"]
    rng = random.Random(9)
    a, md = ctypes.c_int(), ctypes.c_int()
    capped = 0
    for _ in range(200):
        cwnd = rng.uniform(1, 300)
        c = Ctl(cwnd=round(cwnd * SEG), level=5)
        c.written = max(c.cwnd // SEG, 1)
        sim = SimUcp(c.cwnd / SEG, max_segments)
        now = rng.randrange(10**6, 10**8)
        decisions, last = 0, 5
        for _ in range(120):
            now += rng.randrange(0, 40_000)
            rtt = rng.randrange(1_000, 800_000)
            acked = rng.randint(1, 4)
            capped += acked > max_segments
            level = rng.choice([None] * 6 + list(range(9)) + [OVERLOAD] * 3)
            if level is not None:
                decisions, last = decisions + 1, level
            uno.cong_avoid_ack(ctypes.byref(c), c.written, 10**6, 8 * rtt, now, acked, decisions, last, ctypes.byref(a), ctypes.byref(md))
            sim.ack(now, rtt, acked, level)
            assert (c.phase, c.level) == (sim.phase, sim.level)
            assert c.cwnd / SEG == pytest.approx(sim.cwnd, rel=1e-3, abs=2e-3)
            sim.cwnd = c.cwnd / SEG  # follow the fixed point's own path
    assert capped > 1000  # the limit was exercised


def _sim_defaults() -> dict:
    """The simulator's UCP1 defaults as it writes them out (controller.rs UcpConfig::default)."""
    import tomllib

    s = ecnlab.Scenario.from_file(ROOT / "scenarios" / "emulate_uno.toml")
    return tomllib.loads(s.to_toml())["flows"][0]["cc_params"]


def test_the_bpf_constants_are_the_simulators_defaults(uno):
    d = _sim_defaults()
    assert (d["ai_scaling"], d["xi_sigma"], d["k"], d["low_load"]) == ("linear", "midpoint", 0.15, 0.8)
    assert uno.constant(0) == d["t_rho_s"]
    assert (uno.constant(1), uno.constant(2)) == (d["alpha"], d["beta"])
    assert uno.constant(3) == d["initial_level"]
    assert uno.constant(4) == d["max_rtt_ratio"]
    assert uno.constant(5) == d["initial_rtt_s"]
    # The segments an ACK counts for, at most (UcpConfig::max_segments_per_ack).
    assert uno.constant(8) == d["max_segments_per_ack"]


def test_the_controller_takes_the_kernels_fields(uno):
    d = _sim_defaults()
    c = Ctl()
    uno.ctl_init(ctypes.byref(c), 10)
    assert (c.cwnd, c.written, c.level, c.phase) == (10 * SEG, 10, d["initial_level"], IDLE)
    # tcp_sock's srtt_us is eight times the smoothed RTT; 0 before the first sample.
    assert uno.rtt_us(8 * 40_000) == 40_000 and uno.rtt_us(8 * 40_000 + 7) == 40_000
    assert uno.rtt_us(0) == d["initial_rtt_s"] * 1e6
    a, md = ctypes.c_int(), ctypes.c_int()

    def step(c, w, srtt_x8, now, acked, n, level):
        return uno.cong_avoid_ack(ctypes.byref(c), w, 10**6, srtt_x8, now, acked, n, level, ctypes.byref(a), ctypes.byref(md))

    # Before any decision: MI at the initial level, per acknowledged segment, at the RTT of
    # srtt_us / 8, t_ρ the simulator's: (1 + ξ(5))^(40/200) − 1 per segment.
    ratio = 0.040 / d["t_rho_s"]
    # An ACK of 3 segments counts for two, as the simulator's (at most two per ACK).
    w = step(c, 10, 8 * 40_000, 10**6, 3, 0, 0)
    assert a.value == MI and w == 10
    # (within the 1/65536 segment the window carries apart)
    assert c.cwnd / SEG - 10 == pytest.approx(2 * ((1 + xi(5)) ** ratio - 1), rel=1e-5, abs=1 / SEG)
    # AI on a decision of level 6: α (rtt/t_ρ)/cwnd per segment.
    before = c.cwnd / SEG
    step(c, 10, 8 * 40_000, 10**6 + 1, 2, 1, HIGH)
    assert a.value == AI and c.level == HIGH
    assert c.cwnd / SEG - before == pytest.approx(2 * d["alpha"] * ratio / before, rel=1e-4, abs=1 / SEG)
    # MD on overload: β, then the freeze of one t_ρ.
    before = c.cwnd
    step(c, 10, 8 * 40_000, 2 * 10**6, 1, 2, OVERLOAD)
    assert md.value == 1 and c.cwnd == int(before * d["beta"]) and c.phase == FREEZE
    assert c.until_us == 2 * 10**6 + d["t_rho_s"] * 1e6
    # The same decision count again is no new decision; a window the kernel changed is taken.
    w = step(c, 4, 8 * 40_000, 2 * 10**6 + 10, 1, 2, OVERLOAD)
    assert md.value == 0 and a.value == HOLD and c.cwnd == 4 * SEG and w == 4


def test_the_bpf_call_passes_the_kernels_fields_unconverted():
    # The controller's one call into the header: the kernel's fields as they are (the header
    # converts srtt_us and takes t_ρ from its constant); a unit or an `acked` changed here
    # would pass every test above.
    src = (ROOT / "bpf" / "uno" / "uno.bpf.c").read_text()
    call = " ".join(src.split("uno_cong_avoid_ack(", 1)[1].split(";", 1)[0].split())
    assert call == "&s->c, tp->snd_cwnd, tp->snd_cwnd_clamp, tp->srtt_us, tp->tcp_mstamp, acked, f ? f->decisions : 0, f ? f->level : 0, &action, &md)"
    assert "uno_ctl_init(&s->c, tp->snd_cwnd);" in src


@pytest.mark.parametrize(
    "action,rtt_ms,cwnd,level",
    [(AI, 40, 157, 6), (AI, 40, 1000, 6), (AI, 40, 10_000, 6), (AI, 40, 39_000, 6), (AI, 1, 1000, 6), (AI, 1, 100_000, 6), (MI, 2, 100, 5), (MI, 40, 100, 5), (MI, 80, 1000, 0)],
)
def test_increments_add_up_as_the_simulators_float(uno, action, rtt_ms, cwnd, level):
    # Many increments each below 1/65536 segment (AI at large windows or small RTTs, MI at
    # level 5 and small RTTs) add up as the simulator's floating point: truncated one by one
    # they fell 24 % short at 40 ms and 10 000 segments, and to nothing at 1 ms and 1 000.
    rtt = rtt_ms * 1000
    c = Ctl(cwnd=cwnd * SEG, level=level)
    w = float(cwnd)
    for _ in range(20_000):
        uno.grow(ctypes.byref(c), action, 1, rtt, T_RHO_US)
        w += 3.0 * (rtt / T_RHO_US) / w if action == AI else (1 + xi(level)) ** (rtt / T_RHO_US) - 1
    # (What is carried, below 1/65536 segment, is not yet in the window.)
    assert c.cwnd / SEG - cwnd == pytest.approx(w - cwnd, rel=2e-4, abs=1 / SEG)


def test_ucp1_runs_as_bpf_in_the_plan(monkeypatch):
    from ecnlab.emulate import plan
    from ecnlab.errors import ScenarioError

    monkeypatch.setattr(bpf, "unavailable", lambda cc: None)
    s = ecnlab.Scenario.from_file(ROOT / "scenarios" / "emulate_uno.toml").to_dict()
    p = plan(ecnlab.Scenario(s))
    assert all(f["bpf"] and f["cc"] == "ucp1" for f in p["flows"])
    s["flows"][0]["ecn"] = "ecn"
    with pytest.raises(ScenarioError) as e:
        plan(ecnlab.Scenario(s))
    assert e.value.path.endswith(".ecn") and "uno" in e.value.message
    # The BPF controller runs its own defaults: a parameter for the simulator's UCP1 is
    # refused by key rather than dropped without a word; the defaults written out (as a
    # normalised scenario writes them) are no request.
    s["flows"][0]["ecn"] = "uno"
    s["flows"][0]["cc_params"] = {"alpha": 6.0}
    with pytest.raises(ScenarioError) as e:
        plan(ecnlab.Scenario(s))
    assert e.value.path == "flows[0].cc_params" and "defaults" in e.value.message
    s["flows"][0]["cc_params"] = {"alpha": 3.0, "beta": 0.875}
    assert plan(ecnlab.Scenario(s))["flows"]
    import tomllib

    normalised = tomllib.loads(ecnlab.Scenario(s).to_toml())
    assert normalised["flows"][0]["cc_params"]["t_rho_s"] == 0.2
    assert plan(ecnlab.Scenario(normalised))["flows"]


def test_the_run_says_what_connections_without_feedback_ran_as():
    # Each scheme's own fallback (UCP1 keeps MI at level 5, not Reno), and a full map of
    # connections is said, not silent.
    w = bpf.warnings({"ucp1": {"connections_without_ecn": 2, "flows_untracked": 0}, "dctcp": {"connections_without_ecn": 1}})
    assert len(w) == 2
    assert "ucp1 ran 2 connection(s) without ECN" in w[0] and "initial level 5" in w[0] and "Reno" not in w[0]
    assert "dctcp" in w[1] and "Reno" in w[1]
    w = bpf.warnings({"ucp1": {"connections_without_ecn": 0, "flows_untracked": 3}})
    assert len(w) == 1 and "no room in its map" in w[0] and "3 connection(s)" in w[0]
    assert bpf.warnings({"mecn": {"connections_without_ecn": 0, "flows_untracked": 0}}) == []
    w = bpf.warnings({"ucp1": {"uno_ring_full": 7}})
    assert len(w) == 1 and "ring of 512 frames" in w[0] and "7 time(s)" in w[0]
    assert set(bpf.WITHOUT_FEEDBACK) == set(bpf.OBJECTS) and bpf.COUNTERS[-1] == "flows_untracked"


def test_the_counters_are_named_in_the_headers_order():
    # bpf.py's COUNTERS against counters.h's enum, one by one.
    import re

    names = re.findall(r"^\s*(C_[A-Z0-9_]+)", (ROOT / "bpf" / "counters.h").read_text(), re.M)
    assert len(names) == len(bpf.COUNTERS)
    assert names[-1] == "C_FLOWS_UNTRACKED" and names[0] == "C_INIT" and names[bpf.COUNTERS.index("uno_level0")] == "C_UNO_LEVEL0"


# ----------------------------------------------------------------------- runs (root)


_WHY_NOT = bpf_run_unavailable("ucp1")
needs_bpf = pytest.mark.skipif(_WHY_NOT is not None, reason=_WHY_NOT or "")


@needs_bpf
def test_bpf_ucp1_reads_the_routers_levels_and_reacts():
    import polars as pl

    s = ecnlab.Scenario.from_file(ROOT / "scenarios" / "emulate_uno.toml").to_dict()
    s["duration"] = "8s"
    s["flows"][0].update(count=2, stagger="3s")
    r = emulate(ecnlab.Scenario(s))
    sim = ecnlab.run(ecnlab.Scenario(s))
    c = r.meta["bpf_controllers"]["ucp1"]
    # It ran: every connection negotiated ECN and was taken by the controller; the senders'
    # data left ECT(1), the router wrote its level into residues (ECT(0)), the receivers read
    # it and wrote their reports, and the senders decided blocks from them.
    assert c["connections"] == 2 and c["connections_without_ecn"] == 0
    assert c["data_recoded"] > 1000 and c["data_in"] > 5000
    port = r.port("r1->r2")
    assert c["data_in_marked"] > 0 and c["echoes_written"] > 1000 and c["acks_ece"] > 0
    levels = [c[f"uno_level{n}"] for n in range(9)]
    assert c["estimates"] == sum(levels) > 100
    # Both regimes: the low levels (MI) while the link filled, and at the top the high and
    # overload levels, to which the controller answered with AI and with MDs.
    assert sum(levels[:6]) > 0 and levels[6] + levels[7] > 0
    # "No UNO router" only where a flow's very first block straddled a change of the router's
    # level (no bit heard yet): a block lasts milliseconds, a level 200 ms.
    assert levels[8] <= 0.01 * sum(levels)
    assert c["uno_acks_mi"] > 0 and c["uno_acks_ai"] > 0 and c["reductions"] > 0
    # The mechanism, whatever the forwarder's lateness (these hold on late runs too):
    # - the levels decided are the router's: at the top (6 and 7) but while a flow fills the
    #   link (the simulator on the 25-s run spends 0.94 of its time there; this 8-s run with
    #   two joins decided 0.89 of its blocks there). Decisions read from anything but the
    #   echoed data IP-IDs spread over 0-7 (0.25 at 6-7: measured 0.21 with the receiver's
    #   own ACK IP-IDs);
    top = (levels[6] + levels[7]) / sum(levels)
    assert top >= 0.7, (top, levels)
    # - MI only while a flow fills the link: 0.13 of the ACKs here (0.05 on the 25-s run,
    #   whose five joins are 5 s apart); with levels read at random, 6 in 8 decisions are MI;
    acks = c["uno_acks_mi"] + c["uno_acks_ai"] + c["uno_acks_hold"]
    assert acks == c["acks"] and c["uno_acks_mi"] <= 0.3 * acks, c
    # - every MD opens a freeze of t_ρ and an AI RTT: at most one per flow per 0.24 s of its
    #   (8 + 5) s, and at least one per overload episode (10 here; 102-105 in the 25-s runs);
    assert 3 <= c["reductions"] <= 13 / 0.24, c
    # - a block needs all eight residues, so at least eight data packets per decided (or
    #   skipped) block; the simulator's block rule replayed on captured Linux ACKs gives 8.8
    #   (docs/emulation.md), this run 9.3; frames counted as one segment need ~3 times more;
    per_block = c["data_in"] / (c["estimates"] + c["uno_blocks_skipped"])
    assert 7.8 <= per_block <= 12, (per_block, c)
    # - echoes consistent with the data: nearly every ACK the controller saw carried the
    #   receiver's echo, and an ACK echoes the bit when any packet it covers carried it, so
    #   at least as often as data arrived marked; nothing went unrecorded.
    assert c["echoes_written"] >= 0.9 * c["acks"] and c["echoes_written"] <= c["data_in"], c
    assert c["acks_ece"] / c["echoes_written"] >= c["data_in_marked"] / c["data_in"], c
    # (Frames beyond the ring's 512 are possible on a late run: the forwarder's backlog holds
    # data beyond the port's buffer; the run warns of them.)
    assert c["flows_untracked"] == 0
    # It filled the link as the simulated UCP1 on the same network does (0.85 of the
    # simulator's bytes once both run when the forwarder kept time, 0.6 otherwise).
    def carried(res) -> float:
        # Each flow's mean delivery rate once both run (the agents sample apart, so the flows'
        # samples do not share times).
        delivered = res.timeseries.filter((pl.col("kind") == "delivery_bps") & (pl.col("time_s") >= 4.0))
        per_flow = delivered.group_by("entity").agg(pl.col("value").mean())["value"]
        assert per_flow.len() == 2
        return per_flow.sum()

    punctual = r.meta["lateness_max_s"] < 0.010
    assert carried(r) > (0.85 if punctual else 0.6) * carried(sim), (carried(r), carried(sim), r.meta["lateness_max_s"])
    assert carried(sim) > 0.7 * 45e6
    assert r.meta["host_stack_errors"] == 0
    assert not [n for n in bpf.registered() if n.startswith(f"e{os.getpid()}_")]


_WHY_NOT_MIXED = _WHY_NOT or bpf_run_unavailable("mecn")


@pytest.mark.skipif(_WHY_NOT_MIXED is not None, reason=_WHY_NOT_MIXED or "")
def test_bpf_schemes_mixed_in_one_run_each_see_their_flows():
    # Every host's interface carries both schemes' tc programs (one filter each); each must
    # see its own flows' packets. With TC_ACT_OK the filter attached last (MECN's, loaded
    # second) ended the chain and UCP1 ran blind: data_recoded 0, estimates 0.
    s = ecnlab.Scenario.from_file(ROOT / "scenarios" / "emulate_uno.toml").to_dict()
    s["duration"] = "4s"
    base = {k: v for k, v in s["flows"][0].items() if k not in ("count", "stagger", "start_jitter")}
    s["flows"] = [dict(base, name="u", src="s0", dst="d0"), dict(base, name="m", src="s1", dst="d1", cc="mecn", ecn="mecn")]
    r = emulate(ecnlab.Scenario(s))
    c = r.meta["bpf_controllers"]
    assert c["ucp1"]["connections"] == 1 and c["mecn"]["connections"] == 1
    u, m = c["ucp1"], c["mecn"]
    assert u["data_recoded"] > 100 and u["data_in"] > 100 and u["echoes_written"] > 100 and u["estimates"] > 10, u
    # (MECN's data leaves with the kernel's ECT(0), and its receivers echo only what a MECN
    # router marks, which this UNO router does not: its receivers' reading is what shows.)
    assert m["data_in"] > 1000, m
    assert r.meta["host_stack_errors"] == 0


@needs_bpf
def test_a_killed_ucp1_run_leaves_its_controller_to_cleanup(tmp_path: Path):
    import sys
    import time

    from ecnlab.emulate import netns

    p = subprocess.Popen([sys.executable, "-m", "ecnlab", "emulate", str(ROOT / "scenarios" / "emulate_uno.toml"), "--out", str(tmp_path / "out"), "-q"])
    name = f"e{p.pid}_ucp1"
    deadline = time.monotonic() + 30
    while name not in bpf.registered() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert name in bpf.registered(), "the run never registered its controller"
    time.sleep(1.0)
    p.kill()
    p.wait()
    # Pinned, so a SIGKILL leaves it registered until the cleanup unpins it (and removes the
    # namespaces, whose devices carried its tc programs).
    assert name in bpf.registered()
    r = subprocess.run([sys.executable, "-m", "ecnlab", "emulate", "--cleanup"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    deadline = time.monotonic() + 5
    while name in bpf.registered() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert name not in bpf.registered()
    assert not [n for n in netns.namespaces() if n.startswith(f"{netns.PREFIX}{p.pid}-")]
