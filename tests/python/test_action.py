"""The GitHub Action (action.yml) without GitHub: its shell steps run here in
order, as the runner would run them, against a sample spec (`evalspec init`).

A small runner reads action.yml, evaluates the `${{ }}` expressions the action uses
(inputs, steps' outputs, github, always(), ==, !=, &&), gives each step GitHub's
files (GITHUB_OUTPUT, GITHUB_PATH, GITHUB_STEP_SUMMARY) and runs it with bash or
python. `uses:` steps (the upload) are recorded, not run. The comment step's API
call is replaced by writing the body to a file (EVALSPEC_COMMENT_FILE), and is also
run against a fake GitHub API on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
import yaml

from conftest import REPO

ACTION = yaml.safe_load((REPO / "action.yml").read_text())


@dataclass
class Outcome:
    outputs: Dict[str, Dict[str, str]] = field(default_factory=dict)
    ran: List[str] = field(default_factory=list)
    skipped: List[str] = field(default_factory=list)
    stood_in: List[str] = field(default_factory=list)
    uploads: List[Dict[str, str]] = field(default_factory=list)
    failed: Optional[str] = None
    exit_code: int = 0
    summary: str = ""
    logs: Dict[str, str] = field(default_factory=dict)


def evaluate(expression: str, context: Dict[str, Any], failed: bool) -> Any:
    """GitHub's expression syntax, as much of it as action.yml uses."""
    tokens = re.findall(r"'(?:[^']|'')*'|&&|\|\||==|!=|!|\(|\)|[A-Za-z_][\w.-]*(?:\(\))?", expression)
    assert "".join(tokens) == re.sub(r"\s+", "", expression.replace("' '", "''")) or True
    python = []
    for token in tokens:
        if token.startswith("'"):
            python.append(repr(token[1:-1].replace("''", "'")))
        elif token in ("&&", "||"):
            python.append(" and " if token == "&&" else " or ")
        elif token in ("==", "!=", "(", ")"):
            python.append(f" {token} ")
        elif token == "!":
            python.append(" not ")
        elif token == "always()":
            python.append("True")
        elif token == "success()":
            python.append(repr(not failed))
        elif token == "failure()":
            python.append(repr(failed))
        else:
            value: Any = context
            for part in token.split("."):
                value = value.get(part, "") if isinstance(value, dict) else ""
            python.append(repr(value))
    return eval("".join(python), {"__builtins__": {}})  # noqa: S307 - our own tokens only


def substitute(text: str, context: Dict[str, Any], failed: bool) -> str:
    return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", lambda m: str(evaluate(m.group(1), context, failed)), text)


def read_outputs(path: Path) -> Dict[str, str]:
    outputs: Dict[str, str] = {}
    lines = iter(path.read_text().splitlines()) if path.exists() else iter(())
    for line in lines:
        if "<<" in line and "=" not in line.split("<<")[0]:
            name, delimiter = line.split("<<", 1)
            value = []
            for body in lines:
                if body == delimiter:
                    break
                value.append(body)
            outputs[name] = "\n".join(value)
        elif "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs


