//! Output: standard output that cannot be written, the output folder, templates.

use crate::support::{self, evalspec};

#[test]
fn output_that_cannot_be_written_is_exit_2() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full on this machine");
        return;
    };
    let root = support::repo_root();
    let dir = tempfile::tempdir().unwrap();
    let init = dir.path().join("p");
    let init = init.to_str().unwrap();
    for args in [
        &["schema"][..],
        &["check", "specs/rag-precision.yaml"][..],
        &["init", init][..],
    ] {
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

/// A small project in `dir`: `items.jsonl`, and `spec.yaml` with `reports`.
fn project(dir: &std::path::Path, reports: &str) {
    std::fs::write(
        dir.join("items.jsonl"),
        "{\"id\":\"a\",\"x\":1}\n{\"id\":\"b\",\"x\":2}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("spec.yaml"),
        format!(
            "name: t\nversion: 1.0.0\ndatasets:\n  items: {{format: jsonl, path: items.jsonl, key: id}}\n\
             metrics:\n  n: {{expr: count(), better: higher}}\ngates:\n  g: {{metric: n, threshold: 1}}\n\
             reports:\n{reports}"
        ),
    )
    .unwrap();
}

/// Every file under `dir` with its bytes, in path order.
fn snapshot(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                stack.push(path);
            } else {
                files.push((path.clone(), std::fs::read(&path).unwrap_or_default()));
            }
        }
    }
    files.sort();
    files
}

fn refused(dir: &std::path::Path, args: &[&str], expected: &str) {
    let before = snapshot(dir);
    let out = evalspec(dir, args);
    assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
    assert!(out.stderr.contains(expected), "{args:?}: {}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    assert_eq!(snapshot(dir), before, "{args:?} changed a file");
}

#[test]
fn a_report_never_overwrites_what_the_run_reads() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    project(root, "  - {format: markdown, path: spec.yaml}\n");
    refused(
        root,
        &["run", "spec.yaml", "--out", "."],
        "would overwrite `",
    );
    project(root, "  - {format: markdown}\n");
    refused(
        root,
        &["run", "spec.yaml", "--out", ".", "--format", "items"],
        "the dataset this run reads",
    );
    // A template, the lock and a base spec are inputs too.
    std::fs::write(root.join("t.md"), "{{ spec.name }}\n").unwrap();
    project(root, "  - {template: t.md, path: t.md}\n");
    refused(
        root,
        &["run", "spec.yaml", "--out", "."],
        "the template this run reads",
    );
    project(root, "  - {format: markdown, path: spec.yaml.lock}\n");
    assert_eq!(evalspec(root, &["freeze", "spec.yaml"]).code, 0);
    refused(
        root,
        &["run", "spec.yaml", "--out", "."],
        "the lock this run reads",
    );
}

#[test]
fn a_symbolic_link_cannot_lead_a_report_out_of_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    project(root, "  - {format: markdown, path: sub/report.md}\n");
    std::fs::create_dir(root.join("out")).unwrap();
    std::fs::create_dir(root.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(root.join("elsewhere"), root.join("out/sub")).unwrap();
    refused(
        root,
        &["run", "spec.yaml", "--out", "out"],
        "outside the output folder",
    );
    // A report that is a link to the spec: refused, not written through or replaced.
    project(root, "  - {format: markdown, path: report.md}\n");
    std::os::unix::fs::symlink(root.join("spec.yaml"), root.join("out/report.md")).unwrap();
    refused(
        root,
        &["run", "spec.yaml", "--out", "out"],
        "would overwrite",
    );
}

#[test]
fn an_out_that_is_a_file_is_refused_before_scoring() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    project(root, "  - {format: markdown}\n");
    std::fs::write(root.join("taken"), "mine\n").unwrap();
    for out in ["taken", "taken/sub"] {
        refused(
            root,
            &["run", "spec.yaml", "--out", out],
            "is a file, or inside one",
        );
    }
}

