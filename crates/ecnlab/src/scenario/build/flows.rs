//! The `[[flows]]` entries: their names, copies and starts, and each copy built — a UDP
//! source and sink here, a TCP flow by [`super::tcp_flow`].

use super::tcp_flow::{add_tcp_flow, TcpFlowArgs};
use super::{err, Ctx};
use crate::app::{UdpPattern, UdpSink, UdpSource, UdpSourceConfig};
use crate::engine::rng;
use crate::scenario::budget::Load;
use crate::scenario::schema::{FlowKind, FlowSpec};
use crate::scenario::ScenarioError;
use crate::time::{Time, NEVER};
use crate::wire::Ecn;

/// Names of nodes, flows and workloads become parts of file names (pcap captures) and table
/// keys: 1 to 64 characters from A–Z, a–z, 0–9, `_`, `.`, `-` and `+`, starting with a
/// letter, a digit or `_`.
pub const NAME_RULE: &str =
    "1 to 64 characters from A-Z a-z 0-9 _ . - +, starting with a letter, a digit or _";

pub(super) fn check_name(path: &str, what: &str, name: &str) -> Result<(), ScenarioError> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'+'))
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(err(
            path,
            format!("{what} name {name:?} is not allowed: use {NAME_RULE}"),
        ))
    }
}

fn flow_name(f: &FlowSpec, index: usize, k: usize, count: usize) -> String {
    let base = f.name.clone().unwrap_or_else(|| format!("f{index}"));
    if base.contains("{k}") {
        base.replace("{k}", &k.to_string())
    } else if count > 1 {
        format!("{base}.{k}")
    } else {
        base
    }
}

