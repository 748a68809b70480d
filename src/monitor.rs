//! `parsim run --monitor`: the ParJava-style live view of the ranks in the
//! terminal. One coloured cell per rank (or per group of ranks on a small
//! terminal): green computing, yellow communicating, red waiting, grey
//! finished; redrawn at most five times a second from the engine's
//! progress callback. `p` or space pauses the simulation (the callback
//! waits) and resumes it, `q` (or Esc, Ctrl-C) stops it.
//!
//! Drawn on stderr in the alternate screen, so the report on stdout is
//! printed as usual once the view closes. Without a terminal on both
//! stdout and stderr there is no view and the run goes on silently.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use app::rank_grid::Grid;
use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use crossterm::style::{Color, Print, ResetColor, SetBackgroundColor, SetForegroundColor};
use crossterm::terminal::{self, ClearType};
use crossterm::{cursor, execute, queue};
use sim_core::engine::{Progress, RankState};

/// The least time between two frames.
const FRAME: Duration = Duration::from_millis(200);

/// The states in drawing order, with their colour, glyph and name.
const STATES: [(RankState, Color, char, &str); 4] = [
    (RankState::Computing, Color::Green, 'c', "computing"),
    (
        RankState::Communicating,
        Color::Yellow,
        'o',
        "communicating",
    ),
    (RankState::Waiting, Color::Red, 'w', "waiting"),
    (RankState::Finished, Color::DarkGrey, '.', "finished"),
];

fn style(s: RankState) -> (Color, char) {
    STATES
        .iter()
        .find(|(state, ..)| *state == s)
        .map_or((Color::Reset, '?'), |(_, c, g, _)| (*c, *g))
}

pub struct Monitor {
    start: Instant,
    /// Time spent paused (not counted in events per second).
    paused_for: Duration,
    last_frame: Option<Instant>,
    states: Vec<RankState>,
}

impl Monitor {
    /// Takes over the terminal; None (silently) without one.
    pub fn start() -> Option<Monitor> {
        if !std::io::stdout().is_terminal() || !std::io::stderr().is_terminal() {
            return None;
        }
        terminal::enable_raw_mode().ok()?;
        if execute!(
            std::io::stderr(),
            terminal::EnterAlternateScreen,
            cursor::Hide
        )
        .is_err()
        {
            restore();
            return None;
        }
        Some(Monitor {
            start: Instant::now(),
            paused_for: Duration::ZERO,
            last_frame: None,
            states: Vec::new(),
        })
    }

    /// Called from the engine's progress callback: handles keys, redraws
    /// when a frame is due, and holds the simulation while paused.
    pub fn update(&mut self, p: &Progress) {
        let mut paused = false;
        let mut paused_at = Instant::now();
        loop {
            let mut redraw = false;
            while event::poll(Duration::ZERO).unwrap_or(false) {
                match event::read() {
                    Ok(Event::Key(k)) if k.kind != KeyEventKind::Release => match k.code {
                        KeyCode::Char('p') | KeyCode::Char(' ') => {
                            paused = !paused;
                            if paused {
                                paused_at = Instant::now();
                            } else {
                                self.paused_for += paused_at.elapsed();
                            }
                            redraw = true;
                        }
                        KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                            quit(p)
                        }
                        KeyCode::Char('q') | KeyCode::Esc => quit(p),
                        _ => {}
                    },
                    Ok(Event::Resize(..)) => redraw = true,
                    _ => {}
                }
            }
            let due = self.last_frame.is_none_or(|t| t.elapsed() >= FRAME);
            if redraw || (due && !paused) {
                self.draw(p, paused);
            }
            if !paused {
                return;
            }
            // Paused: the engine waits here for the next key.
            let _ = event::poll(FRAME);
        }
    }

    fn draw(&mut self, p: &Progress, paused: bool) {
        self.last_frame = Some(Instant::now());
        p.rank_states(&mut self.states);
        let (width, height) = terminal::size().unwrap_or((80, 24));
        let running = self.start.elapsed().saturating_sub(self.paused_for);
        let rate = p.events as f64 / running.as_secs_f64().max(1e-9) / 1e6;
        // Two columns per cell; the grid gets the rows below the 4 text lines.
        let grid = Grid::new(
            &self.states,
            usize::from(width / 2),
            usize::from(height.saturating_sub(5)),
        );
        let group = grid.group;
        let mut err = std::io::stderr().lock();
        let mut lines = vec![
            format!(
                "parsim monitor: model time {:.6} s, {rate:.1} M events/s, {} of {} ranks finished",
                p.sim_time, p.finished, p.ranks
            ),
            STATES
                .iter()
                .map(|(state, _, _, name)| format!("{name} {}", grid.count(*state)))
                .collect::<Vec<_>>()
                .join(", "),
        ];
        lines.push(if paused {
            "PAUSED: the simulation waits; p or space resumes, q quits".to_owned()
        } else if group > 1 {
            format!("running; each cell is {group} ranks (their most common state)")
        } else {
            "running; p or space pauses, q quits".to_owned()
        });
        let _ = queue!(err, cursor::MoveTo(0, 0));
        for (i, l) in lines.iter().enumerate() {
            let _ = queue!(
                err,
                cursor::MoveTo(0, i as u16),
                Print(l),
                terminal::Clear(ClearType::UntilNewLine)
            );
        }
        // The legend, as coloured cells.
        let _ = queue!(err, cursor::MoveTo(0, 3));
        for (_, colour, glyph, name) in STATES {
            let _ = queue!(
                err,
                SetBackgroundColor(colour),
                SetForegroundColor(Color::Black),
                Print(format!("{glyph} ")),
                ResetColor,
                Print(format!(" {name}   "))
            );
        }
        let _ = queue!(err, terminal::Clear(ClearType::UntilNewLine));
        for (row, cells) in grid.rows.iter().enumerate() {
            let _ = queue!(err, cursor::MoveTo(0, 4 + row as u16));
            for cell in cells {
                let (colour, glyph) = style(*cell);
                let _ = queue!(
                    err,
                    SetBackgroundColor(colour),
                    SetForegroundColor(Color::Black),
                    Print(format!("{glyph} "))
                );
            }
            let _ = queue!(err, ResetColor, terminal::Clear(ClearType::UntilNewLine));
        }
        let _ = queue!(err, ResetColor, terminal::Clear(ClearType::FromCursorDown));
        let _ = err.flush();
    }
}

/// Gives the terminal back: normal screen, cursor, cooked mode.
fn restore() {
    let _ = execute!(
        std::io::stderr(),
        ResetColor,
        cursor::Show,
        terminal::LeaveAlternateScreen
    );
    let _ = terminal::disable_raw_mode();
}

/// The user stopped the run: restore the terminal and exit (130, as for
/// an interrupt).
fn quit(p: &Progress) -> ! {
    restore();
    eprintln!(
        "stopped by the user at model time {:.6} s ({} events, {} of {} ranks finished)",
        p.sim_time, p.events, p.finished, p.ranks
    );
    std::process::exit(130);
}

impl Drop for Monitor {
    fn drop(&mut self) {
        restore();
    }
}
