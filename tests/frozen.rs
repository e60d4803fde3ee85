//! Frozen specs end to end: freeze → edit → run (drift, diff, exit 2) → re-freeze
//! (history grows); dataset drift; `--allow-drift`; `extends` chains and cycles;
//! `init`; the JSON Schema against every shipped spec; `explain`.

use std::path::Path;

use serde_json::Value;

use crate::support::{evalspec, repo_root, write, Output};

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn ok(out: &Output) {
    assert!(
        out.code == 0,
        "exit {}: {}{}",
        out.code,
        out.stdout,
        out.stderr
    );
}

/// A project from `evalspec init`: its spec passes on its sample data.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    ok(&evalspec(dir.path(), &["init", "p"]));
    dir
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "`{from}` not in {}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn init_writes_a_spec_that_passes_and_never_overwrites() {
    let dir = project();
    let out = evalspec(dir.path(), &["run", "p/evalspec.yaml", "--out", "out"]);
    ok(&out);
    assert!(dir.path().join("p/evalspec.schema.json").is_file());
    let again = evalspec(dir.path(), &["init", "p"]);
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("exists already"), "{}", again.stderr);
}

#[test]
fn freeze_edit_run_refreeze() {
    let dir = project();
    let d = dir.path();
    let out = evalspec(d, &["freeze", "p/evalspec.yaml"]);
    ok(&out);
    assert!(
        out.stdout.contains("froze my-rag-eval 0.1.0"),
        "{}",
        out.stdout
    );
    ok(&evalspec(d, &["verify", "p/evalspec.yaml"]));
    // Freezing again without a change writes nothing.
    let same = evalspec(d, &["freeze", "p/evalspec.yaml"]);
    ok(&same);
    assert!(same.stdout.contains("up to date"), "{}", same.stdout);

    let run = evalspec(d, &["run", "p/evalspec.yaml", "--out", "out"]);
    ok(&run);
    let report = read_json(&d.join("out/report.json"));
    assert_eq!(report["spec"]["lock"]["status"], "frozen");
    // An extra report format on the command line is output, not drift.
    ok(&evalspec(
        d,
        &[
            "run",
            "p/evalspec.yaml",
            "--out",
            "outh",
            "--format",
            "html",
            "-q",
        ],
    ));
    let lock = read_json(&d.join("p/evalspec.yaml.lock"));
    assert_eq!(report["spec"]["lock"]["sha256"], lock["sha256"]);

    edit(
        &d.join("p/evalspec.yaml"),
        "min_precision: { type: number, default: 0.8 }",
        "min_precision: { type: number, default: 0.9 }",
    );
    let drifted = evalspec(d, &["run", "p/evalspec.yaml", "--out", "out2"]);
    assert_eq!(drifted.code, 2, "{}", drifted.stderr);
    assert!(
        drifted.stderr.contains("spec `evalspec.yaml` changed")
            && drifted.stderr.contains("--- evalspec.yaml (frozen)")
            && drifted
                .stderr
                .contains("-  min_precision: { type: number, default: 0.8 }")
            && drifted
                .stderr
                .contains("+  min_precision: { type: number, default: 0.9 }"),
        "{}",
        drifted.stderr
    );
    assert!(!d.join("out2").exists(), "nothing is written on drift");
    assert_eq!(evalspec(d, &["verify", "p/evalspec.yaml"]).code, 2);

    // The same version cannot be frozen again with a different meaning.
    let same_version = evalspec(d, &["freeze", "p/evalspec.yaml", "--reason", "x"]);
    assert_eq!(same_version.code, 2);
    assert!(
        same_version.stderr.contains("its version is still 0.1.0"),
        "{}",
        same_version.stderr
    );
    edit(
        &d.join("p/evalspec.yaml"),
        "version: 0.1.0",
        "version: 0.2.0",
    );
    let no_reason = evalspec(d, &["freeze", "p/evalspec.yaml"]);
    assert_eq!(no_reason.code, 2);
    assert!(
        no_reason.stderr.contains("needs a reason"),
        "{}",
        no_reason.stderr
    );
    ok(&evalspec(
        d,
        &[
            "freeze",
            "p/evalspec.yaml",
            "--reason",
            "QA lead: stricter precision for 0.2",
        ],
    ));
    let lock2 = read_json(&d.join("p/evalspec.yaml.lock"));
    let history = lock2["history"].as_array().unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history[1]["previous"], lock["sha256"]);
    assert_eq!(history[1]["sha256"], lock2["sha256"]);
    assert_eq!(history[1]["reason"], "QA lead: stricter precision for 0.2");
    assert_eq!(history[1]["changes"][0], "spec `evalspec.yaml` changed");
    ok(&evalspec(d, &["verify", "p/evalspec.yaml"]));
}

