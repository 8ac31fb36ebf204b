//! The `causeway` command-line tool: a thin layer over the format, import, model,
//! analysis and report crates. Flags are parsed and resolved in `flags/`, each
//! subcommand runs in `cmd/`, a result goes out in `output`, event formatting for
//! `dump` is in `render/`.

mod cmd;
mod exit;
mod flags;
mod output;
mod progress;
mod trace;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match flags::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            // Help and version requests are not errors; bad usage is a user error.
            return ExitCode::from(if e.use_stderr() {
                exit::NOTHING_OR_USER_ERROR
            } else {
                exit::OK
            });
        }
    };
    // Output commands end quietly when their reader goes away (`causeway dump | head`),
    // as Unix filters do; the recorder keeps SIGPIPE ignored so a closed terminal never
    // kills it before the trace is finished, and so do the cluster's processes and its
    // clients: a peer's closed connection must be an error on one socket, not the end
    // of the process.
    let network = match &cli.command {
        flags::Command::Cluster(_) => true,
        flags::Command::Sql(a) => a.cluster.is_some(),
        flags::Command::Fleet(a) => a.cluster.is_some(),
        _ => false,
    };
    if !network
        && !matches!(
            cli.command,
            flags::Command::Record(_) | flags::Command::Watch(_)
        )
    {
        // SAFETY: restoring the default disposition of one signal at start-up.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    // libbpf's messages stay off the terminal unless `record -v` asks for them.
    causeway_record::liblog::init(match &cli.command {
        flags::Command::Record(a) => a.verbose,
        flags::Command::Watch(a) => a.record.verbose,
        _ => false,
    });
    let result = match &cli.command {
        flags::Command::Info(a) => cmd::info::run(a),
        flags::Command::Check(a) => cmd::check::run(a),
        flags::Command::Dump(a) => cmd::dump::run(a),
        flags::Command::Import(a) => cmd::import::run(a),
        flags::Command::Demo(a) => cmd::demo::run(a),
        flags::Command::Record(a) => cmd::record::run(a),
        flags::Command::Watch(a) => cmd::watch::run(a),
        flags::Command::Trigger(a) => cmd::trigger::run(a),
        flags::Command::Bottleneck(a) => cmd::bottleneck::run(a),
        flags::Command::Whatif(a) => cmd::whatif::run(a),
        flags::Command::Export(a) => cmd::export::run(a),
        flags::Command::Flamegraph(a) => cmd::flamegraph::run(a),
        flags::Command::Compare(a) => cmd::compare::run(a),
        flags::Command::Report(a) => cmd::report::run(a),
        flags::Command::Tables(a) => cmd::tables::run(a),
        flags::Command::Sql(a) => cmd::sql::run(a),
        flags::Command::Fleet(a) => cmd::sql::fleet(a),
        flags::Command::Cluster(a) => cmd::cluster::run(a),
        flags::Command::Completions(a) => cmd::meta::completions(a),
        flags::Command::Man(a) => cmd::meta::man(a),
        flags::Command::Latency(a) => cmd::latency::run(a),
        flags::Command::Rootpath(a) => cmd::rootpath::run(a),
        flags::Command::Calls(a) => cmd::calls::run(a),
        flags::Command::Diagnose(a) => cmd::diagnose::run(a),
        flags::Command::Run(a) => cmd::run::run(a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) if exit::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("causeway: error: {}", exit::describe(&e));
            ExitCode::from(exit::code_for(&e))
        }
    }
}
