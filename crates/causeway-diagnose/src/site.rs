//! Where a vertex's thread was in the program's own code: for a wait, the program's
//! frames of the stack it blocked in; for a run, of the stacks its on-CPU samples
//! fell in, grouped by those frames (samples of one hot loop land at many
//! addresses inside the library it runs, so its stacks differ only below the
//! program's call). The rule of what is the program's is `causeway-model`'s
//! [`OwnCode`].

use crate::graph::{Vertex, VertexKind};
use causeway_format::{FrameId, StackId, Tables};
use causeway_model::{OwnCode, OwnFrames};
use std::collections::HashMap;

/// A vertex's place in the program's own code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramSite {
    /// The user stack the frames index: a wait's switch-out stack, or a run's most
    /// sampled stack at the site.
    pub stack: StackId,
    /// The program's own frames of that stack, and its library context.
    pub own: OwnFrames,
    /// For a run: its samples at this site (the program's same frames).
    pub samples: u32,
}

/// The program's own code where vertex `v` waited or ran; `None` when its stacks
/// hold no frame of the program's (or it has none).
pub fn program_site(code: &OwnCode<'_>, v: &Vertex) -> Option<ProgramSite> {
    match v.kind {
        VertexKind::Wait => {
            let stack = v.stack.and_then(|s| s.user)?;
            let own = code.of_stack(stack).filter(|o| !o.is_empty())?;
            Some(ProgramSite {
                stack,
                own,
                samples: 0,
            })
        }
        VertexKind::Exec => hot_site(code, &v.samples),
    }
}

/// The site holding most samples, with its most sampled stack. Samples come most
/// first, so within a site the first stack seen is its most sampled.
fn hot_site(code: &OwnCode<'_>, samples: &[(Option<StackId>, u32)]) -> Option<ProgramSite> {
    let tables = code.tables();
    // By the own frames' functions: the same call at different instructions (a
    // different return address) is one site.
    let mut by: HashMap<Vec<&str>, (u32, StackId, OwnFrames, usize)> = HashMap::new();
    for (order, &(stack, n)) in samples.iter().enumerate() {
        let Some(stack) = stack else { continue };
        let Some(own) = code.of_stack(stack).filter(|o| !o.is_empty()) else {
            continue;
        };
        let key = functions(tables, stack, &own);
        let e = by.entry(key).or_insert((0, stack, own, order));
        e.0 += n;
    }
    // Most samples, then the site whose first stack came first (deterministic).
    let (n, stack, own, _) = by
        .into_values()
        .max_by(|a, b| a.0.cmp(&b.0).then(b.3.cmp(&a.3)))?;
    Some(ProgramSite {
        stack,
        own,
        samples: n,
    })
}

fn functions<'t>(tables: &'t Tables, stack: StackId, own: &OwnFrames) -> Vec<&'t str> {
    let frames: &[FrameId] = tables.stack(stack).map_or(&[], |s| &s.frames);
    frames
        .get(own.own.clone())
        .unwrap_or(&[])
        .iter()
        .filter_map(|&f| tables.frame(f).map(|fr| tables.string(fr.symbol)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Options, build};
    use causeway_format::{
        Frame, FrameSpace, Header, ProcessInfo, Stack, StackKind, StringId, TaskState, Tgid,
        Timestamp,
    };
    use causeway_model::Trace;
    use causeway_testkit::synth::{Synth, named_tables};

    /// `server` (tid 2 of process 2, `/usr/bin/node`) runs 20 ms; its samples fall in
    /// three stacks: two inside the hash below `slowHandler` (different leaves), one
    /// in `render`.
    fn trace() -> Trace {
        let mut t = named_tables(&[(1, 1, "client"), (2, 2, "server")]);
        let s = |t: &mut Tables, x: &str| {
            t.strings.push(x.to_string());
            StringId(t.strings.len() as u32 - 1)
        };
        let exe = s(&mut t, "/usr/bin/node");
        let jit = s(&mut t, "[jit]");
        t.processes.push(ProcessInfo {
            tgid: Tgid(2),
            parent: None,
            since: Timestamp(0),
            exe,
            cmdline: exe,
        });
        let names = [
            (exe, "sha256_block"),
            (exe, "HMAC_Final"),
            (exe, "PKCS5_PBKDF2_HMAC"),
            (jit, "JS:^pbkdf2Sync node:internal/crypto/pbkdf2:62:20"),
            (jit, "JS:^slowHandler /srv/server.js:69:21"),
            (jit, "JS:*render /srv/server.js:9:1"),
        ];
        for (i, (m, n)) in names.into_iter().enumerate() {
            let n = s(&mut t, n);
            let space = FrameSpace::User { tgid: Tgid(2) };
            t.frames.push(Frame::new(space, 0x100 + i as u64, m, n, 0));
        }
        let stack = |f: &[u32]| Stack {
            frames: f.iter().map(|&i| FrameId(i)).collect(),
            truncated: false,
        };
        t.stacks = vec![stack(&[0, 2, 3, 4]), stack(&[1, 2, 3, 4]), stack(&[5])];
        let mut sy = Synth::new();
        sy.switch(0, 0, 0, TaskState::RUNNABLE, 2);
        // Stack 2 is the most sampled one; stacks 0 and 1 together hold more.
        for (i, st) in [2, 2, 2, 0, 0, 1, 1].into_iter().enumerate() {
            let ts = 1_000_000 * (i as u64 + 1);
            sy.stack(ts, 0, 2, StackKind::Sample, Some(st), None);
        }
        sy.switch(20_000_000, 0, 2, TaskState::INTERRUPTIBLE, 0);
        Trace::from_events(t, Header::synthetic(1), &sy.events())
    }

    #[test]
    fn a_run_is_placed_at_the_program_frames_most_of_its_samples_share() {
        let t = trace();
        let g = build(&t, &[], &Options::default());
        let code = OwnCode::new(t.tables());
        let run = g
            .vertices()
            .iter()
            .find(|v| v.kind == VertexKind::Exec && v.tid.0 == 2 && !v.samples.is_empty())
            .expect("the server's run");
        let site = program_site(&code, run).expect("a site");
        assert_eq!(site.samples, 4, "{site:?}");
        let top = t.tables().stack(site.stack).unwrap();
        let own = top.frames[site.own.own.clone()].to_vec();
        assert_eq!(
            own,
            vec![FrameId(4)],
            "slowHandler, not pbkdf2Sync: {site:?}"
        );
        assert_eq!(site.own.entry.map(|i| top.frames[i]), Some(FrameId(3)));
        assert_eq!(site.own.leaf, Some(0));
    }
}
