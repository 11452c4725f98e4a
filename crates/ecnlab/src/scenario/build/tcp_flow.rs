//! One TCP flow of a flow entry or a workload: its configuration (the scenario's `[tcp]` under
//! the flow's own), controller and codec, checked against each other and against the path's
//! feedback, then simulated or, in emulation, planned.

use super::emulation::PlannedFlow;
use super::{err, Ctx};
use crate::net::{NodeId, PortId};
use crate::scenario::budget::Load;
use crate::scenario::registry;
use crate::scenario::schema::Params;
use crate::scenario::ScenarioError;
use crate::tcp::config::TcpConfig;
use crate::time::{Time, NEVER};

pub(super) struct TcpFlowArgs<'a> {
    pub(super) cc: Option<&'a str>,
    pub(super) ecn: Option<&'a str>,
    pub(super) cc_params: Option<&'a Params>,
    pub(super) ecn_params: Option<&'a Params>,
    pub(super) tcp: Option<&'a Params>,
    pub(super) client_initiated: bool,
    /// The application of a bulk transfer stops writing at this time.
    pub(super) stop: Option<Time>,
}

/// Adds one TCP flow; `path` is the flow's (or workload's) key path.
#[allow(clippy::too_many_arguments)]
pub(super) fn add_tcp_flow(
    c: &mut Ctx,
    path: &str,
    name: &str,
    src: NodeId,
    dst: NodeId,
    size: Option<u64>,
    start: Time,
    a: &TcpFlowArgs,
) -> Result<(), ScenarioError> {
    let config = tcp_config(c, path, a.tcp)?;
    let cc_name = a.cc.unwrap_or("newreno");
    let flow_index = c.sim.flows.len() as u64;
    let cc = registry::controller(
        &format!("{path}.cc"),
        cc_name,
        a.cc_params,
        config.mss,
        c.seed ^ flow_index.wrapping_mul(0x9E37_79B9),
    )?;
    let codec_name = a.ecn.unwrap_or_else(|| registry::default_codec(cc_name));
    let epath = format!("{path}.ecn");
    registry::record(&format!("{path}.cc"), cc_name.into());
    registry::record(&epath, codec_name.into());
    if codec_name == "none" && registry::default_codec(cc_name) != "none" {
        return Err(err(
            epath,
            format!(
                "cc = \"{cc_name}\" reacts to congestion marks, and ecn = \"none\" would never deliver one: use ecn = \"{}\" (or omit ecn)",
                registry::default_codec(cc_name)
            ),
        ));
    }
    let own = registry::default_codec(cc_name);
    if own != "none" && codec_name != own {
        // DCTCP counts the fraction of marked bytes from a precise echo; RFC 3168's ECE
        // repeats one mark until CWR, and a scheme's controller reads only its own codec's
        // signal: either would run with the wrong reading and say nothing.
        return Err(err(
            epath,
            format!(
                "cc = \"{cc_name}\" reads the feedback of its own codec, and ecn = \"{codec_name}\" echoes something else: use ecn = \"{own}\" (or omit ecn)"
            ),
        ));
    }
    check_feedback_path(c, path, codec_name, src, dst);
    let sender_codec = registry::codec(&epath, codec_name, a.ecn_params)?;
    let receiver_codec = registry::codec(&epath, codec_name, a.ecn_params)?;
    if size == Some(0) {
        return Err(err(
            format!("{path}.size"),
            "must be at least 1 byte (omit it for an unlimited transfer)",
        ));
    }
    let until = a.stop.unwrap_or(NEVER).min(c.scenario.duration.0);
    if start < until {
        let load = match size {
            Some(b) => Load::Bytes(b as f64),
            None => Load::Rate {
                bps: f64::INFINITY,
                active_s: crate::time::to_secs(until - start),
            },
        };
        let headers = 40.0 + if config.timestamps { 12.0 } else { 0.0 };
        let mss = config.mss as f64;
        c.budget.add(path, src, dst, load, mss + headers, mss, true);
    }
    if let Some(plan) = c.planned.as_mut() {
        plan.push(PlannedFlow {
            path: path.to_string(),
            name: name.to_string(),
            src: c.sim.nodes[src as usize].name.clone(),
            dst: c.sim.nodes[dst as usize].name.clone(),
            start_s: crate::time::to_secs(start),
            size,
            stop_s: a.stop.map(crate::time::to_secs),
            cc: cc_name.to_string(),
            ecn: codec_name.to_string(),
            client_initiated: a.client_initiated,
            mss: config.mss,
            sack: config.sack,
            timestamps: config.timestamps,
        });
        return Ok(());
    }
    let spec = crate::tcp::flow::TcpFlowSpec {
        name: name.to_string(),
        src,
        dst,
        size,
        start,
        client_initiated: a.client_initiated,
        config,
    };
    crate::tcp::flow::add_tcp_flow_until(
        &mut c.sim,
        &spec,
        a.stop,
        cc,
        sender_codec,
        receiver_codec,
    )
    .map_err(|m| registry::field_error(path, &m))?;
    Ok(())
}

