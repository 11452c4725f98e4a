"""Provenance: the host profiles against ecnlab's [tcp] keys and defaults, and the join of an
experiment's sources with its runs' fully-defaulted scenarios (a key without a source, a
[tcp] value that leaves the profile without saying so)."""

from __future__ import annotations

import tomllib

import pytest

import ecnlab
from ecnlab.experiments import base
from ecnlab.experiments._provenance import join, scenario_keys
from ecnlab.experiments.base import LINUX_HOSTS, NS2_HOSTS, NS3_HOSTS, Source, assumption, default, hosts_tcp, paper


def dumbbell(tcp: dict | None = None) -> ecnlab.Scenario:
    s = ecnlab.Scenario.dumbbell(left=1, right=1, bottleneck_rate="10Mbps", duration="2s", seed=1)
    s = s.add_tcp_flow("l0", "r0", name="f0")
    if tcp is not None:
        s = s.set("tcp", tcp)
    return s


def defaulted_tcp(s: ecnlab.Scenario) -> dict:
    return tomllib.loads(s.to_toml())["tcp"]


def test_every_profile_sets_every_tcp_key_and_names_its_source():
    keys = set(defaulted_tcp(dumbbell()))
    for hosts in (NS2_HOSTS, NS3_HOSTS, LINUX_HOSTS):
        assert set(hosts.tcp()) == keys, hosts.name
        assert all(s.reference and s.parameter.startswith("tcp.") for s in hosts.sources)
        # A scenario started from the profile holds exactly its values.
        assert defaulted_tcp(dumbbell(hosts_tcp(hosts))) == hosts.tcp(), hosts.name


def test_linux_hosts_are_ecnlab_defaults():
    assert defaulted_tcp(dumbbell()) == LINUX_HOSTS.tcp()


def test_simulator_defaults_are_those_of_their_code():
    ns2, ns3 = NS2_HOSTS.tcp(), NS3_HOSTS.tcp()
    # ns-default.tcl: packetSize_ 1000, windowInit_ 2, window_ 20, minrto_ 0.2, tcpTick_ 0.01,
    # TCPSink acks every segment (DelAck's interval_ 100ms).
    assert (ns2["mss"], ns2["initial_window"], ns2["rcv_buf"], ns2["min_rto_s"], ns2["clock_granularity_s"]) == (1000, 2, 20000, 0.2, 0.01)
    assert (ns2["delayed_ack"], ns2["delack_timeout_s"], ns2["sack"], ns2["timestamps"]) == (False, 0.1, False, False)
    # tcp-socket(-base).cc: SegmentSize 536, InitialCwnd 10, DelAckTimeout 0.2 s, MinRto 1 s.
    assert (ns3["mss"], ns3["initial_window"], ns3["delack_timeout_s"], ns3["min_rto_s"], ns3["rcv_buf"]) == (536, 10, 0.2, 1.0, 131072)
    for hosts in (NS2_HOSTS, NS3_HOSTS):
        assert not any(hosts.tcp()[k] for k in ("quickack", "tso_defer", "rcv_autotune", "rack", "tlp", "frto")), hosts.name


def test_a_profile_host_runs():
    for hosts in (NS2_HOSTS, NS3_HOSTS):
        r = ecnlab.run(dumbbell(hosts_tcp(hosts)))
        assert r.flow("f0")["bytes_delivered"] > 0, hosts.name
    with pytest.raises(KeyError, match="not a \\[tcp\\] key: mtu"):
        hosts_tcp(NS2_HOSTS, mtu=1500)


def test_sources_are_checked():
    with pytest.raises(ValueError, match="source must be one of"):
        Source("tcp.mss", 1000, "folklore", "x")
    with pytest.raises(ValueError, match="needs its reference"):
        paper("tcp.mss", 1000, " ")
    assert default("flows.*", None, "x").covers("flows.cc") and not default("flows.*", None, "x").covers("flowsx")
    assert assumption("tcp.mss", 1000, "x").to_json() == {"parameter": "tcp.mss", "value": 1000, "source": "assumption", "reference": "x"}


def test_keys_fold_list_indices():
    keys = scenario_keys(dumbbell().to_toml())
    assert "tcp.mss" in keys and "topology.bottleneck.rate" in keys
    assert "flows.src" in keys and keys["flows.src"] == ["l0"]


def test_the_join_names_keys_without_a_source_and_undeclared_deviations():
    """A constructed experiment that starts its TCP from ns-2's hosts, declares its topology
    and flows, but changes the segment size without saying so and forgets the measurement
    table."""
    sc = dumbbell(hosts_tcp(NS2_HOSTS, mss=960))
    toml = sc.to_toml()
    own = [
        paper("topology.*", None, "Fig. 1"),
        paper("flows.*", None, "§4"),
        assumption("duration", "2s", "long enough for the test"),
    ]
    p = join({"bad-s1": toml}, own, NS2_HOSTS)
    assert not p.complete
    assert "tcp.mss" in p.undeclared and "packetSize_" in p.undeclared["tcp.mss"]
    missing = set(p.missing)
    assert missing and all(k.startswith("measure.") or k.startswith("hosts.") for k in missing), missing
    assert any("no source" in x for x in p.problems())
    # Declared, it is complete.
    own += [paper("tcp.mss", 960, "§4: 960-byte segments"), assumption("measure.*", None, "what is sampled"), assumption("hosts.*", None, "ecnlab's host defaults")]
    p = join({"good-s1": toml}, own, NS2_HOSTS)
    assert p.complete, p.problems()
    assert [s.parameter for s in p.sources][:1] == ["topology.*"] and any(s.parameter == "tcp.sack" for s in p.sources)


def test_newreno_on_ns2_hosts_follows_ns2():
    """ns-2's Reno-family senders set ssthresh to half the window (tcp.cc slowdown(), the
    recovery's inflation cleared at a timeout), not half the flight, and keep an ECN response's
    ssthresh at a timeout (TcpAgent::timeout): every NewReno flow and workload of an experiment
    on ns-2's hosts does so under the default reading."""
    from ecnlab import experiments as ex
    from ecnlab.experiments.base import Reading
    from ecnlab.scenario import load_scenario

    seen = 0
    for name in ex.names():
        exp = ex.get(name)
        if exp.hosts is not NS2_HOSTS:
            continue
        for run, sc in exp.runs(True, exp.seeds(True)[:1], Reading(exp.axes)).items():
            d = load_scenario(sc).to_dict()
            for f in d["flows"] + d.get("workloads", []):
                if f.get("cc") == "newreno":
                    seen += 1
                    p = f.get("cc_params", {})
                    assert (p.get("reduce_from"), p.get("rto_rule")) == ("cwnd", "ns2"), f"{name} {run} {f.get('name')}"
    assert seen > 0
