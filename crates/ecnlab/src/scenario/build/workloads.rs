//! The `[[workloads]]`: flows that arrive as a Poisson process between sets of hosts, with
//! sizes from a distribution ([`SizeSampler`]), each built as a TCP flow.

use super::flows::check_name;
use super::tcp_flow::{add_tcp_flow, TcpFlowArgs};
use super::{err, Ctx};
use crate::engine::rng;
use crate::net::NodeId;
use crate::scenario::schema::*;
use crate::scenario::ScenarioError;
use crate::time::Time;
use rand_distr::Distribution;

/// A workload's Poisson arrivals: between which hosts, of what sizes, how often, when.
pub(super) struct Arrivals {
    srcs: Vec<NodeId>,
    dsts: Vec<NodeId>,
    dist: SizeSampler,
    /// Flows per second.
    rate: f64,
    start: Time,
    stop: Time,
    max: u64,
}

impl Arrivals {
    /// Flows the workload draws on average (its `max_flows` at most).
    pub(super) fn expected(&self) -> f64 {
        (self.rate * crate::time::to_secs(self.stop - self.start)).min(self.max as f64)
    }
}

pub(super) fn arrivals(c: &Ctx, path: &str, w: &WorkloadSpec) -> Result<Arrivals, ScenarioError> {
    let srcs: Vec<NodeId> = w
        .src
        .iter()
        .enumerate()
        .map(|(i, n)| c.host(&format!("{path}.src[{i}]"), n))
        .collect::<Result<_, _>>()?;
    let dsts: Vec<NodeId> = w
        .dst
        .iter()
        .enumerate()
        .map(|(i, n)| c.host(&format!("{path}.dst[{i}]"), n))
        .collect::<Result<_, _>>()?;
    if srcs.is_empty() || dsts.is_empty() {
        return Err(err(
            format!("{path}.{}", if srcs.is_empty() { "src" } else { "dst" }),
            "needs at least one host",
        ));
    }
    let dist = SizeSampler::new(&format!("{path}.sizes"), &w.sizes)?;
    let rate = match (w.arrival_rate, w.load) {
        (Some(r), None) if r > 0.0 && r.is_finite() => r,
        (Some(_), None) => {
            return Err(err(
                format!("{path}.arrival_rate"),
                "must be a positive number of flows per second",
            ))
        }
        (None, Some(l)) if l > 0.0 && l.is_finite() => {
            let of = w.load_of.ok_or_else(|| {
                err(
                    format!("{path}.load_of"),
                    "a load needs the rate it is a fraction of, e.g. load_of = \"100Mbps\"",
                )
            })?;
            if !(dist.mean() >= 1.0) {
                return Err(err(
                    format!("{path}.sizes"),
                    format!(
                        "the mean size is {} bytes: a load needs a mean of at least one byte",
                        dist.mean()
                    ),
                ));
            }
            l * of.0 as f64 / (8.0 * dist.mean())
        }
        (None, Some(_)) => return Err(err(format!("{path}.load"), "must be a positive fraction")),
        _ => {
            return Err(err(
                path,
                "give exactly one of arrival_rate (flows/s) or load (with load_of)",
            ))
        }
    };
    let start = w.start.map_or(0, |d| d.0);
    let stop = w.stop.map_or(c.scenario.duration.0, |d| d.0);
    if stop <= start {
        return Err(err(format!("{path}.stop"), "must be after start"));
    }
    // Without max_flows a workload draws what its rate gives, within limits.flows.
    let max = w.max_flows.map_or(u64::MAX, |m| m as u64);
    Ok(Arrivals {
        srcs,
        dsts,
        dist,
        rate,
        start,
        stop,
        max,
    })
}

pub(super) fn add_workload(
    c: &mut Ctx,
    path: &str,
    w: &WorkloadSpec,
    index: usize,
) -> Result<(), ScenarioError> {
    let Arrivals {
        srcs,
        dsts,
        dist,
        rate,
        start,
        stop,
        max,
    } = arrivals(c, path, w)?;
    let mut rng = rng::stream(c.seed, rng::kind::WORKLOAD, index as u64);
    let exp = rand_distr::Exp::new(rate).map_err(|e| err(path, e.to_string()))?;
    let args = TcpFlowArgs {
        cc: w.cc.as_deref(),
        ecn: w.ecn.as_deref(),
        cc_params: w.cc_params.as_ref(),
        ecn_params: w.ecn_params.as_ref(),
        tcp: w.tcp.as_ref(),
        client_initiated: w.client_initiated.unwrap_or(false),
        stop: None,
    };
    let base = w.name.clone().unwrap_or_else(|| format!("w{index}"));
    check_name(&format!("{path}.name"), "workload", &base)?;
    let mut t = start as f64 / 1e12;
    let mut k = 0usize;
    use rand::Rng as _;
    loop {
        t += exp.sample(&mut rng);
        let at = crate::time::from_secs(t);
        if at >= stop || k as u64 >= max {
            break;
        }
        // The draw may exceed its mean, which was checked.
        let bound = c.scenario.limits.flows();
        if c.sim.flows.len() as u64 >= bound.value {
            return Err(err(
                format!("{path}.max_flows"),
                bound.exceeded(&format!(
                    "the workload draws more than {} flows",
                    bound.value
                )),
            ));
        }
        let s = srcs[rng.gen_range(0..srcs.len())];
        let mut d = dsts[rng.gen_range(0..dsts.len())];
        if d == s {
            // Pick another destination when the lists overlap.
            match dsts.iter().find(|&&x| x != s) {
                Some(&x) => d = x,
                None => {
                    return Err(err(
                        format!("{path}.dst"),
                        "every destination equals the source",
                    ))
                }
            }
        }
        let size = dist.sample(&mut rng).max(1.0).round() as u64;
        let name = format!("{base}.{k}");
        if !c.flow_names.insert(name.clone()) {
            return Err(err(
                format!("{path}.name"),
                format!("duplicate flow name \"{name}\""),
            ));
        }
        add_tcp_flow(c, path, &name, s, d, Some(size), at, &args)?;
        k += 1;
    }
    Ok(())
}

