//! The contract of `View` and `render`, shown on a result type defined outside the
//! crate, as a new analysis's report would be.

use causeway_report::{Format, ReportError, View, render};
use std::io::Write;

/// A made-up result: the longest wait of one thread.
struct LongestWait {
    tid: u32,
    wait_ns: u64,
}

impl View for LongestWait {
    fn name(&self) -> &'static str {
        "longest-wait"
    }

    fn found(&self) -> bool {
        self.wait_ns > 0
    }

    fn write_text(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        writeln!(
            out,
            "tid {} waited {:.3}s",
            self.tid,
            self.wait_ns as f64 / 1e9
        )?;
        Ok(())
    }

    fn write_json(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        writeln!(
            out,
            "{{\"tid\": {}, \"wait_ns\": {}}}",
            self.tid, self.wait_ns
        )?;
        Ok(())
    }
}

fn rendered(v: &dyn View, f: Format) -> Result<String, ReportError> {
    let mut out = Vec::new();
    render(v, f, &mut out)?;
    Ok(String::from_utf8(out).expect("utf-8"))
}

#[test]
fn render_picks_the_form() {
    let v = LongestWait {
        tid: 7,
        wait_ns: 1_500_000_000,
    };
    assert_eq!(rendered(&v, Format::Text).unwrap(), "tid 7 waited 1.500s\n");
    assert_eq!(
        rendered(&v, Format::Json).unwrap(),
        "{\"tid\": 7, \"wait_ns\": 1500000000}\n"
    );
    assert!(v.found());
}

#[test]
fn a_view_without_a_graph_refuses_dot() {
    let v = LongestWait { tid: 7, wait_ns: 0 };
    let err = rendered(&v, Format::Dot).unwrap_err();
    assert!(matches!(
        err,
        ReportError::Unsupported {
            view: "longest-wait",
            format: Format::Dot
        }
    ));
    assert_eq!(err.to_string(), "the longest-wait result has no dot form");
    assert!(!v.found());
}

/// A writer that fails like a closed pipe.
struct ClosedPipe;

impl Write for ClosedPipe {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::ErrorKind::BrokenPipe.into())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn write_errors_keep_the_io_error_as_source() {
    let v = LongestWait { tid: 7, wait_ns: 1 };
    let err = render(&v, Format::Text, &mut ClosedPipe).unwrap_err();
    let source = std::error::Error::source(&err)
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .expect("io error source");
    assert_eq!(source.kind(), std::io::ErrorKind::BrokenPipe);
}
