//! Specs, params and locks: reserved names, out-of-range values, edited locks.

use super::check_refuses;
use crate::support::{self, evalspec};

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
fn messages_say_what_is_wrong_in_plain_words() {
    let head =
        "name: t\nversion: 1.0.0\ndatasets:\n  gold: {format: jsonl, path: gold.jsonl, key: id}\n";
    let cases: Vec<(String, &str)> = vec![
        (
            format!("{head}matchers:\n  m:\n    kind: regex_match\n    text: gold.s\n    pattern: \"(ab\"\n"),
            "`pattern` is not a valid regex: unclosed group\n",
        ),
        (
            format!("{head}x: {}{}\n", "[".repeat(70), "]".repeat(70)),
            "the spec nests collections more than 64 levels deep",
        ),
        (
            format!("{head}x: [{}]\n", vec!["1"; 260_000].join(",")),
            "the spec holds more than 250000 YAML values",
        ),
        (
            format!("{head}---\nname: u\n"),
            "a spec is one YAML document, but this file has another after `---`",
        ),
        (
            format!("extends: \"\"\n{head}"),
            "`extends` must be the path of a spec, found an empty path",
        ),
        (
            format!("{head}metrics:\n  n: {{expr: count(), better: higher}}\ngates:\n  g: {{metric: n, thr\u{435}shold: 1}}\n"),
            "unknown key `thr\\u{435}shold`",
        ),
        (
            format!("{head}params:\n  k: {{type: integer, default: 100000000000000000000}}\n"),
            "found 100000000000000000000",
        ),
    ];
    for (spec, expected) in cases {
        check_refuses(&spec, expected);
    }
}