/// Flow-size sampler.
pub struct SizeSampler {
    kind: SizeKind,
}

enum SizeKind {
    Fixed(f64),
    Pareto { scale: f64, shape: f64 },
    Exp(f64),
    Empirical(Vec<(f64, f64)>),
}

impl SizeSampler {
    pub fn new(path: &str, d: &SizeDist) -> Result<Self, ScenarioError> {
        let kind = match d {
            SizeDist::Fixed(FixedSize { size }) if size.0 > 0 => SizeKind::Fixed(size.0 as f64),
            SizeDist::Fixed(_) => return Err(err(format!("{path}.size"), "must be positive")),
            SizeDist::Pareto(ParetoSize { mean, shape }) => {
                if !(*shape > 1.0 && shape.is_finite()) {
                    return Err(err(
                        format!("{path}.shape"),
                        "must be greater than 1 (the mean is infinite otherwise)",
                    ));
                }
                if mean.0 == 0 {
                    return Err(err(format!("{path}.mean"), "must be positive"));
                }
                // Mean of Pareto(x_m, a) is a·x_m/(a−1).
                SizeKind::Pareto {
                    scale: mean.0 as f64 * (shape - 1.0) / shape,
                    shape: *shape,
                }
            }
            SizeDist::Exponential(ExponentialSize { mean }) if mean.0 > 0 => {
                SizeKind::Exp(mean.0 as f64)
            }
            SizeDist::Exponential(_) => {
                return Err(err(format!("{path}.mean"), "must be positive"))
            }
            SizeDist::Empirical(EmpiricalSize { cdf }) => {
                if cdf.len() < 2 {
                    return Err(err(format!("{path}.cdf"), "needs at least two points"));
                }
                for (i, w) in cdf.windows(2).enumerate() {
                    if !(w[1].0 >= w[0].0 && w[1].1 >= w[0].1) {
                        return Err(err(
                            format!("{path}.cdf[{}]", i + 1),
                            "sizes and probabilities must be non-decreasing",
                        ));
                    }
                }
                if cdf[0].0 < 0.0 || cdf[0].1 < 0.0 || (cdf[cdf.len() - 1].1 - 1.0).abs() > 1e-9 {
                    return Err(err(
                        format!("{path}.cdf"),
                        "must start at a non-negative size and end at probability 1",
                    ));
                }
                SizeKind::Empirical(cdf.clone())
            }
        };
        Ok(SizeSampler { kind })
    }

    pub fn mean(&self) -> f64 {
        match &self.kind {
            SizeKind::Fixed(s) => *s,
            SizeKind::Pareto { scale, shape } => shape * scale / (shape - 1.0),
            SizeKind::Exp(m) => *m,
            SizeKind::Empirical(c) => {
                // Piecewise-linear CDF: uniform within each segment.
                let mut m = c[0].0 * c[0].1;
                for w in c.windows(2) {
                    m += (w[1].1 - w[0].1) * (w[0].0 + w[1].0) / 2.0;
                }
                m
            }
        }
    }

    pub fn sample(&self, rng: &mut rng::Rng) -> f64 {
        use rand::Rng as _;
        let u: f64 = rng.gen();
        match &self.kind {
            SizeKind::Fixed(s) => *s,
            SizeKind::Pareto { scale, shape } => scale / (1.0 - u).powf(1.0 / shape),
            SizeKind::Exp(m) => -m * (1.0 - u).ln(),
            SizeKind::Empirical(c) => {
                if u <= c[0].1 {
                    return c[0].0;
                }
                for w in c.windows(2) {
                    if u <= w[1].1 {
                        let span = w[1].1 - w[0].1;
                        let f = if span > 0.0 { (u - w[0].1) / span } else { 1.0 };
                        return w[0].0 + f * (w[1].0 - w[0].0);
                    }
                }
                c[c.len() - 1].0
            }
        }
    }
}
