# Sourced by the end-to-end shell tests: Debian's python with numpy, a
# scratch directory to work in (removed on exit) with its own compile cache,
# away from the user's, and fail() counting failed checks in $failures.
py=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
export XDG_CACHE_HOME="$work/cache"
failures=0

fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
