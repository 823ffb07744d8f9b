//! The HTML vocabulary of `kix verify --report`: escaping (every name and label a user wrote goes
//! through [`esc`], in text and in attribute values alike), the colour of each workload, the pod
//! glyphs (inline SVG with a `<title>` shown on hover) and the units nodes are described in.

use std::fmt::Write as _;

/// `text` safe inside an HTML text node or a double- or single-quoted attribute value.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The colour of the `index`th workload of a cluster: hues a golden angle apart, so neighbours in
/// the legend differ and any number of workloads gets a colour (integer hue: the same bytes on
/// every machine).
pub fn colour(index: usize) -> String {
    let hue = (index as u64 * 137_508 / 1000) % 360;
    let lightness = if index % 2 == 0 { 42 } else { 52 };
    format!("hsl({hue},65%,{lightness}%)")
}

/// How a pod is drawn in a view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Glyph {
    /// Bound here before and after (or in a view with no before).
    Kept,
    /// Bound here after the step, not before: a replacement or a new revision.
    New,
    /// Bound here before, gone after: lost, evicted or replaced by the update. Not a pod of the view.
    Lost,
    /// Still bound after the step, on a node that failed: Terminating or never evicted.
    Stranded,
}

impl Glyph {
    /// The word screen readers get, and the class.
    pub fn word(self) -> &'static str {
        match self {
            Glyph::Kept => "running",
            Glyph::New => "new",
            Glyph::Lost => "lost",
            Glyph::Stranded => "stranded",
        }
    }
}

/// One pod glyph: a rounded square in the workload's colour. Lost pods are drawn as a dashed,
/// crossed outline and carry class `ghost`, not `pod`, so a view's `.pod` elements are exactly
/// the pods bound in it.
pub fn glyph(out: &mut String, glyph: Glyph, workload_key: &str, colour: &str, title: &str) {
    let class = if glyph == Glyph::Lost { "ghost" } else { "pod" };
    let _ = write!(
        out,
        "<svg class=\"{class} {}\" data-workload=\"{}\" width=\"16\" height=\"16\" viewBox=\"0 0 16 16\" aria-hidden=\"true\"><title>{}</title>",
        glyph.word(),
        esc(workload_key),
        esc(title)
    );
    let _ = match glyph {
        Glyph::Kept => write!(out, "<rect x=\"1\" y=\"1\" width=\"14\" height=\"14\" rx=\"3\" fill=\"{colour}\"/>"),
        Glyph::New => write!(
            out,
            "<rect x=\"1\" y=\"1\" width=\"14\" height=\"14\" rx=\"3\" fill=\"{colour}\"/><circle cx=\"8\" cy=\"8\" r=\"3\" fill=\"#fff\"/>"
        ),
        Glyph::Lost => write!(
            out,
            "<rect x=\"1.5\" y=\"1.5\" width=\"13\" height=\"13\" rx=\"3\" fill=\"none\" stroke=\"{colour}\" stroke-dasharray=\"2 2\"/><path d=\"M4 4L12 12M12 4L4 12\" stroke=\"{colour}\" stroke-width=\"1.5\"/>"
        ),
        Glyph::Stranded => write!(
            out,
            "<rect x=\"1\" y=\"1\" width=\"14\" height=\"14\" rx=\"3\" fill=\"{colour}\" fill-opacity=\"0.35\" stroke=\"{colour}\"/><path d=\"M4 12L12 4\" stroke=\"#b00020\" stroke-width=\"2\"/>"
        ),
    };
    out.push_str("</svg>");
}

/// A swatch of a workload's colour, for the legend and tables.
pub fn swatch(colour: &str) -> String {
    format!(
        "<svg class=\"swatch\" width=\"12\" height=\"12\" viewBox=\"0 0 12 12\" aria-hidden=\"true\"><rect width=\"12\" height=\"12\" rx=\"2\" fill=\"{colour}\"/></svg>"
    )
}

/// Millicores as people write them: `4 cpu`, `3500m cpu`.
pub fn cpu(milli: i64) -> String {
    if milli % 1000 == 0 { format!("{} cpu", milli / 1000) } else { format!("{milli}m cpu") }
}

/// Bytes in the largest binary unit that divides them, up to Ti (`16Gi`, `7104Mi`).
pub fn memory(bytes: i64) -> String {
    const UNITS: [(&str, i64); 4] = [("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)];
    for (unit, size) in UNITS {
        if bytes >= size && bytes % size == 0 {
            return format!("{}{unit}", bytes / size);
        }
    }
    format!("{bytes}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn esc_escapes_markup_and_both_quotes() {
        assert_eq!(esc("<script>alert('x\"&')</script>"), "&lt;script&gt;alert(&#39;x&quot;&amp;&#39;)&lt;/script&gt;");
        assert_eq!(esc("web-1.3"), "web-1.3");
    }

    #[test]
    fn units_read_as_kubectl_writes_them() {
        assert_eq!(cpu(4000), "4 cpu");
        assert_eq!(cpu(3500), "3500m cpu");
        assert_eq!(memory(16 << 30), "16Gi");
        assert_eq!(memory(7104 << 20), "7104Mi");
        assert_eq!(memory(1000), "1000");
    }

    #[test]
    fn neighbouring_workloads_get_different_colours() {
        let colours: std::collections::BTreeSet<String> = (0..24).map(colour).collect();
        assert_eq!(colours.len(), 24);
    }
}
