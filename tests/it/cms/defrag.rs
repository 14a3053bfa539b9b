//! Active defragmentation moves count-min sketches (on a server that
//! runs it: `peer_redis::defrag_server`): after 80 % of 3,000 sketches (plain, over a
//! window, sized by probability: `kit::churned`) are deleted, a pass moves
//! their blocks, and every value stays the same (DEBUG DIGEST, DEBUG RELOAD)
//! and every survivor answers.

use crate::cms::kit::{churn_survivor, churned};
use crate::common::defrag::churn_one_family;

#[test]
fn defragmentation_moves_sketches_and_keeps_them() {
    churn_one_family("cms", churned, churn_survivor);
}
