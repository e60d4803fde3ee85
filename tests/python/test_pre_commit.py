"""The pre-commit hooks: `.pre-commit-hooks.yaml` names the module, and the module
checks and verifies the changed specs, skipping other YAML files."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from conftest import REPO

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
    done = hook("check", SHIPPED[0], broken)
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
    done = hook("frobnicate")
    assert done.returncode == 2
    assert done.stderr.startswith("usage: python -m evalspec_rs.pre_commit check|verify")