#[test]
fn a_long_line_is_shown_cut_around_the_error() {
    let spec = format!("name: t\nversion: 1.0.0\nx: \"{}\n", "a".repeat(100_000));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spec.yaml"), &spec).unwrap();
    let out = evalspec(dir.path(), &["check", "spec.yaml"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains(" --> spec.yaml:3:"), "{}", out.stderr);
    assert!(
        out.stderr.len() < 1_000,
        "the line is cut: {} bytes",
        out.stderr.len()
    );
}

#[test]
fn a_spec_that_is_not_utf8_is_placed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spec.yaml"), b"name: t\nversion: \xff\n").unwrap();
    let out = evalspec(dir.path(), &["check", "spec.yaml"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("not UTF-8 text (byte 0xFF at line 2, column 10)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains(" --> spec.yaml:2:10"), "{}", out.stderr);
    assert!(
        out.stderr.contains("save the spec as UTF-8"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_extends_chain_is_bounded_and_read_in_linear_time() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write_chain = |n: usize| {
        for i in 0..n {
            let text = if i + 1 == n {
                "name: t\nversion: 1.0.0\ndatasets:\n  gold: {format: jsonl, path: gold.jsonl, key: id}\n".to_string()
            } else {
                format!("extends: s{}.yaml\n", i + 1)
            };
            std::fs::write(root.join(format!("s{i}.yaml")), text).unwrap();
        }
    };
    write_chain(64);
    let ok = evalspec(root, &["check", "s0.yaml"]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    write_chain(8_000);
    let started = std::time::Instant::now();
    let deep = evalspec(root, &["check", "s0.yaml"]);
    assert_eq!(deep.code, 2, "{}", deep.stderr);
    assert!(
        deep.stderr
            .contains("`extends` goes more than 64 specs deep"),
        "{}",
        deep.stderr
    );
    assert!(
        deep.stderr.contains(" --> s63.yaml:1:10"),
        "{}",
        deep.stderr
    );
    assert!(!deep.stderr.contains("panicked"), "{}", deep.stderr);
    // Refused at the limit, without reading the other 7,936 files.
    assert!(started.elapsed().as_secs() < 10);
}

#[test]
fn a_lock_or_an_item_of_the_wrong_shape_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    assert_eq!(evalspec(root, &["init", "."]).code, 0);
    std::fs::write(root.join("evalspec.yaml.lock"), "[1, 2]\n").unwrap();
    let out = evalspec(root, &["verify", "evalspec.yaml"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("not a valid lock: the lock must be an object, found a list"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(" --> evalspec.yaml.lock:1:1"),
        "{}",
        out.stderr
    );
    std::fs::remove_file(root.join("evalspec.yaml.lock")).unwrap();

    let run = evalspec(
        root,
        &[
            "run",
            "evalspec.yaml",
            "--out",
            "a",
            "--format",
            "items",
            "--quiet",
        ],
    );
    assert!(run.code < 2, "{}", run.stderr);
    std::fs::create_dir(root.join("b")).unwrap();
    for file in ["report.json", "items.jsonl"] {
        std::fs::copy(root.join("a").join(file), root.join("b").join(file)).unwrap();
    }
    let items = std::fs::read_to_string(root.join("b/items.jsonl")).unwrap();
    let mut lines: Vec<&str> = items.lines().collect();
    for (bad, expected) in [
        ("{nope", "line 2 is not JSON: key must be a string"),
        ("[1, 2]", "the item must be an object, found a list"),
    ] {
        lines[1] = bad;
        std::fs::write(root.join("b/items.jsonl"), lines.join("\n") + "\n").unwrap();
        let diff = evalspec(root, &["diff", "a", "b"]);
        assert_eq!(diff.code, 2, "{bad}: {}", diff.stderr);
        assert!(diff.stderr.contains(expected), "{bad}: {}", diff.stderr);
        assert!(
            diff.stderr.contains(" --> b/items.jsonl:2:"),
            "{bad}: {}",
            diff.stderr
        );
    }
}

#[test]
fn check_and_explain_show_terminal_escapes_of_the_spec_not_send_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("spec.yaml"),
        "name: \"t\\e[2J\\rFAKE\"\nversion: 1.0.0\ndatasets:\n  gold: {format: jsonl, path: gold.jsonl, key: id}\n\
         metrics:\n  n: {expr: count(), description: \"x\\e]0;pwned\\a\"}\n",
    )
    .unwrap();
    for command in ["check", "explain"] {
        let out = crate::support::evalspec(dir.path(), &[command, "spec.yaml"]);
        assert_eq!(out.code, 0, "{command}: {}", out.stderr);
        assert!(!out.stdout.contains('\u{1b}'), "{command} sent an escape");
        assert!(!out.stdout.contains('\u{7}'), "{command} sent a bell");
        assert!(out.stdout.contains(r"\u{1b}"), "{command}: {}", out.stdout);
    }
}

#[test]
fn a_special_file_is_never_quoted() {
    let dir = tempfile::tempdir().unwrap();
    for (extends, expected) in [
        ("/proc/self/environ", "not a regular file"),
        (".", "cannot read spec `.`"),
    ] {
        std::fs::write(
            dir.path().join("spec.yaml"),
            format!(
                "name: t\nversion: 1.0.0\nextends: \"{extends}\"\ndatasets:\n  gold: {{format: jsonl, path: gold.jsonl, key: id}}\n"
            ),
        )
        .unwrap();
        let out = crate::support::evalspec_with_env(
            dir.path(),
            &[("EVALSPEC_TEST_SECRET", "hunter2")],
            &["check", "spec.yaml"],
        );
        assert_eq!(out.code, 2, "{extends}: {}", out.stderr);
        assert!(out.stderr.contains(expected), "{extends}: {}", out.stderr);
        assert!(!out.stderr.contains("hunter2"), "{}", out.stderr);
    }
}

#[test]
fn build_metadata_is_no_version_bump() {
    let dir = tempfile::tempdir().unwrap();
    let spec = |version: &str, description: &str| {
        std::fs::write(
            dir.path().join("spec.yaml"),
            format!(
                "name: t\nversion: {version}\ndescription: {description}\ndatasets:\n  gold: {{format: jsonl, path: gold.jsonl, key: id}}\n"
            ),
        )
        .unwrap();
    };
    spec("1.0.0", "first");
    let freeze = |dir: &std::path::Path| {
        crate::support::evalspec(dir, &["freeze", "spec.yaml", "--reason", "review"])
    };
    assert_eq!(freeze(dir.path()).code, 0);
    spec("1.0.0+build.7", "edited");
    let out = freeze(dir.path());
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("bump `version`"), "{}", out.stderr);
    // A component past 64 bits is a higher version, not a lower one.
    spec("18446744073709551616.0.0", "edited");
    let out = freeze(dir.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn a_template_of_any_name_is_pinned_and_a_link_loop_does_not_hang() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("t")).unwrap();
    std::fs::write(root.join("t/r.md"), "{{ spec.name }}\n").unwrap();
    std::os::unix::fs::symlink(root.join("t"), root.join("t/loop")).unwrap();
    std::fs::write(root.join("gold.jsonl"), "{\"id\":\"a\"}\n").unwrap();
    std::fs::write(
        root.join("spec.yaml"),
        "name: t\nversion: 1.0.0\ndatasets:\n  gold: {format: jsonl, path: gold.jsonl, key: id}\n\
         metrics:\n  n: count()\nreports:\n  - {template: t/r.md, path: r.md}\n",
    )
    .unwrap();
    let freeze = crate::support::evalspec(root, &["freeze", "spec.yaml"]);
    assert_eq!(freeze.code, 0, "{}", freeze.stderr);
    assert_eq!(
        crate::support::evalspec(root, &["verify", "spec.yaml"]).code,
        0
    );
    std::fs::write(root.join("t/r.md"), "{{ spec.name }} edited\n").unwrap();
    let verify = crate::support::evalspec(root, &["verify", "spec.yaml"]);
    assert_eq!(verify.code, 2, "{}{}", verify.stdout, verify.stderr);
    assert!(verify.stderr.contains("r.md"), "{}", verify.stderr);
}

#[test]
fn a_broken_metric_is_not_also_said_to_lack_its_by() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("spec.yaml"),
        "name: t\nversion: 1.0.0\ndatasets:\n  items: {format: jsonl, path: items.jsonl, key: id}\n\
         slices:\n  c: items.c\nmetrics:\n  precision: {expr: 'ratio(items.x + )', by: c, better: higher}\n\
         gates:\n  g: {metric: precision, by: c, threshold: 0.5}\n",
    )
    .unwrap();
    let out = crate::support::evalspec(dir.path(), &["check", "spec.yaml"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("syntax error"), "{}", out.stderr);
    assert!(!out.stderr.contains("not computed by"), "{}", out.stderr);
    assert!(out.stderr.contains("1 error"), "{}", out.stderr);
}
