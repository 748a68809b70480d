//! What every picture shares: escaping text for SVG and HTML, tick labels,
//! and writing a chart as SVG or, when the file name ends in `.png`, as a
//! PNG rendered with resvg (text drawn with a system font).

use std::path::Path;
use std::sync::Arc;

use resvg::{tiny_skia, usvg};

use crate::Error;

/// Text for SVG or HTML: element content and double-quoted attributes.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `v` with `sig` significant digits, without trailing zeros.
fn significant(v: f64, sig: usize) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    if v.abs() >= 1e5 || v.abs() < 1e-3 {
        let digits = sig.saturating_sub(1);
        return format!("{v:.digits$e}");
    }
    let digits = (sig as i32 - 1 - v.abs().log10().floor() as i32).max(0) as usize;
    let t = format!("{v:.digits$}");
    if t.contains('.') {
        t.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        t
    }
}

/// Labels for the ticks of an axis: 3 significant digits, more where a
/// narrow range would otherwise show two ticks with the same label.
pub fn tick_labels(values: &[f64]) -> Vec<String> {
    let mut labels = Vec::new();
    for sig in 3..=9 {
        labels = values.iter().map(|&v| significant(v, sig)).collect();
        let distinct = labels
            .windows(2)
            .zip(values.windows(2))
            .all(|(l, v)| l[0] != l[1] || v[0] == v[1]);
        if distinct {
            break;
        }
    }
    labels
}

/// Whether a picture is to be written as PNG (by the file's extension).
pub fn is_png(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"))
}

/// Writes `svg` to `path`: as it is, or rendered to PNG for `.png`.
pub fn write_picture(path: &Path, svg: &str) -> Result<(), Error> {
    let bytes = if is_png(path) {
        svg_to_png(svg)?
    } else {
        svg.as_bytes().to_vec()
    };
    std::fs::write(path, bytes).map_err(|e| Error::write(path, e))
}

/// Families tried, in order, for the charts' `sans-serif` text.
const SANS: [&str; 6] = [
    "DejaVu Sans",
    "Liberation Sans",
    "Noto Sans",
    "FreeSans",
    "Arial",
    "Helvetica",
];

/// The system's fonts, with `sans-serif` mapped to one that exists; an
/// error when there is none (a PNG without its labels would mislead).
fn fonts() -> Result<(usvg::fontdb::Database, String), Error> {
    let mut db = usvg::fontdb::Database::new();
    db.load_system_fonts();
    let families: Vec<&str> = db
        .faces()
        .flat_map(|f| f.families.iter().map(|(name, _)| name.as_str()))
        .collect();
    let family = SANS
        .iter()
        .find(|s| families.contains(s))
        .copied()
        .or_else(|| families.first().copied())
        .map(str::to_owned);
    let Some(family) = family else {
        return Err(Error::Picture(
            "no font found to draw the chart's labels in a PNG; install one (Debian: fonts-dejavu-core) or write SVG instead".into(),
        ));
    };
    db.set_sans_serif_family(family.clone());
    Ok((db, family))
}

/// Renders an SVG document to PNG, one pixel per SVG unit.
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>, Error> {
    let (db, family) = fonts()?;
    let opt = usvg::Options {
        font_family: family,
        fontdb: Arc::new(db),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &opt)
        .map_err(|e| Error::Picture(format!("cannot read the chart's SVG: {e}")))?;
    let size = tree.size().to_int_size();
    let Some(mut pixmap) = tiny_skia::Pixmap::new(size.width(), size.height()) else {
        return Err(Error::Picture(format!(
            "the chart has no area ({} x {} px)",
            size.width(),
            size.height()
        )));
    };
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap
        .encode_png()
        .map_err(|e| Error::Picture(format!("cannot encode the PNG: {e}")))
}

#[cfg(test)]
mod tests {
    use super::{escape, significant, svg_to_png, tick_labels};
    use resvg::tiny_skia::Pixmap;

    /// Dark pixels of an SVG rendered to PNG.
    fn dark_pixels(svg: &str) -> usize {
        let png = svg_to_png(svg).expect("renders");
        let pixmap = Pixmap::decode_png(&png).expect("decodes");
        assert_eq!((pixmap.width(), pixmap.height()), (200, 40));
        pixmap
            .pixels()
            .iter()
            .filter(|p| p.demultiply().red() < 100)
            .count()
    }

    #[test]
    fn png_has_the_labels() {
        let text = r#"<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40" font-family="sans-serif" font-size="20"><text x="5" y="28">ranks 1024</text></svg>"#;
        let blank = r#"<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40"></svg>"#;
        assert_eq!(dark_pixels(blank), 0);
        assert!(dark_pixels(text) > 100, "the text was drawn");
    }

    fn short(v: f64) -> String {
        significant(v, 3)
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape(r#"<a href="x">&</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
        );
    }

    #[test]
    fn labels_of_ticks() {
        assert_eq!(short(0.0), "0");
        assert_eq!(short(12.5), "12.5");
        assert_eq!(short(100.0), "100");
        assert_eq!(short(0.123_456), "0.123");
        assert_eq!(short(2e6), "2.00e6");
        assert_eq!(
            tick_labels(&[0.0072, 0.007205, 0.00721]),
            ["0.0072", "0.007205", "0.00721"]
        );
    }
}