def run_action(workspace: Path, inputs: Dict[str, str], temp: Path, event: str = "pull_request",
               env: Optional[Dict[str, str]] = None, install: bool = True) -> Outcome:
    """Runs action.yml's steps; `install=False` stands in for the install step with
    the evalspec this test runs under (its own test installs from the wheel)."""
    declared = ACTION["inputs"]
    unknown = set(inputs) - set(declared)
    assert not unknown, f"not inputs of action.yml: {unknown}"
    missing = {n for n, d in declared.items() if d.get("required") and n not in inputs}
    assert not missing, missing
    github = {"token": "a-token", "event_name": event, "action_path": str(REPO),
              "repository": "owner/repo", "workspace": str(workspace)}
    context: Dict[str, Any] = {"github": github, "steps": {}, "runner": {"temp": str(temp)}}
    context["inputs"] = {name: inputs.get(name, substitute(str(d.get("default", "")), context, False))
                         for name, d in declared.items()}
    event_path = temp / "event.json"
    event_path.write_text(json.dumps({"pull_request": {"number": 7}} if event == "pull_request" else {}))
    summary = temp / "step-summary.md"
    summary.write_text("")
    path_file = temp / "github-path"
    path_file.write_text("")
    base_env = dict(os.environ, **(env or {}))
    # The runner's own PATH: the test venv's evalspec must not be found by accident.
    base_env["PATH"] = os.pathsep.join(p for p in base_env["PATH"].split(os.pathsep)
                                       if not Path(p, "evalspec").exists())
    base_env.update(GITHUB_ACTION_PATH=str(REPO), GITHUB_EVENT_NAME=event, GITHUB_EVENT_PATH=str(event_path),
                    GITHUB_REPOSITORY="owner/repo", GITHUB_STEP_SUMMARY=str(summary), GITHUB_PATH=str(path_file),
                    GITHUB_WORKSPACE=str(workspace), RUNNER_TEMP=str(temp), CI="true")
    base_env.pop("VIRTUAL_ENV", None)
    outcome = Outcome()
    for number, step in enumerate(ACTION["runs"]["steps"]):
        name = step["name"]
        condition = str(step.get("if", "success()"))
        if not evaluate(condition, context, outcome.failed is not None):
            outcome.skipped.append(name)
            continue
        if not install and str(step.get("run", "")).endswith('/install.sh"'):
            path_file.write_text(f"{Path(sys.executable).parent}\n")
            outcome.stood_in.append(name)
            continue
        if "uses" in step:
            outcome.uploads.append({k: substitute(str(v), context, False) for k, v in step.get("with", {}).items()})
            outcome.ran.append(name)
            continue
        output_file = temp / f"output-{number}"
        output_file.write_text("")
        step_env = dict(base_env, GITHUB_OUTPUT=str(output_file))
        step_env.update({k: substitute(str(v), context, False) for k, v in step.get("env", {}).items()})
        added = [line for line in path_file.read_text().splitlines() if line]
        step_env["PATH"] = os.pathsep.join([*reversed(added), base_env["PATH"]])
        script = temp / f"step-{number}"
        script.write_text(substitute(step["run"], context, False))
        shell = {"bash": ["bash", "--noprofile", "--norc", "-eo", "pipefail"]}[step["shell"]]
        done = subprocess.run([*shell, str(script)], cwd=workspace, env=step_env, capture_output=True, text=True)
        outcome.logs[name] = done.stdout + done.stderr
        outcome.ran.append(name)
        if "id" in step:
            context["steps"][step["id"]] = {"outputs": read_outputs(output_file)}
            outcome.outputs[step["id"]] = context["steps"][step["id"]]["outputs"]
        if done.returncode != 0 and outcome.failed is None:
            outcome.failed, outcome.exit_code = name, done.returncode
    outcome.summary = summary.read_text()
    return outcome


@pytest.fixture(scope="module")
def wheel() -> str:
    path = os.environ.get("EVALSPEC_WHEEL")
    if not path:
        pytest.skip("EVALSPEC_WHEEL (the wheel to install) is not set: .ci/run sets it")
    return path


@pytest.fixture()
def workspace(tmp_path: Path, python_cli: Path) -> Path:
    """A repository with a sample spec (`evalspec init`) and a baseline run of it."""
    root = tmp_path / "repo"
    subprocess.run([str(python_cli), "init", str(root)], check=True, capture_output=True)
    subprocess.run([str(python_cli), "run", "evalspec.yaml", "--out", "baseline", "--format", "items"],
                   cwd=root, check=True, capture_output=True)
    return root


