//! The standard library of every session: views over the tables that answer the
//! usual questions in one line, and functions for reading results. Each view keeps
//! `trace_id` and `host`, so it works over one trace or a fleet alike.

use crate::SqlError;
use arrow::array::{Array, ArrayRef, Int64Array, StringBuilder};
use arrow::datatypes::DataType;
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::{ColumnarValue, ScalarUDF, Volatility, create_udf};
use datafusion::prelude::SessionContext;
use std::sync::Arc;

/// The views: name, what a row is, the query.
pub const VIEWS: [(&str, &str, &str); 6] = [
    (
        "waits",
        "One row per blocked interval, with the thread's and the waker's names and the wait's folded user stack.",
        "SELECT s.trace_id, s.host, s.utid, s.tid, t.comm AS thread, t.pid, s.start_ns, s.dur_ns,
                s.task_state, s.syscall, s.waker_kind, s.waker_tid, w.comm AS waker, s.waker_irq,
                s.wait_user_stack_id, st.folded AS wait_stack
         FROM thread_states s
         JOIN threads t ON t.trace_id = s.trace_id AND t.host = s.host AND t.utid = s.utid
         LEFT JOIN threads w ON w.trace_id = s.trace_id AND w.host = s.host AND w.utid = s.waker_utid
         LEFT JOIN stacks st ON st.trace_id = s.trace_id AND st.host = s.host
                            AND st.stack_id = s.wait_user_stack_id
         WHERE s.state = 'blocked'",
    ),
    (
        "thread_summary",
        "One row per thread: time running, runnable and blocked, its number of waits and the longest.",
        "SELECT t.trace_id, t.host, t.utid, t.tid, t.pid, t.comm AS thread, t.running_ns,
                t.runnable_ns, t.blocked_ns, COALESCE(w.waits, 0) AS waits, w.max_wait_ns
         FROM threads t
         LEFT JOIN (SELECT trace_id, host, utid, count(*) AS waits, max(dur_ns) AS max_wait_ns
                    FROM thread_states WHERE state = 'blocked'
                    GROUP BY trace_id, host, utid) w
           ON w.trace_id = t.trace_id AND w.host = t.host AND w.utid = t.utid",
    ),
    (
        "knot_sites",
        "One row per edge of a ranked knot: who waits for whom, how long, and at which call site.",
        "SELECT e.trace_id, e.host, e.knot, e.edge, f.label AS waiter, w.label AS waited_for,
                e.weight_ns, e.direct_waits, e.wait_stack, e.waker_stack
         FROM bottleneck_edges e
         JOIN bottleneck_vertices f ON f.trace_id = e.trace_id AND f.host = e.host
                                   AND f.vertex = e.from_vertex
         JOIN bottleneck_vertices w ON w.trace_id = e.trace_id AND w.host = e.host
                                   AND w.vertex = e.to_vertex
         WHERE e.knot IS NOT NULL",
    ),
    (
        "samples",
        "One row per on-CPU sample, with its folded user and kernel stacks.",
        "SELECT c.trace_id, c.host, c.ts, c.cpu, c.tid, u.folded AS user_stack,
                k.folded AS kernel_stack
         FROM callstacks c
         LEFT JOIN stacks u ON u.trace_id = c.trace_id AND u.host = c.host
                           AND u.stack_id = c.user_stack_id
         LEFT JOIN stacks k ON k.trace_id = c.trace_id AND k.host = c.host
                           AND k.stack_id = c.kernel_stack_id
         WHERE c.kind = 'sample'",
    ),
    (
        "remote_waits",
        "One row per wait ended by TCP data that a thread of another host's trace sent: the wait, the flow, the sender and when it sent (on its own host's clock).",
        // A wait's wake-up is the `ready` mark at the same time for the same thread;
        // the sender's flow is the receiver's seen from the other end, and its send
        // is the one whose bytes hold the last byte that had arrived (rcv_nxt - 1).
        // Sequence numbers are compared without their wrap at 2^32: a send across it
        // is not found.
        "SELECT s.trace_id, s.host, s.utid, s.tid, s.seg, s.start_ns, s.dur_ns,
                f.label AS flow, x.trace_id AS peer_trace_id, x.host AS peer_host,
                x.tid AS sender_tid, x.ts AS sent_ns, x.bytes
         FROM sockets r
         JOIN thread_states s ON s.trace_id = r.trace_id AND s.host = r.host
                             AND s.tid = r.tid AND s.wake_ns = r.ts AND s.state = 'blocked'
         JOIN flows f ON f.trace_id = r.trace_id AND f.host = r.host AND f.flow_id = r.flow_id
         JOIN flows g ON g.local = f.remote AND g.remote = f.local AND g.proto = f.proto
                     AND (g.host <> f.host OR g.trace_id <> f.trace_id)
         JOIN sockets x ON x.trace_id = g.trace_id AND x.host = g.host
                       AND x.flow_id = g.flow_id AND x.kind = 'send'
         WHERE r.kind = 'ready' AND f.proto = 'tcp'
           AND x.seq - x.bytes <= r.seq - 1 AND r.seq - 1 < x.seq",
    ),
    (
        "syscall_summary",
        "One row per system call name: calls, total and longest time.",
        "SELECT trace_id, host, name, count(*) AS calls, sum(dur_ns) AS total_ns,
                max(dur_ns) AS max_ns
         FROM syscalls GROUP BY trace_id, host, name",
    ),
];

