#!/usr/bin/env bash
# Regenerates docs/images/report-run.png and report-plan.png, the HTML
# pages' screenshots in README.md and docs/report.md, with the browser test
# (tests/html_report_test.py; needs chromium and a build in build/).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && /usr/bin/python3 "$root/tests/html_report_test.py" "$root/build/tpusim" \
  "$root/examples" --screenshots="$root/docs/images")
