//! `parsim run --monitor`: the live view of rank states, driven in tmux
//! (a real terminal): the grid and legend show, `p` pauses the simulation
//! and resumes it, `q` stops it. Without a terminal the run goes on
//! without the view.
//!
//! Without `tmux` on PATH the terminal test is skipped with a note, unless
//! CI=true or PARSIM_REQUIRE_TMUX is set.

mod support;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn without_a_terminal_the_run_is_silent() {
    let o = support::parsim_command()
        .args([
            "run",
            "examples/heat.mpl",
            "--ranks",
            "8",
            "--param",
            "iters=5",
            "--monitor",
        ])
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("predicted run time"), "{stdout}");
    assert!(!stdout.contains('\x1b') && !o.stderr.contains(&0x1b));
}

/// A tmux server of this test's own, killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", "mon"]).stdout).into_owned()
    }

    /// Waits up to 60 s for the screen to show `text`.
    fn wait_for(&self, text: &str) -> String {
        self.wait_until(&format!("`{text}`"), |s| s.contains(text))
    }

    /// The first screen (polled every 100 ms, for at most 60 s) that
    /// `ready` accepts; `what` names it in the failure.
    fn wait_until(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if ready(&s) {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "no {what} on the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn keys(&self, keys: &str) {
        let o = self.cmd(&["send-keys", "-t", "mon", keys]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

/// The model-time line of the monitor.
fn model_time(screen: &str) -> String {
    screen
        .lines()
        .find(|l| l.starts_with("parsim monitor:"))
        .and_then(|l| l.split(',').next())
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn the_monitor_shows_the_ranks_pauses_and_quits() {
    if !support::requires_tools(&["tmux"], "PARSIM_REQUIRE_TMUX") {
        return;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // A run of minutes: 256 ranks, 100,000 steps; `q` ends it.
    let command = format!(
        "{} run examples/heat.mpl --ranks 256 --param iters=100000 --monitor; echo EXIT=$?; sleep 60",
        env!("CARGO_BIN_EXE_parsim")
    );
    let tmux = Tmux {
        socket: format!("parsim-monitor-test-{}", std::process::id()),
    };
    let o = tmux.cmd(&[
        "new-session",
        "-d",
        "-s",
        "mon",
        "-x",
        "100",
        "-y",
        "30",
        "-c",
        dir.to_str().expect("utf-8"),
        &command,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // A capture can catch a frame half drawn (the header and the first
    // rows only): wait for one whose grid is complete, then check it.
    let screen = tmux.wait_until("a whole frame", |s| {
        s.contains("parsim monitor:") && grid_cells(s) == 256
    });
    for word in [
        "computing",
        "communicating",
        "waiting",
        "finished",
        "of 256 ranks",
    ] {
        assert!(screen.contains(word), "{word}:\n{screen}");
    }
    // The grid: rows of one-letter cells (50 cells across 100 columns),
    // 256 cells in all.
    assert_eq!(grid_cells(&screen), 256, "one cell per rank:\n{screen}");

    tmux.keys("p");
    let paused = tmux.wait_for("PAUSED");
    std::thread::sleep(Duration::from_millis(1500));
    let still = tmux.screen();
    assert!(still.contains("PAUSED"), "{still}");
    assert_eq!(
        model_time(&paused),
        model_time(&still),
        "model time stands still while paused"
    );

    tmux.keys("p");
    tmux.wait_for("running");

    tmux.keys("q");
    let end = tmux.wait_for("EXIT=");
    assert!(end.contains("EXIT=130"), "{end}");
    assert!(end.contains("stopped by the user"), "{end}");
}

/// The cells of the monitor's grid on `screen`: its rows of one-letter
/// cells (`c`, `o`, `w`, `.`) separated by spaces.
fn grid_cells(screen: &str) -> usize {
    screen
        .lines()
        .filter(|l| {
            let t = l.trim_end();
            t.len() > 2 && t.split(' ').all(|c| matches!(c, "c" | "o" | "w" | "."))
        })
        .map(|l| l.split_whitespace().count())
        .sum()
}
