//! `causeway whatif`: the predicted gain of shrinking an edge's waits, every wait on a
//! vertex, a call site's waits or a vertex's CPU time, from the recording replayed
//! (`causeway-whatif`).
//!
//! Vertices and edges are named by id or by the bottleneck report's labels; resolving a
//! label is this command's job, the prediction the library's.

use crate::cmd::bottleneck::{Analysis, analyse};
use crate::flags::WhatIfArgs;
use crate::output;
use anyhow::{Result, bail};
use causeway_bottleneck::{EdgeKind, Findings, Options};
use causeway_report::{WhatIfView, vertex_labels};
use causeway_whatif::{Change, Predictor, Target};

/// Run the command.
pub fn run(a: &WhatIfArgs) -> Result<u8> {
    if a.edge.is_empty() && a.cpu.is_empty() && a.waits_on.is_empty() && a.site.is_empty() {
        bail!(
            "say what to change: --edge FROM->TO (or an edge id), --waits-on VERTEX, --site FUNCTION or --cpu VERTEX"
        );
    }
    let analysed = analyse(
        &a.traces,
        Analysis {
            opts: Options {
                merge: !a.graph.no_merge,
                ..Options::default()
            },
            graph: a.graph,
            waits: true,
        },
    )?;
    let f = &analysed.findings;
    let labels = vertex_labels(f);
    let mut changes = Vec::new();
    for spec in &a.edge {
        let (from, to) = edge(spec, f, &labels)?;
        changes.push(Change {
            target: Target::Edge { from, to },
            factor: a.factor,
        });
    }
    for spec in &a.waits_on {
        changes.push(Change {
            target: Target::WaitsOn {
                to: vertex(spec, &labels)?,
            },
            factor: a.factor,
        });
    }
    for function in &a.site {
        changes.push(Change {
            target: Target::Site {
                function: function.trim().to_string(),
            },
            factor: a.factor,
        });
    }
    for spec in &a.cpu {
        let v = vertex(spec, &labels)?;
        if !f.vertices[v].kind.is_thread() {
            bail!("--cpu {spec}: `{}` is not a thread vertex", labels[v]);
        }
        changes.push(Change {
            target: Target::Cpu { vertex: v },
            factor: a.factor,
        });
    }
    let waits = analysed.waits.as_ref().expect("asked for the wait map");
    let predictor = Predictor::new(&analysed.trace, f, waits)?;
    let prediction = predictor.predict(&changes)?;
    let view = WhatIfView::new(&labels, &prediction);
    output::emit_with(
        &view,
        output::format(a.json, false),
        &[("", &analysed.caveats)],
    )
}

/// A vertex by id or label: the exact label, else the one label starting with `spec`.
fn vertex(spec: &str, labels: &[String]) -> Result<usize> {
    let s = spec.trim();
    if let Ok(id) = s.parse::<usize>() {
        if id < labels.len() {
            return Ok(id);
        }
        bail!("no vertex {id}: the graph has {}", labels.len());
    }
    if let Some(i) = labels.iter().position(|l| l == s) {
        return Ok(i);
    }
    let starts: Vec<usize> = (0..labels.len())
        .filter(|&i| labels[i].starts_with(s))
        .collect();
    match starts.as_slice() {
        [one] => Ok(*one),
        [] => bail!(
            "no vertex is named `{s}`; the vertices are: {}",
            labels.join(", ")
        ),
        many => bail!(
            "`{s}` names several vertices: {}",
            many.iter()
                .map(|&i| labels[i].as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// An edge by id or as `FROM->TO`; it must be a wait edge of the graph.
fn edge(spec: &str, f: &Findings, labels: &[String]) -> Result<(usize, usize)> {
    let (from, to) = match spec.trim().parse::<usize>() {
        Ok(id) => match f.edges.get(id) {
            Some(e) => (e.from.0, e.to.0),
            None => bail!("no edge {id}: the graph has {}", f.edges.len()),
        },
        Err(_) => {
            let Some((a, b)) = spec.split_once("->") else {
                bail!("--edge {spec}: give an edge id or FROM->TO");
            };
            (vertex(a, labels)?, vertex(b, labels)?)
        }
    };
    let found = f
        .edges
        .iter()
        .find(|e| e.from.0 == from && e.to.0 == to && e.kind == EdgeKind::Wait);
    match found {
        Some(e) if e.direct_waits > 0 => Ok((from, to)),
        _ => bail!(
            "`{}` never waited for `{}` in this recording: there is no such wait edge",
            labels[from],
            labels[to]
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::vertex;

    fn labels() -> Vec<String> {
        ["consumer (12)", "producer (13)", "disk vda", "disk vdb"]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn vertices_are_found_by_id_label_or_unique_prefix() {
        let l = labels();
        assert_eq!(vertex("1", &l).unwrap(), 1);
        assert_eq!(vertex("disk vdb", &l).unwrap(), 3);
        assert_eq!(vertex("cons", &l).unwrap(), 0);
        let many = vertex("disk", &l).unwrap_err().to_string();
        assert!(many.contains("several"), "{many}");
        assert!(vertex("9", &l).is_err());
        assert!(
            vertex("nobody", &l)
                .unwrap_err()
                .to_string()
                .contains("consumer (12)")
        );
    }
}
