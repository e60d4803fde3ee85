//! Frozen specs. `evalspec freeze` writes `SPEC.lock` beside a spec: the SHA-256 of
//! the spec, of every file it extends, of every template it may render and of each
//! `frozen: true` dataset, with a history of re-freezes. `run` and `verify` compare
//! the files with the lock before any data is scored; a difference is drift.

mod drift;
pub mod error;
mod pins;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::base::diagnostic::Diagnostic;
use crate::lock::error::LockError;
use crate::plan::Plan;

pub use drift::Drift;
pub use pins::{PinnedDataset, PinnedFile, Pins};

const LOCK_FORMAT: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Lock {
    /// The format of this file.
    pub evalspec_lock: u32,
    pub name: String,
    pub version: String,
    /// The evalspec version that last froze the spec.
    pub evalspec: String,
    /// The digest of everything pinned: the lock's identity in reports.
    pub sha256: String,
    /// What is pinned: `files` and `datasets`.
    #[serde(flatten)]
    pub pins: Pins,
    /// Oldest first: every freeze of the spec.
    pub history: Vec<Freeze>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Freeze {
    pub version: String,
    pub sha256: String,
    /// The lock's digest before this freeze.
    pub previous: Option<String>,
    pub reason: Option<String>,
    pub evalspec: String,
    /// What changed since the previous freeze, one line each.
    pub changes: Vec<String>,
}

/// A report's record of the lock it ran under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockStamp {
    pub path: String,
    pub sha256: String,
    /// The version the lock froze.
    pub version: String,
    /// One line per drifted file; empty when the files match the lock.
    pub drift: Vec<String>,
}

impl LockStamp {
    pub fn status(&self) -> &'static str {
        if self.drift.is_empty() {
            "frozen"
        } else {
            "drifted"
        }
    }
}

/// `SPEC.lock`, beside the spec.
pub fn lock_path(spec: &Path) -> PathBuf {
    let mut name = spec.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    spec.with_file_name(name)
}

fn folder(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Reads the lock of the spec at `spec`, if it has one.
pub fn read(spec: &Path) -> Result<Option<(PathBuf, Lock)>, Diagnostic> {
    let path = lock_path(spec);
    let text = match crate::base::files::read_text(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            let kind = LockError::CannotRead {
                path: path.display().to_string(),
                error: e.to_string(),
            };
            return Err(kind.diagnostic());
        }
    };
    let display = path.display().to_string();
    let lock: Lock =
        crate::report_model::read_json(&text, &display, "the lock").map_err(|problem| {
            let kind = LockError::Invalid {
                path: display.clone(),
                error: problem.message,
            };
            kind.diagnostic().at(problem.at)
        })?;
    if lock.evalspec_lock != LOCK_FORMAT {
        let kind = LockError::UnknownFormat {
            path: path.display().to_string(),
            found: lock.evalspec_lock,
            expected: LOCK_FORMAT,
        };
        return Err(kind.diagnostic());
    }
    Ok(Some((path, lock)))
}

/// Compares the spec's files with its lock. `None` when the spec has no lock.
pub fn verify(plan: &Plan) -> Result<Option<(LockStamp, Vec<Drift>)>, Diagnostic> {
    let Some((path, lock)) = read(&plan.spec_path)? else {
        return Ok(None);
    };
    if lock.pins.digest(&lock.name, &lock.version) != lock.sha256 {
        let kind = LockError::DigestMismatch {
            path: path.display().to_string(),
        };
        return Err(kind.diagnostic());
    }
    let pins = pins::current(plan, folder(&path))?;
    let drift = drift::compare(&lock.pins, &pins);
    let stamp = LockStamp {
        path: path.display().to_string(),
        sha256: lock.sha256.clone(),
        version: lock.version.clone(),
        drift: drift.iter().map(Drift::summary).collect(),
    };
    Ok(Some((stamp, drift)))
}

/// What `freeze` did.
pub enum Frozen {
    /// The files match the lock already: nothing written.
    UpToDate(PathBuf),
    Written {
        path: PathBuf,
        lock: Box<Lock>,
    },
}

/// Writes (or re-writes, adding to its history) the lock of the compiled spec.
pub fn freeze(plan: &Plan, reason: Option<&str>) -> Result<Frozen, Diagnostic> {
    if reason.is_some_and(|r| r.trim().is_empty()) {
        return Err(LockError::BlankReason.diagnostic());
    }
    let path = lock_path(&plan.spec_path);
    let previous = read(&plan.spec_path)?.map(|(_, lock)| lock);
    let pins = pins::current(plan, folder(&path))?;
    let sha256 = pins.digest(&plan.spec_name, &plan.spec_version);
    let mut history = Vec::new();
    let mut changes = Vec::new();
    if let Some(old) = &previous {
        if old.sha256 == sha256 {
            return Ok(Frozen::UpToDate(path));
        }
        let drift = drift::compare(&old.pins, &pins);
        changes = drift.iter().map(Drift::summary).collect();
        // A new evalspec's built-in templates change report bytes, not what the
        // spec means: re-freezing for them alone may keep the version.
        // Equal in precedence is no bump: `1.0.0+build` is `1.0.0`.
        let same = semver_order(&plan.spec_version, &old.version) == std::cmp::Ordering::Equal;
        if same && !drift.iter().all(Drift::is_builtin) {
            let kind = LockError::VersionNotBumped {
                name: plan.spec_name.clone(),
                frozen: old.version.clone(),
                version: plan.spec_version.clone(),
                changes,
            };
            return Err(kind.diagnostic());
        }
        if semver_order(&plan.spec_version, &old.version) == std::cmp::Ordering::Less {
            let kind = LockError::VersionLowered {
                version: plan.spec_version.clone(),
                frozen: old.version.clone(),
            };
            return Err(kind.diagnostic());
        }
        if reason.is_none() {
            let kind = LockError::NeedsReason {
                name: plan.spec_name.clone(),
                version: plan.spec_version.clone(),
                changes,
            };
            return Err(kind.diagnostic());
        }
        history = old.history.clone();
    }
    history.push(Freeze {
        version: plan.spec_version.clone(),
        sha256: sha256.clone(),
        previous: previous.as_ref().map(|l| l.sha256.clone()),
        reason: reason.map(str::to_string),
        evalspec: env!("CARGO_PKG_VERSION").into(),
        changes,
    });
    let lock = Lock {
        evalspec_lock: LOCK_FORMAT,
        name: plan.spec_name.clone(),
        version: plan.spec_version.clone(),
        evalspec: env!("CARGO_PKG_VERSION").into(),
        sha256,
        pins,
        history,
    };
    let mut text = serde_json::to_string_pretty(&lock).unwrap_or_default();
    text.push('\n');
    crate::base::atomic::write_atomic(&path, text.as_bytes()).map_err(|e| {
        let kind = LockError::CannotWrite {
            path: path.display().to_string(),
            error: e.to_string(),
        };
        kind.diagnostic()
    })?;
    Ok(Frozen::Written {
        path,
        lock: Box::new(lock),
    })
}

