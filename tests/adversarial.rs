//! Hostile and careless inputs, one per class of defect: each must give a located
//! error and exit 2 (never a panic, an abort or a hang), and leave its input as
//! it was.

mod support;

use support::evalspec;

/// A spec whose only field is `expr` (as a YAML plain scalar).
fn spec_with_field(expr: &str) -> String {
    format!(
        "name: t\nversion: 1.0.0\ndatasets:\n  gold: {{format: jsonl, path: gold.jsonl, key: id}}\nfields:\n  a: {expr}\n"
    )
}

/// Runs `evalspec check` on `spec`; asserts exit 2, a located error containing
/// `expected`, and that the spec file is unchanged.
fn check_refuses(spec: &str, expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spec.yaml");
    std::fs::write(&path, spec).unwrap();
    let out = evalspec(dir.path(), &["check", "spec.yaml"]);
    assert_eq!(out.code, 2, "exit code for {expected:?}\n{}", out.stderr);
    assert!(
        out.stderr.contains(expected),
        "expected {expected:?} in:\n{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(" --> spec.yaml:"),
        "the error is located:\n{}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        spec,
        "the spec is untouched"
    );
}

#[test]
fn syntax_errors_at_non_ascii_characters_are_located() {
    for (expr, at) in [
        ("n – 1", "spec.yaml:6:8"),
        ("“quoted”", "spec.yaml:6:6"),
        ("gold.café", "spec.yaml:6:14"),
        ("1 + é", "spec.yaml:6:10"),
    ] {
        check_refuses(&spec_with_field(expr), at);
    }
}

#[test]
fn deeply_nested_expressions_are_refused_before_the_stack_is_at_risk() {
    let nested =
        |open: &str, close: &str, n: usize| format!("{}1{}", open.repeat(n), close.repeat(n));
    for expr in [
        nested("(", ")", 500),
        nested("abs(", ")", 500),
        nested("[", "]", 500),
    ] {
        // Quoted, so that YAML reads the brackets as text.
        let quoted = format!("\"{expr}\"");
        check_refuses(&spec_with_field(&quoted), "nested more than 64 levels deep");
    }
}

#[test]
fn long_chains_are_refused_at_the_depth_limit() {
    let chain = |op: &str, n: usize| vec!["true"; n].join(op);
    for expr in [
        chain(" and ", 30_000),
        chain(" ?? ", 30_000),
        vec!["1"; 30_000].join(" + "),
        format!("{}true", "not ".repeat(30_000)),
        format!("{}1", "-".repeat(30_000)),
        format!("gold{}", ".a".repeat(50_000)),
        format!("gold{}", "[0]".repeat(50_000)),
    ] {
        check_refuses(&spec_with_field(&expr), "nested more than 256 levels deep");
    }
}

#[test]
fn chains_within_the_limit_still_compile() {
    let dir = tempfile::tempdir().unwrap();
    let expr = vec!["true"; 200].join(" and ");
    std::fs::write(dir.path().join("spec.yaml"), spec_with_field(&expr)).unwrap();
    let out = evalspec(dir.path(), &["check", "spec.yaml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn reserved_names_cannot_be_declared() {
    let spec = "name: t\nversion: 1.0.0\nparams:\n  x: {type: number, default: 1}\ndatasets:\n  params: {format: jsonl, path: gold.jsonl, key: id}\nfields:\n  a: params.x\n";
    check_refuses(spec, "a dataset may not be named `params`");
    let spec = "name: t\nversion: 1.0.0\ndatasets:\n  gold: {format: jsonl, path: gold.jsonl, key: id}\nmetrics:\n  baseline: count()\n";
    check_refuses(spec, "a metric may not be named `baseline`");
}

#[test]
fn an_integer_param_beyond_two_to_the_53_is_refused() {
    let root = support::repo_root();
    let out = evalspec(
        &root,
        &[
            "check",
            "specs/rag-precision.yaml",
            "--param",
            "k=99999999999999999999999",
        ],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("an integer from -2^53 to 2^53"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("--> "), "located: {}", out.stderr);
}

#[test]
fn output_that_cannot_be_written_is_exit_2() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full on this machine");
        return;
    };
    let root = support::repo_root();
    for args in [&["schema"][..], &["check", "specs/rag-precision.yaml"][..]] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_evalspec"))
            .args(args)
            .current_dir(&root)
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("cannot write the output"), "{stderr}");
    }
}