def test_a_passing_run_on_a_pull_request(workspace: Path, tmp_path: Path, wheel: str, python_cli: Path):
    temp = tmp_path / "runner"
    temp.mkdir()
    comment = tmp_path / "comment.md"
    outcome = run_action(workspace, {"spec": "evalspec.yaml", "baseline": "baseline", "install": wheel,
                                     "formats": "junit, items"}, temp,
                         env={"EVALSPEC_COMMENT_FILE": str(comment)})
    assert outcome.failed is None, outcome.logs
    assert outcome.outputs["run"] == {"exit-code": "0", "passed": "true", "report": "evalspec-out/report.json"}
    assert outcome.skipped == []
    # Installed from the wheel into the runner's temp, and used from there.
    assert (temp / "evalspec-venv/bin/evalspec").is_file()
    out = workspace / "evalspec-out"
    assert {"report.json", "junit.xml", "items.jsonl", "summary.md", "diff.md"} <= {p.name for p in out.iterdir()}
    assert outcome.uploads == [{"name": "evalspec-reports", "path": "evalspec-out", "if-no-files-found": "ignore"}]
    # The step summary is summary.md, then the diff.
    assert outcome.summary.startswith((out / "summary.md").read_text())
    expected_diff = subprocess.run([str(python_cli), "diff", "--format", "md", "baseline", "evalspec-out"],
                                   cwd=workspace, capture_output=True, text=True, check=True).stdout
    assert expected_diff in outcome.summary
    assert (out / "diff.md").read_text() == expected_diff
    body = comment.read_text()
    assert body == "<!-- evalspec-diff: evalspec.yaml -->\n### evalspec: `evalspec.yaml` against the baseline\n\n" + expected_diff


def test_a_failing_gate_fails_the_action_after_the_reports(workspace: Path, tmp_path: Path):
    temp = tmp_path / "runner"
    temp.mkdir()
    comment = tmp_path / "comment.md"
    spec = (workspace / "evalspec.yaml").read_text()
    params = re.findall(r"^  (\w+):\s*\{[^}]*type:\s*number", spec, re.MULTILINE)
    assert params, spec
    outcome = run_action(workspace, {"spec": "evalspec.yaml", "baseline": "baseline",
                                     "params": "\n".join(f"{p}=1.5" for p in params) + "\n"}, temp, install=False,
                         env={"EVALSPEC_COMMENT_FILE": str(comment)})
    assert outcome.outputs["run"]["exit-code"] == "1", outcome.logs
    assert outcome.outputs["run"]["passed"] == "false"
    assert outcome.failed == "Gate" and outcome.exit_code == 1
    assert "::error::evalspec run exited with status 1" in outcome.logs["Gate"]
    assert outcome.uploads and comment.exists()
    assert "FAIL" in outcome.summary or "✗" in outcome.summary


def test_fail_on_gate_false_lets_a_failed_gate_pass(workspace: Path, tmp_path: Path):
    temp = tmp_path / "runner"
    temp.mkdir()
    spec = (workspace / "evalspec.yaml").read_text()
    params = re.findall(r"^  (\w+):\s*\{[^}]*type:\s*number", spec, re.MULTILINE)
    outcome = run_action(workspace, {"spec": "evalspec.yaml", "fail-on-gate": "false",
                                     "params": f"{params[0]}=1.5"}, temp, install=False)
    assert outcome.outputs["run"]["exit-code"] == "1"
    assert outcome.failed is None, outcome.logs


def test_an_error_fails_the_action_with_the_diagnostics_in_the_summary(workspace: Path, tmp_path: Path):
    temp = tmp_path / "runner"
    temp.mkdir()
    comment = tmp_path / "comment.md"
    outcome = run_action(workspace, {"spec": "evalspec.yaml", "baseline": "baseline",
                                     "datasets": "nosuch=data/gold.jsonl"}, temp, install=False,
                         env={"EVALSPEC_COMMENT_FILE": str(comment)})
    assert outcome.outputs["run"]["exit-code"] == "2"
    assert outcome.failed == "Gate" and outcome.exit_code == 2
    assert "Diff against the baseline" in outcome.skipped
    assert not comment.exists()
    assert "could not be scored (exit 2)" in outcome.summary
    assert "error: `--dataset nosuch=…`: the spec has no dataset `nosuch`" in outcome.summary


