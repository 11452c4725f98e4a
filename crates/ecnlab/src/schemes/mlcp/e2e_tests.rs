//! MLCP end to end through TCP: two flows on a 10 Mb/s, 40 ms RTT bottleneck under an MLCP
//! router (buffer one BDP); the second starts 5 s after the first. After the start the link
//! stays full without loss and the MD levels bring the two windows together. (The start
//! itself overshoots: MI at the lowest level multiplies the window by `1 + ξ(0.05)` = 3.85
//! per `t_p`, and the load is known one interval late.) The flows settle in AI and MD: the II
//! level is not visited here, so its law is pinned by the controller's unit tests.

use super::*;
use crate::schemes::test_line::two_flows;

#[test]
fn two_flows_fill_the_link_and_share_it_without_loss_after_the_start() {
    let marker = MlcpMarker::new(MlcpMarkerConfig::default()).unwrap();
    let o = two_flows(Box::new(marker), |mss| {
        (
            Box::new(Mlcp::new(MlcpConfig::default(), mss).unwrap()),
            Box::new(MlcpCodec::new()),
            Box::new(MlcpCodec::new()),
        )
    });
    o.assert_full_lossless_and_shared();
}
