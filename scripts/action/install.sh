#!/usr/bin/env bash
# Installs evalspec (INPUT_INSTALL: a pip requirement or a wheel's path) into its own
# virtual environment and puts it on PATH for the steps after this one.
set -euo pipefail
venv="${RUNNER_TEMP:?}/evalspec-venv"
python3 -m venv "$venv"
# Word splitting is wanted: `install` may name several requirements.
# shellcheck disable=SC2086
"$venv/bin/python" -m pip install --disable-pip-version-check --quiet ${INPUT_INSTALL:?}
echo "$venv/bin" >> "${GITHUB_PATH:?}"
"$venv/bin/evalspec" --version