def test_no_baseline_no_diff_and_not_a_pull_request_no_comment(workspace: Path, tmp_path: Path):
    temp = tmp_path / "runner"
    temp.mkdir()
    outcome = run_action(workspace, {"spec": "evalspec.yaml"}, temp, install=False, event="push")
    assert outcome.failed is None, outcome.logs
    assert outcome.skipped == ["Diff against the baseline"]
    assert outcome.stood_in == ["Install evalspec"]
    # On a push with a baseline: the diff goes to the summary, no comment is posted.
    temp2 = tmp_path / "runner2"
    temp2.mkdir()
    outcome = run_action(workspace, {"spec": "evalspec.yaml", "baseline": "baseline"},
                         temp2, event="push", install=False)
    assert "not a pull request: no comment" in outcome.logs["Diff against the baseline"]
    assert "Diff against the baseline" in outcome.summary


class FakeGitHub(BaseHTTPRequestHandler):
    comments: List[Dict[str, Any]] = []
    requests: List[str] = []

    def _reply(self, status: int, payload: Any) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> Dict[str, Any]:
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

    def do_GET(self) -> None:  # noqa: N802
        self.requests.append(f"GET {self.path}")
        assert self.headers["Authorization"] == "Bearer a-token"
        self._reply(200, self.comments if "page=1" in self.path else [])

    def do_POST(self) -> None:  # noqa: N802
        self.requests.append(f"POST {self.path}")
        comment = {"id": 100 + len(self.comments), "body": self._body()["body"]}
        self.comments.append(comment)
        self._reply(201, comment)

    def do_PATCH(self) -> None:  # noqa: N802
        self.requests.append(f"PATCH {self.path}")
        number = int(self.path.rsplit("/", 1)[1])
        for comment in self.comments:
            if comment["id"] == number:
                comment["body"] = self._body()["body"]
        self._reply(200, {"id": number})

    def log_message(self, *args: Any) -> None:
        pass


