//! Expressions: non-ASCII text, nesting and chains that would exhaust the stack.

use super::{check_refuses, spec_with_field};
use crate::support::evalspec;

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
fn nesting_at_the_limit_compiles_in_any_build() {
    // An unoptimised parser needs ~150 KB of stack a level: 64 levels overflowed the
    // fuzz harness's 8 MiB main thread (it called the parser directly). The command
    // runs on a stack of its own; this pins that it holds the limit in a debug build.
    for (open, close) in [("(", ")"), ("[", "]"), ("abs(", ")")] {
        let dir = tempfile::tempdir().unwrap();
        let expr = format!("\"{}1{}\"", open.repeat(64), close.repeat(64));
        std::fs::write(dir.path().join("spec.yaml"), spec_with_field(&expr)).unwrap();
        let out = evalspec(dir.path(), &["check", "spec.yaml"]);
        assert_eq!(out.code, 0, "{open}: {}", out.stderr);
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
fn strings_and_lists_built_by_expressions_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("gold.jsonl"),
        "{\"id\":\"a\",\"s\":\"xxxxxxxxxxxxxxxx\",\"l\":[1,2,3,4]}\n",
    )
    .unwrap();
    // Each field doubles the one before: 2^40 copies unless something stops it.
    let doubling = |start: &str| {
        let mut fields = format!("  f0: {start}\n");
        for i in 1..40 {
            fields.push_str(&format!("  f{i}: f{} + f{}\n", i - 1, i - 1));
        }
        fields + "metrics:\n  n: count(len(f39) > 0)\n"
    };
    let head = "name: t\nversion: 1.0.0\ndatasets:\n  gold: {format: jsonl, path: gold.jsonl, key: id}\nfields:\n";
    let mut shared = String::from("  f0: gold.s\n");
    for i in 1..22 {
        shared.push_str(&format!("  f{i}: f{} + f{}\n", i - 1, i - 1));
    }
    for (fields, expected) in [
        (doubling("gold.s"), "`+` would build a string longer than 64 MiB, the limit"),
        (doubling("gold.l"), "`+` would build a list of 1048576 elements; the limit is 1000000"),
        (
            format!("{shared}  big: pystr(repeat(f21, 1000000))\nmetrics:\n  n: count(len(big) > 0)\n"),
            "`pystr` would build a string longer than 64 MiB",
        ),
        (
            format!("{shared}  big: join(repeat(f21, 1000000), \",\")\nmetrics:\n  n: count(len(big) > 0)\n"),
            "`join` would build a string longer than 64 MiB",
        ),
    ] {
        std::fs::write(root.join("spec.yaml"), format!("{head}{fields}")).unwrap();
        let out = evalspec(root, &["run", "spec.yaml", "--out", "out"]);
        assert_eq!(out.code, 2, "{expected}: {}", out.stderr);
        assert!(out.stderr.contains(expected), "{}", out.stderr);
        assert!(out.stderr.contains(" --> spec.yaml:"), "located: {}", out.stderr);
    }
}

/// Found by the fuzz smoke run in CI (an empty input to the `expression`
/// target): an empty expression overflowed while being located.
#[test]
fn an_empty_expression_is_a_located_error() {
    check_refuses(&spec_with_field("\"\""), "spec.yaml:6:");
    check_refuses(&spec_with_field("\" \""), "spec.yaml:6:");
}

#[test]
fn a_label_that_is_not_a_bool_says_so_without_an_if() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("items.jsonl"),
        "{\"id\":\"a\",\"x\":\"s\"}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("spec.yaml"),
        "name: t\nversion: 1.0.0\ndatasets:\n  items: {format: jsonl, path: items.jsonl, key: id}\n\
         labels:\n  - OK: items.x\n  - BAD: true\nmetrics:\n  n: count()\n",
    )
    .unwrap();
    let out = crate::support::evalspec(dir.path(), &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the condition of a label must be a bool, found string \"s\""),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("condition of `if`"), "{}", out.stderr);
}
