//! Frozen specs. `evalspec freeze` writes `SPEC.lock` beside a spec: the SHA-256 of
//! the spec, of every file it extends, of every template it may render and of each
//! `frozen: true` dataset, with a history of re-freezes. `run` and `verify` compare
//! the files with the lock before any data is scored; a difference is drift.

mod drift;
pub mod error;
mod pins;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::base::diagnostic::{Diagnostic, Location};
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
    let text = match std::fs::read_to_string(&path) {
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
    let lock: Lock = serde_json::from_str(&text).map_err(|e| {
        let display = path.display().to_string();
        let at = Location::in_data(&display, e.line(), Some(e.column()));
        let kind = LockError::Invalid {
            path: display,
            error: e.to_string(),
        };
        kind.diagnostic().at(at)
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
        if plan.spec_version == old.version && !drift.iter().all(Drift::is_builtin) {
            let kind = LockError::VersionNotBumped {
                name: plan.spec_name.clone(),
                frozen: old.version.clone(),
                version: plan.spec_version.clone(),
                changes,
            };
            return Err(kind.diagnostic());
        }
        if version_core(&plan.spec_version) < version_core(&old.version) {
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
fn version_core(version: &str) -> Vec<u64> {
    version
        .split(['-', '+'])
        .next()
        .unwrap_or("")
        .split('.')
        .map(|p| p.parse().unwrap_or(0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_sits_beside_the_spec() {
        assert_eq!(
            lock_path(Path::new("specs/rag.yaml")),
            PathBuf::from("specs/rag.yaml.lock")
        );
    }

    #[test]
    fn versions_order_by_number() {
        assert!(version_core("1.10.0") > version_core("1.9.3"));
        assert!(version_core("2.0.0-rc.1") > version_core("1.9.9"));
    }
}
