//! Flame graphs: folded stacks ([`causeway_stacks::Folded`]) as text for FlameGraph,
//! inferno or speedscope, as JSON, and as SVG drawn by the inferno crate.

use crate::error::ReportError;
use crate::view::{View, write_json};
use causeway_stacks::{FlameKind, Folded};
use inferno::flamegraph::{self, Palette, color::BasicPalette, color::MultiPalette};
use serde::Serialize;
use std::io::Write;

/// One flame graph made readable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlameView {
    kind: FlameKind,
    folded: Folded,
    title: String,
}

/// The JSON form: times are integer nanoseconds (`_ns`), on-CPU weights are sample
/// counts (`samples`); exactly one of the two is present.
#[derive(Serialize)]
struct Doc<'a> {
    kind: &'static str,
    #[serde(flatten)]
    total: Weight,
    stacks: Vec<StackDoc<'a>>,
}

#[derive(Serialize)]
struct StackDoc<'a> {
    /// Root first.
    frames: Vec<&'a str>,
    #[serde(flatten)]
    weight: Weight,
}

#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum Weight {
    WeightNs(u64),
    Samples(u64),
}

impl Weight {
    fn of(kind: FlameKind, w: u64) -> Weight {
        match kind {
            FlameKind::OnCpu => Weight::Samples(w),
            FlameKind::OffCpu | FlameKind::WakeChain => Weight::WeightNs(w),
        }
    }
}

impl FlameView {
    /// A view of `folded`, a flame graph of `kind`; `title` heads the SVG (the
    /// recording's wall-clock time goes there).
    pub fn new(kind: FlameKind, folded: Folded, title: String) -> FlameView {
        FlameView {
            kind,
            folded,
            title,
        }
    }

    /// Which flame graph.
    pub fn kind(&self) -> FlameKind {
        self.kind
    }

    /// The stacks.
    pub fn folded(&self) -> &Folded {
        &self.folded
    }

    /// Draw the flame graph as SVG. `interactive` keeps inferno's script (zoom and
    /// search when the SVG is opened alone); the HTML report embeds it without.
    pub fn write_svg(&self, out: &mut dyn Write, interactive: bool) -> Result<(), ReportError> {
        let mut opts = svg_options(self.kind, &self.title, interactive);
        let text = self.folded.to_text();
        if self.folded.is_empty() {
            return Err(ReportError::Empty { view: self.name() });
        }
        flamegraph::from_lines(&mut opts, text.lines(), out)?;
        Ok(())
    }
}

/// inferno's options for one kind: the palette FlameGraph users know for it (hot for
/// on-CPU, blue for off-CPU, wake-up colours for chains) and a fixed colour per name.
pub(crate) fn svg_options(
    kind: FlameKind,
    title: &str,
    interactive: bool,
) -> flamegraph::Options<'static> {
    let mut o = flamegraph::Options::default();
    o.title = title.to_string();
    o.count_name = kind.unit().to_string();
    o.colors = match kind {
        FlameKind::OnCpu => Palette::Basic(BasicPalette::Hot),
        FlameKind::OffCpu => Palette::Basic(BasicPalette::Io),
        FlameKind::WakeChain => Palette::Multi(MultiPalette::Wakeup),
    };
    o.hash = true;
    o.deterministic = true;
    o.no_javascript = !interactive;
    o
}

impl View for FlameView {
    fn name(&self) -> &'static str {
        "flamegraph"
    }

    /// Some stack was folded.
    fn found(&self) -> bool {
        !self.folded.is_empty()
    }

    /// The folded text.
    fn write_text(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        out.write_all(self.folded.to_text().as_bytes())?;
        Ok(())
    }

    fn write_json(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        let doc = Doc {
            kind: self.kind.name(),
            total: Weight::of(self.kind, self.folded.total()),
            stacks: self
                .folded
                .iter()
                .map(|(k, w)| StackDoc {
                    frames: k.split(';').collect(),
                    weight: Weight::of(self.kind, w),
                })
                .collect(),
        };
        write_json(self.name(), &doc, out)
    }
}
