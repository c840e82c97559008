#!/usr/bin/env bash
# Builds (or checks) the cached Debian trees the container tests boot, ahead of the tests that need
# them: .ci/run prefetches them while other steps run (ensure_tree takes a lock, so a test that
# starts meanwhile waits for the tree instead of building a second one).
#
#   deploy/test/trees.sh SUITE...            make sure each tree is there (bookworm, trixie)
#   deploy/test/trees.sh --status SUITE...   print "warm" when every tree is current, else "cold"
# Cache: $TERN_TEST_CACHE (default /var/cache/tern-test). Needs root and debootstrap.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=deploy/test/lib.sh
. "$HERE/lib.sh"
if [ "${1:-}" = --status ]; then
    shift
    for suite in "$@"; do tree_is_current "$suite" || { echo cold; exit 0; }; done
    echo warm
    exit 0
fi
for suite in "$@"; do
    rc=0; reason=$(ensure_tree "$suite") || rc=$?
    [ "$rc" = 0 ] || { echo "trees.sh: $suite: $reason" >&2; exit 1; }
    echo "trees.sh: $suite tree ready in $(tree_dir "$suite")" >&2
done
