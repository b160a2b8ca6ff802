#!/usr/bin/env bash
# The step of action.yml that puts `grail` on PATH: a released binary
# (INPUT_INSTALL=release, with the GitHub CLI), this action's own source
# built with cargo (cargo), or the grail already there (none).
set -euo pipefail

case "${INPUT_INSTALL:-release}" in
  none)
    command -v grail >/dev/null || { echo "error: \`install: none\` but no grail on PATH" >&2; exit 2; }
    ;;
  cargo)
    cargo install --locked --root "$RUNNER_TEMP/grail" --path "$GITHUB_ACTION_PATH"
    echo "$RUNNER_TEMP/grail/bin" >> "$GITHUB_PATH"
    ;;
  release)
    case "$(uname -s)-$(uname -m)" in
      Linux-x86_64) target=x86_64-unknown-linux-musl ;;
      Linux-aarch64) target=aarch64-unknown-linux-musl ;;
      Darwin-arm64) target=aarch64-apple-darwin ;;
      Darwin-x86_64) target=x86_64-apple-darwin ;;
      MINGW*|MSYS*|CYGWIN*) target=x86_64-pc-windows-msvc ;;
      *) echo "error: no released grail for $(uname -s) $(uname -m); use \`install: cargo\`" >&2; exit 2 ;;
    esac
    version="${INPUT_VERSION:-latest}"
    dir="$RUNNER_TEMP/grail"
    mkdir -p "$dir"
    tag=()
    if [ "$version" != "latest" ]; then tag=("$version"); fi
    gh release download "${tag[@]}" --repo "$ACTION_REPOSITORY" --pattern "grail-*-$target.*" --dir "$dir" --clobber
    for archive in "$dir"/grail-*-"$target".*; do
      case "$archive" in
        *.tar.gz) tar -xzf "$archive" -C "$dir" ;;
        *.zip) unzip -oq "$archive" -d "$dir" ;;
      esac
    done
    bin="$(dirname "$(find "$dir" -type f \( -name grail -o -name grail.exe \) | head -n 1)")"
    echo "$bin" >> "$GITHUB_PATH"
    ;;
  *)
    echo "error: \`install: ${INPUT_INSTALL}\` is not one of \`release\`, \`cargo\`, \`none\`" >&2
    exit 2
    ;;
esac
