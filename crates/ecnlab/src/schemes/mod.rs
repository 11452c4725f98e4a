//! Network-assisted congestion-control schemes, one folder each: the router marker, the
//! feedback codec and the sender controller of one paper.

pub mod apcc;
pub mod bmcc;
pub mod clean;
pub mod eecn;
pub mod hfcc;
pub mod mecn;
pub mod mlcp;
#[cfg(test)]
pub(crate) mod test_line;
pub mod uno;
pub mod vcp;
pub mod zhuge;
