# shellcheck shell=bash
# shellcheck disable=SC2034 # CT_ERROR is read by the scripts that source this file
# Helpers for deploy/test/*.sh (sourced): results, cached Debian bookworm and trixie trees, and systemd
# containers booted from it with systemd-nspawn, entered with nsenter (machinectl and
# `systemd-run -M` need systemd-machined on the host, which a host without systemd as PID 1, such
# as a CI container, does not have).

TERN_TEST_CACHE=${TERN_TEST_CACHE:-/var/cache/tern-test}
TERN_TEST_MIRROR=${TERN_TEST_MIRROR:-http://deb.debian.org/debian}
TERN_TEST_SUITE=bookworm
# Everything both tests need: the package's Depends, systemd to boot, sshd and python3 for ansible.
TERN_TEST_INCLUDE="systemd,systemd-sysv,dbus,libgpiod2,libsqlite3-0,openssh-server,python3,python3-apt,iproute2"
TERN_TEST_TREE="$TERN_TEST_CACHE/$TERN_TEST_SUITE"
# trixie (the ansible test's mixed fleet): its libgpiod is libgpiod3; acl gives setfacl, for the
# metrics directory's ACL (the bookworm tree has none: the "no setfacl" path).
TERN_TEST_INCLUDE_TRIXIE="systemd,systemd-sysv,dbus,libgpiod3,libsqlite3-0,openssh-server,python3,python3-apt,iproute2,acl"

# tree_dir SUITE / tree_include SUITE: the cached tree of a suite and the packages it holds.
tree_dir() { echo "$TERN_TEST_CACHE/$1"; }
tree_include() {
    case "$1" in
        bookworm) echo "$TERN_TEST_INCLUDE" ;;
        trixie) echo "$TERN_TEST_INCLUDE_TRIXIE" ;;
        *) echo "lib.sh: no test tree for suite '$1' (bookworm or trixie)" >&2; return 1 ;;
    esac
}

RESULTS_OK=0
RESULTS_FAIL=0
RESULTS_SKIP=0
ok() { RESULTS_OK=$((RESULTS_OK + 1)); echo "ok   $*"; }
fail() { RESULTS_FAIL=$((RESULTS_FAIL + 1)); echo "FAIL $*"; }
skip() { RESULTS_SKIP=$((RESULTS_SKIP + 1)); echo "skip $*"; }
note() { echo "     $*"; }
# check DESCRIPTION COMMAND...: ok or FAIL by the command's exit status.
check() {
    local what=$1; shift
    if "$@"; then ok "$what"; else fail "$what"; fi
}
results_exit() {
    echo "$RESULTS_OK passed, $RESULTS_FAIL failed, $RESULTS_SKIP skipped"
    [ "$RESULTS_FAIL" = 0 ]
}

# Sets ARCH, and DEB (when --deb was not given) to the newest dist/tern_*_ARCH.deb; ends the test
# with a FAIL naming the fix when there is none.
resolve_deb() {
    ARCH=$(dpkg --print-architecture)
    if [ -z "$DEB" ]; then
        DEB=$(find "${DEB_OUT:-$REPO/dist}/" -maxdepth 1 -name "tern_*_$ARCH.deb" -printf '%T@ %p\n' 2>/dev/null |
            sort -n | tail -1 | cut -d' ' -f2-) || true
        [ -n "$DEB" ] || { fail "package: no dist/tern_*_$ARCH.deb: build one with 'deploy/package-deb.sh $ARCH' or pass --deb"; results_exit; exit 1; }
    fi
    [ -f "$DEB" ] || { fail "package: $DEB does not exist"; results_exit; exit 1; }
}

# Prints why containers cannot run here (and returns 1), or returns 0.
containers_possible() {
    if [ "$(id -u)" != 0 ]; then echo "not root: systemd-nspawn needs root"; return 1; fi
    local tool
    for tool in systemd-nspawn nsenter debootstrap; do
        command -v "$tool" >/dev/null || { echo "$tool not found (apt-get install systemd-container debootstrap util-linux)"; return 1; }
    done
    return 0
}

# ensure_tree [SUITE]: makes sure the cached tree of SUITE (default bookworm: $TERN_TEST_TREE)
# holds that suite with its packages (tree_include). Prints why not and returns 2 when the mirror
# cannot be reached (a reason to skip), 1 on any other failure.
# shellcheck disable=SC2120 # the suite is optional (package-test.sh passes none: bookworm)
ensure_tree() {
    local suite=${1:-$TERN_TEST_SUITE} tree include
    tree=$(tree_dir "$suite")
    include=$(tree_include "$suite") || return 1
    local stamp="$tree/.tern-test-stamp" want="include=$include prep=2" lock
    # One builder at a time (CI prefetches the trees while other steps run): a second caller waits.
    mkdir -p "$TERN_TEST_CACHE"
    exec {lock}>"$TERN_TEST_CACHE/.lock-$suite"
    flock -w 1800 "$lock" || { echo "another run has held the lock on the $suite tree for 30 min"; return 1; }
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
        exec {lock}>&-
        return 0
    fi
    if ! wget -q -T 15 -t 2 -O /dev/null "$TERN_TEST_MIRROR/dists/$suite/Release" 2>/dev/null; then
        echo "the Debian mirror $TERN_TEST_MIRROR is unreachable, and no cached $suite tree is in $tree"
        return 2
    fi
    local tmp="$tree.tmp"
    mkdir -p "$TERN_TEST_CACHE"
    rm -rf "$tmp"
    echo "     debootstrap $suite into $tree (once; about a minute)" >&2
    if ! debootstrap --variant=minbase --include="$include" "$suite" "$tmp" \
        "$TERN_TEST_MIRROR" >"$TERN_TEST_CACHE/debootstrap-$suite.log" 2>&1; then
        echo "debootstrap $suite failed: see $TERN_TEST_CACHE/debootstrap-$suite.log"
        return 1
    fi
    prepare_tree "$tmp"
    rm -rf "$tree"
    mv "$tmp" "$tree"
    echo "$want" >"$stamp"
    exec {lock}>&-
}

