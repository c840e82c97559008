#!/usr/bin/env bash
# The deployment tests, in order: shellcheck, sdk-add-packages.sh's verification (a tampered local
# mirror is refused: sdk-add-packages-test.sh), the .deb (deploy/package-deb.sh + lintian), its
# install/upgrade/purge test in a booted bookworm (package-test.sh), the Ansible rollout to a mixed
# bookworm/trixie fleet with an unreachable host (ansible-test.sh), flash-image.sh on synthetic
# images (flash-test.sh). Installs the Debian packages it needs. Run as root.
#
# usage: deploy/test/run.sh [--build] [--only STEPS]
#   --build       build the release binary first (swift build -c release --static-swift-stdlib)
#   --only STEPS  comma-separated subset of: shellcheck,sdk,package,install,ansible,flash
#   --binary PATH the release binary to package (default .build/release/tern; .ci/run builds it
#                 in its own scratch path while other steps run)
# Prints one line per check and a summary; exits 1 on any FAIL. Warm cache: ~5 min; cold (the
# bookworm and trixie trees are debootstrapped into /var/cache/tern-test once): ~4 min more.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=0
BINARY="$REPO/.build/release/tern"
ONLY="shellcheck,sdk,package,install,ansible,flash"
while [ $# -gt 0 ]; do
    case "$1" in
        --build) BUILD=1; shift ;;
        --only) [ $# -ge 2 ] || { echo "run.sh: --only needs a list" >&2; exit 64; }; ONLY=$2; shift 2 ;;
        --binary) [ $# -ge 2 ] || { echo "run.sh: --binary needs a path" >&2; exit 64; }; BINARY=$2; shift 2 ;;
        -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "run.sh: unknown argument '$1' (try --help)" >&2; exit 64 ;;
    esac
done
wanted() { [[ ",$ONLY," == *",$1,"* ]]; }
if [ "$(id -u)" != 0 ]; then
    echo "run.sh: run as root (it installs packages and boots containers with systemd-nspawn)" >&2
    exit 77
fi

SUMMARY=()
PASSED=0 FAILED=0 SKIPPED=0
step_result() { # STATUS NAME SECONDS DETAIL
    SUMMARY+=("$(printf '%-4s %-34s %4ss  %s' "$1" "$2" "$3" "$4")")
}
# Counts the ok/FAIL/skip lines a test printed.
count_lines() {
    local log=$1 n
    n=$(grep -c '^ok ' "$log" || true); PASSED=$((PASSED + n))
    n=$(grep -c '^FAIL ' "$log" || true); FAILED=$((FAILED + n))
    n=$(grep -c '^skip ' "$log" || true); SKIPPED=$((SKIPPED + n))
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-deploy-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

echo "==> Debian packages for the tests"
PACKAGES=(debootstrap systemd-container lintian help2man ansible openssh-client dpkg-dev binutils
    wget iproute2 python3 shellcheck util-linux gpgv gnupg debian-archive-keyring curl xz-utils)
MISSING=()
for package in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || MISSING+=("$package")
done
if [ "${#MISSING[@]}" -gt 0 ]; then
    echo "    installing ${MISSING[*]}"
    export DEBIAN_FRONTEND=noninteractive
    if ! { apt-get update -qq -o DPkg::Lock::Timeout=300 && apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 "${MISSING[@]}"; } >"$WORK/apt.log" 2>&1; then
        tail -20 "$WORK/apt.log" >&2
        echo "run.sh: apt-get install ${MISSING[*]} failed (above)" >&2
        exit 1
    fi
fi

if [ "$BUILD" = 1 ]; then
    echo "==> release build"
    SECONDS=0
    # shellcheck source=deploy/lib/build-info.sh
    . "$REPO/deploy/lib/build-info.sh"
    write_build_info "$REPO"
    built=0
    (cd "$REPO" && swift build -c release --static-swift-stdlib --product tern) && built=1
    remove_build_info "$REPO"
    if [ "$built" = 1 ]; then
        echo "ok   release build"; PASSED=$((PASSED + 1)); step_result ok "release build" "$SECONDS" ""
    else
        echo "FAIL release build"; FAILED=$((FAILED + 1)); step_result FAIL "release build" "$SECONDS" "swift build failed"
    fi
fi

if wanted shellcheck; then
    echo "==> shellcheck"
    SECONDS=0
    scripts=("$REPO/deploy/package-deb.sh" "$HERE/lib.sh" "$HERE/package-test.sh" "$HERE/ansible-test.sh" "$HERE/run.sh"
        "$REPO/deploy/flash-image.sh" "$HERE/flash-test.sh" "$REPO/deploy/build.sh" "$REPO/deploy/sdk-add-packages.sh"
        "$HERE/sdk-add-packages-test.sh" "$HERE/trees.sh")
    if shellcheck -x "${scripts[@]}" >"$WORK/shellcheck.log" 2>&1; then
        echo "ok   shellcheck ${#scripts[@]} scripts"; PASSED=$((PASSED + 1))
        step_result ok shellcheck "$SECONDS" "${#scripts[@]} scripts"
    else
        sed 's/^/     /' "$WORK/shellcheck.log"
        echo "FAIL shellcheck"; FAILED=$((FAILED + 1)); step_result FAIL shellcheck "$SECONDS" "see above"
    fi
fi

if wanted sdk; then
    echo "==> sdk-add-packages.sh refuses a tampered mirror (sdk-add-packages-test.sh)"
    SECONDS=0
    set +e
    timeout --kill-after=10 120 "$HERE/sdk-add-packages-test.sh" 2>&1 | tee "$WORK/sdk.log"
    rc=${PIPESTATUS[0]}
    set -e
    count_lines "$WORK/sdk.log"
    if [ "$rc" != 0 ] || grep -q '^FAIL ' "$WORK/sdk.log"; then
        grep -q '^FAIL ' "$WORK/sdk.log" || { echo "FAIL sdk-add-packages-test.sh exited $rc"; FAILED=$((FAILED + 1)); }
        step_result FAIL "sdk-add-packages verification" "$SECONDS" "$(grep -m1 '^FAIL ' "$WORK/sdk.log" | sed 's/^FAIL *//')"
    else
        step_result ok "sdk-add-packages verification" "$SECONDS" "$(grep -c '^ok ' "$WORK/sdk.log") checks"
    fi
fi

DEB=""
ARCH=$(dpkg --print-architecture)
if wanted package || wanted install || wanted ansible; then
    echo "==> package (deploy/package-deb.sh $ARCH --lintian)"
    SECONDS=0
    if [ ! -x "$BINARY" ]; then
        echo "FAIL package: no binary at $BINARY: run with --build, or build it first"
        FAILED=$((FAILED + 1)); step_result FAIL package "$SECONDS" "no binary (use --build)"
    elif DEB=$(DEB_OUT="${DEB_OUT:-$REPO/dist}" "$REPO/deploy/package-deb.sh" "$ARCH" --binary "$BINARY" --lintian 2>"$WORK/package.log") &&
        { [ -f "$DEB" ] || { echo "package-deb.sh answered '$DEB', not a file" >>"$WORK/package.log"; false; }; }; then
        sed 's/^/     /' "$WORK/package.log"
        warnings=$(grep -c '^W: ' "$WORK/package.log" || true)
        overrides=$(grep '^O: ' "$WORK/package.log" | sed 's/^O: tern: //; s/ \[.*//' | paste -sd, - || true)
        echo "ok   package $(basename "$DEB"), lintian: no errors, $warnings warnings, overridden: ${overrides:-none}"
        PASSED=$((PASSED + 1))
        step_result ok "package + lintian" "$SECONDS" "$(basename "$DEB"); lintian: 0 errors, $warnings warnings, overridden: ${overrides:-none}"
        # The release comes from the binary: a --release that contradicts its libgpiod is refused.
        other=trixie; [[ "$(basename "$DEB")" == *"~deb13_"* ]] && other=bookworm
        if ! out=$(DEB_OUT="$WORK/refused" "$REPO/deploy/package-deb.sh" "$ARCH" --binary "$BINARY" --release "$other" 2>&1) &&
            [[ "$out" == *"--release $other contradicts the binary"* ]] && [ ! -d "$WORK/refused" ]; then
            echo "ok   package-deb.sh --release $other refused for this binary: ${out#package-deb.sh: }" | cut -c1-160
            PASSED=$((PASSED + 1))
        else
            echo "FAIL package-deb.sh --release $other was not refused for this binary: $out"; FAILED=$((FAILED + 1))
            step_result FAIL "package --release check" 0 "a contradicting --release was accepted"
        fi
        # Its copyright file names every package the release build linked into tern.
        if TERN_SCRATCH_PATH=$(dirname "$(dirname "$BINARY")") python3 "$HERE/copyright-check.py" "$REPO" >"$WORK/copyright.log" 2>&1; then
            echo "ok   deploy/copyright names all $(grep -c '^ok ' "$WORK/copyright.log") packages compiled into tern"
            PASSED=$((PASSED + 1))
        else
            grep -v '^ok ' "$WORK/copyright.log"
            echo "FAIL deploy/copyright misses a package compiled into tern (above)"; FAILED=$((FAILED + 1))
            step_result FAIL "copyright" 0 "$(grep -m1 '^FAIL' "$WORK/copyright.log")"
        fi
    else
        sed 's/^/     /' "$WORK/package.log"
        DEB=""
        echo "FAIL package (above)"; FAILED=$((FAILED + 1)); step_result FAIL "package + lintian" "$SECONDS" "$(tail -1 "$WORK/package.log")"
    fi
fi

run_test() { # STEP NAME SCRIPT TIMEOUT
    local step=$1 name=$2 script=$3 limit=$4 rc=0
    wanted "$step" || return 0
    echo "==> $name ($(basename "$script"))"
    SECONDS=0
    if [ -z "$DEB" ]; then
        echo "skip $name (no package: the package step failed or did not run)"; SKIPPED=$((SKIPPED + 1))
        step_result skip "$name" 0 "no package"
        return 0
    fi
    set +e
    timeout --kill-after=30 "$limit" "$script" --deb "$DEB" 2>&1 | tee "$WORK/$step.log"
    rc=${PIPESTATUS[0]}
    set -e
    if [ "$rc" = 124 ]; then echo "FAIL $name: timed out after $limit s" | tee -a "$WORK/$step.log"; fi
    count_lines "$WORK/$step.log"
    local fails skips
    fails=$(grep -c '^FAIL ' "$WORK/$step.log" || true)
    skips=$(grep '^skip ' "$WORK/$step.log" | head -1 | sed 's/^skip *//' || true)
    if [ "$rc" != 0 ] || [ "$fails" != 0 ]; then
        [ "$fails" != 0 ] || { echo "FAIL $name exited $rc"; FAILED=$((FAILED + 1)); }
        step_result FAIL "$name" "$SECONDS" "$(grep -m1 '^FAIL ' "$WORK/$step.log" | sed 's/^FAIL *//')${fails:+ ($fails FAIL)}"
    elif [ -n "$skips" ]; then
        step_result skip "$name" "$SECONDS" "$skips"
    else
        step_result ok "$name" "$SECONDS" "$(grep -c '^ok ' "$WORK/$step.log") checks"
    fi
}
run_test install "package install/upgrade/purge" "$HERE/package-test.sh" 600
run_test ansible "ansible rollout" "$HERE/ansible-test.sh" 900

if wanted flash; then
    echo "==> flash-image.sh on synthetic images (flash-test.sh)"
    SECONDS=0
    set +e
    TERN="${TERN:-$BINARY}" timeout --kill-after=30 600 "$HERE/flash-test.sh" 2>&1 | tee "$WORK/flash.log"
    rc=${PIPESTATUS[0]}
    set -e
    count_lines "$WORK/flash.log"
    if [ "$rc" != 0 ] || grep -q '^FAIL ' "$WORK/flash.log"; then
        grep -q '^FAIL ' "$WORK/flash.log" || { echo "FAIL flash-test.sh exited $rc"; FAILED=$((FAILED + 1)); }
        step_result FAIL "flash image" "$SECONDS" "$(grep -m1 '^FAIL ' "$WORK/flash.log" | sed 's/^FAIL *//')"
    elif grep -q '^skip ' "$WORK/flash.log"; then
        step_result skip "flash image" "$SECONDS" "$(grep -m1 '^skip ' "$WORK/flash.log" | sed 's/^skip *//')"
    else
        step_result ok "flash image" "$SECONDS" "$(grep -c '^ok ' "$WORK/flash.log") checks"
    fi
fi

echo
echo "==> summary"
printf '%s\n' "${SUMMARY[@]}"
echo "deploy: $PASSED passed, $FAILED failed, $SKIPPED skipped"
[ "$FAILED" = 0 ]