#[test]
fn a_blank_reason_an_edited_lock_and_a_lower_prerelease_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    assert_eq!(evalspec(root, &["init", "."]).code, 0);
    let blank = evalspec(root, &["freeze", "evalspec.yaml", "--reason", "  "]);
    assert_eq!(blank.code, 2, "{}", blank.stderr);
    assert!(
        blank.stderr.contains("`--reason` is blank"),
        "{}",
        blank.stderr
    );
    assert!(!root.join("evalspec.yaml.lock").exists(), "nothing frozen");

    assert_eq!(evalspec(root, &["freeze", "evalspec.yaml"]).code, 0);
    let lock = root.join("evalspec.yaml.lock");
    let text = std::fs::read_to_string(&lock).unwrap();
    let digest = text
        .lines()
        .find(|l| l.trim_start().starts_with("\"sha256\""))
        .unwrap()
        .to_string();
    std::fs::write(&lock, text.replacen(&digest, "  \"sha256\": \"zzz\",", 1)).unwrap();
    let tampered = evalspec(root, &["verify", "evalspec.yaml"]);
    assert_eq!(tampered.code, 2, "{}", tampered.stderr);
    assert!(
        tampered.stderr.contains("does not match its own digest"),
        "{}",
        tampered.stderr
    );
    std::fs::write(&lock, &text).unwrap();

    // 0.1.0-rc.1 is lower than the frozen 0.1.0 in SemVer.
    let spec = std::fs::read_to_string(root.join("evalspec.yaml")).unwrap();
    let version = spec.lines().find(|l| l.starts_with("version:")).unwrap();
    let rc = spec.replacen(version, "version: 0.1.0-rc.1", 1);
    std::fs::write(root.join("evalspec.yaml"), format!("{rc}# changed\n")).unwrap();
    let lower = evalspec(root, &["freeze", "evalspec.yaml", "--reason", "rc"]);
    assert_eq!(lower.code, 2, "{}", lower.stderr);
    assert!(
        lower.stderr.contains("is lower than the frozen version"),
        "{}",
        lower.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&lock).unwrap(),
        text,
        "the lock is untouched"
    );
}

#[test]
fn reports_that_would_be_dropped_or_written_nowhere_are_refused() {
    let base = "name: t\nversion: 1.0.0\ndatasets:\n  gold: {format: jsonl, path: gold.jsonl, key: id}\nreports:\n";
    check_refuses(
        &format!("{base}  - {{template: ..}}\n"),
        "template `..` not found",
    );
    check_refuses(
        &format!("{base}  - {{template: .}}\n"),
        "template `.` not found",
    );
    check_refuses(
        &format!("{base}  - {{format: markdown, path: \"\"}}\n"),
        "the report path `` leaves the output folder",
    );
}

#[test]
fn a_negative_drop_allowance_and_min_on_a_string_are_refused() {
    let spec = "name: t\nversion: 1.0.0\ndatasets:\n  gold: {format: jsonl, path: gold.jsonl, key: id}\nmetrics:\n  n: {expr: count(), better: higher}\ngates:\n  g: {metric: n, max_drop: -5}\n";
    check_refuses(spec, "`max_drop` must be at least 0, found -5");
    let spec = "name: t\nversion: 1.0.0\ndatasets:\n  gold: {format: jsonl, path: gold.jsonl, key: id}\nmetrics:\n  n: {expr: count(), better: higher}\ngates:\n  g: {metric: n, max_drop_relative: -1}\n";
    check_refuses(spec, "`max_drop_relative` must be at least 0, found -1");
    let spec = "name: t\nversion: 1.0.0\ndatasets:\n  gold:\n    format: jsonl\n    path: gold.jsonl\n    key: id\n    schema:\n      id: {type: string, min: 3}\n";
    check_refuses(spec, "`min` bounds numbers, but field `id` is string");
}

