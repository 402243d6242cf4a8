#!/usr/bin/env bash
# Checks that the C++ lines a change adds or modifies are formatted as
# clang-format-22 formats them (.clang-format: LLVM style). Lines the change
# does not touch are left alone, so code formatted by an older rule does not
# fail a change that does not touch it.
#
#   scripts/format-check.sh [BASE]
#
# The change is what HEAD and the working tree hold beyond BASE; without
# BASE, beyond the merge base of HEAD and `main` (a branch's commits and
# uncommitted edits). On `main` itself, where that merge base is HEAD, the
# change is HEAD's own commit (what CI sees after a merge). Exits 1 listing
# the formatting clang-format-22 would apply.
set -euo pipefail
cd "$(dirname "$0")/.."

tool=git-clang-format-22
binary=clang-format-22
if ! command -v "$tool" >/dev/null || ! command -v "$binary" >/dev/null; then
  echo "format-check: $tool not found (scripts/install-deps.sh all installs" \
    "clang-format-22)" >&2
  exit 1
fi

base=${1:-}
if [ -z "$base" ]; then
  if git rev-parse --verify -q main >/dev/null; then
    base=$(git merge-base HEAD main)
  else
    base=HEAD
  fi
  if [ "$base" = "$(git rev-parse HEAD)" ] && git diff --quiet HEAD; then
    if ! git rev-parse --verify -q HEAD~1 >/dev/null; then
      echo "format-check: nothing to check (one commit, no changes)"
      exit 0
    fi
    base=HEAD~1
  fi
fi

out=$("$tool" --binary "$binary" --diff --extensions cpp,h,hpp,cc "$base" -- \
  || true)
case "$out" in
"" | "no modified files to format" | "clang-format did not modify any files")
  echo "format-check: the changed lines since $(git rev-parse --short "$base")" \
    "are formatted"
  ;;
*)
  echo "$out"
  echo "format-check: lines changed since $(git rev-parse --short "$base")" \
    "are not formatted as clang-format-22 formats them (the diff above;" \
    "git-clang-format-22 $base applies it)" >&2
  exit 1
  ;;
esac
