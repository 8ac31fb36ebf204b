//! Write bench_large's synthetic workload to a trace file, to time `causeway bottleneck`
//! on it: `write_large OUT.cwt [EVENTS] [GROUPS]`.

use causeway_format::{Header, TraceWriter};

#[path = "../benches/workload/mod.rs"]
mod workload;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = args
        .next()
        .ok_or("usage: write_large OUT.cwt [EVENTS] [GROUPS]")?;
    let events: u64 = args.next().map_or(Ok(50_000_000), |a| a.parse())?;
    let groups: u32 = args.next().map_or(Ok(64), |a| a.parse())?;
    let w = workload::Workload::for_events(events, groups);
    let tables = w.tables();
    let file = std::io::BufWriter::new(std::fs::File::create(&out)?);
    let mut tw = TraceWriter::new(file, &Header::synthetic(w.cpus()))?;
    // The writer numbers strings in the order interned, "" first: the same ids.
    for s in tables.strings.iter().skip(1) {
        tw.intern(s);
    }
    for t in &tables.threads {
        tw.add_thread(t.clone());
    }
    let mut result = Ok(());
    w.for_each(|e| {
        if result.is_ok() {
            result = tw.push(e);
        }
    });
    result?;
    tw.finish()?;
    println!("{} events written to {out}", w.events());
    Ok(())
}
