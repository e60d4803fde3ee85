#!/usr/bin/env bash
# Installs evalspec into its own virtual environment and puts it on PATH for the
# steps after this one. INPUT_INSTALL, when set, is what pip installs (a wheel's
# path, a source tree, a requirement). Empty: the prebuilt `evalspec-rs` wheel of
# this action's own version from the package index, in seconds; where there is
# none for the runner (or the index cannot be reached), the action's own source
# is built instead (minutes, and a Rust toolchain on the runner).
set -euo pipefail
venv="${RUNNER_TEMP:?}/evalspec-venv"
python3 -m venv "$venv"
pip=("$venv/bin/python" -m pip install --disable-pip-version-check --quiet)
if [ -n "${INPUT_INSTALL:-}" ]; then
  # Word splitting is wanted: `install` may name several requirements.
  # shellcheck disable=SC2086
  "${pip[@]}" $INPUT_INSTALL
else
  version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$GITHUB_ACTION_PATH/python/Cargo.toml" | head -n 1)"
  if ! "${pip[@]}" --only-binary=:all: "evalspec-rs==${version:?no version in python/Cargo.toml}"; then
    echo "::notice::no prebuilt evalspec-rs $version wheel for this runner; building the action's source (needs Rust)"
    "${pip[@]}" "$GITHUB_ACTION_PATH"
  fi
fi
echo "$venv/bin" >> "${GITHUB_PATH:?}"
"$venv/bin/evalspec" --version