#[test]
fn a_frozen_dataset_edit_is_drift_and_allow_drift_runs_and_says_so() {
    let dir = project();
    let d = dir.path();
    ok(&evalspec(d, &["freeze", "p/evalspec.yaml"]));
    edit(&d.join("p/data/gold.jsonl"), "\"20 days\"", "\"21 days\"");
    let out = evalspec(d, &["verify", "p/evalspec.yaml"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("frozen dataset `gold` changed: 4 → 4 lines, first difference at line 4")
            && out.stderr.contains("--> p/data/gold.jsonl:4"),
        "{}",
        out.stderr
    );
    let run = evalspec(
        d,
        &[
            "run",
            "p/evalspec.yaml",
            "--out",
            "out",
            "--allow-drift",
            "-q",
        ],
    );
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("warning: drift from"),
        "{}",
        run.stderr
    );
    let report = read_json(&d.join("out/report.json"));
    assert_eq!(report["spec"]["lock"]["status"], "drifted");
    assert!(report["spec"]["lock"]["drift"][0]
        .as_str()
        .unwrap()
        .contains("`gold` changed"));
    let markdown = std::fs::read_to_string(d.join("out/report.md")).unwrap();
    assert!(markdown.contains("**Drifted** from lock"), "{markdown}");
}

const BASE: &str = "name: base
version: 1.0.0
items: gold
datasets:
  gold: {path: data/gold.jsonl, key: qid}
metrics:
  share: ratio(gold.ok)
gates:
  share:
    expr: share >= 0.5
    message: base gate
";

#[test]
fn extends_chains_merge_and_a_cycle_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "base/base.yaml", BASE);
    write(
        d,
        "base/data/gold.jsonl",
        "{\"qid\": \"a\", \"ok\": true}\n{\"qid\": \"b\", \"ok\": true}\n{\"qid\": \"c\", \"ok\": false}\n",
    );
    write(
        d,
        "r2/mid.yaml",
        "extends: ../base/base.yaml\nversion: 2.0.0\ngates:\n  share:\n    expr: share >= 0.6\n",
    );
    write(
        d,
        "r3/top.yaml",
        "extends: ../r2/mid.yaml\nname: top\nversion: 3.0.0\ngates:\n  share:\n    expr: share >= 0.7\n",
    );
    let check = evalspec(d, &["check", "r2/mid.yaml"]);
    ok(&check);
    assert!(
        check.stdout.contains("share [fail]: share >= 0.6"),
        "{}",
        check.stdout
    );
    // The base's dataset path stays relative to the base.
    ok(&evalspec(d, &["run", "r2/mid.yaml", "--out", "o2", "-q"]));
    let top = evalspec(d, &["run", "r3/top.yaml", "--out", "o3", "-q"]);
    assert_eq!(top.code, 1, "two of three is below 0.7: {}", top.stderr);
    let report = read_json(&d.join("o3/report.json"));
    assert_eq!(report["spec"]["name"], "top");
    assert_eq!(report["gates"][0]["message"], "base gate");
    let text = report["spec"]["text"].as_str().unwrap();
    assert!(
        text.starts_with("# resolved from r3/top.yaml ← r2/mid.yaml ← base/base.yaml\n"),
        "{text}"
    );
    assert!(text.contains("expr: \"share >= 0.7\""), "{text}");

    let explained = evalspec(d, &["explain", "r3/top.yaml"]);
    ok(&explained);
    assert!(
        explained
            .stdout
            .contains("resolved through extends: r3/top.yaml ← r2/mid.yaml ← base/base.yaml"),
        "{}",
        explained.stdout
    );

    // Freezing pins every file of the chain; a change to the base is drift.
    ok(&evalspec(d, &["freeze", "r3/top.yaml"]));
    let lock = read_json(&d.join("r3/top.yaml.lock"));
    let roles: Vec<(&str, &str)> = lock["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["role"].as_str().unwrap(), f["path"].as_str().unwrap()))
        .collect();
    assert!(roles.contains(&("extends", "../r2/mid.yaml")), "{roles:?}");
    assert!(
        roles.contains(&("extends", "../base/base.yaml")),
        "{roles:?}"
    );
    edit(
        &d.join("base/base.yaml"),
        "message: base gate",
        "message: changed",
    );
    let drift = evalspec(d, &["verify", "r3/top.yaml"]);
    assert_eq!(drift.code, 2);
    assert!(
        drift
            .stderr
            .contains("base spec `../base/base.yaml` changed")
            && drift.stderr.contains("+    message: changed"),
        "{}",
        drift.stderr
    );

    write(d, "loop/a.yaml", "extends: b.yaml\nname: a\n");
    write(d, "loop/b.yaml", "extends: a.yaml\nname: b\n");
    let cycle = evalspec(d, &["check", "loop/a.yaml"]);
    assert_eq!(cycle.code, 2);
    assert!(
        cycle
            .stderr
            .contains("`extends` goes round in a circle: loop/a.yaml → loop/b.yaml → loop/a.yaml"),
        "{}",
        cycle.stderr
    );
    assert!(
        cycle.stderr.contains("--> loop/b.yaml:1:10"),
        "{}",
        cycle.stderr
    );
}

