#!/usr/bin/env bash
# Fails when git tracks a build output: a file git sees as binary, over
# 1 MB, that scripts/large-files.allow does not name (one path a line;
# firmware or test data that must be in the repository goes there, with a
# comment saying why). make test runs it; run it in any checkout.
set -euo pipefail
cd "${1:-.}"
limit=$((1 << 20))
allow=scripts/large-files.allow
bad=0
# git ls-files --eol says i/-text for what git itself takes as binary.
while IFS= read -r line; do
  path=${line#*$'\t'}
  info=${line%%$'\t'*}
  [[ $info == i/-text* ]] || continue
  [ -f "$path" ] || continue
  size=$(stat -c %s "$path")
  (( size > limit )) || continue
  if [ -f "$allow" ] && grep -qxF "$path" <(grep -v '^#' "$allow"); then
    continue
  fi
  echo "tracked binary over 1 MB, not in $allow: $path ($size bytes)" >&2
  bad=1
done < <(git ls-files --eol)
if (( bad )); then
  echo "build outputs never go into git: git rm --cached them and add them to .gitignore" >&2
  exit 1
fi
