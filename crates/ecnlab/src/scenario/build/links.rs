//! The links a scenario describes: a rate with its changes over time (`schedule`) or a
//! Mahimahi trace, the link layer's framing, and the batches a wireless link sends.

use super::err;
use crate::net::{LinkSpec, RateSchedule};
use crate::scenario::limits::Limits;
use crate::scenario::registry;
use crate::scenario::schema::LinkParams;
use crate::scenario::ScenarioError;
use crate::time::Time;
use std::path::Path;

/// Link-layer bytes a link may add to a packet.
const MAX_FRAMING: u32 = 65_535;

/// The link a scenario's parameters describe; `until` is how far a trace is unrolled.
pub(super) fn schedule(
    path: &str,
    l: &LinkParams,
    until: Time,
    limits: &Limits,
) -> Result<LinkSpec, ScenarioError> {
    let rate = match (&l.trace, l.rate) {
        (Some(_), Some(_)) => {
            return Err(err(
                format!("{path}.trace"),
                "a link's capacity comes from rate (and schedule) or from a trace, not both",
            ))
        }
        (Some(t), None) => {
            if !l.schedule.is_empty() {
                return Err(err(
                    format!("{path}.schedule"),
                    "a link with a trace takes its rate changes from the trace",
                ));
            }
            trace_schedule(&format!("{path}.trace"), t, until, limits)?
        }
        (None, None) => {
            return Err(err(
                format!("{path}.rate"),
                "missing: give the link a rate (e.g. \"100Mbps\") or a trace",
            ))
        }
        (None, Some(r)) => {
            let mut steps = vec![(0, r.0)];
            let mut last = 0;
            for (i, s) in l.schedule.iter().enumerate() {
                if s.at.0 <= last && !(i == 0 && s.at.0 == 0) {
                    return Err(err(
                        format!("{path}.schedule[{i}].at"),
                        "times must be strictly increasing and after 0",
                    ));
                }
                if s.at.0 == 0 {
                    steps[0].1 = s.rate.0;
                } else {
                    steps.push((s.at.0, s.rate.0));
                }
                last = s.at.0;
            }
            RateSchedule::new(steps).map_err(|m| err(format!("{path}.schedule"), m))?
        }
    };
    // Added to each packet's length (a u32) for its transmission time: 2^32 − 1 wrapped a
    // packet's bytes to almost nothing.
    if l.framing > MAX_FRAMING {
        return Err(err(
            format!("{path}.framing"),
            format!(
                "at most {MAX_FRAMING} bytes a packet (PPP adds 2, Ethernet 38), got {}",
                l.framing
            ),
        ));
    }
    let batch = match &l.batch {
        None => None,
        Some(b) => {
            if b.max_pkts == 0 || b.max_pkts > 4096 {
                return Err(err(
                    format!("{path}.batch.max_pkts"),
                    format!(
                        "must be 1 to 4096 (802.11ax aggregates at most 256), got {}",
                        b.max_pkts
                    ),
                ));
            }
            if b.max_bytes.is_some_and(|s| s.0 == 0) {
                return Err(err(format!("{path}.batch.max_bytes"), "must be positive"));
            }
            Some(crate::net::Batch {
                max_pkts: b.max_pkts,
                max_bytes: b.max_bytes.map_or(u64::MAX, |s| s.0),
                max_airtime: b.max_airtime.0,
                overhead: b.overhead.0,
            })
        }
    };
    Ok(LinkSpec {
        rate,
        delay: l.delay.0,
        framing: l.framing,
        batch,
    })
}

fn trace_schedule(
    path: &str,
    t: &crate::scenario::schema::TraceSpec,
    until: Time,
    limits: &Limits,
) -> Result<RateSchedule, ScenarioError> {
    if t.mtu == 0 {
        return Err(err(format!("{path}.mtu"), "must be positive"));
    }
    let cap = limits.trace_bytes();
    let text = crate::scenario::files::read_text(Path::new(&t.file), cap.value, "trace").map_err(|m| {
        let m = if m.contains("beyond the") {
            format!("{m} (limits.trace_bytes; raise it in the scenario: [limits] trace_bytes = \"256MB\")")
        } else {
            m
        };
        err(format!("{path}.file"), m)
    })?;
    let tr = crate::net::trace::MahimahiTrace::parse(&text)
        .map_err(|m| err(format!("{path}.file"), format!("\"{}\" {m}", t.file)))?;
    tr.schedule(t.bin.0, t.mtu, until.max(1))
        .map_err(|m| registry::field_error(path, &m))
}
