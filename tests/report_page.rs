//! `parsim report`: one self-contained HTML page, checked as text and in
//! headless Chromium (the page loads without script errors, every section
//! and chart is there, a screenshot shows the charts).
//!
//! Without `chromium` on PATH the browser half is skipped with a note,
//! unless CI=true or PARSIM_REQUIRE_CHROMIUM is set, where that is a failure.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use resvg::tiny_skia::Pixmap;

const SECTIONS: [&str; 7] = [
    "summary",
    "breakdown",
    "last",
    "critical-path",
    "scaling",
    "comm-matrix",
    "timeline",
];

/// Runs `parsim report` and returns the page.
fn report(args: &[&str], html: &Path) -> String {
    let o = support::parsim_command()
        .arg("report")
        .args(args)
        .arg("-o")
        .arg(html)
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(html).expect("page written")
}

/// The heat example on Fast Ethernet (so that communication and waiting
/// show) with a scaling study on two networks.
fn heat_page(dir: &Path) -> (PathBuf, String) {
    let html = dir.join("heat.html");
    let text = report(
        &[
            "examples/heat.mpl",
            "--ranks",
            "8",
            "--param",
            "iters=10",
            "--param",
            "n=200",
            "--machine",
            "examples/machines/fast-ethernet.toml",
            "--sweep",
            "1,2,4,8",
            "--sweep-machine",
            "examples/machines/myrinet.toml",
            "examples/machines/fast-ethernet.toml",
        ],
        &html,
    );
    (html, text)
}

fn net_page(dir: &Path) -> (PathBuf, String) {
    let html = dir.join("net.html");
    let text = report(
        &["examples/net.mpl", "--ranks", "6", "--param", "iters=5"],
        &html,
    );
    (html, text)
}

#[test]
fn the_page_is_self_contained_and_complete() {
    let dir = support::temp_dir();
    let (_, heat) = heat_page(&dir);
    for id in SECTIONS {
        assert!(heat.contains(&format!("<section id=\"{id}\">")), "{id}");
    }
    // Breakdown, sweep plot, heat map, timeline.
    assert_eq!(heat.matches("<svg").count(), 4);
    assert!(heat.contains("myrinet") && heat.contains("fast-ethernet"));
    assert!(heat.contains("compute stencil"), "critical path operations");
    // Nothing is loaded from elsewhere: the only URL is SVG's namespace.
    let urls: Vec<&str> = heat
        .match_indices("http")
        .map(|(i, _)| &heat[i..(i + 30).min(heat.len())])
        .filter(|u| !u.starts_with("http://www.w3.org/2000/svg"))
        .collect();
    assert!(urls.is_empty(), "external references: {urls:?}");
    assert!(!heat.contains("<link") && !heat.contains("@import") && !heat.contains(" src="));

    let (_, net) = net_page(&dir);
    assert!(net.contains("No scaling study"));
    assert_eq!(net.matches("<svg").count(), 3);
}

#[test]
fn text_from_the_program_is_escaped() {
    let dir = support::temp_dir();
    let prog = dir.join("a<b>&\"c\".mpl");
    std::fs::write(
        &prog,
        "kernel k(n) cost 1e-6 * n\ncompute k(3)\nif rank == 0 { print(\"<script>alert(1)</script>\") }\n\
         if rank == 0 { send(to: 1, bytes: 8) } else if rank == 1 { recv(from: 0, bytes: 8) }\n",
    )
    .expect("write");
    let html = dir.join("page.html");
    let text = report(&[prog.to_str().expect("utf-8"), "--ranks", "2"], &html);
    assert!(!text.contains("<script>alert"), "print output is escaped");
    assert!(text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!text.contains("a<b>"), "the file name is escaped");
    assert!(text.contains("a&lt;b&gt;&amp;&quot;c&quot;.mpl"));
    // Two scripts of the page's own, nothing else.
    assert_eq!(text.matches("<script>").count(), 2);
}

#[test]
fn many_ranks_are_grouped_and_have_no_timeline() {
    let dir = support::temp_dir();
    let html = dir.join("page.html");
    let text = report(
        &[
            "examples/heat.mpl",
            "--ranks",
            "1000",
            "--param",
            "iters=2",
            "--param",
            "n=100",
        ],
        &html,
    );
    assert!(
        text.contains("1000 ranks are shown as 250 groups of 4"),
        "breakdown grouped"
    );
    assert!(text.contains("No timeline for 1000 ranks"));
    assert!(
        text.contains("cells are blocks of 4 ranks"),
        "heat map blocks"
    );
}

/// `chromium` (or `chromium-browser`) on PATH.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| [d.join("chromium"), d.join("chromium-browser")])
        .find(|p| p.is_file())
}

