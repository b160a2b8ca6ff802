#!/usr/bin/env bash
# The step of action.yml that runs `grail check`, from the action's inputs
# (INPUT_* variables): SARIF into INPUT_SARIF_FILE, then the same check as
# workflow commands (annotations) on standard output. Its exit status is the
# check's. tests/ci.rs runs it against the examples.
set -uo pipefail

grail="${GRAIL:-grail}"
args=(check)
if [ -n "${INPUT_POLICY:-}" ]; then args+=(--policy "$INPUT_POLICY"); fi
while IFS= read -r line; do
  line="${line#"${line%%[![:space:]]*}"}"; line="${line%"${line##*[![:space:]]}"}"
  if [ -n "$line" ]; then args+=(--layer "$line"); fi
done <<< "${INPUT_LAYERS:-}"
while IFS= read -r line; do
  line="${line#"${line%%[![:space:]]*}"}"; line="${line%"${line##*[![:space:]]}"}"
  if [ -n "$line" ]; then args+=(--binding "$line"); fi
done <<< "${INPUT_BINDING:-}"
if [ "${INPUT_ALLOW_UNKNOWN:-false}" = "true" ]; then args+=(--allow-unknown); fi
# Extra arguments and the files are split on white space; globs expand.
# shellcheck disable=SC2206
extra=(${INPUT_ARGS:-})
# shellcheck disable=SC2206
files=(${INPUT_FILES:-})
sarif="${INPUT_SARIF_FILE:-grail.sarif}"

"$grail" "${args[@]}" "${extra[@]}" --format sarif "${files[@]}" > "$sarif"
sarif_status=$?
if [ "$sarif_status" -ge 2 ]; then
  # The check could not run: say why (on standard error) and write no report.
  rm -f "$sarif"
  sarif=""
fi
"$grail" "${args[@]}" "${extra[@]}" --format github "${files[@]}"
status=$?
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  {
    echo "exit-code=$status"
    echo "sarif-file=$sarif"
  } >> "$GITHUB_OUTPUT"
fi
exit "$status"
