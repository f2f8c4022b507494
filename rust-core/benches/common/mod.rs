//! A harness-free timer shared by the benches: each case reports the best mean over seven
//! timed batches. `cargo bench -- WORD` runs only the cases whose label holds WORD.

use std::time::Instant;

pub fn time(label: &str, iterations: u32, mut work: impl FnMut()) {
    let filter = std::env::args().skip(1).find(|arg| !arg.starts_with('-'));
    if filter.is_some_and(|filter| !label.contains(&filter)) {
        return;
    }
    let best = (0..7)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iterations {
                work();
            }
            start.elapsed().as_secs_f64() / f64::from(iterations)
        })
        .fold(f64::INFINITY, f64::min);
    println!("{label:48} {:>10.2} µs", best * 1e6);
}
