//! `evalspec._evalspec`: the native half of the Python package.
//!
//! Everything goes through the library's one public entry, `evalspec::run(argv)`,
//! the function the `evalspec` binary calls, so the Python command and the Python API
//! behave exactly as the binary does (same flags, output, reports and exit codes).
//!
//! - [`main`] is the `evalspec` console script: output goes straight to the process's
//!   stdout and stderr.
//! - [`run`] is what the Python API calls: the same, with stdout and stderr captured
//!   (the diagnostics become the text of the Python exception).
//!
//! Both release the GIL while evalspec works, and neither lets a Rust panic cross
//! into Python: a panic is caught and reported (exit 101, as the binary's, or a
//! panic message the Python side raises as `evalspec.InternalError`).

use std::ffi::OsString;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::prelude::*;

// The binary's allocator, for the same performance on large inputs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The exit status of a Rust program that panicked.
const PANIC_EXIT: i32 = 101;

/// Runs `evalspec` with `argv` (`argv[0]` is the program name), writing to the
/// process's stdout and stderr, and returns the exit status.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<OsString>) -> i32 {
    py.detach(move || catch_unwind(|| evalspec::run(argv)).unwrap_or(PANIC_EXIT))
}

/// Runs `evalspec` with `argv` and returns `(exit status, stdout, stderr, panic)`:
/// what it printed, and the panic's message if it panicked (the exit status is then
/// 101). Calls are serialised: stdout and stderr are the process's.
#[pyfunction]
fn run(py: Python<'_>, argv: Vec<OsString>) -> PyResult<(i32, String, String, Option<String>)> {
    captured(py, move || evalspec::run(argv))
}

/// Panics inside the same guard as [`run`], so that a test can see that a panic
/// becomes a Python exception rather than the end of the interpreter.
#[pyfunction]
fn _panic_for_test(py: Python<'_>) -> PyResult<(i32, String, String, Option<String>)> {
    captured(py, || -> i32 {
        panic!("a panic raised on purpose by a test")
    })
}

fn captured(
    py: Python<'_>,
    work: impl FnOnce() -> i32 + Send,
) -> PyResult<(i32, String, String, Option<String>)> {
    let outcome = py.detach(move || {
        capture::capture(move || catch_unwind(AssertUnwindSafe(work)).map_err(panic_message))
    });
    let (result, out) = outcome.map_err(|error| {
        pyo3::exceptions::PyOSError::new_err(format!(
            "evalspec could not capture its output: {error}"
        ))
    })?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    Ok(match result {
        Ok(code) => (code, stdout, stderr, None),
        Err(message) => (PANIC_EXIT, stdout, stderr, Some(message)),
    })
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

#[pymodule]
fn _evalspec(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add_function(wrap_pyfunction!(main, module)?)?;
    module.add_function(wrap_pyfunction!(run, module)?)?;
    module.add_function(wrap_pyfunction!(_panic_for_test, module)?)?;
    Ok(())
}

#[cfg(unix)]
mod capture {
    //! Captures what the process writes to file descriptors 1 and 2 while a closure
    //! runs, by pointing them at temporary files (the library writes to the process's
    //! stdout and stderr; there is no other way to catch its output in-process).
    //! One capture at a time; output of other threads during it is captured too.

    use std::fs::File;
    use std::io::{self, Read, Seek, Write};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
    use std::sync::Mutex;

    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

    pub struct Output {
        pub stdout: Vec<u8>,
        pub stderr: Vec<u8>,
    }

    pub fn capture<R>(work: impl FnOnce() -> R) -> io::Result<(R, Output)> {
        let _one = ONE_AT_A_TIME
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut stdout = tempfile::tempfile()?;
        let mut stderr = tempfile::tempfile()?;
        flush();
        let result = {
            let _out = Redirect::new(libc::STDOUT_FILENO, &stdout)?;
            let _err = Redirect::new(libc::STDERR_FILENO, &stderr)?;
            let result = work();
            flush();
            result
            // Both descriptors are restored here, also when `work` unwinds.
        };
        Ok((
            result,
            Output {
                stdout: read_all(&mut stdout)?,
                stderr: read_all(&mut stderr)?,
            },
        ))
    }

    /// Flushes Rust's and C's buffered stdout, so nothing written before the
    /// capture lands in it, and nothing written during it escapes.
    fn flush() {
        let _ = io::stdout().flush();
        // SAFETY: fflush(NULL) flushes every C stream; it takes no pointer of ours.
        unsafe {
            libc::fflush(std::ptr::null_mut());
        }
    }

    fn read_all(file: &mut File) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        file.rewind()?;
        file.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// `fd` pointed at another file until dropped; then restored (or closed again,
    /// if it was closed before).
    struct Redirect {
        fd: RawFd,
        saved: Option<OwnedFd>,
    }

    impl Redirect {
        fn new(fd: RawFd, to: &File) -> io::Result<Self> {
            // SAFETY: fcntl and dup2 take plain descriptor numbers; a closed `fd`
            // makes fcntl fail (EBADF), which means there is nothing to restore.
            let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
            // SAFETY: `copy` is a new descriptor that nothing else owns.
            let saved = (copy >= 0).then(|| unsafe { OwnedFd::from_raw_fd(copy) });
            if unsafe { libc::dup2(to.as_raw_fd(), fd) } < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(Self { fd, saved })
        }
    }

    impl Drop for Redirect {
        fn drop(&mut self) {
            // SAFETY: as in `new`; `saved` stays open until after dup2.
            unsafe {
                match &self.saved {
                    Some(saved) => libc::dup2(saved.as_raw_fd(), self.fd),
                    None => libc::close(self.fd),
                };
            }
        }
    }
}

#[cfg(not(unix))]
mod capture {
    //! Elsewhere the library's output is not captured: it goes to the console, and
    //! the Python exceptions say so.

    pub struct Output {
        pub stdout: Vec<u8>,
        pub stderr: Vec<u8>,
    }

    pub fn capture<R>(work: impl FnOnce() -> R) -> std::io::Result<(R, Output)> {
        Ok((
            work(),
            Output {
                stdout: Vec::new(),
                stderr: Vec::new(),
            },
        ))
    }
}
