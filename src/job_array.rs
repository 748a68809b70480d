//! `parsim sweep --emit-job` / `--task` / `--gather`: the command-line side
//! of a sweep run as a job array (`app::job_array`).

use std::path::Path;

use anyhow::Context;
use app::job_array::{self, Scheduler};
use app::study::{self, Study};

use crate::StudyOptions;

/// The job-array flags and their values, left out of the command each task
/// runs and of the gather command.
const JOB_FLAGS: [&str; 4] = ["--emit-job", "--job-dir", "--task", "--gather"];

/// The sweep's arguments as given (after `parsim sweep`), without the
/// job-array flags.
fn sweep_arguments() -> Vec<String> {
    let mut out = Vec::new();
    let mut args = std::env::args()
        .skip(1)
        .skip_while(|a| a != "sweep")
        .skip(1);
    while let Some(a) = args.next() {
        if JOB_FLAGS.contains(&a.as_str()) {
            args.next();
        } else if !JOB_FLAGS.iter().any(|f| a.starts_with(&format!("{f}="))) {
            out.push(a);
        }
    }
    out
}

/// `--emit-job SCHEDULER --job-dir DIR`: writes the script, prints how to
/// submit it and how to gather.
pub(crate) fn emit(study: &Study, scheduler: &str, dir: Option<&Path>) -> anyhow::Result<()> {
    // Invariant: clap only accepts the names `Scheduler::from_name` knows,
    // and requires --job-dir with --emit-job.
    let scheduler = Scheduler::from_name(scheduler).context("unknown scheduler")?;
    let dir = dir.context("--emit-job needs --job-dir")?;
    let tasks = study::tasks(study)
        .map_err(|e| crate::common::study_failure(e, study.file, ""))?
        .len();
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let dir = dir
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", dir.display()))?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let exe = std::env::current_exe().context("cannot find the parsim executable")?;
    let args = sweep_arguments();
    let mut sweep = vec![exe.display().to_string(), "sweep".to_owned()];
    sweep.extend(args.iter().cloned());
    let mut gather_words = vec!["parsim".to_owned(), "sweep".to_owned()];
    gather_words.extend(args);
    gather_words.extend(["--gather".to_owned(), dir.display().to_string()]);
    let gather = job_array::command_line(&gather_words)?;
    let text = job_array::script(scheduler, tasks, &dir, &cwd, &sweep, &gather)?;
    let path = dir.join(scheduler.script_name());
    app::scenario::write_atomically(&path, &text)?;
    crate::out(&format!(
        "wrote {}: a job array of {tasks} task(s), one simulation each\n\
         submit:  {} {}\n\
         then:    {gather}\n",
        path.display(),
        scheduler.submit(),
        path.display()
    ));
    Ok(())
}

/// `--task N --job-dir DIR`: one simulation, its result written to DIR.
pub(crate) fn run_task(
    study: &Study,
    index: usize,
    dir: Option<&Path>,
    source: &str,
) -> anyhow::Result<()> {
    let dir = dir.context("--task needs --job-dir")?;
    let (task, result) = match study::run_task(study, index) {
        Ok(r) => r,
        Err(e) => return Err(crate::common::study_failure(e, study.file, source)),
    };
    let path = job_array::write_task(study, dir, index, task, result)?;
    eprintln!("task {index}: wrote {}", path.display());
    Ok(())
}

/// `--gather DIR`: the sweep from its tasks' results.
pub(crate) fn gather(
    study: &Study,
    dir: &Path,
    opts: &StudyOptions,
) -> anyhow::Result<(Vec<study::Series>, Vec<String>)> {
    let results = job_array::read_results(study, dir)?;
    let out = study::assemble(study, &results)
        .map_err(|e| crate::common::study_failure(e, study.file, ""))?;
    if let Some(path) = &opts.blocks {
        for e in &out.extrapolated {
            eprintln!("{}", app::scenario::extrapolation_warning(e, path));
        }
    }
    Ok((out.series, out.notes))
}
