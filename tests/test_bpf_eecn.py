"""The BPF EECN (bpf/eecn): its rules against the paper and the simulator, and, as root, a run.

The rules (bpf/eecn/eecn_math.h, the lines the BPF programs run) are compiled as plain C and
checked on the paper's Tables 1–2, the receiver's echo (CL(2) until CWR, CL(1) for three
ACKs), Algorithms 1–2 and the initial windows of §4.4.1, against transcriptions of the
simulator's codec and controller (crates/ecnlab/src/schemes/eecn) in floating point. The run
needs root, network namespaces, the kernel's BTF and the built programs (``make -C bpf``),
and skips with a plain message without them."""

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
MATH = ROOT / "bpf" / "eecn" / "eecn_math.h"
NONE, CL1, CL2, NOT_CAPABLE = 0, 1, 2, 3
SEG = 65536


class Echo(ctypes.Structure):
    _fields_ = [("cl2", ctypes.c_uint8), ("cl1_left", ctypes.c_uint8)]


class Window(ctypes.Structure):
    _fields_ = [("cwnd", ctypes.c_uint64), ("ssthresh", ctypes.c_uint64)]


@pytest.fixture(scope="module")
def eecn(tmp_path_factory):
    cc = kernel_c_compiler()
    d = tmp_path_factory.mktemp("eecn_math")
    src = d / "m.c"
    src.write_text(
        "#include <linux/types.h>\n"
        f'#include "{MATH}"\n'
        "__u8 level_of_ip(__u8 e) { return eecn_level_of_ip(e); }\n"
        "__u8 level_of_echo(int e, int c) { return eecn_level_of_echo(e, c); }\n"
        "__u8 echo_flags(__u8 l) { return eecn_echo_flags(l); }\n"
        "void on_data(struct eecn_echo *s, __u8 ecn, int cwr) { eecn_on_data(s, ecn, cwr); }\n"
        "__u8 next_echo(struct eecn_echo *s) { return eecn_next_echo(s); }\n"
        "__u32 exp_neg_us(__u64 x) { return eecn_exp_neg_us(x); }\n"
        "void on_cl2(struct eecn_window *w, int c) { eecn_on_cl2(w, c); }\n"
        "int on_cl1(struct eecn_window *w, int c, __u64 b) { return eecn_on_cl1(w, c, b); }\n"
        "void grow(struct eecn_window *w, int c, __u64 b) { eecn_grow(w, c, b); }\n"
        "__u32 initial_window(__u8 l) { return eecn_initial_window(l); }\n"
    )
    lib = d / "m.so"
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    so = ctypes.CDLL(str(lib))
    for name, res, args in [
        ("level_of_ip", ctypes.c_uint8, [ctypes.c_uint8]),
        ("level_of_echo", ctypes.c_uint8, [ctypes.c_int, ctypes.c_int]),
        ("echo_flags", ctypes.c_uint8, [ctypes.c_uint8]),
        ("on_data", None, [ctypes.POINTER(Echo), ctypes.c_uint8, ctypes.c_int]),
        ("next_echo", ctypes.c_uint8, [ctypes.POINTER(Echo)]),
        ("exp_neg_us", ctypes.c_uint32, [ctypes.c_uint64]),
        ("on_cl2", None, [ctypes.POINTER(Window), ctypes.c_int]),
        ("on_cl1", ctypes.c_int, [ctypes.POINTER(Window), ctypes.c_int, ctypes.c_uint64]),
        ("grow", None, [ctypes.POINTER(Window), ctypes.c_int, ctypes.c_uint64]),
        ("initial_window", ctypes.c_uint32, [ctypes.c_uint8]),
    ]:
        fn = getattr(so, name)
        fn.restype, fn.argtypes = res, args
    return so


def test_codepoints_are_tables_1_and_2(eecn):
    # Table 1: 00 not capable, 01 capable, 10 CL(1), 11 CL(2).
    assert [eecn.level_of_ip(e) for e in (0, 1, 2, 3)] == [NOT_CAPABLE, NONE, CL1, CL2]
    # Table 2 on SYN-ACKs and ACKs, (ECE, CWR): 01 capable, 10 CL(1), 11 CL(2), 00 nothing.
    assert eecn.level_of_echo(0, 1) == NONE and eecn.level_of_echo(1, 0) == CL1 and eecn.level_of_echo(1, 1) == CL2
    assert eecn.level_of_echo(0, 0) == NOT_CAPABLE
    assert [eecn.echo_flags(level) for level in (NONE, CL1, CL2)] == [0x80, 0x40, 0xC0]


def test_initial_windows_are_section_4_4_1(eecn):
    assert [eecn.initial_window(level) for level in (NONE, CL1, CL2)] == [10, 5, 1]


def test_receiver_echo_is_the_simulators(eecn):
    # codec.rs data_in / next_echo: CWR first, then CL(2) until CWR, CL(1) for 3 ACKs.
    rng = random.Random(7)
    for _ in range(300):
        s = Echo()
        cl2, left = False, 0
        for _ in range(40):
            if rng.random() < 0.6:
                ecn, cwr = rng.choice([1, 1, 1, 2, 3]), rng.random() < 0.15
                eecn.on_data(ctypes.byref(s), ecn, int(cwr))
                if cwr:
                    cl2 = False
                if ecn == 3:
                    cl2 = True
                elif ecn == 2:
                    left = 3
            else:
                got = eecn.next_echo(ctypes.byref(s))
                cl1 = left > 0
                left = max(0, left - 1)
                assert got == (CL2 if cl2 else CL1 if cl1 else NONE)


