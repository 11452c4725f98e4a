"""The BPF UNO/UCP1 (bpf/uno): its rules against the paper and the simulator, and, as root, a run.

The rules (bpf/uno/uno_math.h, the lines the BPF programs run) are compiled as plain C and
checked on hand-computed cases of §III-A's equations and Fig. 1's levels, and against
transcriptions of the simulator's codec and controller (crates/ecnlab/src/schemes/uno/codec.rs,
controller.rs and vcp/controller.rs) in floating point on random sequences: the receiver's
report, the sender's blocks (per segment in the simulator, per GSO frame here), the decision
with a router heard or not, and the window under MI, AI and MD with VCP's freeze. The run
needs root, network namespaces, the kernel's BTF and the built programs (``make -C bpf``), and
skips with a plain message without them."""

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


class Ctl(ctypes.Structure):
    _fields_ = [("cwnd", ctypes.c_uint64), ("until_us", ctypes.c_uint64), ("phase", ctypes.c_uint8), ("level", ctypes.c_uint8)]


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
    ]:
        fn = getattr(so, name)
        fn.restype, fn.argtypes = res, args
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
    # The sender sends frames of 1-6 segments of 1448 bytes (a GSO frame's segments count
    # up from its IP-ID; the last may be shorter); the receiver acknowledges at segment
    # boundaries, sometimes a duplicate; reports echo routers at random levels, some CE.
    rng = random.Random(5)
    decisions = {"level": 0, "skip": 0, NO_ROUTER: 0}
    for trial in range(200):
        d, sim = Decider(), SimSender()
        frames: list[Frame] = []
        seq = rng.randrange(1 << 32)
        una = seq
        ident = rng.randrange(1 << 16)
        ends: list[int] = []
        router = rng.random() < 0.8
        for _ in range(80):
            if rng.random() < 0.5 or not ends or ends[-1] == una:
                segs = rng.randint(1, 6)
                size = 1448
                last = rng.choice([size, rng.randint(1, size)])
                length = size * (segs - 1) + last
                f = Frame(start=seq & 0xFFFFFFFF, end=(seq + length) & 0xFFFFFFFF, ident=ident, size=size if segs > 1 else length, segs=segs, done=0)
                frames.append(f)
                for i in range(segs):
                    e = seq + (i + 1) * size if i < segs - 1 else seq + length
                    sim.send(e & 0xFFFFFFFF, (ident + i) & 0xFFFF)
                    ends.append(e)
                seq += length
                ident = (ident + segs) & 0xFFFF
            else:
                pending = [e for e in ends if e > una]
                new = rng.random() < 0.85 and bool(pending)
                ack = rng.choice(pending[: rng.randint(1, min(len(pending), 8))]) if new else una
                rid = rng.randrange(1 << 16)
                ece = router and rng.random() < 0.3
                ae = rng.random() < 0.02
                uno.block_report(ctypes.byref(d.block), rid, int(ece), int(ae))
                want = sim.ack(ack & 0xFFFFFFFF, rid, ece, ae, new)
                got = None
                if new:
                    una = ack
                    covered = ctypes.c_uint8()
                    while frames and uno.frame_cover(ctypes.byref(frames[0]), ack & 0xFFFFFFFF, ctypes.byref(covered)):
                        frames.pop(0)
                    if covered.value:
                        r = uno.block_cover(ctypes.byref(d), covered.value)
                        got = None if r == -1 else "skip" if r == -2 else r
                assert got == want, f"trial {trial}"
                if want is not None:
                    decisions["skip" if want == "skip" else NO_ROUTER if want == NO_ROUTER else "level"] += 1
    # The sequences reached every kind of decision.
    assert all(n > 20 for n in decisions.values()), decisions


class SimUcp:
    """controller.rs Ucp over vcp/controller.rs Vcp (MI, AI, MD, freeze), window in segments."""

    def __init__(self, cwnd: float) -> None:
        self.cwnd, self.level, self.phase, self.until = cwnd, 5, IDLE, 0

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
        if action is None:
            action = MI if self.level < 6 else AI if self.level in (HIGH, NO_ROUTER) or self.phase == AI_AFTER_MD else HOLD
        if action == MI:
            self.cwnd += ((1 + xi(self.level)) ** min(ratio, 2.5) - 1) * acked
        elif action == AI:
            self.cwnd += 3.0 * ratio / self.cwnd * acked


def test_controller_is_the_simulators(uno):
    rng = random.Random(9)
    for _ in range(200):
        cwnd = rng.uniform(1, 300)
        c = Ctl(cwnd=round(cwnd * SEG), level=5)
        sim = SimUcp(c.cwnd / SEG)
        now = rng.randrange(10**6, 10**8)
        for _ in range(120):
            now += rng.randrange(0, 40_000)
            rtt = rng.randrange(1_000, 800_000)
            acked = rng.randint(1, 3)
            level = rng.choice([None] * 6 + list(range(9)) + [OVERLOAD] * 3)
            md = ctypes.c_int()
            if level is None:
                action = uno.default_action(ctypes.byref(c), now, rtt)
            else:
                action = uno.on_decision(ctypes.byref(c), level, now, rtt, T_RHO_US, ctypes.byref(md))
            uno.grow(ctypes.byref(c), action, acked, rtt, T_RHO_US)
            sim.ack(now, rtt, acked, level)
            assert (c.phase, c.level) == (sim.phase, sim.level)
            assert c.cwnd / SEG == pytest.approx(sim.cwnd, rel=1e-3, abs=2e-3)
            sim.cwnd = c.cwnd / SEG  # follow the fixed point's own path


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