/// MAJOR.MINOR.PATCH as numbers, for ordering.
/// SemVer precedence: the numeric core, then a pre-release (`-rc.1`) below its
/// release; pre-release identifiers compare numerically when both are numbers,
/// numbers before words, else as text; a longer list after its prefix. Build
/// metadata (`+…`) is ignored.
fn semver_order(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    fn split(version: &str) -> (Vec<&str>, Option<&str>) {
        let version = version.split('+').next().unwrap_or("");
        let (core, pre) = match version.split_once('-') {
            Some((core, pre)) => (core, Some(pre)),
            None => (version, None),
        };
        (core.split('.').collect(), pre)
    }
    /// Digits compared as numbers of any length (`18446744073709551616`
    /// past `9`, which a u64 cannot hold).
    fn numeric(x: &str, y: &str) -> Ordering {
        let (x, y) = (x.trim_start_matches('0'), y.trim_start_matches('0'));
        x.len().cmp(&y.len()).then_with(|| x.cmp(y))
    }
    let is_number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let ((core_a, pre_a), (core_b, pre_b)) = (split(a), split(b));
    let core = (core_a.iter().zip(&core_b))
        .map(|(x, y)| numeric(x, y))
        .find(|o| *o != Ordering::Equal)
        .unwrap_or(core_a.len().cmp(&core_b.len()));
    core.then_with(|| match (pre_a, pre_b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(a), Some(b)) => {
            let (mut a, mut b) = (a.split('.'), b.split('.'));
            loop {
                match (a.next(), b.next()) {
                    (None, None) => return Ordering::Equal,
                    (None, Some(_)) => return Ordering::Less,
                    (Some(_), None) => return Ordering::Greater,
                    (Some(x), Some(y)) => {
                        let order = match (is_number(x), is_number(y)) {
                            (true, true) => numeric(x, y),
                            (true, false) => Ordering::Less,
                            (false, true) => Ordering::Greater,
                            (false, false) => x.cmp(y),
                        };
                        if order != Ordering::Equal {
                            return order;
                        }
                    }
                }
            }
        }
    })
}

/// One diagnostic per drifted file, with its diff or first differing line; when
/// the drift `stops_run`, the last says how to go on.
pub fn drift_diagnostics(
    plan: &Plan,
    stamp: &LockStamp,
    drift: &[Drift],
    stops_run: bool,
) -> Vec<Diagnostic> {
    let dataset = |name: &str| {
        let d = plan.datasets.iter().find(|d| d.name == name)?;
        Some((d.display_path.clone(), std::fs::read(&d.path).ok()?))
    };
    drift
        .iter()
        .enumerate()
        .map(|(i, d)| d.diagnostic(&stamp.path, dataset, stops_run && i + 1 == drift.len()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_follow_semver_precedence() {
        use std::cmp::Ordering::{Equal, Greater, Less};
        let ordered = [
            "0.2.0-alpha",
            "0.2.0-alpha.1",
            "0.2.0-alpha.beta",
            "0.2.0-beta.2",
            "0.2.0-beta.11",
            "0.2.0-rc.1",
            "0.2.0",
            "0.10.0",
        ];
        for pair in ordered.windows(2) {
            assert_eq!(semver_order(pair[0], pair[1]), Less, "{pair:?}");
            assert_eq!(semver_order(pair[1], pair[0]), Greater, "{pair:?}");
        }
        assert_eq!(semver_order("1.0.0+build.5", "1.0.0"), Equal);
    }

    #[test]
    fn the_lock_sits_beside_the_spec() {
        assert_eq!(
            lock_path(Path::new("specs/rag.yaml")),
            PathBuf::from("specs/rag.yaml.lock")
        );
    }

    #[test]
    fn versions_past_64_bits_keep_their_order() {
        use std::cmp::Ordering::{Equal, Greater};
        assert_eq!(semver_order("18446744073709551616.0.0", "9.0.0"), Greater);
        assert_eq!(
            semver_order("1.0.0-18446744073709551616", "1.0.0-9"),
            Greater
        );
        assert_eq!(semver_order("1.0.0+build", "1.0.0"), Equal);
    }

    #[test]
    fn versions_order_by_number() {
        assert_eq!(semver_order("1.10.0", "1.9.3"), std::cmp::Ordering::Greater);
        assert_eq!(
            semver_order("2.0.0-rc.1", "1.9.9"),
            std::cmp::Ordering::Greater
        );
    }
}
