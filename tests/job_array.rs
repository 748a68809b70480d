//! `parsim sweep --emit-job`: the job array's tasks, run here one by one
//! as the batch system would run them (the script with the array index in
//! the environment), then `--gather`, print exactly what the sweep run
//! here prints.

mod support;

use support::{parsim, stdout, text};

const SWEEP: [&str; 10] = [
    "sweep",
    "examples/heat.mpl",
    "-n",
    "1,2,4,8",
    "--set",
    "network.bandwidth=1GB/s,10GB/s",
    "--ppn",
    "2",
    "-p",
    "iters=10",
];

fn with(extra: &[&str]) -> Vec<String> {
    SWEEP.iter().chain(extra).map(|s| (*s).to_owned()).collect()
}

fn run(args: &[String]) -> std::process::Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    parsim(&args)
}

/// Runs every task of the script `script` as its scheduler would, with
/// `var` set to the task's index.
fn run_tasks(script: &std::path::Path, var: &str, tasks: usize) {
    for i in 0..tasks {
        let o = std::process::Command::new("bash")
            .arg(script)
            .env(var, i.to_string())
            .output()
            .expect("bash runs");
        assert!(o.status.success(), "task {i}: {}", text(&o.stderr));
    }
}

#[test]
fn a_slurm_array_run_task_by_task_gathers_into_the_local_sweep() {
    let dir = support::temp_dir();
    let job = dir.join("job");
    let job_s = job.to_str().expect("utf-8 path");
    let o = run(&with(&["--emit-job", "slurm", "--job-dir", job_s]));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let said = stdout(&o);
    assert!(said.contains("a job array of 8 task(s)"), "{said}");
    assert!(said.contains("submit:  sbatch "), "{said}");
    let script_path = job.join("sweep.slurm");
    let script = std::fs::read_to_string(&script_path).expect("script written");
    assert!(script.contains("#SBATCH --array=0-7\n"), "{script}");
    assert!(
        script.contains("--task \"$SLURM_ARRAY_TASK_ID\""),
        "{script}"
    );

    // Gathering before every task ran names the missing ones.
    run_tasks(&script_path, "SLURM_ARRAY_TASK_ID", 5);
    let gather = with(&["--gather", job_s]);
    let o = run(&gather);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("3 of 8 tasks have no result")
            && text(&o.stderr).contains(": 5-7"),
        "{}",
        text(&o.stderr)
    );
    run_tasks(&script_path, "SLURM_ARRAY_TASK_ID", 8);

    for format in [&[][..], &["--format", "json"][..]] {
        let mut g = gather.clone();
        g.extend(format.iter().map(|s| (*s).to_owned()));
        let gathered = run(&g);
        assert!(gathered.status.success(), "{}", text(&gathered.stderr));
        let mut l = with(&["-q"]);
        l.extend(format.iter().map(|s| (*s).to_owned()));
        let local = run(&l);
        assert!(local.status.success(), "{}", text(&local.stderr));
        assert_eq!(stdout(&gathered), stdout(&local), "{format:?}");
        if format.is_empty() {
            assert!(stdout(&local).contains("0.360066"), "{}", stdout(&local));
        }
    }

    // The results of one sweep are not gathered into another.
    let other: Vec<String> = with(&["--gather", job_s])
        .into_iter()
        .map(|a| {
            if a == "1,2,4,8" {
                "1,2,4".to_owned()
            } else {
                a
            }
        })
        .collect();
    let o = run(&other);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("the result of another sweep"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_pbs_array_uses_its_index_variable() {
    let dir = support::temp_dir();
    let job = dir.join("pbs");
    let job_s = job.to_str().expect("utf-8 path");
    let o = run(&with(&["--emit-job", "pbs", "--job-dir", job_s]));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let script_path = job.join("sweep.pbs");
    let script = std::fs::read_to_string(&script_path).expect("script written");
    assert!(script.contains("#PBS -J 0-7\n"), "{script}");
    run_tasks(&script_path, "PBS_ARRAY_INDEX", 8);
    let gathered = run(&with(&["--gather", job_s]));
    assert!(gathered.status.success(), "{}", text(&gathered.stderr));
    let local = run(&with(&["-q"]));
    assert_eq!(stdout(&gathered), stdout(&local));
}

#[test]
fn job_array_flags_are_checked() {
    let o = run(&with(&["--emit-job", "slurm"]));
    assert_eq!(o.status.code(), Some(2), "--emit-job needs --job-dir");
    let o = run(&with(&["--emit-job", "lsf", "--job-dir", "x"]));
    assert_eq!(o.status.code(), Some(2), "an unknown scheduler");
    let dir = support::temp_dir();
    let o = run(&with(&[
        "--task",
        "8",
        "--job-dir",
        dir.to_str().expect("utf-8"),
    ]));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("task 8 does not exist: the study has 8 tasks (0 to 7)"),
        "{}",
        text(&o.stderr)
    );
}
