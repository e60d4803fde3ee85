//! Silent wrong results: inputs on which a gate said PASS (or a run exited 0)
//! though nothing, or not what the user meant, was scored.

use std::path::Path;

use crate::support::{self, evalspec, Output};

/// `evalspec run specs/rag-precision.yaml` with `gold` and `trace` as given
/// (paths relative to `dir`, or `-` for standard input fed `stdin`).
fn rag_precision(dir: &Path, gold: &str, trace: &str, stdin: Option<&[u8]>) -> Output {
    let root = support::repo_root();
    let spec = root.join("specs/rag-precision.yaml");
    let out = dir.join("out");
    let args = [
        "run",
        spec.to_str().unwrap(),
        "--dataset",
        &format!("gold={gold}"),
        "--dataset",
        &format!("trace={trace}"),
        "--out",
        out.to_str().unwrap(),
        "--allow-drift",
    ];
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_evalspec"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut input = child.stdin.take().unwrap();
        if let Some(bytes) = stdin {
            input.write_all(bytes).unwrap();
        }
    }
    let output = child.wait_with_output().unwrap();
    Output {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[test]
fn an_empty_items_dataset_is_nothing_scored() {
    let dir = tempfile::tempdir().unwrap();
    let root = support::repo_root();
    let trace = root.join("specs/data/rag-precision/trace.jsonl");
    let trace = trace.to_str().unwrap();
    std::fs::write(dir.path().join("empty.jsonl"), "").unwrap();
    std::fs::write(dir.path().join("blank.jsonl"), "\n\n  \n").unwrap();
    for (gold, trace, stdin) in [
        ("empty.jsonl", trace, None),
        ("blank.jsonl", trace, None),
        ("empty.jsonl", "empty.jsonl", None),
        // Closed standard input reads as empty.
        ("-", trace, Some(&b""[..])),
        ("-", trace, None),
    ] {
        let out = rag_precision(dir.path(), gold, trace, stdin);
        assert_eq!(out.code, 2, "{gold} {trace}: {}{}", out.stdout, out.stderr);
        assert!(
            out.stderr.contains("nothing was scored"),
            "{gold}: {}",
            out.stderr
        );
        assert!(out.stderr.contains("allow_empty"), "{}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
        assert!(!dir.path().join("out/report.json").exists());
    }
}

/// A small spec over `items.jsonl`: one count metric gated at `>= 0`.
fn count_spec(dir: &Path, dataset_extra: &str) {
    std::fs::write(
        dir.join("spec.yaml"),
        format!(
            "name: t\nversion: 1.0.0\ndatasets:\n  items: {{format: jsonl, path: items.jsonl, key: id{dataset_extra}}}\n\
             metrics:\n  n: {{expr: count(), better: higher}}\ngates:\n  g: {{metric: n, threshold: 0}}\n"
        ),
    )
    .unwrap();
}

#[test]
fn a_spec_may_say_its_items_may_be_empty() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("items.jsonl"), "").unwrap();
    count_spec(dir.path(), "");
    let out = evalspec(dir.path(), &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("nothing was scored"), "{}", out.stderr);
    assert!(out.stderr.contains(" --> spec.yaml:"), "{}", out.stderr);
    count_spec(dir.path(), ", allow_empty: true");
    let out = evalspec(dir.path(), &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("scored 0 items"), "{}", out.stdout);
    // Only the items dataset can be empty by choice.
    std::fs::write(
        dir.path().join("spec.yaml"),
        "name: t\nversion: 1.0.0\nitems: items\ndatasets:\n  items: {format: jsonl, path: items.jsonl, key: id}\n  other: {format: jsonl, path: items.jsonl, key: id, allow_empty: true}\n\
         fields:\n  o: other.id\nmetrics:\n  n: count()\n",
    )
    .unwrap();
    let out = evalspec(dir.path(), &["check", "spec.yaml"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("allow_empty"), "{}", out.stderr);
}
