//! The calls report: its text and JSON forms say the same chain, top function and
//! signature matches for a small synthetic trace (thread 7 stalls 300 ns in
//! `main > loop > handle > read_config` once; thread 8 runs `idle`).

use causeway_calls::{Options, Pattern, analyze};
use causeway_format::{Header, Marker, StringId, Tables, Tgid, ThreadInfo, Tid, Timestamp};
use causeway_model::Trace;
use causeway_report::{CallsSections, CallsView, Format, View, render};
use causeway_testkit::synth::Synth;

fn trace() -> Trace {
    let names = [
        "",
        "main",
        "loop",
        "handle",
        "read_config",
        "idle",
        "worker",
    ];
    let tables = Tables {
        strings: names.map(String::from).to_vec(),
        threads: vec![ThreadInfo {
            tid: Tid(7),
            tgid: Tgid(7),
            since: Timestamp(0),
            comm: StringId(6),
        }],
        ..Tables::default()
    };
    let en = |m| Marker::MethodEnter {
        method: StringId(m),
    };
    let ex = |m| Marker::MethodExit {
        method: StringId(m),
    };
    let mut s = Synth::new();
    s.marker(0, 0, 7, en(1)).marker(1, 0, 7, en(2));
    let mut t = 2;
    for stall in [10, 300, 10] {
        s.marker(t, 0, 7, en(3)).marker(t + 1, 0, 7, en(4));
        t += 1 + stall;
        s.marker(t, 0, 7, ex(4)).marker(t + 1, 0, 7, ex(3));
        t += 2;
    }
    s.marker(t, 0, 7, ex(2)).marker(t + 1, 0, 7, ex(1));
    s.marker(5, 0, 8, en(5)).marker(105, 0, 8, ex(5));
    Trace::from_events(tables, Header::synthetic(1), &s.events())
}

fn render_to_string(view: &dyn View, f: Format) -> String {
    let mut out = Vec::new();
    render(view, f, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn text_and_json_name_the_same_chain_top_function_and_matches() {
    let tr = trace();
    let opts = Options {
        pattern: Some(Pattern::parse("handle>read_config").unwrap()),
        ..Options::default()
    };
    let r = analyze(&tr, &opts).unwrap();
    let sections = CallsSections {
        signature: Some("handle>read_config".into()),
        ..CallsSections::default()
    };
    let view = CallsView::new(&r, tr.tables(), &sections);
    assert!(view.found());
    let text = render_to_string(&view, Format::Text);
    let json: serde_json::Value =
        serde_json::from_str(&render_to_string(&view, Format::Json)).unwrap();

    let chain: Vec<&str> = json["chains"][0]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["function"].as_str().unwrap())
        .collect();
    assert_eq!(chain, ["main", "loop", "handle", "read_config"]);
    assert_eq!(json["chains"][0]["thread"], "worker");
    assert!(
        text.contains("main > loop > handle > read_config"),
        "{text}"
    );
    assert!(text.contains("thread 7 (worker)"), "{text}");

    assert_eq!(json["top"][0]["function"], "read_config");
    assert_eq!(json["top"][0]["calls"], 3);
    let top_line = text
        .lines()
        .skip_while(|l| !l.starts_with("functions by self time"))
        .nth(2)
        .unwrap();
    assert!(top_line.ends_with("read_config"), "{top_line}");

    assert_eq!(json["matches"]["instances"].as_array().unwrap().len(), 3);
    assert!(
        text.contains("signature handle>read_config: 3 instances"),
        "{text}"
    );
}

#[test]
fn a_signature_that_is_not_there_is_not_found() {
    let tr = trace();
    let opts = Options {
        pattern: Some(Pattern::parse("idle>main").unwrap()),
        ..Options::default()
    };
    let r = analyze(&tr, &opts).unwrap();
    let sections = CallsSections {
        signature: Some("idle>main".into()),
        ..CallsSections::default()
    };
    let view = CallsView::new(&r, tr.tables(), &sections);
    assert!(!view.found());
}