#[test]
fn a_failed_write_keeps_the_previous_reports_and_leaves_no_temporary_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    project(root, "  - {format: markdown}\n  - {template: t.md}\n");
    std::fs::write(root.join("t.md"), "{{ spec.name }}\n").unwrap();
    let first = evalspec(root, &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let before = snapshot(&root.join("out"));
    // report.json, item-values.jsonl, report.md and t.md.
    assert_eq!(before.len(), 4, "{before:?}");

    // A template that fails after scoring: nothing replaced, and said so.
    std::fs::write(root.join("t.md"), "{{ 1 | fixed(1000) }}\n").unwrap();
    std::fs::write(root.join("items.jsonl"), "{\"id\":\"c\",\"x\":3}\n").unwrap();
    let failed = evalspec(root, &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(failed.code, 2, "{}", failed.stderr);
    assert!(
        failed.stderr.contains("no report was written"),
        "{}",
        failed.stderr
    );
    assert_eq!(snapshot(&root.join("out")), before);

    // A report whose folder cannot be made (a file is in the way): the set is
    // staged first, so report.json is not replaced either.
    std::fs::write(root.join("t.md"), "{{ spec.name }}\n").unwrap();
    project(
        root,
        "  - {format: markdown}\n  - {template: t.md, path: blocked/t.md}\n",
    );
    std::fs::write(root.join("out/blocked"), "a file\n").unwrap();
    let before = snapshot(&root.join("out"));
    let blocked = evalspec(root, &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(blocked.code, 2, "{}", blocked.stderr);
    assert!(
        blocked.stderr.contains("cannot write"),
        "{}",
        blocked.stderr
    );
    assert_eq!(
        snapshot(&root.join("out")),
        before,
        "no temporary file left, nothing replaced"
    );
}

#[test]
fn reports_get_the_usual_mode_and_a_refrozen_lock_keeps_its_own() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    project(root, "  - {format: markdown}\n");
    // What a new file gets under this process's umask (0644 under 022).
    std::fs::write(root.join("usual"), "").unwrap();
    let usual = mode(&root.join("usual"));
    assert_eq!(
        evalspec(root, &["run", "spec.yaml", "--out", "out"]).code,
        0
    );
    for file in ["report.json", "report.md"] {
        assert_eq!(mode(&root.join("out").join(file)), usual, "{file}");
    }
    assert_eq!(evalspec(root, &["freeze", "spec.yaml"]).code, 0);
    let lock = root.join("spec.yaml.lock");
    assert_eq!(mode(&lock), usual);
    std::fs::set_permissions(&lock, std::fs::Permissions::from_mode(0o640)).unwrap();
    let spec = std::fs::read_to_string(root.join("spec.yaml")).unwrap();
    std::fs::write(root.join("spec.yaml"), spec.replace("1.0.0", "1.0.1")).unwrap();
    let refrozen = evalspec(root, &["freeze", "spec.yaml", "--reason", "patch"]);
    assert_eq!(refrozen.code, 0, "{}", refrozen.stderr);
    assert_eq!(mode(&lock), 0o640);
    let init = tempfile::tempdir().unwrap();
    assert_eq!(evalspec(init.path(), &["init", "."]).code, 0);
    assert_eq!(mode(&init.path().join("evalspec.yaml")), usual);
}

#[test]
fn concurrent_runs_into_one_folder_leave_one_runs_set() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    project(root, "  - {format: markdown}\n  - {format: junit}\n");
    for (name, n) in [("a", 2000), ("b", 3000)] {
        let lines: String = (0..n)
            .map(|i| format!("{{\"id\":\"{name}{i}\",\"x\":1}}\n"))
            .collect();
        std::fs::write(root.join(format!("{name}.jsonl")), lines).unwrap();
    }
    for _ in 0..8 {
        let spawn = |data: &str| {
            std::process::Command::new(env!("CARGO_BIN_EXE_evalspec"))
                .args(["run", "spec.yaml", "--out", "out", "--quiet", "--dataset"])
                .arg(format!("items={data}.jsonl"))
                .current_dir(root)
                .spawn()
                .unwrap()
        };
        let (mut a, mut b) = (spawn("a"), spawn("b"));
        assert!(a.wait().unwrap().success());
        assert!(b.wait().unwrap().success());
        let json = std::fs::read_to_string(root.join("out/report.json")).unwrap();
        let md = std::fs::read_to_string(root.join("out/report.md")).unwrap();
        let xml = std::fs::read_to_string(root.join("out/junit.xml")).unwrap();
        let from_a = json.contains("a.jsonl");
        assert_eq!(
            from_a,
            md.contains("a.jsonl"),
            "report.md from the other run"
        );
        assert_eq!(from_a, xml.contains("2000"), "junit.xml from the other run");
    }
}

