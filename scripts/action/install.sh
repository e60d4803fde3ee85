#!/usr/bin/env bash
# Installs evalspec (INPUT_INSTALL: a wheel's path or a source tree; empty: this
# action's own source) into its own
# virtual environment and puts it on PATH for the steps after this one.
set -euo pipefail
venv="${RUNNER_TEMP:?}/evalspec-venv"
python3 -m venv "$venv"
# Word splitting is wanted: `install` may name several requirements.
# shellcheck disable=SC2086
# Empty: build the action's own source (the PyPI name `evalspec` is another project's).
"$venv/bin/python" -m pip install --disable-pip-version-check --quiet ${INPUT_INSTALL:-"$GITHUB_ACTION_PATH"}
echo "$venv/bin" >> "${GITHUB_PATH:?}"
"$venv/bin/evalspec" --version