/// The functions: name, signature, meaning.
pub const FUNCTIONS: [(&str, &str, &str); 1] = [(
    "dur",
    "dur(ns BIGINT) -> VARCHAR",
    "A duration for reading: `950ns`, `12.5us`, `1.25ms`, `3.000s`.",
)];

/// The functions of [`FUNCTIONS`], to register wherever a plan that calls them is
/// planned or run (a cluster's scheduler and executors too).
pub fn functions() -> Vec<ScalarUDF> {
    vec![create_udf(
        "dur",
        vec![DataType::Int64],
        DataType::Utf8,
        Volatility::Immutable,
        Arc::new(dur_udf),
    )]
}

/// Register [`functions`] in a registry (a session state, a cluster process's).
pub fn register_functions(registry: &mut dyn FunctionRegistry) -> datafusion::error::Result<()> {
    for f in functions() {
        registry.register_udf(Arc::new(f))?;
    }
    Ok(())
}

/// Register the views and functions in `ctx`.
pub fn register(ctx: &SessionContext, rt: &tokio::runtime::Runtime) -> Result<(), SqlError> {
    for f in functions() {
        ctx.register_udf(f);
    }
    for (name, _, query) in VIEWS {
        rt.block_on(async {
            let df = ctx.sql(query).await.map_err(SqlError::Query)?;
            ctx.register_table(name, df.into_view())
                .map_err(SqlError::Query)
        })?;
    }
    Ok(())
}

/// `dur(ns)` over a column or a value.
fn dur_udf(args: &[ColumnarValue]) -> datafusion::error::Result<ColumnarValue> {
    let arrays = ColumnarValue::values_to_arrays(args)?;
    let ns = arrays[0]
        .as_any()
        .downcast_ref::<Int64Array>()
        .ok_or_else(|| datafusion::error::DataFusionError::Plan("dur() takes a BIGINT".into()))?;
    let mut out = StringBuilder::with_capacity(ns.len(), ns.len() * 8);
    for v in ns.iter() {
        out.append_option(v.map(duration_text));
    }
    let out: ArrayRef = Arc::new(out.finish());
    Ok(ColumnarValue::Array(out))
}

/// A duration in ns as text, with the unit that keeps 3 to 4 significant digits.
pub fn duration_text(ns: i64) -> String {
    let a = ns.unsigned_abs() as f64;
    let sign = if ns < 0 { "-" } else { "" };
    if a < 1e3 {
        format!("{sign}{a}ns")
    } else if a < 1e6 {
        format!("{sign}{:.1}us", a / 1e3)
    } else if a < 1e9 {
        format!("{sign}{:.2}ms", a / 1e6)
    } else {
        format!("{sign}{:.3}s", a / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::duration_text;

    #[test]
    fn durations_read_with_their_unit() {
        assert_eq!(duration_text(950), "950ns");
        assert_eq!(duration_text(12_500), "12.5us");
        assert_eq!(duration_text(1_250_000), "1.25ms");
        assert_eq!(duration_text(3_000_000_000), "3.000s");
        assert_eq!(duration_text(-2_000), "-2.0us");
    }
}
