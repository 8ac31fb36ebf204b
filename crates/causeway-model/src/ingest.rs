//! The one ingestion path: trace → [`Model`] + [`Facts`], in one pass on two threads.
//!
//! Every command and analysis reads a trace through here ([`Trace::read`]), so the
//! facts an analysis needs are gathered once, in one place, and a new analysis needs
//! no read loop of its own.
//!
//! Building the model is the one sequential part that grows with the trace. The driver
//! takes it off the thread that produces the events (decoding a file, or synthesizing
//! them), which also gathers the [`Facts`]: the two halves overlap on two cores. Events
//! cross in batches, and only a few batches are in flight, so memory stays independent
//! of the event count.

use crate::builder::ModelBuilder;
use crate::error::ModelError;
use crate::facts::{Facts, FactsCollector};
use crate::model::Model;
use causeway_format::{Event, Header, Tables, Timestamp, TraceReader, TraceStats};
use std::io::{Read, Seek};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};

/// Events per batch: large enough that handing over a batch costs little per event,
/// small enough (about 230 KiB) to stay in cache on the way.
const BATCH: usize = 4096;

/// Batches queued for the model thread before the producer waits for it.
const QUEUED: usize = 4;

/// Events between two progress reports of [`Trace::read`].
const PROGRESS_EVERY: u64 = 65536;

/// A trace ready for analysis: its header, tables and statistics, the model and the
/// facts gathered beside it.
#[derive(Clone, Debug)]
pub struct Trace {
    header: Header,
    tables: Tables,
    stats: TraceStats,
    model: Model,
    facts: Facts,
}

impl Trace {
    /// Read every event of a trace. `progress` is called now and then with the number
    /// of events read so far. Link speeds come from the trace's counters.
    pub fn read<R: Read + Seek>(
        reader: &mut TraceReader<R>,
        mut progress: impl FnMut(u64),
    ) -> Result<Trace, ModelError> {
        let tables = reader.tables().clone();
        let header = reader.header().clone();
        let trigger = reader.stats().trigger;
        let (model, mut facts) = ingest(&tables, &header, |sink| {
            // A flight dump observed the system up to its trigger.
            if let Some(t) = trigger {
                sink.observed_until(Timestamp(t.ts_ns));
            }
            let mut n = 0u64;
            for ev in reader.events() {
                sink.push(ev?);
                n += 1;
                if n.is_multiple_of(PROGRESS_EVERY) {
                    progress(n);
                }
            }
            Ok::<(), ModelError>(())
        })?;
        let stats = reader.stats().clone();
        facts.set_link_speeds(&stats.counters);
        Ok(Trace {
            header,
            tables,
            stats,
            model,
            facts,
        })
    }

    /// Build from events already in memory (tests, small traces), on this thread.
    pub fn from_events<'e>(
        tables: Tables,
        header: Header,
        events: impl IntoIterator<Item = &'e Event>,
    ) -> Trace {
        let mut ingestor = Ingestor::new(&tables, &header);
        for ev in events {
            ingestor.push(ev);
        }
        let (model, facts) = ingestor.finish();
        Trace {
            header,
            tables,
            stats: TraceStats::default(),
            model,
            facts,
        }
    }

    /// Assemble from parts built elsewhere (by [`ingest`]).
    pub fn from_parts(
        header: Header,
        tables: Tables,
        stats: TraceStats,
        model: Model,
        facts: Facts,
    ) -> Trace {
        Trace {
            header,
            tables,
            stats,
            model,
            facts,
        }
    }

    /// The trace's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The trace's tables: strings, threads, processes, stacks, frames.
    pub fn tables(&self) -> &Tables {
        &self.tables
    }

    /// The statistics stored at the end of the trace (zero for traces built in code).
    pub fn stats(&self) -> &TraceStats {
        &self.stats
    }

    /// Threads, segments, processes, CPUs, interrupts and block requests.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Everything else the trace says that analyses use.
    pub fn facts(&self) -> &Facts {
        &self.facts
    }

    /// The same trace with the goroutine view of its model (see
    /// [`Model::goroutine_view`]): the goroutines of followed Go programs stand in for
    /// their threads. Unchanged without goroutine events.
    pub fn into_goroutine_view(mut self) -> Trace {
        if self.model.has_goroutines() {
            let (view, carried) = self.model.goroutine_view_with_carries(&self.tables);
            self.model = view;
            // A goroutine's CPU profile is its carriers' samples while they ran it.
            self.facts.samples.hand_to_goroutines(&carried);
        }
        self
    }

    /// The model alone, dropping the rest.
    pub fn into_model(self) -> Model {
        self.model
    }

    /// The facts, to adjust them before an analysis (for example which processes count
    /// as recorded).
    pub fn facts_mut(&mut self) -> &mut Facts {
        &mut self.facts
    }
}

/// The model and facts built on the caller's thread, one event at a time: for
/// producers that cannot run beside a second thread, and for comparisons with
/// [`ingest`] (both give the same result).
#[derive(Debug)]
pub struct Ingestor<'t> {
    builder: ModelBuilder<'t>,
    facts: FactsCollector<'t>,
}