#[test]
fn templates_that_loop_or_grow_without_bound_are_stopped_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    project(root, "  - {template: t.md}\n");
    for (template, expected) in [
        (
            "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
            "template `t.md`: engine ran out of fuel",
        ),
        (
            "{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
            "template `t.md`: engine ran out of fuel",
        ),
        (
            "{% for i in range(100000) %}{{ 'x' * 2000 }}{% endfor %}",
            "the template `t.md` rendered more than 128 MiB",
        ),
        (
            "{{ 1.5 | fixed(65536) }}",
            "template `t.md`: invalid operation: 65536 digits asked for; a filter prints at most 100",
        ),
    ] {
        std::fs::write(root.join("t.md"), template).unwrap();
        refused(root, &["run", "spec.yaml", "--out", "out"], expected);
    }
}

#[test]
fn data_cannot_break_a_markdown_table_or_the_xml_of_junit() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("items.jsonl"),
        "{\"id\":\"a|b\\n# FAKE PASS\",\"x\":1}\n{\"id\":\"c\\u0001\",\"x\":2}\n",
    )
    .unwrap();
    std::fs::write(
        root.join("spec.yaml"),
        "name: t\nversion: 1.0.0\nparams:\n  note: {type: string, default: x}\n\
         datasets:\n  items: {format: jsonl, path: items.jsonl, key: id}\n\
         labels:\n  - LOW: items.x < 5\n\
         metrics:\n  n: {expr: count(), better: higher}\n\
         gates:\n  g: {metric: n, threshold: 10, message: \"too few\"}\n\
         offenders:\n  when: label == \"LOW\"\n  limit: 10\n\
         reports:\n  - markdown\n  - junit\n",
    )
    .unwrap();
    let out = evalspec(
        root,
        &[
            "run",
            "spec.yaml",
            "--out",
            "out",
            "--param",
            "note=n\u{1}o\u{1b}te",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let md = std::fs::read_to_string(root.join("out/report.md")).unwrap();
    assert!(!md.lines().any(|l| l.starts_with("# FAKE")), "{md}");
    let row = md.lines().find(|l| l.contains("FAKE")).unwrap();
    assert!(row.starts_with("| a\\|b # FAKE PASS (line 1) |"), "{row}");
    assert!(md.contains("| c\\u{1} (line 2) |"), "{md}");
    let xml = std::fs::read_to_string(root.join("out/junit.xml")).unwrap();
    let parsed = roxmltree::Document::parse(&xml);
    assert!(parsed.is_ok(), "{parsed:?}\n{xml}");
    assert!(xml.contains(r#"value="n\u{1}o\u{1b}te""#), "{xml}");
}

/// The regular files under `dir` (path relative to it) with their bytes.
fn files_in(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    snapshot(dir)
        .into_iter()
        .filter(|(path, _)| path.is_file())
        .map(|(path, bytes)| {
            let name = path.strip_prefix(dir).unwrap().display().to_string();
            (name, bytes)
        })
        .collect()
}

#[test]
fn a_report_set_is_replaced_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    project(
        root,
        "  - markdown\n  - junit\n  - html\n  - summary\n  - items\n",
    );
    let first = evalspec(root, &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let before = files_in(&root.join("out"));
    assert_eq!(before.len(), 7, "{before:?}");
    // The last report cannot be written (a folder is where it goes): not one
    // of the others is replaced, and no staging file is left.
    std::fs::remove_file(root.join("out/summary.md")).unwrap();
    std::fs::create_dir(root.join("out/summary.md")).unwrap();
    std::fs::write(root.join("items.jsonl"), "{\"id\":\"c\",\"x\":3}\n").unwrap();
    let before: Vec<_> = before
        .into_iter()
        .filter(|(n, _)| n != "summary.md")
        .collect();
    let failed = evalspec(root, &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(failed.code, 2, "{}", failed.stderr);
    assert!(failed.stderr.contains("summary.md"), "{}", failed.stderr);
    assert!(!failed.stderr.contains("panicked"), "{}", failed.stderr);
    assert_eq!(files_in(&root.join("out")), before, "nothing replaced");
    let names: Vec<String> = std::fs::read_dir(root.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.starts_with('.')),
        "a staging file is left: {names:?}"
    );
}

#[test]
fn a_report_may_not_take_the_item_values_name() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    project(root, "  - {format: markdown, path: item-values.jsonl}\n");
    refused(
        root,
        &["run", "spec.yaml", "--out", "out"],
        "item-values.jsonl",
    );
}

#[test]
fn an_earlier_runs_reports_do_not_stay_beside_a_new_set() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    project(root, "  - markdown\n");
    let out = |args: &[&str]| {
        let mut all = vec!["run", "spec.yaml", "--out", "out"];
        all.extend(args);
        let run = evalspec(root, &all);
        assert!(run.code <= 1, "{}", run.stderr);
    };
    out(&["--format", "html", "--format", "items", "--format", "junit"]);
    for name in ["report.html", "items.jsonl", "junit.xml", "report.json"] {
        assert!(root.join("out").join(name).is_file(), "{name}");
    }
    // A file of the user's, and a staging folder a killed run left behind.
    std::fs::write(root.join("out/notes.txt"), "mine\n").unwrap();
    std::fs::create_dir(root.join("out/.evalspec-staging-x1")).unwrap();
    std::fs::write(root.join("out/.evalspec-staging-x1/0"), "torn").unwrap();
    out(&[]);
    let mut names: Vec<String> = std::fs::read_dir(root.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["item-values.jsonl", "notes.txt", "report.json", "report.md"]
    );
}

#[test]
fn data_cannot_hide_gates_mention_anyone_or_forge_a_marker_in_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let hostile = "<!-- evalspec-diff: other --><img src=x> @all \u{202e}gnp";
    let items = |ok: bool| {
        format!(
            "{}\n{}\n",
            serde_json::json!({"id": hostile, "x": 1, "c": hostile, "ok": ok}),
            serde_json::json!({"id": "b", "x": 2, "c": "plain", "ok": ok}),
        )
    };
    std::fs::write(root.join("items.jsonl"), items(true)).unwrap();
    std::fs::write(
        root.join("spec.yaml"),
        "name: t\nversion: 1.0.0\ndatasets:\n  items: {format: jsonl, path: items.jsonl, key: id}\n\
         slices:\n  c: items.c\nfields:\n  ok: items.ok\nlabels:\n  - OK: ok\n  - BAD: true\n\
         metrics:\n  m: {expr: ratio(items.ok), by: c, better: higher}\n\
         gates:\n  g: {metric: m, by: c, threshold: 1}\nreports: [markdown, summary, items]\n",
    )
    .unwrap();
    let old = evalspec(root, &["run", "spec.yaml", "--out", "old"]);
    assert!(old.code <= 1, "{}", old.stderr);
    std::fs::write(root.join("items.jsonl"), items(false)).unwrap();
    let new = evalspec(root, &["run", "spec.yaml", "--out", "new"]);
    assert!(new.code <= 1, "{}", new.stderr);
    let diff = evalspec(root, &["diff", "old", "new", "--format", "md"]);
    assert!(diff.code <= 1, "{}", diff.stderr);
    let summary = std::fs::read_to_string(root.join("new/summary.md")).unwrap();
    let report = std::fs::read_to_string(root.join("new/report.md")).unwrap();
    for (what, text) in [
        ("summary.md", &summary),
        ("report.md", &report),
        ("diff", &diff.stdout),
    ] {
        assert!(text.contains("&lt;!-- evalspec-diff"), "{what}:\n{text}");
        for raw in ["<!-- evalspec-diff: other", "<img", "@all", "\u{202e}"] {
            assert!(!text.contains(raw), "{what} has {raw:?}:\n{text}");
        }
    }
}