@pytest.mark.parametrize("beta_s", [0.0, 0.0005, 0.001, 0.01, 0.1, 0.25, 0.3, 1.0, 2.5, 7.0])
def test_decay_is_e_to_the_minus_beta(eecn, beta_s):
    got = eecn.exp_neg_us(round(beta_s * 1e6)) / 65536
    assert abs(got - math.exp(-beta_s)) < 2e-4 * max(1.0, math.exp(-beta_s)) + 3e-5


def _win(cwnd_seg: float, ssthresh_seg: float) -> Window:
    return Window(round(cwnd_seg * SEG), round(ssthresh_seg * SEG))


def test_algorithm_1(eecn):
    # CL(2): cwnd / 8 when congested, / 4 otherwise, at least 2 segments (never raised).
    for cwnd, congested, want in [(80, 1, 10), (80, 0, 20), (12, 1, 2), (3, 0, 2), (1.5, 1, 1.5)]:
        w = _win(cwnd, 1000)
        eecn.on_cl2(ctypes.byref(w), congested)
        assert w.cwnd / SEG == pytest.approx(want, abs=1e-4) and w.ssthresh == w.cwnd
    # CL(1): cwnd e^-β only when congested (β = 0.1 s: 0.9048), at least 2 segments.
    w = _win(50, 1000)
    assert eecn.on_cl1(ctypes.byref(w), 1, 100_000) == 1
    assert w.cwnd / SEG == pytest.approx(50 * math.exp(-0.1), rel=2e-4) and w.ssthresh == w.cwnd
    w = _win(50, 1000)
    assert eecn.on_cl1(ctypes.byref(w), 0, 100_000) == 0 and w.cwnd == 50 * SEG


def test_algorithm_2_is_the_simulators_grow(eecn):
    # controller.rs grow(): slow start +1 (+0.3 congested), congestion avoidance +0.02 or the
    # decay e^-β (cwnd only, at least 2 segments). Random ACK sequences, floating point
    # beside the fixed point.
    rng = random.Random(3)
    for _ in range(200):
        cwnd, ssthresh = rng.uniform(1, 200), rng.choice([rng.uniform(2, 100), 1e9])
        w = _win(cwnd, ssthresh)
        cwnd, ssthresh = w.cwnd / SEG, w.ssthresh / SEG
        for _ in range(50):
            congested = rng.random() < 0.4
            beta = rng.uniform(0, 0.05) if congested else 0.0
            eecn.grow(ctypes.byref(w), int(congested), round(beta * 1e6))
            if cwnd < ssthresh:
                cwnd += 0.3 if congested else 1.0
            elif congested:
                cwnd = max(cwnd * math.exp(-round(beta * 1e6) / 1e6), min(2.0, cwnd))
            else:
                cwnd += 0.02
            assert w.cwnd / SEG == pytest.approx(cwnd, rel=2e-3)
            cwnd = w.cwnd / SEG  # follow the fixed point's own path


def test_flows_their_receiver_opens_are_refused_by_key(monkeypatch):
    from ecnlab.emulate import plan
    from ecnlab.errors import ScenarioError

    monkeypatch.setattr(bpf, "unavailable", lambda cc: None)
    s = ecnlab.Scenario.from_file(ROOT / "scenarios" / "emulate_eecn.toml").to_dict()
    s["flows"][1]["client_initiated"] = True
    with pytest.raises(ScenarioError) as e:
        plan(ecnlab.Scenario(s))
    assert e.value.path.endswith(".client_initiated") and "opens the connection" in e.value.message
    s["flows"][1]["client_initiated"] = False
    assert all(f["bpf"] for f in plan(ecnlab.Scenario(s))["flows"])


# ----------------------------------------------------------------------- runs (root)


_WHY_NOT = bpf_run_unavailable("eecn")
needs_bpf = pytest.mark.skipif(_WHY_NOT is not None, reason=_WHY_NOT or "")


@needs_bpf
def test_bpf_eecn_negotiates_in_the_handshake_and_reacts_to_both_levels():
    s = ecnlab.Scenario.from_file(ROOT / "scenarios" / "emulate_eecn.toml").to_dict()
    s["duration"] = "5.5s"
    for short in s["flows"][1:]:
        short["count"] = 2
    r = emulate(ecnlab.Scenario(s))
    c = r.meta["bpf_controllers"]["eecn"]
    # Every connection negotiated EECN through the rewritten handshake (the kernels saw
    # RFC 3168 ECN-setup packets, or they would have run without ECN) and the short flows
    # finished.
    assert c["connections"] == r.flows.height and c["connections_without_ecn"] == 0
    short = r.flows.filter(r.flows["name"].str.starts_with("sf"))
    assert short.height == 4 and short["fct_s"].null_count() == 0
    # Data left ECT(1); the receivers read the marker's levels and echoed them; the senders
    # cut by level and judged the RTT.
    port = r.port("rl->rr")
    assert c["data_recoded"] > 500 and c["data_in_marked"] > 0 and port["marked_pkts"] > 0
    assert c["echoes_written"] > 500 and c["acks_ece"] > 0
    assert c["cuts_level1"] + c["cuts_level2"] > 0 and c["congested_acks"] > 0
    assert r.meta["host_stack_errors"] == 0
    assert not [n for n in bpf.registered() if n.startswith(f"e{os.getpid()}_")]
