//! Pictures as PNG: `sweep --plot out.png` and `run --comm-matrix out.png`
//! render the SVG charts with resvg (text from a system font).

mod support;

use std::path::PathBuf;

use resvg::tiny_skia::Pixmap;

/// Runs parsim and asserts that it succeeds.
fn parsim(args: &[&str]) {
    let o = support::parsim(args);
    assert!(o.status.success(), "{}", support::stderr(&o));
}

/// Decodes a PNG and checks it is not blank: a light background, the
/// given colour in quantity, and dark pixels (axes and labels).
fn check_png(path: &PathBuf, size: (u32, u32), colour: (u8, u8, u8)) {
    let bytes = std::fs::read(path).expect("PNG written");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "PNG signature");
    let pixmap = Pixmap::decode_png(&bytes).expect("decodes");
    assert_eq!((pixmap.width(), pixmap.height()), size);
    let px: Vec<_> = pixmap.pixels().iter().map(|p| p.demultiply()).collect();
    let light = px
        .iter()
        .filter(|c| c.red() >= 240 && c.green() >= 240 && c.blue() >= 240)
        .count();
    let dark = px
        .iter()
        .filter(|c| c.red() < 80 && c.green() < 80 && c.blue() < 80)
        .count();
    let coloured = px
        .iter()
        .filter(|c| {
            c.red().abs_diff(colour.0) < 10
                && c.green().abs_diff(colour.1) < 10
                && c.blue().abs_diff(colour.2) < 10
        })
        .count();
    let n = px.len();
    assert!(light > n / 2, "mostly a light background: {light} of {n}");
    assert!(dark > 800, "axes and labels: {dark} dark pixels");
    assert!(coloured > 300, "{coloured} pixels of {colour:?}");
}

#[test]
fn sweep_plot_as_png() {
    let dir = support::temp_dir();
    let png = dir.join("heat-sweep.png");
    parsim(&[
        "sweep",
        "examples/heat.mpl",
        "--ranks",
        "1,2,4,8",
        "--machine",
        "examples/machines/myrinet.toml",
        "--machine",
        "examples/machines/fast-ethernet.toml",
        "--param",
        "iters=5",
        "--weak",
        "--plot",
        png.to_str().expect("utf-8"),
    ]);
    // Three 360-pixel panels and margins; 260 + 60 + 22 per curve high.
    check_png(&png, (1100, 364), (0x1f, 0x77, 0xb4));
}

#[test]
fn comm_matrix_heat_map_as_png() {
    let dir = support::temp_dir();
    let png = dir.join("net-matrix.png");
    let csv = png.with_extension("csv");
    parsim(&[
        "run",
        "examples/net.mpl",
        "--ranks",
        "6",
        "--param",
        "iters=2",
        "--comm-matrix",
        png.to_str().expect("utf-8"),
    ]);
    let text = std::fs::read_to_string(&csv).expect("the CSV next to the PNG");
    assert!(text.starts_with("source,destination,messages,bytes,seconds\n"));
    // The 512-pixel matrix with its margins; the fullest cells dark red.
    check_png(&png, (712, 622), (175, 0, 0));
}
