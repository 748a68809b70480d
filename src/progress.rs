//! Progress of long work on stderr, one policy for every command that
//! has it (run, sweep, report's sweep): on a terminal a line rewritten in
//! place at most 5 times a second and erased at the end; otherwise (a batch
//! job's log, a pipe) a whole line every `--progress-every` seconds (10 by
//! default), the first one only after that long, so that short work prints
//! nothing. `--quiet` silences both.

use std::io::IsTerminal as _;
use std::time::{Duration, Instant};

/// Where progress goes and how often.
pub(crate) struct Reporter {
    start: Instant,
    last: Instant,
    terminal: bool,
    quiet: bool,
    /// Between two lines when stderr is not a terminal.
    every: Duration,
    /// A line is on the terminal that [`Reporter::finish`] must erase.
    shown: bool,
}

impl Reporter {
    /// `every`: seconds between lines when stderr is not a terminal.
    pub(crate) fn new(quiet: bool, every: f64) -> Reporter {
        let now = Instant::now();
        Reporter {
            start: now,
            last: now,
            terminal: std::io::stderr().is_terminal(),
            quiet,
            every: Duration::from_secs_f64(every.max(0.0)),
            shown: false,
        }
    }

    /// The time since the work started.
    pub(crate) fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Shows `line()` if it is time to; `line` is only built then.
    pub(crate) fn update(&mut self, line: impl FnOnce(&Reporter) -> String) {
        if self.quiet {
            return;
        }
        let now = Instant::now();
        let gap = if self.terminal {
            Duration::from_millis(200)
        } else {
            self.every
        };
        if now.duration_since(self.last) < gap {
            return;
        }
        self.last = now;
        let text = line(self);
        if self.terminal {
            eprint!("\r\x1b[2K[parsim] {text}");
            self.shown = true;
        } else {
            eprintln!("[parsim] {text}");
        }
    }

    /// Erases the terminal's progress line, if one is shown.
    pub(crate) fn finish(&mut self) {
        if self.shown {
            eprint!("\r\x1b[2K");
            self.shown = false;
        }
    }
}

/// Progress of work that reports no counts (a fit): a thread that says
/// which stage is running, with the time elapsed, under [`Reporter`]'s
/// policy, until [`Ticker::finish`].
pub(crate) struct Ticker {
    stage: std::sync::Arc<std::sync::Mutex<String>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Ticker {
    /// `what`: the work, as the lines name it ("calibrate net"); `first`:
    /// its first stage.
    pub(crate) fn start(what: &str, first: &str, quiet: bool, every: f64) -> Ticker {
        let stage = std::sync::Arc::new(std::sync::Mutex::new(first.to_owned()));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let thread = (!quiet).then(|| {
            let (stage, stop, what) = (stage.clone(), stop.clone(), what.to_owned());
            std::thread::spawn(move || {
                let mut reporter = Reporter::new(false, every);
                // At least one report, however short the work (it shows
                // only when its time has come, as any other).
                loop {
                    let now = stage.lock().map(|s| s.clone()).unwrap_or_default();
                    reporter
                        .update(|r| format!("{what}: {now}, {} elapsed", duration(r.elapsed())));
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                reporter.finish();
            })
        });
        Ticker {
            stage,
            stop,
            thread,
        }
    }

    /// The stage now running.
    pub(crate) fn stage(&self, now: &str) {
        if let Ok(mut s) = self.stage.lock() {
            now.clone_into(&mut s);
        }
    }

    /// Stops the thread; its terminal line is erased.
    pub(crate) fn finish(mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            // A panicked ticker only loses progress lines.
            let _ = t.join();
        }
    }
}

/// "12.3 s" or "2 min 05 s": a duration for a progress line.
pub(crate) fn duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        format!("{s:.1} s")
    } else {
        let whole = s.round() as u64;
        format!("{} min {:02} s", whole / 60, whole % 60)
    }
}

/// "k of n jobs done (p%), T elapsed, about R left": work whose size is
/// known, the time left extrapolated from the rate so far.
pub(crate) fn counted(what: &str, done: usize, total: usize, elapsed: Duration) -> String {
    let pct = if total == 0 {
        100.0
    } else {
        100.0 * done as f64 / total as f64
    };
    let left = if done == 0 {
        "time left not known yet".to_owned()
    } else {
        let per = elapsed.as_secs_f64() / done as f64;
        format!(
            "about {} left",
            duration(Duration::from_secs_f64(per * (total - done) as f64))
        )
    };
    format!(
        "{what}: {done} of {total} done ({pct:.0}%), {} elapsed, {left}",
        duration(elapsed)
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn lines_say_how_far_and_how_long() {
        assert_eq!(super::duration(Duration::from_secs_f64(3.04)), "3.0 s");
        assert_eq!(super::duration(Duration::from_secs(125)), "2 min 05 s");
        assert_eq!(
            super::counted("simulations", 3, 12, Duration::from_secs(6)),
            "simulations: 3 of 12 done (25%), 6.0 s elapsed, about 18.0 s left"
        );
        assert_eq!(
            super::counted("simulations", 0, 4, Duration::from_secs(1)),
            "simulations: 0 of 4 done (0%), 1.0 s elapsed, time left not known yet"
        );
    }
}