# tree_is_current SUITE: whether the cached tree of SUITE is there and up to date (no build needed).
tree_is_current() {
    local include
    include=$(tree_include "$1") || return 1
    [ "$(cat "$(tree_dir "$1")/.tern-test-stamp" 2>/dev/null)" = "include=$include prep=2" ]
}

# repack_deb SRC DEST VERSION: the same package under another version (for upgrade tests).
repack_deb() {
    local src=$1 dest=$2 version=$3 dir
    dir=$(mktemp -d "${TMPDIR:-/tmp}/tern-repack.XXXXXX")
    dpkg-deb -R "$src" "$dir/root"
    sed -i "s/^Version: .*/Version: $version/" "$dir/root/DEBIAN/control"
    dpkg-deb --root-owner-group -Zxz --build "$dir/root" "$dest" >/dev/null
    rm -rf "$dir"
}

# Settings every container from the tree shares.
prepare_tree() {
    local root=$1
    # No sshd unless a test configures one (the ansible test sets its port per container).
    rm -f "$root/etc/systemd/system/multi-user.target.wants/ssh.service" \
        "$root/etc/systemd/system/sshd.service"
    mkdir -p "$root/root/.ssh"
    chmod 0700 "$root/root/.ssh"
    # apt inside the containers is never used; keep the tree small.
    rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*_Packages
}

# new_root [SUITE]: a root directory for one container, from the cached tree of SUITE (default
# bookworm): an overlay (the tree stays untouched, nothing is copied), or a copy where overlayfs
# cannot be mounted. Prints its path; drop_root removes it.
# shellcheck disable=SC2120 # the suite is optional (package-test.sh passes none: bookworm)
new_root() {
    local dir tree
    tree=$(tree_dir "${1:-$TERN_TEST_SUITE}")
    dir=$(mktemp -d /var/tmp/tern-test-root.XXXXXX)
    mkdir "$dir/upper" "$dir/work" "$dir/root"
    if ! mount -t overlay overlay -o "lowerdir=$tree,upperdir=$dir/upper,workdir=$dir/work" \
        "$dir/root" 2>/dev/null; then
        cp -a "$tree/." "$dir/root/"
    fi
    echo "$dir/root"
}
drop_root() {
    local root=$1
    [ -n "$root" ] || return 0
    if mountpoint -q "$root"; then umount "$root" 2>/dev/null || umount -l "$root"; fi
    rm -rf "$(dirname "$root")"
}

declare -A CT_PID=()
declare -A CT_LEADER=()
CT_ERROR=""

# ct_boot NAME ROOT [systemd-nspawn options...]: boots ROOT in the background and waits until
# `systemctl is-system-running` says running or degraded (90 s at most). Not in $(…): it records
# the container in CT_PID/CT_LEADER; on failure CT_ERROR says why.
ct_boot() {
    local name=$1 root=$2; shift 2
    local log
    log="$(dirname "$root")/nspawn.log"
    systemd-nspawn --quiet --boot --directory="$root" --machine="$name" --register=no \
        --keep-unit --console=passive "$@" >"$log" 2>&1 &
    CT_PID[$name]=$!
    local leader="" state="" _
    for _ in $(seq 1 180); do
        if ! kill -0 "${CT_PID[$name]}" 2>/dev/null; then
            CT_ERROR="systemd-nspawn for $name exited: $(tail -3 "$log" | tr '\n' ' ')"
            return 1
        fi
        # The container's init: the child of systemd-nspawn running systemd (nspawn forks helpers
        # first, which exit).
        leader=$(pgrep -P "${CT_PID[$name]}" -x systemd | head -1) || true
        if [ -n "$leader" ]; then
            CT_LEADER[$name]=$leader
            state=$(ct_exec "$name" systemctl is-system-running 2>/dev/null) || true
            case "$state" in running | degraded) return 0 ;; esac
        fi
        sleep 0.5
    done
    CT_ERROR="$name did not finish booting in 90 s (systemctl is-system-running: ${state:-no answer}; leader pid ${leader:-none}); systemd-nspawn said: $(grep -v '^$' "$log" | tail -5 | tr '\n' ' ')"
    return 1
}

# ct_exec NAME COMMAND...: runs COMMAND inside the container (all its namespaces, a clean
# environment).
ct_exec() {
    local name=$1; shift
    nsenter --target "${CT_LEADER[$name]}" --all \
        env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root "$@"
}

# ct_stop NAME: shuts the container down (SIGTERM to systemd-nspawn: a clean poweroff), then kills
# it after 30 s.
ct_stop() {
    local name=$1 pid=${CT_PID[$1]:-} _
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.5
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
    unset "CT_PID[$name]" "CT_LEADER[$name]"
}

# Polls COMMAND... every second for SECONDS; returns 0 as soon as it succeeds.
wait_for() {
    local deadline=$((SECONDS + $1)); shift
    while [ "$SECONDS" -lt "$deadline" ]; do
        "$@" && return 0
        sleep 1
    done
    return 1
}