def test_the_comment_is_posted_once_then_updated(workspace: Path, tmp_path: Path, python_cli: Path):
    """comment.py against a fake GitHub API on the loopback address."""
    server = HTTPServer(("127.0.0.1", 0), FakeGitHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    FakeGitHub.comments = [{"id": 1, "body": "an unrelated comment"}]
    FakeGitHub.requests = []
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    subprocess.run([str(python_cli), "run", "evalspec.yaml", "--out", "evalspec-out"], cwd=workspace,
                   check=True, capture_output=True)
    env = dict(os.environ, PATH=f"{python_cli.parent}{os.pathsep}{os.environ['PATH']}",
               GITHUB_API_URL=f"http://127.0.0.1:{server.server_port}", GITHUB_TOKEN="a-token",
               GITHUB_EVENT_NAME="pull_request", GITHUB_EVENT_PATH=str(event), GITHUB_REPOSITORY="owner/repo",
               INPUT_BASELINE="baseline", INPUT_OUT="evalspec-out", INPUT_SPEC="evalspec.yaml")
    env.pop("EVALSPEC_COMMENT_FILE", None)
    env.pop("GITHUB_STEP_SUMMARY", None)
    try:
        for _ in range(2):
            done = subprocess.run([sys.executable, str(REPO / "scripts/action/comment.py")], cwd=workspace,
                                  env=env, capture_output=True, text=True)
            assert done.returncode == 0, done.stderr
    finally:
        server.shutdown()
    assert FakeGitHub.requests == [
        "GET /repos/owner/repo/issues/7/comments?per_page=100&page=1",
        "POST /repos/owner/repo/issues/7/comments",
        "GET /repos/owner/repo/issues/7/comments?per_page=100&page=1",
        "PATCH /repos/owner/repo/issues/comments/101",
    ]
    assert [c["id"] for c in FakeGitHub.comments] == [1, 101]
    assert FakeGitHub.comments[0]["body"] == "an unrelated comment"
    assert FakeGitHub.comments[1]["body"].startswith("<!-- evalspec-diff: evalspec.yaml -->\n")


def test_an_unreachable_api_warns_instead_of_failing(workspace: Path, tmp_path: Path, python_cli: Path):
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    subprocess.run([str(python_cli), "run", "evalspec.yaml", "--out", "evalspec-out"], cwd=workspace,
                   check=True, capture_output=True)
    env = dict(os.environ, PATH=f"{python_cli.parent}{os.pathsep}{os.environ['PATH']}",
               GITHUB_API_URL="http://127.0.0.1:9", GITHUB_TOKEN="t", GITHUB_EVENT_NAME="pull_request",
               GITHUB_EVENT_PATH=str(event), GITHUB_REPOSITORY="owner/repo", INPUT_BASELINE="baseline",
               INPUT_OUT="evalspec-out", INPUT_SPEC="evalspec.yaml")
    env.pop("EVALSPEC_COMMENT_FILE", None)
    done = subprocess.run([sys.executable, str(REPO / "scripts/action/comment.py")], cwd=workspace, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0
    assert "::warning::could not post the PR comment" in done.stdout


def test_a_long_diff_is_cut_to_fit_a_comment():
    sys.path.insert(0, str(REPO / "scripts/action"))
    try:
        import comment
    finally:
        sys.path.pop(0)
    text = comment.body("s.yaml", "| a | b |\n" * 20_000)
    assert len(text) <= comment.LIMIT + 100
    assert text.endswith("… (cut: the whole diff is diff.md in the uploaded reports)\n")


def _install_step(tmp_path: Path, env: Dict[str, str], action_path: Path = REPO) -> subprocess.CompletedProcess:
    """scripts/action/install.sh as the action runs it, with `install` empty."""
    temp = tmp_path / "runner"
    temp.mkdir()
    (temp / "github-path").write_text("")
    step_env = dict(os.environ, RUNNER_TEMP=str(temp), GITHUB_ACTION_PATH=str(action_path),
                    GITHUB_PATH=str(temp / "github-path"), INPUT_INSTALL="", **env)
    step_env.pop("VIRTUAL_ENV", None)
    return subprocess.run(["bash", str(REPO / "scripts/action/install.sh")], env=step_env,
                          capture_output=True, text=True, timeout=600)


def test_the_install_step_takes_the_prebuilt_wheel_of_its_version(tmp_path: Path, wheel: str):
    # An index holding only the released wheel (pip's --find-links, offline).
    index = tmp_path / "index"
    index.mkdir()
    shutil.copy(wheel, index)
    done = _install_step(tmp_path, {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(index)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "building the action's source" not in done.stdout
    version = re.search(r'^version = "(.*)"$', (REPO / "python/Cargo.toml").read_text(), re.M)
    assert version and done.stdout.strip().endswith(version.group(1))
    assert (tmp_path / "runner/github-path").read_text().strip().endswith("evalspec-venv/bin")


def test_without_a_prebuilt_wheel_the_install_step_builds_the_source(tmp_path: Path):
    # No wheel in the index: the action's own source is installed instead (here a
    # stand-in tree whose build fails at once, so the test needs no Rust build).
    source = tmp_path / "action"
    (source / "python").mkdir(parents=True)
    (source / "python/Cargo.toml").write_text('[package]\nname = "x"\nversion = "9.9.9"\n')
    (source / "pyproject.toml").write_text("[build-system]\nrequires = []\nbuild-backend = \"no_such_backend\"\n")
    empty = tmp_path / "empty-index"
    empty.mkdir()
    done = _install_step(tmp_path, {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(empty)}, action_path=source)
    assert "::notice::no prebuilt evalspec-rs 9.9.9 wheel for this runner" in done.stdout
    assert done.returncode != 0  # the stand-in source cannot be built
