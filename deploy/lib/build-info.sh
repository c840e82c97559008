# shellcheck shell=bash
# Sourced by the scripts that build tern for release (deploy/build.sh, deploy/cross/build.sh,
# deploy/install.sh, deploy/test/run.sh).
#
#   write_build_info REPO     writes REPO/Sources/CTernBuildInfo/build_info_generated.h (git ignores
#                             it): the commit (-dirty when tracked files changed) and the UTC date
#                             (of $SOURCE_DATE_EPOCH when set) that `tern --version` reports
#   remove_build_info REPO    removes it again, so a later debug build says "unknown"
#
# With TERN_BUILD_INFO_KEPT set (.ci/run, whose builds run side by side), both leave an existing
# header alone: the caller wrote it once for every build and removes it at the end.
#
# A header only build_info.c includes, rather than -Xcc -D flags: those would change every module's
# command line and so rebuild every package on each commit.
write_build_info() {
    local repo=$1 commit date
    if [ -n "${TERN_BUILD_INFO_KEPT:-}" ] && [ -f "$repo/Sources/CTernBuildInfo/build_info_generated.h" ]; then return 0; fi
    commit=$(git -C "$repo" rev-parse --short=12 HEAD 2> /dev/null || echo unknown)
    if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no 2> /dev/null)" ]; then commit="$commit-dirty"; fi
    date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%d)
    printf '#define TERN_GIT_COMMIT "%s"\n#define TERN_BUILD_DATE "%s"\n' "$commit" "$date" \
        > "$repo/Sources/CTernBuildInfo/build_info_generated.h"
    touch "$repo/Sources/CTernBuildInfo/build_info.c"  # recompiled even where the last build saw no header
}
remove_build_info() {
    [ -z "${TERN_BUILD_INFO_KEPT:-}" ] || return 0
    rm -f "$1/Sources/CTernBuildInfo/build_info_generated.h"
}
