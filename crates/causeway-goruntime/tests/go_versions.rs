//! The table of runtime layouts by Go version, against real builds: a small program
//! (`tests/tiny`) built by the machine's Go and by every Go toolchain in the module
//! cache (`GOTOOLCHAIN=go1.N.P` put them there; nothing is downloaded here), each
//! with symbols and DWARF, with `-ldflags='-s -w'` and `strip`ped. For a version in
//! the table, the three inspections must be equal: the stripped builds' layout comes
//! from the table and their functions from `.gopclntab`, the full build's from its
//! DWARF and symbols. A version outside the table must be refused without DWARF.
//! `scripts/go-layouts.sh` downloads the toolchains and prints the table's rows.

use causeway_goruntime::{Inspection, inspect, known_versions};
use std::path::{Path, PathBuf};
use std::process::Command;

fn tiny() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tiny")
}

/// The module cache's directory of downloaded Go toolchains.
fn toolchain_dir() -> PathBuf {
    let out = Command::new("go")
        .args(["env", "GOMODCACHE"])
        .output()
        .expect("the go command runs (scripts/setup.sh installs it)");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("golang.org")
}

/// Versions of the Go toolchains in the module cache (`go1.22.12`), for amd64.
fn cached_toolchains() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(toolchain_dir()) else {
        return Vec::new();
    };
    let mut versions: Vec<String> = dir
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let v = name.strip_prefix("toolchain@v0.0.1-")?;
            Some(v.strip_suffix(".linux-amd64")?.to_string())
        })
        .collect();
    versions.sort();
    versions
}

/// Build the small program with `toolchain` (`local`: the machine's Go). A cached
/// toolchain runs itself, from its own root and with a GOPATH of its own (beside
/// `out`): go1.19 fails with "import of unknown directory" on a GOPATH whose module
/// cache newer toolchains filled, and a newer `go`'s toolchain switch keeps that one.
fn build(toolchain: &str, ldflags: &str, out: &Path) -> Result<(), String> {
    let mut cmd = if toolchain == "local" {
        Command::new("go")
    } else {
        let root = toolchain_dir().join(format!("toolchain@v0.0.1-{toolchain}.linux-amd64"));
        let mut c = Command::new(root.join("bin/go"));
        c.env("GOROOT", &root)
            .env("GOPATH", out.with_extension("gopath"));
        c
    };
    let o = cmd
        .args(["build", "-ldflags", ldflags, "-o"])
        .arg(out)
        .arg(".")
        .current_dir(tiny())
        .env("GOTOOLCHAIN", "local")
        .env("GOPROXY", "off")
        .env("GOFLAGS", "-mod=mod")
        .output()
        .map_err(|e| e.to_string())?;
    if o.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&o.stderr).into_owned())
    }
}

/// The three builds' inspections: full, `-s -w`, stripped.
fn inspections(toolchain: &str, dir: &Path) -> Result<[Inspection; 3], String> {
    let (full, sw, stripped) = (dir.join("full"), dir.join("sw"), dir.join("stripped"));
    build(toolchain, "", &full)?;
    build(toolchain, "-s -w", &sw)?;
    std::fs::copy(&full, &stripped).map_err(|e| e.to_string())?;
    let status = Command::new("strip").arg(&stripped).status();
    assert!(status.is_ok_and(|s| s.success()), "strip {stripped:?}");
    let get = |p: &Path| inspect(p).map_err(|e| e.to_string());
    Ok([get(&full)?, get(&sw)?, get(&stripped)?])
}

#[test]
fn layouts_by_version() {
    let known = known_versions();
    let in_table = |v: &str| {
        known
            .iter()
            .any(|k| v == k || v.starts_with(&format!("{k}.")))
    };
    let mut verified = Vec::new();
    let mut refused = Vec::new();
    let toolchains = std::iter::once("local".to_string()).chain(cached_toolchains());
    for toolchain in toolchains {
        let dir = tempfile::tempdir().unwrap();
        let [full, sw, stripped] = match inspections(&toolchain, dir.path()) {
            Ok(i) => i,
            Err(e) if toolchain != "local" && !in_table(&toolchain) => {
                eprintln!("{toolchain}: not built ({}), skipped", e.trim());
                continue;
            }
            Err(e) => panic!("{toolchain}: {e}"),
        };
        let version = match &full {
            Inspection::Go(rt) => rt.version.clone(),
            other => panic!("{toolchain}: the full build is not followable: {other:?}"),
        };
        if in_table(&version) {
            assert_eq!(sw, full, "{version}: -s -w build against the DWARF");
            assert_eq!(
                stripped, full,
                "{version}: stripped build against the DWARF"
            );
            verified.push(version);
        } else {
            for i in [sw, stripped] {
                match i {
                    Inspection::Unsupported {
                        version: Some(v),
                        reason,
                    } => {
                        assert_eq!(v, version);
                        assert!(reason.contains("field offsets unknown without DWARF"));
                    }
                    other => panic!("{version} outside the table, stripped: {other:?}"),
                }
            }
            refused.push(version);
        }
    }
    eprintln!("verified against DWARF: {verified:?}; outside the table, refused: {refused:?}");
    assert!(!verified.is_empty(), "the machine's Go {known:?}");
}
