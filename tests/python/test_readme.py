"""The README's Python example runs, and its action and pre-commit examples name
inputs and hooks that exist."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from conftest import REPO

README = (REPO / "README.md").read_text()


def section(heading: str) -> str:
    start = README.index(f"\n## {heading}\n")
    end = README.find("\n## ", start + 1)
    return README[start:end]


def blocks(text: str, language: str) -> list:
    return re.findall(rf"```{language}\n(.*?)```", text, re.DOTALL)


def test_install_comes_first_with_pip_then_cargo():
    first_block = blocks(README, "sh")[0]
    assert first_block.splitlines()[0].startswith("cargo run --release -- run specs/")
    install = blocks(section("Install"), "sh")[0].splitlines()
    # From this repository: the PyPI name `evalspec` belongs to another project.
    assert install[0].startswith("pip install .") and install[1].startswith("cargo install")


def test_the_python_example_runs(tmp_path: Path):
    [example] = blocks(section("Python"), "python")
    shutil.copytree(REPO / "specs", tmp_path / "specs")
    shutil.copytree(REPO / "tests/fixtures/broken", tmp_path / "tests/fixtures/broken")
    done = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "True 0 1.0"
    assert lines[1] == "precision pass 1.0 []"
    assert any(line.startswith("False [('precision', ['`precision >= min_precision` is false: 0.5 against 0.8'])") for line in lines)
    assert "### evalspec diff" in lines
    assert "tests/fixtures/broken/err_unknown_name_suggests.yaml 9 29" in lines
    assert "error: unknown name `shiped`" in lines
    assert (tmp_path / "eval-out/junit.xml").is_file()
    assert not (tmp_path / "changed-out/inputs").exists()  # records are not copied


def test_the_example_workflow_uses_the_action_s_inputs():
    action = yaml.safe_load((REPO / "action.yml").read_text())
    [workflow] = [yaml.safe_load(b) for b in blocks(section("GitHub Action"), "yaml")]
    steps = workflow["jobs"]["eval"]["steps"]
    [ours] = [s for s in steps if str(s.get("uses", "")).split("@")[0].endswith("/evalspec")]
    assert set(ours["with"]) <= set(action["inputs"])
    assert "spec" in ours["with"]
    assert workflow["permissions"]["pull-requests"] == "write"


def test_the_pre_commit_examples_name_the_hooks():
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    remote, local = [yaml.safe_load(b) for b in blocks(section("pre-commit"), "yaml")]
    assert [h["id"] for h in remote["repos"][0]["hooks"]] == list(hooks)
    # The example's `args` are options the module takes (a usage error is exit 2).
    for hook in remote["repos"][0]["hooks"]:
        command = hooks[hook["id"]]["entry"].split()[-1]
        done = subprocess.run([sys.executable, "-m", "evalspec_rs.pre_commit", command, *hook.get("args", []),
                               "eval/rag.yaml", "specs/rag-precision.yaml"], cwd=REPO, capture_output=True, text=True)
        assert (done.returncode, done.stderr) == (0, ""), hook
    for hook in local["repos"][0]["hooks"]:
        assert hook["entry"] == hooks[hook["id"]]["entry"]
        assert hook["files"] == hooks[hook["id"]]["files"]
