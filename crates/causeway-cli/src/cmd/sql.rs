//! `causeway sql`: SQL over trace tables (DataFusion, through causeway-sql).
//!
//! Trace files among the inputs are converted first into a temporary directory
//! (removed at the end), so `causeway sql QUERY trace.cwt` needs no `tables` step.

use crate::cmd::tables;
use crate::flags::tables::SqlFormat;
use crate::flags::{FleetArgs, SqlArgs};
use anyhow::{Result, bail};
use causeway_sql::{Session, render};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

#[cfg(feature = "cluster")]
use crate::cmd::cluster::session;

/// An embedded session (this build has no cluster client).
#[cfg(not(feature = "cluster"))]
fn session(dirs: &[PathBuf], scheduler: Option<&str>) -> Result<Session> {
    use anyhow::Context;
    if scheduler.is_some() {
        bail!("this causeway was built without the `cluster` feature; `--cluster` needs it");
    }
    Session::open(dirs).context("opening the tables")
}

/// The directories to query: table directories as given, traces converted.
fn inputs(given: &[PathBuf], scratch: &mut Option<tempfile::TempDir>) -> Result<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    for p in given {
        if p.is_dir() {
            dirs.push(p.clone());
            continue;
        }
        if !p.exists() {
            bail!("{}: no such file or directory", p.display());
        }
        if scratch.is_none() {
            *scratch = Some(tempfile::Builder::new().prefix("causeway-sql").tempdir()?);
        }
        let root = scratch.as_ref().expect("made above").path();
        eprintln!("causeway: converting {} ...", p.display());
        tables::write(p, root, None, true)?;
        if !dirs.iter().any(|d| d == root) {
            dirs.push(root.to_path_buf());
        }
    }
    if dirs.is_empty() {
        bail!("give at least one table directory or trace file after the query");
    }
    Ok(dirs)
}

fn format(args: &SqlArgs) -> render::Format {
    if args.json {
        return render::Format::Json;
    }
    match args.format {
        SqlFormat::Table => render::Format::Table,
        SqlFormat::Csv => render::Format::Csv,
        SqlFormat::Json => render::Format::Json,
    }
}

/// Run the command.
pub fn run(args: &SqlArgs) -> Result<u8> {
    // `causeway sql DIR` (no query): the first word is an input, not a query.
    let mut given = args.inputs.clone();
    let mut query = args.query.clone();
    if let Some(q) = &query
        && given.is_empty()
        && std::path::Path::new(q).exists()
    {
        given.push(PathBuf::from(q));
        query = None;
    }
    let mut scratch = None;
    let dirs = inputs(&given, &mut scratch)?;
    let session = session(&dirs, args.cluster.as_deref())?;
    let fmt = format(args);
    match query {
        Some(q) => {
            let waiting = SlowNotice::start(args.cluster.as_deref());
            let batches = session.query(&q)?;
            drop(waiting);
            let mut out = std::io::stdout().lock();
            render::write(&batches, fmt, &mut out)?;
            out.flush()?;
            Ok(0)
        }
        None => prompt(&session, fmt),
    }
}

/// Read queries ending with `;` from standard input, print each result; an error is
/// printed and the prompt goes on.
fn prompt(session: &Session, fmt: render::Format) -> Result<u8> {
    let tty = std::io::stdin().is_terminal();
    if tty {
        eprintln!(
            "causeway sql: end each query with `;`; \\q or Ctrl-D quits; SHOW TABLES lists the tables."
        );
    }
    let mut buf = String::new();
    let stdin = std::io::stdin();
    let mut failed = false;
    loop {
        if tty {
            eprint!("{}", if buf.is_empty() { "sql> " } else { "...> " });
        }
        let mut line = String::new();
        if stdin.lock().read_line(&mut line)? == 0 {
            break;
        }
        if buf.is_empty() && matches!(line.trim(), "\\q" | "quit" | "exit") {
            break;
        }
        buf.push_str(&line);
        if !buf.trim_end().ends_with(';') {
            continue;
        }
        let q = std::mem::take(&mut buf);
        match session.query(q.trim().trim_end_matches(';')) {
            Ok(b) => {
                let mut out = std::io::stdout().lock();
                render::write(&b, fmt, &mut out)?;
                out.flush()?;
            }
            Err(e) => {
                eprintln!("error: {e}");
                failed = true;
            }
        }
    }
    Ok(if failed && !tty { 1 } else { 0 })
}

/// `causeway fleet`: the census over table directories.
pub fn fleet(args: &FleetArgs) -> Result<u8> {
    for d in &args.dirs {
        if !d.is_dir() {
            bail!(
                "{}: not a table directory (write one with `causeway tables`)",
                d.display()
            );
        }
    }
    let session = session(&args.dirs, args.cluster.as_deref())?;
    let waiting = SlowNotice::start(args.cluster.as_deref());
    let census = causeway_sql::fleet::census(&session, args.top)?;
    drop(waiting);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&census)?);
    } else {
        print!("{}", causeway_sql::fleet_text::render_text(&census));
    }
    Ok(if census.hosts == 0 { 1 } else { 0 })
}

/// Says once, after a while, that the cluster has not answered yet: Ballista's
/// scheduler holds a query until an executor is free, which without any executor is
/// forever. Dropping it (the query ended) keeps it quiet.
pub struct SlowNotice {
    done: Option<std::sync::mpsc::Sender<()>>,
}

impl SlowNotice {
    /// Start waiting; `scheduler` names the cluster in the notice.
    pub fn start(scheduler: Option<&str>) -> SlowNotice {
        let Some(s) = scheduler else {
            return SlowNotice { done: None };
        };
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let s = s.to_string();
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                rx.recv_timeout(std::time::Duration::from_secs(10))
            {
                eprintln!(
                    "causeway: no answer from the cluster at {s} after 10 s; is an executor \
                     registered with it? (still waiting; Ctrl-C stops)"
                );
            }
        });
        SlowNotice { done: Some(tx) }
    }
}

impl Drop for SlowNotice {
    fn drop(&mut self) {
        if let Some(tx) = self.done.take() {
            let _ = tx.send(());
        }
    }
}
