"""The action's diff step: `evalspec diff BASELINE OUT --format md`, written to
OUT/diff.md and the step summary and, on a pull request, posted as one PR comment
that later runs update (found by a hidden marker naming the spec).

Environment: INPUT_BASELINE, INPUT_OUT, INPUT_SPEC, INPUT_COMMENT (true/false),
GITHUB_TOKEN, and GitHub's own GITHUB_EVENT_NAME, GITHUB_EVENT_PATH,
GITHUB_REPOSITORY, GITHUB_API_URL, GITHUB_STEP_SUMMARY.
EVALSPEC_COMMENT_FILE=PATH writes the comment's body to PATH instead of calling the
API (how the tests run this step without GitHub).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional

# GitHub refuses comments over 65,536 characters.
LIMIT = 65_000


def marker(spec: str) -> str:
    return f"<!-- evalspec-diff: {spec} -->"


def body(spec: str, diff_md: str) -> str:
    head = f"{marker(spec)}\n### evalspec: `{spec}` against the baseline\n\n"
    if len(head) + len(diff_md) > LIMIT:
        cut = diff_md[: LIMIT - len(head)].rsplit("\n", 1)[0]
        diff_md = cut + "\n\n… (cut: the whole diff is diff.md in the uploaded reports)\n"
    return head + diff_md


def pull_request_number() -> Optional[int]:
    if os.environ.get("GITHUB_EVENT_NAME") not in ("pull_request", "pull_request_target"):
        return None
    path = os.environ.get("GITHUB_EVENT_PATH")
    if not path or not Path(path).is_file():
        return None
    event = json.loads(Path(path).read_text(encoding="utf-8"))
    number = (event.get("pull_request") or {}).get("number")
    return int(number) if number is not None else None


def api(method: str, url: str, token: str, payload: Optional[Dict[str, Any]] = None) -> Any:
    data = json.dumps(payload).encode() if payload is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Accept", "application/vnd.github+json")
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("X-GitHub-Api-Version", "2022-11-28")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
    return json.loads(text) if text else None


def post_or_update(text: str, spec: str, number: int) -> str:
    """Updates the comment carrying this spec's marker, or posts one; returns what it did."""
    token = os.environ.get("GITHUB_TOKEN", "")
    base = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    repo = os.environ["GITHUB_REPOSITORY"]
    existing = None
    page = 1
    while existing is None:
        url = f"{base}/repos/{repo}/issues/{number}/comments?per_page=100&page={page}"
        comments: List[Dict[str, Any]] = api("GET", url, token) or []
        existing = next((c for c in comments if marker(spec) in (c.get("body") or "")), None)
        if len(comments) < 100:
            break
        page += 1
    if existing is not None:
        api("PATCH", f"{base}/repos/{repo}/issues/comments/{existing['id']}", token, {"body": text})
        return f"updated comment {existing['id']}"
    created = api("POST", f"{base}/repos/{repo}/issues/{number}/comments", token, {"body": text})
    return f"posted comment {created.get('id') if created else '?'}"


def main() -> int:
    baseline = os.environ.get("INPUT_BASELINE", "")
    out = Path(os.environ.get("INPUT_OUT") or "evalspec-out")
    spec = os.environ.get("INPUT_SPEC", "")
    if not baseline:
        print("no baseline: nothing to diff")
        return 0
    result = subprocess.run(
        ["evalspec", "diff", "--format", "md", "--", baseline, str(out)],
        stdout=subprocess.PIPE,
        text=True,
    )
    if result.returncode != 0:
        print(f"evalspec diff exited with status {result.returncode}", file=sys.stderr)
        return result.returncode
    diff_md = result.stdout
    out.mkdir(parents=True, exist_ok=True)
    (out / "diff.md").write_text(diff_md, encoding="utf-8")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as file:
            file.write(f"\n<details><summary>Diff against the baseline</summary>\n\n{diff_md}\n</details>\n")
    if os.environ.get("INPUT_COMMENT", "true") != "true":
        return 0
    text = body(spec, diff_md)
    dry_run = os.environ.get("EVALSPEC_COMMENT_FILE")
    number = pull_request_number()
    if number is None and not dry_run:
        print("not a pull request: no comment")
        return 0
    if dry_run:
        Path(dry_run).write_text(text, encoding="utf-8")
        print(f"comment for pull request {number} written to {dry_run}")
        return 0
    assert number is not None
    try:
        print(post_or_update(text, spec, number))
    except (OSError, ValueError) as error:  # urllib's HTTPError and URLError are OSErrors
        # A read-only token (a pull request from a fork) must not fail the gate.
        print(f"::warning::could not post the PR comment: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
