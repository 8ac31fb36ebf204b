//! Throughput of `perf script` text conversion (lines per second).
//!
//! Input: the golden excerpts of `tests/data/` (real perf output with callchains),
//! repeated with shifted timestamps to about 100k lines. Output goes to a `Vec`.

use causeway_import::{ImportOptions, PerfHeader, import_perf_script};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn input() -> (Vec<u8>, u64) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/");
    let mut base = String::new();
    for case in [
        "fsync_block_softirq.txt",
        "irq_handler_waking.txt",
        "syscalls_no_callchain.txt",
    ] {
        base.push_str(&std::fs::read_to_string(format!("{dir}{case}")).unwrap());
    }
    let mut out = String::new();
    let mut lines = 0u64;
    for round in 0..330u64 {
        for line in base.lines() {
            // Shift "secs.nanos:" so time keeps increasing from round to round.
            let line = match line.find(".") {
                Some(dot)
                    if !line.starts_with('\t') && line.as_bytes().get(dot + 10) == Some(&b':') =>
                {
                    let start = line[..dot].rfind(' ').map(|p| p + 1).unwrap_or(0);
                    let secs: u64 = line[start..dot].parse().unwrap_or(0);
                    format!("{}{}{}", &line[..start], secs + round * 1000, &line[dot..])
                }
                _ => line.to_string(),
            };
            out.push_str(&line);
            out.push('\n');
            lines += 1;
        }
    }
    (out.into_bytes(), lines)
}

fn bench(c: &mut Criterion) {
    let (text, lines) = input();
    let mut g = c.benchmark_group("import_perf_script");
    g.throughput(Throughput::Elements(lines));
    g.bench_function("golden_x330", |b| {
        b.iter(|| {
            let (out, summary) = import_perf_script(
                black_box(&text[..]),
                PerfHeader::default().to_header(),
                Vec::with_capacity(1 << 20),
                &ImportOptions::default(),
            )
            .unwrap();
            assert_eq!(summary.malformed_lines, 0);
            black_box(out.len())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
