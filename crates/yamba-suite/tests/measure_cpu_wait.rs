//! The CPU-wait check against ground truth: a thread sharing its CPU with
//! a busy hog waits for it a large share of the time. A measurement check
//! (docs/testing.md): it decides on the median of independent runs.

use yamba_core::BenchResult;
use yamba_suite::shared::cpu_wait::CpuWait;
use yamba_testkit::{alone, check, Accept};

fn blank() -> BenchResult {
    serde_json::from_value(serde_json::json!({
        "id": "t", "benchmark": "t", "area": "proc", "description": "",
        "unit": "ns", "mode": "hot", "status": "ok", "adapter": "test"
    }))
    .unwrap()
}

/// A thread spinning 300 ms on a CPU a hog spins on too waits in the run
/// queue about half the time. Rule: the median share at least 0.3.
#[test]
fn cpu_wait_sees_a_hog_on_our_cpu() {
    let _alone = alone();
    let cpu = yamba_core::affinity::default_cpu();
    check!("run-queue wait share beside a hog", Accept::at_least(0.3)).run(|| {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s = stop.clone();
        let hog = std::thread::spawn(move || {
            yamba_core::affinity::pin_current_thread(cpu).unwrap();
            while !s.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        let share = std::thread::spawn(move || {
            yamba_core::affinity::pin_current_thread(cpu).unwrap();
            let w = CpuWait::start();
            let t0 = std::time::Instant::now();
            while t0.elapsed() < std::time::Duration::from_millis(300) {
                std::hint::spin_loop();
            }
            let mut r = blank();
            w.record(&mut r);
            r.extra["run_queue_wait_share"].as_f64().unwrap()
        })
        .join()
        .unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        hog.join().unwrap();
        share
    });
}