/// A flow's TCP configuration, resolved from a key path and the flow's own table.
pub(super) struct ResolvedTcp {
    path: String,
    own: Option<Params>,
    config: TcpConfig,
}

/// The flow's TCP configuration: the scenario-wide `[tcp]` under the flow's own table,
/// resolved (and recorded under its key path) once for consecutive flows with the same path
/// and table — the same inputs resolve to the same configuration and record.
fn tcp_config(c: &mut Ctx, path: &str, own: Option<&Params>) -> Result<TcpConfig, ScenarioError> {
    let tpath = if own.is_some() {
        format!("{path}.tcp")
    } else {
        "tcp".to_string()
    };
    if let Some(r) = &c.tcp_config {
        if r.path == tpath && r.own.as_ref() == own {
            return Ok(r.config.clone());
        }
    }
    // Scenario-wide [tcp] first, then the flow's own table.
    let mut merged = c.scenario.tcp.clone();
    if let Some(t) = own {
        for (k, v) in t {
            merged.insert(k.clone(), v.clone());
        }
    }
    let config: TcpConfig = registry::params(&tpath, &merged)?;
    config
        .validate()
        .map_err(|m| registry::field_error(&tpath, &m))?;
    c.tcp_config = Some(ResolvedTcp {
        path: tpath,
        own: own.cloned(),
        config: config.clone(),
    });
    Ok(config)
}

/// Warns (once per flow entry) when no port on the way from `src` to `dst` writes the
/// feedback the flow's codec reads: its sender would act on its own stamps alone (a VCP
/// sender reads "low load" forever) or never hear of congestion but by loss.
fn check_feedback_path(c: &mut Ctx, path: &str, codec: &str, src: NodeId, dst: NodeId) {
    let Some(reads) = registry::feedback_read_by(codec) else {
        return;
    };
    if c.feedback_warned.contains(path) || !c.feedback_checked.insert((src, dst, codec.to_string()))
    {
        return;
    }
    let Some(ports) = c.sim.path_ports(src, dst) else {
        return;
    };
    let writes = |p: PortId| {
        let port = &c.sim.ports[p as usize];
        [
            port.marker.as_ref().map(|m| m.feedback()),
            port.qdisc.feedback(),
        ]
        .into_iter()
        .flatten()
        .any(|f| reads.contains(&f))
    };
    // Elements on the nodes the flow crosses write feedback too (CLEAN's proxied CE).
    let on_path = |node: &str| {
        c.sim.nodes[src as usize].name == node
            || ports.iter().any(|&p| {
                let to = c.sim.pipes[c.sim.ports[p as usize].link as usize].to;
                c.sim.nodes[to as usize].name == node
            })
    };
    let element_writes = c.scenario.elements.iter().any(|e| {
        registry::element_feedback(&e.component.kind)
            .is_some_and(|f| reads.contains(&f) && on_path(&e.node))
    });
    if element_writes || ports.iter().any(|&p| writes(p)) {
        return;
    }
    let names: Vec<&str> = ports
        .iter()
        .map(|&p| c.sim.ports[p as usize].name.as_str())
        .collect();
    // "ce": RFC 3168 CE marks; the others: what that scheme's router writes.
    let wanted = format!("{} feedback", reads.join(" or "));
    c.warnings.push(format!(
        "{path}.ecn: \"{codec}\" reads {wanted}, but no port from {} to {} writes it ({}): the sender never hears the network's feedback",
        c.sim.nodes[src as usize].name,
        c.sim.nodes[dst as usize].name,
        names.join(", ")
    ));
    c.feedback_warned.insert(path.to_string());
}
