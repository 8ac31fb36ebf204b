//! The two-thread ingestion gives the same report as the one-thread one.

use super::string;
use crate::{Options, analyze};
use causeway_format::{Header, Tables};
use causeway_model::{Trace, ingest::ingest};
use causeway_testkit::synth::{self, Synth};

/// A consumer writing to disk and a producer waiting for it, long enough to fill
/// several batches.
fn disk_rounds(irq_name: u32, rounds: u64) -> Synth {
    synth::blocking_write(irq_name, rounds)
}

#[test]
fn threaded_collection_matches_the_single_thread_one() {
    let mut tables = Tables::default();
    tables.strings.push(String::new());
    let irq = string(&mut tables, "virtio0-requests");
    let events = disk_rounds(irq, 3_000).events();
    let header = Header::synthetic(2);
    let one = Trace::from_events(tables.clone(), header.clone(), &events);
    let (model2, facts2) = ingest(&tables, &header, |sink| {
        for ev in &events {
            sink.push(*ev);
        }
        Ok::<(), ()>(())
    })
    .expect("no error");
    assert_eq!(one.model(), &model2);
    let two = Trace::from_parts(header, tables, Default::default(), model2, facts2);
    let report = |trace| analyze(trace, &Options::default()).expect("analysis runs");
    let (a, b) = (report(&one), report(&two));
    assert!(!a.knots.is_empty(), "the disk wait shows");
    assert_eq!(a, b);
}

#[test]
fn a_producer_error_is_returned() {
    let tables = Tables::default();
    let events = disk_rounds(0, 1_000).events();
    let r = ingest(&tables, &Header::synthetic(2), |sink| {
        for ev in &events[..5_000] {
            sink.push(*ev);
        }
        Err("damaged block")
    });
    assert_eq!(r.err(), Some("damaged block"));
}
