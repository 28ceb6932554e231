//! Diagrams a chapter page shows, drawn on the server from runs of the model: ladder diagrams
//! of a verbs session's frames, the QP state diagram from the `modify_qp` table, and (in the
//! page's script, from the lab's own charts) a lab's queue and PAUSE timelines.
//!
//! Every diagram is an SVG string in the page's language, sized by its `viewBox` so it
//! scales to the column on a phone.

pub mod ladder;
pub mod qpstate;

/// Escapes text for SVG and HTML.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// An SVG being written: a fixed coordinate system, scaled to the page's width.
pub struct Svg {
    w: f64,
    h: f64,
    class: &'static str,
    title: String,
    defs: String,
    body: String,
}

impl Svg {
    /// A `w` × `h` drawing with CSS class `class`.
    pub fn new(w: f64, h: f64, class: &'static str) -> Svg {
        Svg {
            w,
            h,
            class,
            title: String::new(),
            defs: String::new(),
            body: String::new(),
        }
    }

    /// The accessible title (also shown as the drawing's tooltip).
    pub fn title(&mut self, t: &str) {
        self.title = esc(t);
    }

    /// An arrowhead marker `id` in `color`.
    pub fn marker(&mut self, id: &str, color: &str) {
        self.defs.push_str(&format!(
            r#"<marker id="{id}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{color}"/></marker>"#
        ));
    }

    /// Appends SVG elements as they are.
    pub fn raw(&mut self, s: &str) {
        self.body.push_str(s);
    }

    /// Sets the height (drawings that grow with their content).
    pub fn set_height(&mut self, h: f64) {
        self.h = h;
    }

    /// The finished `<svg>`.
    pub fn finish(self) -> String {
        format!(
            r#"<svg class="diagram {}" viewBox="0 0 {} {}" role="img" aria-label="{}" font-family="system-ui, sans-serif" font-size="13"><title>{}</title><defs>{}</defs>{}</svg>"#,
            self.class, self.w, self.h, self.title, self.title, self.defs, self.body
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn text_is_escaped() {
        assert_eq!(super::esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