#[test]
fn threads_are_capped_whatever_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    project(root, "  - markdown\n");
    let items: String = (0..3000)
        .map(|i| format!("{{\"id\":\"k{i}\",\"x\":{i}}}\n"))
        .collect();
    std::fs::write(root.join("items.jsonl"), items).unwrap();
    let check = evalspec(root, &["check", "spec.yaml", "--threads", "100000"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    assert!(check.stdout.contains("threads: 256"), "{}", check.stdout);
    let started = std::time::Instant::now();
    let run = evalspec(
        root,
        &["run", "spec.yaml", "--out", "out", "--threads", "100000"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert!(started.elapsed().as_secs() < 30);
    let one = evalspec(
        root,
        &["run", "spec.yaml", "--out", "one", "--threads", "1"],
    );
    assert_eq!(one.code, 0, "{}", one.stderr);
    assert_eq!(
        std::fs::read(root.join("out/item-values.jsonl")).unwrap(),
        std::fs::read(root.join("one/item-values.jsonl")).unwrap()
    );
}

#[test]
fn templates_come_from_the_spec_folder_only() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    std::fs::create_dir_all(root.join("t")).unwrap();
    std::fs::write(dir.path().join("secret.md"), "TOKEN=hunter2\n").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.md"), root.join("t/link.md")).unwrap();
    std::fs::write(root.join("t/inc.md"), "{% include 'link.md' %}\n").unwrap();
    for template in [
        "../secret.md",
        "/proc/self/environ",
        "t/link.md",
        "t/inc.md",
    ] {
        project(
            &root,
            &format!("  - {{template: \"{template}\", path: out.md}}\n"),
        );
        let out = evalspec(&root, &["run", "spec.yaml", "--out", "out"]);
        assert_eq!(out.code, 2, "{template}: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
        assert!(!out.stderr.contains("hunter2"), "{}", out.stderr);
        assert!(!root.join("out/out.md").exists(), "{template}");
    }
    // A template inside the folder still renders.
    std::fs::write(root.join("t/ok.md"), "{{ spec.name }}\n").unwrap();
    project(&root, "  - {template: t/ok.md, path: out.md}\n");
    let out = evalspec(&root, &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn summary_md_fits_a_github_step_summary() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let items: String = (0..12_000)
        .map(|i| {
            format!(
                "{{\"id\":\"k{i}\",\"c\":\"value-{i}-{}\",\"ok\":false}}\n",
                "x".repeat(40)
            )
        })
        .collect();
    std::fs::write(root.join("items.jsonl"), items).unwrap();
    std::fs::write(
        root.join("spec.yaml"),
        "name: t\nversion: 1.0.0\ndatasets:\n  items: {format: jsonl, path: items.jsonl, key: id}\n\
         slices:\n  c: items.c\nmetrics:\n  m: {expr: ratio(items.ok), by: c, better: higher}\n\
         gates:\n  g: {metric: m, by: c, threshold: 1}\nreports: [summary]\n",
    )
    .unwrap();
    let out = evalspec(root, &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let summary = std::fs::read_to_string(root.join("out/summary.md")).unwrap();
    assert!(summary.len() <= 1_000_000, "{}", summary.len());
    assert!(
        summary.contains("Cut to fit a step summary"),
        "{}",
        &summary[..200]
    );
    assert_eq!(
        summary.matches("<details>").count(),
        summary.matches("</details>").count()
    );
}
