//! `causeway export`: the trace in Perfetto's protobuf format and in the Chrome trace
//! event format, for the viewers people already use.

use crate::cmd::loaded::{auto_diagnosis, bottleneck, load};
use crate::exit;
use crate::flags::ExportArgs;
use anyhow::{Context, Result, bail};
use causeway_report::timeline::Timeline;
use causeway_report::{ReportError, chrome, perfetto};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Run the command.
pub fn run(args: &ExportArgs) -> Result<u8> {
    if args.perfetto.is_none() && args.chrome_json.is_none() {
        bail!("nothing to write: give --perfetto OUT and/or --chrome-json OUT");
    }
    let loaded = load(&args.trace)?;
    let verdict = if args.no_bottleneck {
        None
    } else {
        bottleneck(&loaded.trace)
    };
    let mut tl = Timeline::build(&loaded.trace, Some(&loaded.extras), verdict.as_ref());
    if !args.no_diagnose {
        let (d, note) = auto_diagnosis(&loaded, args.thread.as_deref());
        match d {
            Some(d) => tl.add_diagnosis(&loaded.trace, &d),
            None if !args.json => eprintln!("{note}"),
            None => {}
        }
    }
    let mut written = Vec::new();
    if let Some(p) = &args.perfetto {
        write_file(p, |out| perfetto::write(&tl, out))?;
        written.push(("perfetto", p));
    }
    if let Some(p) = &args.chrome_json {
        write_file(p, |out| chrome::write(&tl, out))?;
        written.push(("chrome_json", p));
    }
    let summary = serde_json::json!({
        "files": written.iter().map(|(k, p)| serde_json::json!({"format": k, "path": p})).collect::<Vec<_>>(),
        "tracks": tl.tracks.len(),
        "slices": tl.slices.len(),
        "instants": tl.instants.len(),
        "flows": tl.flows,
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        for (k, p) in &written {
            eprintln!("wrote {} ({k})", p.display());
        }
        eprintln!(
            "{} tracks, {} slices, {} instants, {} wake-up flows",
            tl.tracks.len(),
            tl.slices.len(),
            tl.instants.len(),
            tl.flows
        );
    }
    Ok(exit::OK)
}

/// Create `path` and write it through a buffer.
pub fn write_file(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<(), ReportError>,
) -> Result<()> {
    let f = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut out = BufWriter::new(f);
    write(&mut out).with_context(|| format!("writing {}", path.display()))?;
    out.flush()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
