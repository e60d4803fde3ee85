"""The pre-commit hooks: `.pre-commit-hooks.yaml` names the module, and the module
checks and verifies the changed files named as specs (`--pattern`, by default
`*.eval.yaml` and `specs/*.yaml`), skipping other YAML files."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from evalspec_rs.pre_commit import DEFAULT_PATTERNS, is_spec

SHIPPED = [str(p.relative_to(REPO)) for p in sorted((REPO / "specs").glob("*.yaml"))]


def hook(command: str, *files: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evalspec_rs.pre_commit", command, *files], cwd=cwd,
                          capture_output=True, text=True)


def test_the_hook_definitions():
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"evalspec-check", "evalspec-verify"}
    assert hooks["evalspec-check"]["entry"] == "python -m evalspec_rs.pre_commit check"
    assert hooks["evalspec-verify"]["entry"] == "python -m evalspec_rs.pre_commit verify"
    for definition in hooks.values():
        assert definition["language"] == "python"
        assert definition["name"] and definition["description"]
    import re

    assert re.search(hooks["evalspec-check"]["files"], "specs/rag.yaml")
    assert re.search(hooks["evalspec-verify"]["files"], "specs/rag.yaml.lock")
    assert not re.search(hooks["evalspec-check"]["files"], "src/lib.rs")


def test_shipped_specs_pass_both_hooks_silently():
    for command in ("check", "verify"):
        done = hook(command, *SHIPPED, "Cargo.toml", "action.yml", ".pre-commit-hooks.yaml")
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_broken_spec_fails_check_with_its_diagnostics(rust):
    broken = "tests/fixtures/broken/err_unknown_name_suggests.yaml"
    done = hook("check", "--pattern", "specs/*.yaml", "--pattern=tests/fixtures/broken/*.yaml", SHIPPED[0], broken)
    assert done.returncode == 1
    expected = rust(["check", broken], REPO).stderr
    assert done.stderr == f"evalspec check {broken}: exit 2\n{expected}"


def test_verify_finds_drift_through_the_spec_or_its_lock(tmp_path: Path):
    shutil.copytree(REPO / "specs", tmp_path / "specs")
    spec = tmp_path / "specs/rag-precision.yaml"
    assert hook("verify", "specs/rag-precision.yaml.lock", cwd=tmp_path).returncode == 0
    spec.write_text(spec.read_text().replace("default: 0.80", "default: 0.70", 1))
    for changed in ("specs/rag-precision.yaml", "specs/rag-precision.yaml.lock"):
        done = hook("verify", changed, cwd=tmp_path)
        assert done.returncode == 1, done
        assert done.stderr.startswith("evalspec verify specs/rag-precision.yaml: exit 2\n")
    # A spec without a lock is not frozen: nothing to verify; check still runs.
    (tmp_path / "specs/rag-precision.yaml.lock").unlink()
    assert hook("verify", "specs/rag-precision.yaml", cwd=tmp_path).returncode == 0
    assert hook("check", "specs/rag-precision.yaml", cwd=tmp_path).returncode == 0


def test_usage_errors():
    for args in (["frobnicate"], ["--pattern", "x", "check"], ["check", "--pattern"], ["check", "--pattern", ""], ["check", "--pattern="],
                 ["verify", "--frobnicate", "specs/rag-precision.yaml"]):
        done = hook(*args)
        assert done.returncode == 2, args
        assert done.stderr == "usage: python -m evalspec_rs.pre_commit check|verify [--pattern GLOB]... FILE...\n"


@pytest.mark.parametrize("name, named", [
    ("specs/rag.yaml", True),
    ("specs/rag.yml", True),
    ("team/eval/specs/rag.yaml", True),
    ("rag.eval.yaml", True),
    ("eval/rag.eval.yml", True),
    ("specs/data/config.yaml", False),  # under specs/, not directly in it
    ("charts/app/values.yaml", False),
    ("values.yaml", False),
    ("specs/rag.yaml.lock", False),  # a lock stands for its spec in specs_of
    ("specs/evalspec.schema.json", False),
])
def test_the_default_patterns(name: str, named: bool):
    assert is_spec(name, DEFAULT_PATTERNS) is named


def test_yaml_that_is_not_named_as_a_spec_is_skipped(tmp_path: Path):
    """A Helm values.yaml has a top-level `metrics:` key: before, the hook took it
    for a spec and failed the commit."""
    (tmp_path / "charts/app").mkdir(parents=True)
    (tmp_path / "charts/app/values.yaml").write_text("replicaCount: 2\nmetrics:\n  enabled: true\n")
    (tmp_path / "specs/data").mkdir(parents=True)
    (tmp_path / "specs/data/config.yaml").write_text("metrics: [a]\ngates: {}\n")
    for command in ("check", "verify"):
        done = hook(command, "charts/app/values.yaml", "specs/data/config.yaml", cwd=tmp_path)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    # A file named as a spec is checked, whatever it holds.
    (tmp_path / "rag.eval.yaml").write_text("metrics:\n  enabled: true\n")
    done = hook("check", "charts/app/values.yaml", "rag.eval.yaml", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("evalspec check rag.eval.yaml: exit 2\n")
    assert "charts/app/values.yaml" not in done.stderr


def test_the_user_s_pattern_replaces_the_defaults(tmp_path: Path):
    shutil.copytree(REPO / "specs", tmp_path / "eval")
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs/values.yaml").write_text("metrics:\n  enabled: true\n")
    ours = ["--pattern", "eval/*.yaml"]
    for command in ("check", "verify"):
        done = hook(command, *ours, "specs/values.yaml", "eval/rag-precision.yaml", cwd=tmp_path)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    # Its specs are checked, and a changed lock stands for its spec.
    spec = tmp_path / "eval/rag-precision.yaml"
    spec.write_text(spec.read_text().replace("default: 0.80", "default: 0.70", 1))
    done = hook("verify", *ours, "eval/rag-precision.yaml.lock", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("evalspec verify eval/rag-precision.yaml: exit 2\n")
    spec.write_text("metrics: {precision: nope(\n")
    done = hook("check", *ours, "--pattern", "*.eval.yaml", "eval/rag-precision.yaml", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("evalspec check eval/rag-precision.yaml: exit 2\n")
