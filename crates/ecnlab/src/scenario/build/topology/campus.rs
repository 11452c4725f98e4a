//! The campus: servers behind a wide-area link, a wired core, aggregation and access, and an
//! access point whose wireless link (a rate, a schedule or a trace) reaches the clients.

use crate::net::{LinkSpec, NodeId};
use crate::scenario::build::links::schedule;
use crate::scenario::build::{err, Ctx};
use crate::scenario::limits;
use crate::scenario::schema::{CampusSpec, Component};
use crate::scenario::ScenarioError;
use crate::time::Time;

pub(super) fn build(c: &mut Ctx, cs: &CampusSpec, until: Time) -> Result<(), ScenarioError> {
    if cs.clients == 0 {
        return Err(err("topology.clients", "must be at least 1"));
    }
    if cs.servers == 0 {
        return Err(err("topology.servers", "must be at least 1"));
    }
    let nodes = cs.clients as f64 + cs.servers as f64 + 5.0;
    c.scenario.limits.nodes().allows(
        if cs.clients >= cs.servers {
            "topology.clients"
        } else {
            "topology.servers"
        },
        nodes,
        &format!("{} hosts and routers", limits::figure(nodes)),
    )?;
    if cs.buffer.0 == 0 {
        return Err(err("topology.buffer", "must be positive"));
    }
    let air = schedule("topology.wireless", &cs.wireless, until, &c.scenario.limits)?;
    // Plain buffers are built here (not through the registry, which would record them
    // under a key the scenario does not have); the AP's queue is the scenario's component.
    let bytes = cs.buffer.0;
    let buffer = || -> Box<dyn crate::aqm::Qdisc> {
        Box::new(crate::aqm::DropTail::new(crate::aqm::Limit::Bytes(bytes)))
    };
    let default_ap = Component {
        kind: "droptail".into(),
        params: serde_json::json!({"limit": bytes, "bytes": true})
            .as_object()
            .unwrap()
            .clone(),
    };
    let ap_queue = cs.ap_queue.as_ref().unwrap_or(&default_ap);
    let wired = |gbps: u64, delay: Time| LinkSpec::new(gbps * 1_000_000_000, delay);
    let lan = cs.lan_delay.0;
    let core = c.sim.add_router("core");
    let agg = c.sim.add_router("agg");
    let access = c.sim.add_router("access");
    let ap = c.sim.add_router("ap");
    let wlan = c.sim.add_router("wlan");
    let link = |c: &mut Ctx, a: NodeId, b: NodeId, spec: &LinkSpec| {
        c.sim.connect(a, b, spec, buffer(), buffer());
    };
    for i in 0..cs.servers {
        let s = c.sim.add_host(&format!("s{i}"));
        link(c, s, core, &wired(100, cs.wan_delay.0));
    }
    link(c, core, agg, &wired(40, lan));
    link(c, agg, access, &wired(10, lan));
    link(c, access, ap, &wired(1, lan));
    let q_ap = c.queue("topology.ap_queue", ap_queue)?;
    c.sim.connect(ap, wlan, &air, q_ap, buffer());
    for i in 0..cs.clients {
        let h = c.sim.add_host(&format!("c{i}"));
        link(c, wlan, h, &wired(100, 0));
    }
    Ok(())
}
