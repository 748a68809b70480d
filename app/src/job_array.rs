//! A scaling study beyond one machine (`parsim sweep --emit-job`): a job
//! array whose tasks each run one simulation of the study ([`study::Task`],
//! in [`study::tasks`] order) and write its result as `task-N.json` in the
//! job's directory, and the gathering of those results into the same
//! [`study::Outcome`] a local sweep computes ([`study::assemble`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::Error;
use crate::study::{self, Study, Task, TaskResult};

/// The batch systems a job array is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler {
    /// Slurm: `sbatch --array=0-(N-1)`, the task's index in
    /// `SLURM_ARRAY_TASK_ID`.
    Slurm,
    /// PBS Pro: `qsub -J 0-(N-1)`, the index in `PBS_ARRAY_INDEX`.
    Pbs,
}

impl Scheduler {
    pub fn from_name(name: &str) -> Option<Scheduler> {
        match name {
            "slurm" => Some(Scheduler::Slurm),
            "pbs" => Some(Scheduler::Pbs),
            _ => None,
        }
    }

    /// The script's file name in the job directory.
    pub fn script_name(self) -> &'static str {
        match self {
            Scheduler::Slurm => "sweep.slurm",
            Scheduler::Pbs => "sweep.pbs",
        }
    }

    /// The command that submits the script.
    pub fn submit(self) -> &'static str {
        match self {
            Scheduler::Slurm => "sbatch",
            Scheduler::Pbs => "qsub",
        }
    }
}

/// Words as one command line for a POSIX shell.
pub fn command_line(words: &[String]) -> Result<String, Error> {
    shlex::try_join(words.iter().map(String::as_str)).map_err(|_| {
        Error::Input("the command line cannot be quoted for a shell (a NUL byte)".into())
    })
}

/// A task's result file: `task-N.json` in the job directory.
pub fn task_path(dir: &Path, index: usize) -> PathBuf {
    dir.join(format!("task-{index}.json"))
}

/// The job array's script. `sweep` is the sweep's command line as words
/// (the parsim executable first, `sweep` and its arguments after, without
/// the job-array flags); each task runs it in `cwd` with `--task` and
/// `--job-dir dir` added. `dir` and `cwd` should be absolute.
pub fn script(
    scheduler: Scheduler,
    tasks: usize,
    dir: &Path,
    cwd: &Path,
    sweep: &[String],
    gather: &str,
) -> Result<String, Error> {
    let quote = |w: &str| {
        shlex::try_quote(w)
            .map(|q| q.into_owned())
            .map_err(|_| Error::Input(format!("`{w}` cannot be quoted for a shell (a NUL byte)")))
    };
    let words = sweep
        .iter()
        .map(|w| quote(w))
        .collect::<Result<Vec<_>, _>>()?;
    let (dir_q, cwd_q) = (
        quote(&dir.display().to_string())?,
        quote(&cwd.display().to_string())?,
    );
    let last = tasks.saturating_sub(1);
    let mut s = String::from("#!/bin/bash\n");
    let _ = writeln!(
        s,
        "# parsim sweep as a job array of {tasks} task(s): task N runs the sweep's simulation N\n\
         # (curves, then rank counts, then noise draws, in the order of `parsim sweep`) and\n\
         # writes {}. When all have finished, print the sweep with:\n\
         #   {gather}",
        task_path(dir, 0).with_file_name("task-N.json").display()
    );
    let index = match scheduler {
        Scheduler::Slurm => {
            let _ = writeln!(s, "#SBATCH --job-name=parsim-sweep");
            let _ = writeln!(s, "#SBATCH --array=0-{last}");
            let _ = writeln!(s, "#SBATCH --ntasks=1");
            let _ = writeln!(s, "#SBATCH --cpus-per-task=1");
            let _ = writeln!(s, "#SBATCH --output={}/task-%a.log", dir.display());
            "\"$SLURM_ARRAY_TASK_ID\"".to_owned()
        }
        Scheduler::Pbs => {
            let _ = writeln!(s, "#PBS -N parsim-sweep");
            // PBS Pro refuses an array of one subjob (`-J 0-0`).
            if tasks > 1 {
                let _ = writeln!(s, "#PBS -J 0-{last}");
            }
            let _ = writeln!(s, "#PBS -l select=1:ncpus=1");
            let _ = writeln!(s, "#PBS -j oe");
            let _ = writeln!(s, "#PBS -o {}/", dir.display());
            if tasks > 1 {
                "\"$PBS_ARRAY_INDEX\"".to_owned()
            } else {
                "0".to_owned()
            }
        }
    };
    let _ = writeln!(s, "set -eu");
    let _ = writeln!(s, "cd {cwd_q}");
    let _ = writeln!(
        s,
        "exec {} --task {index} --job-dir {dir_q}",
        words.join(" ")
    );
    Ok(s)
}

