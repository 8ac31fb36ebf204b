//! Reading and model building on two threads.
//!
//! Building the model is the one sequential part of a bottleneck analysis that grows
//! with the trace. [`Collector::collect_threaded`] takes it off the thread that
//! produces the events (decoding a file, or synthesizing them), which also gathers the
//! [`Extras`]: the two halves overlap on two cores. Events cross in batches, and only a
//! few batches are in flight, so memory stays independent of the event count.

use crate::extras::ExtrasCollector;
use crate::input::{Collector, Extras};
use causeway_format::{Event, Header, Tables};
use causeway_model::{Model, ModelBuilder};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};

/// Events per batch: large enough that handing over a batch costs little per event,
/// small enough (about 230 KiB) to stay in cache on the way.
const BATCH: usize = 4096;

/// Batches queued for the model thread before the producer waits for it.
const QUEUED: usize = 4;

/// Where the producer of [`Collector::collect_threaded`] puts the events, in time
/// order.
pub struct EventSink<'s, 't> {
    batch: Vec<Event>,
    full: Option<SyncSender<Vec<Event>>>,
    empty: &'s Receiver<Vec<Event>>,
    extras: &'s mut ExtrasCollector<'t>,
}

impl EventSink<'_, '_> {
    /// Take the next event.
    #[inline]
    pub fn push(&mut self, ev: Event) {
        self.extras.push(&ev);
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
    builder.finish()
}

impl Collector<'_> {
    /// Build the model and extras from the events `produce` pushes into the sink, with
    /// the model built on a second thread while `produce` runs on this one. The result
    /// is the same as pushing the events into a [`Collector`]. An error from `produce`
    /// is returned once the model thread has stopped.
    ///
    /// ```
    /// use causeway_bottleneck::Collector;
    /// use causeway_format::{Header, Tables, TaskState};
    /// use causeway_model::synth::Synth;
    /// let mut s = Synth::new();
    /// s.switch(0, 0, 0, TaskState::RUNNABLE, 7);
    /// let tables = Tables::default();
    /// let (model, _extras) = Collector::collect_threaded(&tables, &Header::synthetic(1), |sink| {
    ///     for ev in s.events() {
    ///         sink.push(ev);
    ///     }
    ///     Ok::<(), std::convert::Infallible>(())
    /// })
    /// .unwrap();
    /// assert_eq!(model.threads().count(), 1);
    /// ```
    pub fn collect_threaded<E>(
        tables: &Tables,
        header: &Header,
        produce: impl FnOnce(&mut EventSink<'_, '_>) -> Result<(), E>,
    ) -> Result<(Model, Extras), E> {
        let (full_tx, full_rx) = sync_channel::<Vec<Event>>(QUEUED);
        let (empty_tx, empty_rx) = channel::<Vec<Event>>();
        let mut extras = ExtrasCollector::new(tables, header);
        let (model, produced) = std::thread::scope(|s| {
            let model = s.spawn(|| build(tables, header, full_rx, empty_tx));
            let mut sink = EventSink {
                batch: Vec::with_capacity(BATCH),
                full: Some(full_tx),
                empty: &empty_rx,
                extras: &mut extras,
            };
            let produced = produce(&mut sink);
            sink.close();
            let model = model
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (model, produced)
        });
        produced?;
        Ok((model, extras.finish()))
    }
}
