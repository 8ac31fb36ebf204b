//! Analysis throughput on a synthesized trace of 50 million events (producer /
//! consumer / disk pattern, see `workload/mod.rs`). The model is built once; what is
//! timed is `analyze` (waits, cascade, devices, merging, knots, report), reported in
//! trace events per second. `examples/bench_large.rs` times model building too and
//! reports peak memory.

use causeway_bottleneck::{Options, analyze};
use causeway_format::{Header, TraceStats};
use causeway_model::{Trace, ingest::Ingestor};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::time::Duration;

#[path = "workload/mod.rs"]
mod workload;

fn bench(c: &mut Criterion) {
    let events: u64 = std::env::var("BOTTLENECK_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000_000);
    let w = workload::Workload::for_events(events, 64);
    let tables = w.tables();
    let header = Header::synthetic(w.cpus());
    let mut ing = Ingestor::new(&tables, &header);
    w.for_each(|e| ing.push(e));
    let (model, facts) = ing.finish();
    let input = Trace::from_parts(header, tables, TraceStats::default(), model, facts);
    let opts = Options::default();
    let mut g = c.benchmark_group("bottleneck");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(20))
        .throughput(Throughput::Elements(w.events()));
    g.bench_function(format!("analyze_{}M_events", w.events() / 1_000_000), |b| {
        b.iter(|| analyze(&input, &opts).expect("analysis runs"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