#[test]
fn a_byte_order_mark_opens_a_jsonl_or_json_dataset() {
    let root = support::repo_root();
    let gold = std::fs::read_to_string(root.join("specs/data/rag-precision/gold.jsonl")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("gold.jsonl"), format!("\u{feff}{gold}")).unwrap();
    let spec = root.join("specs/rag-precision.yaml");
    let trace = root.join("specs/data/rag-precision/trace.jsonl");
    let out = dir.path().join("out");
    let run = |gold: &str| {
        evalspec(
            dir.path(),
            &[
                "run",
                spec.to_str().unwrap(),
                "--dataset",
                &format!("gold={gold}"),
                "--dataset",
                &format!("trace={}", trace.display()),
                "--out",
                out.to_str().unwrap(),
                "--allow-drift",
            ],
        )
    };
    let with_bom = run("gold.jsonl");
    assert_eq!(with_bom.code, 0, "{}", with_bom.stderr);
    let plain = run(root
        .join("specs/data/rag-precision/gold.jsonl")
        .to_str()
        .unwrap());
    assert!(with_bom.stdout.contains("precision"), "{}", with_bom.stdout);
    let metrics = |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with("reports:"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(metrics(&with_bom.stdout)[1..], metrics(&plain.stdout)[1..]);
}

#[test]
fn control_characters_in_data_are_shown_not_sent_to_the_terminal() {
    let root = support::repo_root();
    let dir = tempfile::tempdir().unwrap();
    let line = r#"{"qid":"k\u001b[2J\rFAKE PASS","question":"q","answerable":false,"gold_claim_substr":[],"gold_citations":[]}"#;
    std::fs::write(dir.path().join("gold.jsonl"), format!("{line}\n{line}\n")).unwrap();
    let spec = root.join("specs/rag-precision.yaml");
    let trace = root.join("specs/data/rag-precision/trace.jsonl");
    let out = evalspec(
        dir.path(),
        &[
            "run",
            spec.to_str().unwrap(),
            "--dataset",
            "gold=gold.jsonl",
            "--dataset",
            &format!("trace={}", trace.display()),
            "--out",
            dir.path().join("out").to_str().unwrap(),
            "--allow-drift",
        ],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        !out.stderr.contains('\u{1b}'),
        "an escape reached the terminal"
    );
    assert!(
        out.stderr.contains(r"k\u{1b}[2J\u{d}FAKE PASS"),
        "{}",
        out.stderr
    );
}

#[test]
fn devices_are_refused_rather_than_read_forever_or_read_as_empty() {
    if !std::path::Path::new("/dev/zero").exists() {
        eprintln!("skipped: no /dev/zero on this machine");
        return;
    }
    let root = support::repo_root();
    let refused = |args: &[&str], expected: &str| {
        let out = evalspec(&root, args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(expected), "{args:?}: {}", out.stderr);
    };
    refused(&["check", "/dev/zero"], "not a file");
    for device in ["/dev/zero", "/dev/null"] {
        let gold = format!("gold={device}");
        refused(
            &["check", "specs/rag-precision.yaml", "--dataset", &gold],
            "is a device, not a data file",
        );
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().to_str().unwrap();
        refused(
            &[
                "run",
                "specs/rag-precision.yaml",
                "--dataset",
                &gold,
                "--out",
                out,
            ],
            "is a device, not a data file",
        );
        assert!(
            std::fs::read_dir(dir.path()).unwrap().next().is_none(),
            "nothing is written"
        );
    }
    refused(
        &["run", "specs/rag-precision.yaml", "--baseline", "/dev/zero"],
        "not a file",
    );
    refused(&["diff", "/dev/zero", "/dev/zero"], "not a file");
}
