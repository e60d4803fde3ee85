//! Data files: byte-order marks, control characters, devices.

use crate::support::{self, evalspec};

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

#[test]
fn a_run_named_by_a_null_field_says_so_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("gold.jsonl"), "{\"id\":\"a\"}\n").unwrap();
    std::fs::create_dir(root.join("runs")).unwrap();
    std::fs::write(root.join("runs/one.jsonl"), "{\"id\":\"a\",\"r\":null}\n").unwrap();
    std::fs::write(
        root.join("spec.yaml"),
        "name: t\nversion: 1.0.0\nitems: trace\ndatasets:\n  gold: {format: jsonl, path: gold.jsonl, key: id}\n  trace: {format: jsonl, runs: runs, key: id, run_name: trace.r}\nmetrics:\n  n: count()\n",
    )
    .unwrap();
    let out = evalspec(root, &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the run name `trace.r` is null (or missing)\n --> runs/one.jsonl:1"),
        "{}",
        out.stderr
    );
}

#[test]
fn kappa_over_thousands_of_labels_reports_a_bounded_table() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let lines: String = (0..3000)
        .map(|i| {
            format!(
                "{{\"id\":{i},\"a\":\"L{i}\",\"b\":\"L{}\"}}\n",
                if i < 100 { i } else { i + 1 }
            )
        })
        .collect();
    std::fs::write(root.join("items.jsonl"), lines).unwrap();
    std::fs::write(
        root.join("spec.yaml"),
        "name: t\nversion: 1.0.0\ndatasets:\n  items: {format: jsonl, path: items.jsonl, key: id}\n\
         metrics:\n  k: kappa(items.a, items.b)\nreports: [markdown, html]\n",
    )
    .unwrap();
    let out = evalspec(root, &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let json = std::fs::read_to_string(root.join("out/report.json")).unwrap();
    assert!(json.len() < 50_000, "report.json is {} bytes", json.len());
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let table = &report["agreement"][0];
    assert_eq!(table["labels"].as_array().unwrap().len(), 20);
    assert_eq!(table["labels"][19], "(other)");
    assert_eq!(table["folded"], 3001 - 19);
    let cells: u64 = table["table"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|row| row.as_array().unwrap().iter().map(|n| n.as_u64().unwrap()))
        .sum();
    assert_eq!(cells, 3000, "every item is counted in the table");
    let md = std::fs::read_to_string(root.join("out/report.md")).unwrap();
    assert!(md.contains("least used labels are counted together under `(other)`"));
}

#[test]
fn integer_ids_beyond_two_to_the_53_stay_distinct_and_join_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let ids = [
        "1234567890123456789",
        "1234567890123456788",
        "18446744073709551615",
        "-9223372036854775808",
    ];
    let gold: String = ids
        .iter()
        .enumerate()
        .map(|(i, id)| format!("{{\"id\": {id}, \"x\": {i}}}\n"))
        .collect();
    // Traces in another order, each carrying ten times its gold's x.
    let trace: String = ids
        .iter()
        .enumerate()
        .rev()
        .map(|(i, id)| format!("{{\"id\": {id}, \"y\": {}}}\n", i * 10))
        .collect();
    std::fs::write(root.join("gold.jsonl"), gold).unwrap();
    std::fs::write(root.join("trace.jsonl"), trace).unwrap();
    let csv: String = std::iter::once("id,y\n".to_string())
        .chain(
            ids.iter()
                .enumerate()
                .map(|(i, id)| format!("{id},{}\n", i * 10)),
        )
        .collect();
    std::fs::write(root.join("trace.csv"), csv).unwrap();
    std::fs::write(
        root.join("spec.yaml"),
        "name: t\nversion: 1.0.0\nitems: gold\ndatasets:\n  gold: {format: jsonl, path: gold.jsonl, key: id}\n\
         \x20 trace: {format: jsonl, path: trace.jsonl, key: id, schema: {id: integer, y: number}}\n\
         fields:\n  ok: trace.y == gold.x * 10\n  text: str(gold.id)\n\
         metrics:\n  all: {expr: ratio(ok), better: higher}\ngates:\n  g: {metric: all, threshold: 1}\n",
    )
    .unwrap();
    for trace in ["trace.jsonl", "trace.csv"] {
        let out = evalspec(
            root,
            &[
                "run",
                "spec.yaml",
                "--out",
                "out",
                "--format",
                "items",
                "--dataset",
                &format!("trace={trace}"),
            ],
        );
        assert_eq!(out.code, 0, "{trace}: {}\n{}", out.stderr, out.stdout);
        let items = std::fs::read_to_string(root.join("out/items.jsonl")).unwrap();
        for id in ids {
            assert!(
                items.contains(&format!("{{\"key\":{id},")),
                "{trace}: {id} in\n{items}"
            );
            assert!(
                items.contains(&format!("\"text\":\"{id}\"")),
                "{trace}: {id}"
            );
        }
    }
    // Two records 1 apart are two keys, not a duplicate.
    std::fs::write(
        root.join("gold.jsonl"),
        "{\"id\": 1234567890123456789, \"x\": 0}\n{\"id\": 1234567890123456789, \"x\": 1}\n",
    )
    .unwrap();
    let out = evalspec(root, &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("duplicate key `1234567890123456789`"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_kernel_file_is_never_read_as_data_nor_quoted() {
    let dir = tempfile::tempdir().unwrap();
    for format in ["csv", "jsonl"] {
        std::fs::write(
            dir.path().join("spec.yaml"),
            format!(
                "name: t\nversion: 1.0.0\ndatasets:\n  items: {{format: {format}, path: /proc/self/environ, key: id}}\nmetrics:\n  n: count()\n"
            ),
        )
        .unwrap();
        let out = crate::support::evalspec_with_env(
            dir.path(),
            &[("EVALSPEC_TEST_SECRET", "hunter2")],
            &["run", "spec.yaml", "--out", "out"],
        );
        assert_eq!(out.code, 2, "{format}: {}", out.stderr);
        assert!(
            out.stderr.contains("not a regular file"),
            "{format}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("hunter2"), "{}", out.stderr);
    }
}