pub(super) fn add_flow_spec(
    c: &mut Ctx,
    path: &str,
    f: &FlowSpec,
    index: usize,
) -> Result<(), ScenarioError> {
    let count = f.count.unwrap_or(1);
    if count == 0 {
        return Err(err(format!("{path}.count"), "must be at least 1"));
    }
    if f.stagger.is_some() && f.count.is_none() {
        return Err(err(
            format!("{path}.stagger"),
            "spaces the starts of copies: give count too",
        ));
    }
    let jitter = f.start_jitter.map_or(0, |d| d.0);
    // The last copy's latest start, in 128 bits: a large stagger times a large count would
    // wrap the 64-bit clock and start copies early.
    let last_start = f.start.map_or(0, |d| d.0) as u128
        + f.stagger.map_or(0, |d| d.0) as u128 * (count as u128).saturating_sub(1)
        + jitter as u128;
    if last_start > crate::scenario::units::MAX_DURATION as u128 {
        let key = if f.stagger.is_some() {
            "stagger"
        } else {
            "start_jitter"
        };
        return Err(err(
            format!("{path}.{key}"),
            format!(
                "start + stagger × (count − 1) + start_jitter is {} s, beyond the longest time a scenario may give ({} s)",
                last_start as f64 / crate::time::SEC as f64,
                crate::time::to_secs(crate::scenario::units::MAX_DURATION)
            ),
        ));
    }
    let last_start = last_start as Time;
    // A shortened run of a longer scenario legitimately leaves late flows out: said, not
    // refused.
    if last_start >= c.scenario.duration.0 {
        c.warnings.push(format!(
            "{path}: {} starts at {} s, not before the run ends ({} s): it sends nothing",
            if count > 1 { "a copy" } else { "the flow" },
            crate::time::to_secs(last_start),
            c.scenario.duration.secs()
        ));
    }
    for k in 0..count {
        let name = flow_name(f, index, k, count);
        let npath = format!("{path}.name");
        check_name(&npath, "flow", &name)?;
        if !c.flow_names.insert(name.clone()) {
            return Err(err(npath, format!("duplicate flow name \"{name}\"")));
        }
    }
    // With `count` copies, "{k}" in src/dst is replaced by the copy's index (0-based).
    let mut pairs = Vec::with_capacity(count);
    for k in 0..count {
        let (sn, dn) = (
            f.src.replace("{k}", &k.to_string()),
            f.dst.replace("{k}", &k.to_string()),
        );
        let src = c.host(&format!("{path}.src"), &sn)?;
        let dst = c.host(&format!("{path}.dst"), &dn)?;
        if src == dst {
            return Err(err(
                format!("{path}.dst"),
                "source and destination are the same host",
            ));
        }
        if !c.sim.has_route(src, dst) || !c.sim.has_route(dst, src) {
            return Err(err(path, format!("no route between \"{sn}\" and \"{dn}\"")));
        }
        pairs.push((src, dst));
    }
    // Copy k's start: start + k·stagger + its jitter, drawn per flow entry and copy so that
    // adding a flow entry moves no other flow's start.
    let starts: Vec<Time> = {
        use rand::Rng as _;
        let base = f.start.map_or(0, |d| d.0);
        let stagger = f.stagger.map_or(0, |d| d.0);
        let mut r = rng::stream(c.seed, rng::kind::FLOW_START, index as u64);
        (0..count)
            .map(|k| {
                base + stagger * k as Time
                    + if jitter > 0 {
                        r.gen_range(0..jitter)
                    } else {
                        0
                    }
            })
            .collect()
    };
    match f.kind {
        FlowKind::Udp if c.planned.is_some() => {
            return Err(err(
                format!("{path}.kind"),
                "UDP flows are not supported in emulation (TCP flows only)",
            ))
        }
        FlowKind::Udp => {
            for (field, set) in [
                ("size", f.size.is_some()),
                ("cc", f.cc.is_some()),
                ("ecn", f.ecn.is_some()),
                ("cc_params", f.cc_params.is_some()),
                ("ecn_params", f.ecn_params.is_some()),
                ("tcp", f.tcp.is_some()),
                ("client_initiated", f.client_initiated.is_some()),
            ] {
                if set {
                    return Err(err(
                        format!("{path}.{field}"),
                        "is a TCP option; this flow has kind = \"udp\"",
                    ));
                }
            }
            let rate = f.rate.ok_or_else(|| {
                err(
                    format!("{path}.rate"),
                    "a UDP flow needs a rate, e.g. rate = \"10Mbps\"",
                )
            })?;
            let size = f.packet_size.map_or(1000, |s| s.0);
            if !(29..=65535).contains(&size) {
                return Err(err(
                    format!("{path}.packet_size"),
                    "must be between 29 and 65535 bytes",
                ));
            }
            let stop = f.stop.map_or(NEVER, |d| d.0);
            if starts.iter().any(|&s| stop <= s) {
                return Err(err(format!("{path}.stop"), "must be after start"));
            }
            let on_off = match (f.on, f.off) {
                (None, None) => None,
                (Some(on), Some(off)) if on.0 > 0 => Some((on.0, off.0)),
                (Some(_), Some(_)) => return Err(err(format!("{path}.on"), "must be positive")),
                _ => {
                    return Err(err(
                        format!("{path}.on"),
                        "on and off must be given together",
                    ))
                }
            };
            let ecn = match f.udp_ecn.as_deref() {
                None | Some("not-ect") => Ecn::NOT_ECT,
                Some("ect0") => Ecn::ECT0,
                Some("ect1") => Ecn::ECT1,
                Some(o) => {
                    return Err(err(
                        format!("{path}.udp_ecn"),
                        format!("unknown codepoint \"{o}\"; expected one of not-ect, ect0, ect1"),
                    ))
                }
            };
            let duty = on_off.map_or(1.0, |(on, off)| on as f64 / (on as f64 + off as f64));
            for (k, &(src, dst)) in pairs.iter().enumerate() {
                let until = stop.min(c.scenario.duration.0);
                if starts[k] < until {
                    c.budget.add(
                        &format!("{path}.rate"),
                        src,
                        dst,
                        Load::Rate {
                            bps: rate.0 as f64 * duty,
                            active_s: crate::time::to_secs(until - starts[k]),
                        },
                        size as f64,
                        size.saturating_sub(28) as f64,
                        false,
                    );
                }
                let cfg = UdpSourceConfig {
                    rate_bps: rate.0,
                    packet_size: size as u32,
                    pattern: f.pattern.unwrap_or(UdpPattern::Cbr),
                    start: starts[k],
                    stop,
                    ecn,
                    on_off,
                };
                let flow = c.sim.flows.len() as u32;
                let sink_ep = c.sim.next_endpoint_id() + 1;
                let rng = rng::stream(c.seed, rng::kind::ENDPOINT, flow as u64);
                let (sa, da) = (
                    c.sim.nodes[src as usize].addr,
                    c.sim.nodes[dst as usize].addr,
                );
                let src_ep = c.sim.add_endpoint(
                    src,
                    Box::new(UdpSource::new(cfg, sa, da, sink_ep, flow, rng)),
                );
                let dst_ep = c.sim.add_endpoint(dst, Box::new(UdpSink::new()));
                debug_assert_eq!(dst_ep, sink_ep);
                c.sim
                    .add_flow(&flow_name(f, index, k, count), src_ep, dst_ep);
            }
        }
        FlowKind::Tcp => {
            for (field, set) in [
                ("rate", f.rate.is_some()),
                ("packet_size", f.packet_size.is_some()),
                ("pattern", f.pattern.is_some()),
                ("on", f.on.is_some()),
                ("off", f.off.is_some()),
                ("udp_ecn", f.udp_ecn.is_some()),
            ] {
                if set {
                    return Err(err(
                        format!("{path}.{field}"),
                        "is a UDP option; this flow is TCP (set kind = \"udp\" for UDP)",
                    ));
                }
            }
            let stop = f.stop.map(|d| d.0);
            if let Some(t) = stop {
                if f.size.is_some() {
                    return Err(err(
                        format!("{path}.stop"),
                        "a TCP flow stops either by its size or at a time; omit one",
                    ));
                }
                if starts.iter().any(|&s| t <= s) {
                    return Err(err(
                        format!("{path}.stop"),
                        "must be after every copy's start",
                    ));
                }
            }
            let tcp = TcpFlowArgs {
                cc: f.cc.as_deref(),
                ecn: f.ecn.as_deref(),
                cc_params: f.cc_params.as_ref(),
                ecn_params: f.ecn_params.as_ref(),
                tcp: f.tcp.as_ref(),
                client_initiated: f.client_initiated.unwrap_or(false),
                stop,
            };
            for (k, &(src, dst)) in pairs.iter().enumerate() {
                let name = flow_name(f, index, k, count);
                add_tcp_flow(
                    c,
                    path,
                    &name,
                    src,
                    dst,
                    f.size.map(|s| s.0),
                    starts[k],
                    &tcp,
                )?;
            }
        }
    }
    Ok(())
}