/// The browser, or None after a skip note (a failure under CI; see
/// `support::requires`).
fn browser() -> Option<PathBuf> {
    let found = chromium();
    support::requires(
        "`chromium` (or `chromium-browser`) on the PATH",
        found.is_some(),
        "PARSIM_REQUIRE_CHROMIUM",
    );
    found
}

/// Runs headless Chromium on a page with extra arguments, killed after 90 s.
fn headless(chromium: &Path, page: &Path, args: &[String]) -> Output {
    // A profile of its own per run: two browsers may not share one.
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, Ordering::Relaxed);
    let profile = page.with_extension(format!("profile{run}"));
    let out = page.with_extension(format!("stdout{run}"));
    let err = page.with_extension(format!("stderr{run}"));
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        // Files, not pipes: a page's DOM fills a pipe while we only wait.
        .stdout(std::fs::File::create(&out).expect("stdout file"))
        .stderr(std::fs::File::create(&err).expect("stderr file"))
        .spawn()
        .expect("chromium starts");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("chromium runs") {
            break status;
        }
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium took more than 90 s on {}", page.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: std::fs::read(&out).expect("stdout"),
        stderr: std::fs::read(&err).expect("stderr"),
    }
}

/// Script errors Chromium logged to stderr.
fn console_errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("Uncaught") || (l.contains("CONSOLE") && l.contains("rror")))
        .collect()
}

/// The DOM after load: the page's script ran to its end, no errors.
fn check_dom(chromium: &Path, page: &Path, svgs: usize) {
    let o = headless(chromium, page, &["--dump-dom".to_owned()]);
    let dom = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "chromium failed: {stderr}");
    assert!(
        console_errors(&stderr).is_empty(),
        "{:?}",
        console_errors(&stderr)
    );
    assert!(!dom.contains("data-errors=\""), "script errors: {dom}");
    assert!(
        dom.contains("data-ok=\"1\""),
        "the page's script did not finish"
    );
    assert!(
        dom.contains(&format!("data-svgs=\"{svgs}\"")),
        "expected {svgs} charts"
    );
    for id in SECTIONS {
        assert!(dom.contains(&format!("id=\"{id}\"")), "{id}");
    }
}

#[test]
fn chromium_loads_the_pages_without_errors() {
    let Some(chromium) = browser() else { return };
    let dir = support::temp_dir();
    let (heat, _) = heat_page(&dir);
    check_dom(&chromium, &heat, 4);
    let (net, _) = net_page(&dir);
    check_dom(&chromium, &net, 3);

    // The checks catch a failing script: the same page with an error.
    let broken = dir.join("broken.html");
    let text = std::fs::read_to_string(&net)
        .expect("page")
        .replace("</main>", "</main><script>noSuchFunction();</script>");
    std::fs::write(&broken, text).expect("write");
    let o = headless(&chromium, &broken, &["--dump-dom".to_owned()]);
    let dom = String::from_utf8_lossy(&o.stdout);
    assert!(
        dom.contains("data-errors=\""),
        "the error hook recorded nothing"
    );
    assert!(dom.contains("noSuchFunction"));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        !console_errors(&stderr).is_empty(),
        "chromium's log shows the error: {stderr}"
    );
}

#[test]
fn chromium_screenshot_shows_the_charts() {
    let Some(chromium) = browser() else { return };
    let dir = support::temp_dir();
    let (heat, _) = heat_page(&dir);
    let png = dir.join("heat.png");
    let o = headless(
        &chromium,
        &heat,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1200,2600".to_owned(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&png).expect("screenshot written");
    assert!(bytes.len() > 50_000, "a {} byte screenshot", bytes.len());
    let pixmap = Pixmap::decode_png(&bytes).expect("a PNG");
    assert_eq!((pixmap.width(), pixmap.height()), (1200, 2600));
    // The charts' colours are there in quantity: compute green and waiting
    // red (breakdown, timeline), the heat map's dark red, the sweep's blue.
    let count = |rgb: (u8, u8, u8)| {
        pixmap
            .pixels()
            .iter()
            .filter(|p| {
                let c = p.demultiply();
                c.red().abs_diff(rgb.0) < 8
                    && c.green().abs_diff(rgb.1) < 8
                    && c.blue().abs_diff(rgb.2) < 8
            })
            .count()
    };
    for (name, rgb) in [
        ("compute green", (0x43, 0xa0, 0x47)),
        ("waiting red", (0xe5, 0x39, 0x35)),
        ("sweep blue", (0x1f, 0x77, 0xb4)),
        ("heat map red", (175, 0, 0)),
    ] {
        let n = count(rgb);
        assert!(n > 200, "{name}: {n} pixels");
    }
}