impl<'t> Ingestor<'t> {
    /// An ingestor for a trace with these tables and header.
    pub fn new(tables: &'t Tables, header: &Header) -> Ingestor<'t> {
        Ingestor {
            builder: ModelBuilder::new(tables, header),
            facts: FactsCollector::new(tables, header),
        }
    }

    /// Take the next event (in time order).
    pub fn push(&mut self, ev: &Event) {
        self.builder.push(ev);
        self.facts.push(ev);
    }

    /// The recording saw the system until `ts` (see [`ModelBuilder::observed_until`]).
    pub fn observed_until(&mut self, ts: Timestamp) {
        self.builder.observed_until(ts);
    }

    /// Finish the model and hand back both.
    pub fn finish(self) -> (Model, Facts) {
        (self.builder.finish(), self.facts.finish())
    }
}

impl Model {
    /// Build a model from events already in memory (tests, small traces).
    pub fn from_events<'e>(
        tables: &Tables,
        header: &Header,
        events: impl IntoIterator<Item = &'e Event>,
    ) -> Model {
        let mut b = ModelBuilder::new(tables, header);
        for ev in events {
            b.push(ev);
        }
        b.finish()
    }

    /// Read every event of a trace and build its model.
    pub fn from_reader<R: Read + Seek>(reader: &mut TraceReader<R>) -> Result<Model, ModelError> {
        Ok(Trace::read(reader, |_| {})?.into_model())
    }
}

/// Where the producer of [`ingest`] puts the events, in time order.
pub struct EventSink<'s, 't> {
    batch: Vec<Event>,
    full: Option<SyncSender<Vec<Event>>>,
    empty: &'s Receiver<Vec<Event>>,
    facts: &'s mut FactsCollector<'t>,
    observed: &'s AtomicU64,
}

impl EventSink<'_, '_> {
    /// Take the next event.
    #[inline]
    pub fn push(&mut self, ev: Event) {
        self.facts.push(&ev);
        self.batch.push(ev);
        if self.batch.len() == BATCH {
            self.send();
        }
    }

    /// Hand the current batch to the model thread and start another, reusing one the
    /// model thread is done with when there is one.
    fn send(&mut self) {
        let next = self
            .empty
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let full = std::mem::replace(&mut self.batch, next);
        // The model thread only stops early by panicking; that panic is re-raised when
        // it is joined, so the events it misses do not matter.
        if let Some(tx) = &self.full
            && tx.send(full).is_err()
        {
            self.full = None;
        }
    }

    /// The recording saw the system until `ts` although its last event may be older:
    /// the model's timelines close no earlier (see [`ModelBuilder::observed_until`]).
    pub fn observed_until(&mut self, ts: Timestamp) {
        self.observed.fetch_max(ts.0, Ordering::SeqCst);
    }

    /// Send what is left; the model thread then finishes.
    fn close(mut self) {
        if !self.batch.is_empty() {
            self.send();
        }
    }
}

/// Build the model from the batches until the producer is done.
fn build(
    tables: &Tables,
    header: &Header,
    full: Receiver<Vec<Event>>,
    empty: Sender<Vec<Event>>,
    observed: &AtomicU64,
) -> Model {
    let mut builder = ModelBuilder::new(tables, header);
    for mut batch in full {
        for ev in &batch {
            builder.push(ev);
        }
        batch.clear();
        // The producer may have finished and dropped its end: the batch is then freed.
        let _ = empty.send(batch);
    }
    // The producer is done (its end of the channel is dropped), so its last word on
    // the time observed is in.
    builder.observed_until(Timestamp(observed.load(Ordering::SeqCst)));
    builder.finish()
}

/// Build the model and facts from the events `produce` pushes into the sink, with the
/// model built on a second thread while `produce` runs on this one. The result is the
/// same as [`Trace::from_events`] on the same events. An error from `produce` is
/// returned once the model thread has stopped.
///
/// ```
/// use causeway_format::{Header, Tables, TaskState};
/// use causeway_model::ingest::ingest;
/// use causeway_testkit::synth::Synth;
/// let mut s = Synth::new();
/// s.switch(0, 0, 0, TaskState::RUNNABLE, 7);
/// let tables = Tables::default();
/// let (model, _facts) = ingest(&tables, &Header::synthetic(1), |sink| {
///     for ev in s.events() {
///         sink.push(ev);
///     }
///     Ok::<(), std::convert::Infallible>(())
/// })
/// .unwrap();
/// assert_eq!(model.threads().count(), 1);
/// ```
pub fn ingest<E>(
    tables: &Tables,
    header: &Header,
    produce: impl FnOnce(&mut EventSink<'_, '_>) -> Result<(), E>,
) -> Result<(Model, Facts), E> {
    let (full_tx, full_rx) = sync_channel::<Vec<Event>>(QUEUED);
    let (empty_tx, empty_rx) = channel::<Vec<Event>>();
    let mut facts = FactsCollector::new(tables, header);
    let observed = AtomicU64::new(0);
    let (model, produced) = std::thread::scope(|s| {
        let model = s.spawn(|| build(tables, header, full_rx, empty_tx, &observed));
        let mut sink = EventSink {
            batch: Vec::with_capacity(BATCH),
            full: Some(full_tx),
            empty: &empty_rx,
            facts: &mut facts,
            observed: &observed,
        };
        let produced = produce(&mut sink);
        sink.close();
        let model = model
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (model, produced)
    });
    produced?;
    Ok((model, facts.finish()))
}
