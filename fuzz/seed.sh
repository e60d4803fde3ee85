#!/usr/bin/env bash
# Seed corpora for the fuzz targets from the shipped specs, their sample data and
# the test fixtures.
set -euo pipefail
cd "$(dirname "$0")/.."
c=fuzz/corpus
mkdir -p "$c/spec" "$c/expression" "$c/parse" "$c/records" "$c/report_diff" "$c/template"
for f in specs/*.yaml tests/fixtures/broken/*.yaml src/commands/init/evalspec.yaml; do
  cp "$f" "$c/spec/$(basename "$(dirname "$f")")-$(basename "$f")"
done
# Every expression-looking value of the shipped specs (after `expr:` or a field).
grep -hoE '(expr|when): .*' specs/*.yaml | sed -E 's/^(expr|when): //' | head -200 |
  awk '{ print > ("'"$c"'/expression/e" NR) }'
# Brackets at the nesting limit: the harness once overflowed its stack on these.
for open_close in '( )' '[ ]' 'abs( )' '-[ ]'; do
  set -- $open_close
  printf -v deep '%*s' 64 ''
  name=$(printf '%s' "$1" | od -An -tx1 | tr -d ' ')
  { printf '%s' "${deep// /$1}"; printf 1; printf '%s' "${deep// /$2}"; } > "$c/expression/deep-$name"
done
cp "$c"/expression/* "$c/parse/"
printf '%s\0%s' "$(cat specs/data/rag-precision/gold.jsonl)" "$(cat specs/data/rag-precision/trace.jsonl)" > "$c/records/rag"
printf '%s\0%s' "$(cat specs/data/trec/qrels.txt)" "$(cat specs/data/trec/run.txt)" > "$c/records/trec"
for f in tests/fixtures/bad_data/*.jsonl; do cp "$f" "$c/records/$(basename "$f")"; done
for f in templates/*.j2 specs/templates/*.j2; do cp "$f" "$c/template/$(basename "$f")"; done
out=$(mktemp -d)
cargo run --quiet -- run specs/rag-precision.yaml --out "$out" --quiet || true
cp "$out/report.json" "$c/report_diff/real-report.json"
rm -rf "$out"
echo "seeded: $(find "$c" -type f | wc -l) files"
