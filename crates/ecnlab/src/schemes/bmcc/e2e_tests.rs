//! BMCC end to end through TCP: two flows on a 10 Mb/s, 40 ms RTT bottleneck under a BMCC
//! router (buffer one BDP); the second starts 5 s after the first. The marks of the
//! sequential IP-IDs give the senders the load; after the start the link stays full without
//! loss and the two flows share it.

use super::*;
use crate::net::test_line::two_flows;

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
    eprintln!(
        "busy {:.3} drops {} then {} goodput {:.2}/{:.2} Mb/s",
        o.busy,
        o.start_drops,
        o.drops,
        o.goodput[0] / 1e6,
        o.goodput[1] / 1e6
    );
    assert!(o.busy > 0.8, "busy {}", o.busy);
    assert_eq!(o.drops, 0);
    assert!(o.jain() > 0.8, "Jain {}", o.jain());
}