/// What `task-N.json` holds: the task and its result, with the sweep's
/// size and the curve's label so that a result of another sweep is not
/// gathered by mistake.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct TaskFile {
    parsim_sweep_task: u32,
    index: usize,
    tasks: usize,
    curve_label: String,
    task: Task,
    result: TaskResult,
}

/// Writes task `index`'s result into `dir`.
pub fn write_task(
    study: &Study,
    dir: &Path,
    index: usize,
    task: Task,
    result: TaskResult,
) -> Result<PathBuf, Error> {
    let tasks = study::tasks(study)
        .map_err(|e| Error::Input(e.to_string()))?
        .len();
    let file = TaskFile {
        parsim_sweep_task: 1,
        index,
        tasks,
        curve_label: study.curves[task.curve].label.clone(),
        task,
        result,
    };
    let path = task_path(dir, index);
    let text = serde_json::to_string_pretty(&file)
        .map_err(|e| Error::Input(format!("cannot encode the result of task {index}: {e}")))?;
    crate::scenario::write_atomically(&path, &text)?;
    Ok(path)
}

/// The results of every task of `study` from `dir`, in task order: an
/// error names the tasks whose file is missing, and a file that belongs to
/// another sweep.
pub fn read_results(study: &Study, dir: &Path) -> Result<Vec<TaskResult>, Error> {
    let all = study::tasks(study).map_err(|e| Error::Input(e.to_string()))?;
    let mut missing = Vec::new();
    let mut results = Vec::with_capacity(all.len());
    for (index, &task) in all.iter().enumerate() {
        let path = task_path(dir, index);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                missing.push(index);
                continue;
            }
            Err(e) => return Err(Error::read(&path, e)),
        };
        let file: TaskFile = serde_json::from_str(&text).map_err(|e| {
            Error::Input(format!(
                "{}: not a task result of parsim sweep: {e}",
                path.display()
            ))
        })?;
        let label = &study.curves[task.curve].label;
        if file.index != index
            || file.tasks != all.len()
            || file.task != task
            || &file.curve_label != label
        {
            return Err(Error::Input(format!(
                "{}: the result of another sweep (task {} of {}: {} on {} ranks, draw {}), \
                 where this sweep's task {index} of {} is {label} on {} ranks, draw {}; \
                 give --gather the sweep's own arguments",
                path.display(),
                file.index,
                file.tasks,
                file.curve_label,
                file.task.ranks,
                file.task.draw,
                all.len(),
                task.ranks,
                task.draw
            )));
        }
        results.push(file.result);
    }
    if !missing.is_empty() {
        return Err(Error::Input(format!(
            "{} of {} tasks have no result in {}: {} (see their logs there, and run them again \
             with --task N)",
            missing.len(),
            all.len(),
            dir.display(),
            crate::diagnostics::rank_ranges(&missing)
        )));
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    #[test]
    fn missing_tasks_are_listed_as_ranges() {
        assert_eq!(
            crate::diagnostics::rank_ranges(&[0usize, 1, 2, 3, 7, 9, 10]),
            "0-3, 7, 9-10"
        );
        assert_eq!(crate::diagnostics::rank_ranges(&[5usize]), "5");
    }
}
