//! Active defragmentation moves top-k keys, their heaps and items (on
//! a server that runs it: `peer_redis::defrag_server`): after 80 % of 3,000 keys
//! (plain or over a window, holding a long item: `kit::churned`) are
//! deleted, a pass moves their blocks, and every value stays the same (DEBUG
//! DIGEST, DEBUG RELOAD) and every survivor answers.

use crate::common::defrag::churn_one_family;
use crate::topk::kit::{churn_survivor, churned};

#[test]
fn defragmentation_moves_top_k_and_keeps_them() {
    churn_one_family("tk", churned, churn_survivor);
}
