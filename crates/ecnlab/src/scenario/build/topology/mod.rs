//! The network of each topology kind, one file each; every size is checked against
//! `limits.nodes` (and the route tables against the memory they take) before a node is made.

mod campus;
mod chain;
mod dumbbell;
mod explicit;

use super::Ctx;
use crate::scenario::schema::Topology;
use crate::scenario::ScenarioError;

pub(super) fn build_topology(c: &mut Ctx) -> Result<(), ScenarioError> {
    let s = c.scenario;
    let until = s.duration.0;
    match &s.topology {
        Topology::Dumbbell(d) => dumbbell::build(c, d, until),
        Topology::Chain(ch) => chain::build(c, ch, until),
        Topology::Campus(cs) => campus::build(c, cs, until),
        Topology::Explicit(e) => explicit::build(c, e, until),
    }
}
