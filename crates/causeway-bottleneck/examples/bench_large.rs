//! Build the model of a synthesized 50-million-event trace and analyze it, printing
//! times, throughput and peak memory (`VmHWM`), so it can run under `/usr/bin/time -v`.
//!
//! `cargo run --release -p causeway-bottleneck --example bench_large -- [EVENTS] [GROUPS] [serial]`
//!
//! The model is built on a second thread while this one synthesizes the events, as
//! `causeway bottleneck` does while it decodes a trace; `serial` builds it on this
//! thread instead.

use causeway_bottleneck::{Options, analyze};
use causeway_format::{Header, TraceStats};
use causeway_model::{Trace, ingest::Ingestor, ingest::ingest};
use std::convert::Infallible;
use std::time::Instant;

#[path = "../benches/workload/mod.rs"]
mod workload;

/// A line of `/proc/self/status`, in MiB.
fn status_mib(key: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let l = s.lines().find(|l| l.starts_with(key))?;
            l.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let events: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(50_000_000);
    let groups: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(64);
    let serial = args.next().is_some_and(|a| a == "serial");
    let w = workload::Workload::for_events(events, groups);
    let tables = w.tables();
    let t0 = Instant::now();
    let header = Header::synthetic(w.cpus());
    let (model, facts) = if serial {
        let mut ing = Ingestor::new(&tables, &header);
        w.for_each(|e| ing.push(e));
        ing.finish()
    } else {
        let produced = ingest(&tables, &header, |sink| {
            w.for_each(|e| sink.push(*e));
            Ok::<(), Infallible>(())
        });
        match produced {
            Ok(built) => built,
        }
    };
    let build = t0.elapsed().as_secs_f64();
    let segments: usize = model.threads().map(|t| t.segments.len()).sum();
    let rss_model = status_mib("VmRSS:");
    let threads = model.threads().count();
    let block_requests = model.block_requests().len();
    let input = Trace::from_parts(header, tables, TraceStats::default(), model, facts);
    let t1 = Instant::now();
    let report = analyze(&input, &Options::default()).expect("analysis runs");
    let analysis = t1.elapsed().as_secs_f64();
    let n = w.events() as f64;
    println!("events            {}", w.events());
    println!("threads           {threads}");
    println!("segments          {segments}");
    println!("block requests    {block_requests}");
    println!("rayon threads     {}", rayon::current_num_threads());
    println!(
        "model + extras    {build:.2} s  ({:.1} M events/s, {})",
        n / build / 1e6,
        if serial { "one thread" } else { "two threads" }
    );
    println!(
        "analysis          {analysis:.2} s  ({:.1} M events/s)",
        n / analysis / 1e6
    );
    println!(
        "end to end        {:.2} s  ({:.1} M events/s)",
        build + analysis,
        n / (build + analysis) / 1e6
    );
    println!("RSS after model   {rss_model:.0} MiB");
    println!("peak RSS (VmHWM)  {:.0} MiB", status_mib("VmHWM:"));
    println!(
        "bytes per segment {:.0} (peak RSS / segments)",
        status_mib("VmHWM:") * 1024.0 * 1024.0 / segments as f64
    );
    println!("knots             {}", report.knots.len());
    println!("sinks             {}", report.sinks.len());
}