#[test]
fn every_shipped_spec_is_frozen_and_its_lock_verifies() {
    let root = repo_root();
    let mut specs = 0;
    for entry in std::fs::read_dir(root.join("specs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            specs += 1;
            let out = evalspec(&root, &["verify", path.to_str().unwrap()]);
            assert_eq!(out.code, 0, "{}: {}", path.display(), out.stderr);
        }
    }
    assert!(specs >= 4);
}

#[test]
fn the_json_schema_accepts_every_shipped_spec_and_rejects_a_misspelled_key() {
    let root = repo_root();
    let out = evalspec(&root, &["schema"]);
    ok(&out);
    let schema: Value = serde_json::from_str(&out.stdout).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let as_json = |text: &str| -> Value { serde_saphyr::from_str(text).unwrap() };
    let mut specs = vec![(
        "init".to_string(),
        std::fs::read_to_string(root.join("src/commands/init/evalspec.yaml")).unwrap(),
    )];
    for entry in std::fs::read_dir(root.join("specs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            specs.push((
                path.display().to_string(),
                std::fs::read_to_string(&path).unwrap(),
            ));
        }
    }
    for (name, text) in &specs {
        assert!(
            text.starts_with("# yaml-language-server: $schema=evalspec.schema.json\n"),
            "{name} names the schema on its first line"
        );
        let errors: Vec<String> = validator
            .iter_errors(&as_json(text))
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
    }
    let misspelled = specs[1].1.replacen("\ndatasets:", "\ndataset:", 1);
    assert!(!validator.is_valid(&as_json(&misspelled)));
    let misspelled_gate = "name: x\nversion: 1.0.0\ndatasets: {g: {key: qid}}\ngates:\n  a: {expr: x, severty: warn}\n";
    assert!(!validator.is_valid(&as_json(misspelled_gate)));
}

#[test]
fn explain_says_what_each_metric_and_gate_computes() {
    let root = repo_root();
    let out = evalspec(
        &root,
        &[
            "explain",
            "specs/rag-precision.yaml",
            "--param",
            "k=3",
            "--threads",
            "2",
            "--max-memory",
            "4G",
        ],
    );
    ok(&out);
    insta::assert_snapshot!(out.stdout);
}

#[test]
fn freeze_verify_and_init_errors_say_what_did_not_happen() {
    // Their closing line is theirs, not `run`'s "nothing was scored".
    let dir = project();
    let last_line = |out: &Output| {
        out.stderr
            .trim_end()
            .lines()
            .last()
            .unwrap_or("")
            .to_string()
    };
    let again = evalspec(dir.path(), &["init", "p"]);
    assert_eq!(again.code, 2);
    assert!(
        last_line(&again).ends_with("; nothing was written"),
        "{}",
        again.stderr
    );
    let unfrozen = evalspec(dir.path(), &["verify", "p/evalspec.yaml"]);
    assert_eq!(unfrozen.code, 2);
    assert_eq!(
        last_line(&unfrozen),
        "1 error; the spec was not verified against its lock"
    );
    ok(&evalspec(dir.path(), &["freeze", "p/evalspec.yaml"]));
    edit(&dir.path().join("p/evalspec.yaml"), "0.", "0.0");
    let unbumped = evalspec(dir.path(), &["freeze", "p/evalspec.yaml"]);
    assert_eq!(unbumped.code, 2, "{}", unbumped.stderr);
    assert_eq!(last_line(&unbumped), "1 error; nothing was frozen");
    for out in [&again, &unfrozen, &unbumped] {
        assert!(!out.stderr.contains("nothing was scored"), "{}", out.stderr);
    }
}
