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
