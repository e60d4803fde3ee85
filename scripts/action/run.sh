#!/usr/bin/env bash
# Runs `evalspec run` with the action's inputs, appends the summary (or the errors)
# to the step summary, and sets the step's outputs. It exits 0 whatever the gate
# said, so that the diff, the upload and the comment still happen; the action's
# last step fails the job.
set -euo pipefail
out="${INPUT_OUT:-evalspec-out}"
args=(run)
while IFS= read -r line; do
  line="${line#"${line%%[![:space:]]*}"}"; line="${line%"${line##*[![:space:]]}"}"
  [ -n "$line" ] && args+=("--dataset=$line")
done <<< "${INPUT_DATASETS:-}"
while IFS= read -r line; do
  line="${line#"${line%%[![:space:]]*}"}"; line="${line%"${line##*[![:space:]]}"}"
  [ -n "$line" ] && args+=("--param=$line")
done <<< "${INPUT_PARAMS:-}"
set -f  # formats are words, not file patterns
for format in ${INPUT_FORMATS//,/ } summary; do
  args+=("--format=$format")
done
if [ -n "${INPUT_BASELINE:-}" ]; then
  args+=("--baseline=$INPUT_BASELINE")
fi
args+=("--out=$out" -- "${INPUT_SPEC:?the spec input is required}")

errors="$(mktemp)"
set +e
evalspec "${args[@]}" 2> "$errors"
code=$?
set -e
cat "$errors" >&2

summary="${GITHUB_STEP_SUMMARY:-/dev/null}"
if [ -f "$out/summary.md" ] && [ "$code" != 2 ]; then
  cat "$out/summary.md" >> "$summary"
else
  {
    echo "### evalspec: \`${INPUT_SPEC}\` could not be scored (exit $code)"
    echo
    echo '```text'
    cat "$errors"
    echo '```'
  } >> "$summary"
fi
rm -f "$errors"

passed=false
[ "$code" = 0 ] && passed=true
{
  echo "exit-code=$code"
  echo "passed=$passed"
  echo "report=$out/report.json"
} >> "${GITHUB_OUTPUT:?}"
echo "evalspec run exited with status $code"
