#!/usr/bin/env bash
# Rewrites the generated part of docs/config.md from `bonesync
# config-example` (make docs): everything between its begin and end
# markers. appliance/config's test fails when the two differ.
set -euo pipefail
bin=$1 doc=$2
example=$(mktemp)
trap 'rm -f "$example"' EXIT
"$bin" config-example > "$example"
awk -v ex="$example" '
  /<!-- config-example: begin/ { print; print "```"; while ((getline l < ex) > 0) print l; print "```"; skip = 1; next }
  /<!-- config-example: end/ { skip = 0 }
  !skip { print }
' "$doc" > "$doc.new"
mv "$doc.new" "$doc"
