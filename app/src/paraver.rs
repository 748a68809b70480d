//! A run's timeline as a Paraver trace (`parsim run --trace out.prv`): the
//! `.prv` records, the `.pcf` names and colours, the `.row` row names, as
//! BSC's Paraver (and Dimemas's users) read them.
//!
//! Format (BSC, "Paraver trace file format", version 1):
//! - header `#Paraver (dd/mm/yyyy at hh:mm):FTIME_ns:1(N):1:N(1:1,...)`:
//!   one node of N CPUs, one application of N tasks with one thread each;
//! - state records `1:cpu:appl:task:thread:begin:end:state`;
//! - event records `2:cpu:appl:task:thread:time:type:value`;
//! - communication records `3:cpu:appl:task:thread:lsend:psend:cpu:appl:
//!   task:thread:lrecv:precv:size:tag`;
//!
//! all ids from 1, times in integer nanoseconds, records sorted by time.
//! Rank r is task r + 1 on CPU r + 1.
//!
//! States: 1 Running (compute), 4 Communication (the CPU overheads of an
//! MPI call), 3 Waiting a message (the blocked part of a call, placed at
//! its end: a call waits for its partner, then returns). Events: type
//! 90000001 names the kernel or operation of each interval (value = its
//! index in the `.pcf`, 0 at its end), type 90000002 its source line.

use std::collections::HashMap;
use std::fmt::Write as _;

use sim_core::SimReport;
use sim_core::engine::TraceEvent;

/// Event type of the operation / kernel name of an interval.
pub const EVENT_OPERATION: u32 = 90_000_001;
/// Event type of the source line of an interval.
pub const EVENT_LINE: u32 = 90_000_002;

const RUNNING: u32 = 1;
const WAITING: u32 = 3;
const COMMUNICATION: u32 = 4;

/// The three files: (.prv, .pcf, .row).
pub fn trace(rep: &SimReport, ranks: u32, file: &str, date: &str) -> (String, String, String) {
    let ns = |t: f64| (t * 1e9).round().max(0.0) as u64;
    let mut names: Vec<&str> = Vec::new();
    let mut index: HashMap<&str, u32> = HashMap::new();
    // (time, order, line): order keeps a rank's records in a stable,
    // readable sequence at equal times (ends before begins).
    let mut records: Vec<(u64, u8, String)> = Vec::new();
    for ev in &rep.trace {
        match ev {
            TraceEvent::Interval {
                rank,
                start,
                end,
                what,
                comm,
                line,
                wait,
            } => {
                let (b, e) = (ns(*start), ns(*end).max(ns(*start)));
                let task = rank + 1;
                let id = *index.entry(what.as_str()).or_insert_with(|| {
                    names.push(what.as_str());
                    names.len() as u32
                });
                if *comm {
                    let w = ns(*wait).min(e - b);
                    if e - w > b {
                        records.push((
                            b,
                            1,
                            format!("1:{task}:1:{task}:1:{b}:{}:{COMMUNICATION}", e - w),
                        ));
                    }
                    if w > 0 {
                        records.push((
                            e - w,
                            1,
                            format!("1:{task}:1:{task}:1:{}:{e}:{WAITING}", e - w),
                        ));
                    }
                } else if e > b {
                    records.push((b, 1, format!("1:{task}:1:{task}:1:{b}:{e}:{RUNNING}")));
                }
                records.push((
                    b,
                    2,
                    format!("2:{task}:1:{task}:1:{b}:{EVENT_OPERATION}:{id}:{EVENT_LINE}:{line}"),
                ));
                records.push((
                    e,
                    0,
                    format!("2:{task}:1:{task}:1:{e}:{EVENT_OPERATION}:0:{EVENT_LINE}:0"),
                ));
            }
            TraceEvent::Message {
                collective: true, ..
            } => {}
            TraceEvent::Message {
                src,
                dst,
                sent,
                received,
                bytes,
                collective: false,
            } => {
                let (s, r) = (ns(*sent), ns(*received).max(ns(*sent)));
                let (ts, td) = (src + 1, dst + 1);
                records.push((
                    s,
                    3,
                    format!("3:{ts}:1:{ts}:1:{s}:{s}:{td}:1:{td}:1:{r}:{r}:{bytes}:0"),
                ));
            }
        }
    }
    records.sort_by_key(|r| (r.0, r.1));
    let end = ns(rep.predicted_seconds).max(records.last().map_or(0, |r| r.0));
    let n = ranks.max(1);
    let mut prv = String::new();
    let threads = vec!["1:1"; n as usize].join(",");
    let _ = writeln!(prv, "#Paraver ({date}):{end}_ns:1({n}):1:{n}({threads})");
    for (_, _, line) in &records {
        prv.push_str(line);
        prv.push('\n');
    }

    let mut pcf = String::new();
    let _ = write!(
        pcf,
        "DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\n\
         LOOK_BACK           100\nSPEED               1\nFLAG_ICONS          ENABLED\n\
         NUM_OF_STATE_COLORS 5\nYMAX_SCALE          {n}\n\n\
         DEFAULT_SEMANTIC\n\nTHREAD_FUNC          State As Is\n\n\n\
         STATES\n0    Idle\n{RUNNING}    Running\n{WAITING}    Waiting a message\n\
         {COMMUNICATION}    Communication (CPU overheads)\n\n\
         STATES_COLOR\n0    {{117,195,255}}\n{RUNNING}    {{0,170,0}}\n{WAITING}    {{220,0,0}}\n\
         {COMMUNICATION}    {{235,200,0}}\n\n\n\
         EVENT_TYPE\n0    {EVENT_OPERATION}    Operation or kernel ({file})\nVALUES\n0      End\n"
    );
    for (i, name) in names.iter().enumerate() {
        let _ = writeln!(pcf, "{}      {}", i + 1, name.replace('\n', " "));
    }
    let _ = write!(
        pcf,
        "\n\nEVENT_TYPE\n0    {EVENT_LINE}    Source line ({file})\n"
    );

    let mut row = String::new();
    let _ = writeln!(row, "LEVEL CPU SIZE {n}");
    for r in 0..n {
        let _ = writeln!(row, "CPU {}", r + 1);
    }
    let _ = writeln!(row, "\nLEVEL NODE SIZE 1\nparsim");
    let _ = writeln!(row, "\nLEVEL THREAD SIZE {n}");
    for r in 0..n {
        let _ = writeln!(row, "rank {r}");
    }
    (prv, pcf, row)
}
