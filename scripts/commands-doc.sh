#!/usr/bin/env bash
# Rewrites the command list in docs/commands.md from `bonesync help` (make
# docs): everything between its begin and end markers. A test in
# appliance/cli_test.go fails when the two differ.
set -euo pipefail
bin=$1 doc=$2
list=$(mktemp)
trap 'rm -f "$list"' EXIT
"$bin" help > "$list"
awk -v ex="$list" '
  /<!-- commands: begin/ { print; print "```"; while ((getline l < ex) > 0) print l; print "```"; skip = 1; next }
  /<!-- commands: end/ { skip = 0 }
  !skip { print }
' "$doc" > "$doc.new"
mv "$doc.new" "$doc"
