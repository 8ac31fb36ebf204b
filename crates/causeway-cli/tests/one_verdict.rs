//! One verdict on a damaged trace (issue 12): for a corrupt byte anywhere in the
//! trailer (and the index block before it), `causeway check` and `causeway info` agree
//! on whether the trace is intact, and what `info` refuses, `check -o` salvages into a
//! trace `info` reads, marked as salvaged. Concatenated traces are salvaged one file
//! each. Uses the format's committed golden trace: no root needed.

mod common;

use common::causeway;
use std::path::PathBuf;

fn golden() -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../causeway-format/tests/data/golden-v1.2.cwt");
    std::fs::read(p).expect("golden trace")
}

#[test]
fn check_and_info_agree_on_every_trailer_byte() {
    let orig = golden();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.cwt");
    let out = dir.path().join("s.cwt");
    let mut refused = 0;
    for at in orig.len() - 40..orig.len() {
        let mut d = orig.clone();
        d[at] ^= 0x5a;
        std::fs::write(&f, &d).unwrap();
        let _ = std::fs::remove_file(&out);
        let check = causeway()
            .arg("check")
            .arg("-o")
            .arg(&out)
            .arg(&f)
            .output()
            .unwrap();
        let info = causeway().arg("info").arg(&f).output().unwrap();
        let check_ok = check.status.code() == Some(0);
        let info_ok = info.status.code() == Some(0);
        assert_eq!(
            check_ok,
            info_ok,
            "byte {at} of {}: check {:?} / info {:?}\n{}\n{}",
            orig.len(),
            check.status.code(),
            info.status.code(),
            String::from_utf8_lossy(&check.stdout),
            String::from_utf8_lossy(&info.stderr)
        );
        if !info_ok {
            refused += 1;
            assert_eq!(info.status.code(), Some(2));
            let o = causeway()
                .args(["info", "--json"])
                .arg(&out)
                .output()
                .unwrap();
            assert!(o.status.success(), "byte {at}: salvage does not read");
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            assert!(v["salvaged"].is_object(), "byte {at}: salvage not marked");
            // Trailer damage loses no event.
            assert_eq!(v["salvaged"]["stats_lost"], false, "byte {at}");
        }
    }
    assert!(
        refused >= 24,
        "every trailer byte matters ({refused} refused)"
    );
}

#[test]
fn cat_a_b_and_cat_a_a_are_salvaged_one_trace_per_file() {
    let a = golden();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("aa.cwt");
    std::fs::write(&f, [a.as_slice(), a.as_slice()].concat()).unwrap();
    let o = causeway().arg("info").arg(&f).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "info refuses a concatenation");
    let o = causeway()
        .args(["check", "--json"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["traces"], 2, "{v}");
    let events = |p: &str| {
        let o = causeway().args(["info", "--json"]).arg(p).output().unwrap();
        assert!(o.status.success(), "{p}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["events"].as_u64().unwrap()
    };
    let orig = dir.path().join("a.cwt");
    std::fs::write(&orig, &a).unwrap();
    let n = events(orig.to_str().unwrap());
    let paths: Vec<String> = v["salvaged"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(paths.len(), 2);
    assert!(paths[1].ends_with("aa.cwt.salvaged.2.cwt"), "{paths:?}");
    for p in &paths {
        assert_eq!(events(p), n, "{p}: each copy once, events not doubled");
    }
}
