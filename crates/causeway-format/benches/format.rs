//! Write and merged-read throughput of the trace format, and its size on disk.
//!
//! The input is a synthetic but realistic mix: 4 CPUs, a pool of 50 threads, events a
//! few microseconds apart per CPU, about 70% `sched_switch` + `sched_waking`, the rest
//! system calls, interrupts, softirqs and stacks. Run with
//! `cargo bench -p causeway-format --bench format`; results are in `bench/RESULTS.md`.

use causeway_format::{Event, EventKind, Header, TraceReader, TraceWriter, WriterOptions};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

mod mix;

use mix::{CPUS, N, mix};

fn write(events: &[Event], opts: &WriterOptions) -> Vec<u8> {
    let mut w = TraceWriter::with_options(Vec::new(), &Header::synthetic(CPUS), opts.clone())
        .expect("writer");
    w.intern("eth0");
    w.intern("nvme0q1");
    w.intern("virtio0-requests");
    for e in events {
        w.push(e).expect("push");
    }
    w.finish().expect("finish")
}

fn read_all(bytes: &[u8]) -> u64 {
    let mut rd = TraceReader::from_bytes(bytes).expect("open");
    let mut n = 0u64;
    let mut sum = 0u64;
    for e in rd.events() {
        let e = e.expect("event");
        sum = sum.wrapping_add(e.ts.0);
        n += 1;
    }
    black_box(sum);
    n
}

fn is_sched(e: &Event) -> bool {
    matches!(
        e.kind,
        EventKind::SchedSwitch { .. } | EventKind::Wakeup { .. }
    )
}

fn bench(c: &mut Criterion) {
    let opts = WriterOptions::default();
    let events = mix(N, false);
    let sched = mix(N, true);
    let bytes = write(&events, &opts);
    let sched_bytes = write(&sched, &opts);
    let n_sched = events.iter().filter(|e| is_sched(e)).count();
    println!(
        "mix: {N} events ({:.1}% sched_switch+wakeup), {} bytes on disk, {:.2} bytes/event",
        100.0 * n_sched as f64 / N as f64,
        bytes.len(),
        bytes.len() as f64 / N as f64
    );
    println!(
        "sched only: {N} events, {} bytes on disk, {:.2} bytes/sched event",
        sched_bytes.len(),
        sched_bytes.len() as f64 / N as f64
    );
    assert_eq!(read_all(&bytes), N as u64);

    let mut g = c.benchmark_group("format");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8))
        .throughput(Throughput::Elements(N as u64));
    g.bench_function("write_mix", |b| b.iter(|| black_box(write(&events, &opts))));
    g.bench_function("read_merged_mix", |b| b.iter(|| read_all(&bytes)));
    g.bench_function("read_merged_sched_only", |b| {
        b.iter(|| read_all(&sched_bytes))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
