//! Running a benchmark subject as its own process: wall time and peak RSS.
#![allow(unsafe_code)]

use std::process::{Command, Stdio};
use std::time::Instant;

pub struct Measured {
    pub seconds: f64,
    pub max_rss_mb: f64,
    pub stdout: String,
}

/// Runs a command to completion and returns its wall time and peak RSS. The child is
/// reaped with `wait4`, which also reports its resource usage.
#[allow(clippy::zombie_processes)]
pub fn measure(command: &mut Command) -> Measured {
    let start = Instant::now();
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let pid = child.id() as libc::pid_t;
    let mut stdout = child.stdout.expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).ok();
        text
    });
    let mut status = 0;
    // SAFETY: `usage` is a plain C struct that wait4 fills in; pid is our child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4 failed");
    let seconds = start.elapsed().as_secs_f64();
    let stdout = reader.join().unwrap_or_default();
    Measured {
        seconds,
        max_rss_mb: usage.ru_maxrss as f64 / 1024.0,
        stdout,
    }
}

pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Runs `evalspec run SPEC --dataset …` `runs` times, quietly, writing into `out`.
pub fn run_engine(
    runs: usize,
    spec: &std::path::Path,
    datasets: &[(&str, &std::path::Path)],
    out: &std::path::Path,
) -> Vec<Measured> {
    (0..runs)
        .map(|_| {
            let mut command = Command::new(env!("CARGO_BIN_EXE_evalspec"));
            command.arg("run").arg(spec);
            for (name, path) in datasets {
                command
                    .arg("--dataset")
                    .arg(format!("{name}={}", path.display()));
            }
            measure(command.arg("--out").arg(out).arg("--quiet"))
        })
        .collect()
}

/// Median wall seconds and median peak RSS (MB) of repeated runs.
pub fn medians(runs: &[Measured]) -> (f64, f64) {
    (
        median(runs.iter().map(|m| m.seconds).collect()),
        median(runs.iter().map(|m| m.max_rss_mb).collect()),
    )
}
