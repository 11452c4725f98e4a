//! BMCC end to end through TCP: two flows on a 10 Mb/s, 40 ms RTT bottleneck under a BMCC
//! router (buffer one BDP); the second starts 5 s after the first. The marks of the
//! sequential IP-IDs give the senders the load; after the start the link stays full without
//! loss and the two flows share it.

use super::*;
use crate::schemes::test_line::two_flows;

#[test]
fn two_flows_fill_the_link_and_share_it_without_loss_after_the_start() {
    let marker = BmccMarker::new(BmccMarkerConfig::default()).unwrap();
    let o = two_flows(Box::new(marker), |mss| {
        (
            Box::new(Bmcc::new(BmccConfig::default(), mss).unwrap()),
            Box::new(BmccCodec::new()),
            Box::new(BmccCodec::new()),
        )
    });
    o.assert_full_lossless_and_shared();
}
