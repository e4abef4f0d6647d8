//! Every platform without a scheduling adapter: nothing is known of a
//! task's scheduling, so every check built on it says it cannot tell.
//! Porting: copy this file to `<os>.rs`, implement it, and select it in
//! `mod.rs`.

use super::SchedTimes;

pub fn sched_times(_pid: Option<i32>) -> Option<SchedTimes> {
    None
}
