#!/usr/bin/env bash
# Installs the tern .deb into a booted Debian bookworm (systemd-nspawn, systemd as PID 1) and
# checks what an operator relies on: enabled but not started with the placeholder config, not even
# after a reboot (systemctl status and tern doctor say why), starts sandboxed (seccomp, no
# capabilities, exposure <= 1.5) and delivers positions with a working one,
# an upgrade while positions are queued loses none of
# them and restarts the service, remove keeps the queue, purge deletes user, data and config.
#
# usage: deploy/test/package-test.sh [--deb PATH]
#   --deb PATH  the package to test (default: the newest dist/tern_*_<host arch>.deb)
# Needs root, systemd-container and debootstrap; the bookworm tree is cached in
# /var/cache/tern-test/bookworm (TERN_TEST_CACHE). Prints one line per check, exits 1 on a FAIL.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=deploy/test/lib.sh
. "$HERE/lib.sh"

DEB=""
while [ $# -gt 0 ]; do
    case "$1" in
        --deb) [ $# -ge 2 ] || { echo "package-test.sh: --deb needs a path" >&2; exit 64; }; DEB=$2; shift 2 ;;
        -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
        *) echo "package-test.sh: unknown argument '$1' (try --help)" >&2; exit 64 ;;
    esac
done
resolve_deb

if ! reason=$(containers_possible); then
    skip "package test (${reason})"
    results_exit; exit 0
fi
rc=0; reason=$(ensure_tree) || rc=$?
if [ "$rc" = 2 ]; then skip "package test (${reason})"; results_exit; exit 0; fi
if [ "$rc" != 0 ]; then fail "bookworm tree: $reason"; results_exit; exit 1; fi

WORK=$(mktemp -d /var/tmp/tern-package-test.XXXXXX)
ROOT=""
cleanup() {
    ct_stop tern-test
    drop_root "$ROOT"
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 143' INT TERM HUP

# The same package with a higher version, for the upgrade.
mkdir -p "$WORK/debs"
cp "$DEB" "$WORK/debs/old.deb"
OLD_VERSION=$(dpkg-deb -f "$DEB" Version)
NEW_VERSION="$OLD_VERSION+upgradetest1"
repack_deb "$DEB" "$WORK/debs/new.deb" "$NEW_VERSION"
note "testing $(basename "$DEB") ($OLD_VERSION), then an upgrade to $NEW_VERSION"

ROOT=$(new_root)
# --private-network: the container's own loopback only (the local collector, the closed port 9).
if ct_boot tern-test "$ROOT" --private-network --bind-ro="$WORK/debs:/srv/tern-debs"; then
    ok "container booted ($(ct_exec tern-test systemctl is-system-running 2>/dev/null || true))"
else
    fail "container boot: $CT_ERROR"
    results_exit; exit 1
fi
x() { ct_exec tern-test "$@"; }
sh_in() { ct_exec tern-test sh -c "$1"; }
# status_value KEY...: the value at that path in `tern status --json` (fails when there is none).
status_value() {
    x tern status --json 2>/dev/null | python3 -c '
import json, sys
value = json.load(sys.stdin)
for key in sys.argv[1:]:
    value = value[key]
print(value)' "$@" 2>/dev/null
}

# --- install with the placeholder configuration ---------------------------------------------------
if out=$(x env DEBIAN_FRONTEND=noninteractive dpkg -i /srv/tern-debs/old.deb 2>&1); then
    ok "dpkg -i $(basename "$DEB")"
else
    fail "dpkg -i $(basename "$DEB"):"; printf '%s\n' "$out" | sed 's/^/     /'
    results_exit; exit 1
fi
if printf '%s\n' "$out" | grep -q "not started"; then
    ok "postinst says the service was not started and what to edit:"
    printf '%s\n' "$out" | grep '^tern:' | sed 's/^/     /'

else
    fail "postinst did not say why the service was not started; its output:"; printf '%s\n' "$out" | sed 's/^/     /'
fi
check "tern.service enabled" x systemctl --quiet is-enabled tern.service
if x systemctl --quiet is-active tern.service; then
    fail "tern.service started with the placeholder config"
else
    ok "tern.service not started with the placeholder config ($(x systemctl is-active tern.service || true))"
fi
# The placeholder must not become a live tracker at the next boot (the unit is enabled).
ct_stop tern-test
if ct_boot tern-test "$ROOT" --private-network --bind-ro="$WORK/debs:/srv/tern-debs"; then
    ok "container rebooted ($(ct_exec tern-test systemctl is-system-running 2>/dev/null || true))"
else
    fail "container reboot: $CT_ERROR"
    results_exit; exit 1
fi
wait_for 20 sh_in "systemctl show -p ExecCondition tern.service | grep -q 'status=3'" || true
if x systemctl --quiet is-active tern.service; then
    fail "tern.service running after a reboot with the placeholder config"
else
    ok "tern.service not running after a reboot with the placeholder config ($(x systemctl is-active tern.service || true))"
fi
status_text=$(x systemctl status --no-pager --lines=10 tern.service 2>&1 || true)
if printf '%s\n' "$status_text" | grep -q "ExecCondition=.*status=3" && printf '%s\n' "$status_text" | grep -q "tracker.example.com"; then
    ok "systemctl status tern says why (the gate's exit 3 and the placeholder):"
    printf '%s\n' "$status_text" | grep -E "ExecCondition|not configured|example.com|systemctl start" | sed 's/^/     /'
else
    fail "systemctl status tern does not say why it is not running:"; printf '%s\n' "$status_text" | sed 's/^/     /'
fi
doctor_line=$(x tern doctor 2>/dev/null | grep -E '^FAIL +config:' || true)
if [[ "$doctor_line" == *"will not start"* ]]; then
    ok "tern doctor says so: ${doctor_line:0:140}…"
else
    fail "tern doctor does not say the service will not start: '$doctor_line'"
fi

groups=$(x id -nG tern 2>/dev/null || true)
if [[ " $groups " == *" dialout "* && " $groups " == *" gpio "* ]]; then
    ok "user tern in groups: $groups"
else
    fail "user tern: groups '$groups' (want dialout and gpio)"
fi
perm=$(x stat -c '%U:%G %a' /var/lib/tern 2>/dev/null || true)
if [ "$perm" = "tern:tern 750" ]; then ok "/var/lib/tern tern:tern 750"; else fail "/var/lib/tern is '$perm' (want tern:tern 750)"; fi
perm=$(x stat -c '%U:%G %a' /etc/tern/tern.toml 2>/dev/null || true)
if [ "$perm" = "root:tern 640" ]; then ok "/etc/tern/tern.toml root:tern 640 (it may hold uplink.token)"; else fail "/etc/tern/tern.toml is '$perm' (want root:tern 640)"; fi
check "conffile /etc/tern/tern.toml registered" sh_in "dpkg-query -W -f='\${Conffiles}' tern | grep -q /etc/tern/tern.toml"
check "udev rule, unit (ExecStart=/usr/bin/tern), man page installed" sh_in \
    "test -f /lib/udev/rules.d/60-tern-gpio.rules && grep -q '^ExecStart=/usr/bin/tern run' /lib/systemd/system/tern.service && test -f /usr/share/man/man1/tern.1.gz"

check "dpkg --verify tern: installed files match the package's md5sums" x dpkg --verify tern

# --- a working configuration: the simulated board and its local collector --------------------------
write_config() { # $1: the [uplink] lines
    x sh -c "cat >/etc/tern/tern.toml" <<EOF
# package-test.sh: the simulated board, no hardware
device = "tern-test"
data_dir = "/var/lib/tern"
log_level = "info"

[receiver]
kind = "simulated"
speed = 10
seed = 1

[power]
method = "simulated"

[scheduler]
policy = "adaptive"
min_interval = "5s"
max_interval = "2m"

[uplink]
$1
${2:-}
EOF
}
write_config $'local_collector = true\nbatch_size = 20'
rc=0; out=$(x tern config check /etc/tern/tern.toml 2>&1) || rc=$?
if [ "$rc" = 0 ]; then ok "tern config check accepts the simulated-board config"; else fail "tern config check exited $rc: $out"; fi
x systemctl start tern.service || true
if wait_for 60 x tern status --json >/dev/null 2>&1; then
    ok "systemctl start tern: tern status --json healthy (exit 0)"
    # Running as installed: the unit's sandbox, seen from the kernel's side.
    pid=$(x systemctl show -p MainPID --value tern.service)
    proc=$(x cat "/proc/$pid/status" 2>/dev/null || true)
    sandbox="user $(x ps -o user= -p "$pid" 2>/dev/null | tr -d ' '), $(printf '%s\n' "$proc" | grep -E '^(Seccomp|NoNewPrivs|CapEff):' | tr -s '\t ' ' ' | paste -sd, -)"
    if [[ "$sandbox" == "user tern,"* && "$sandbox" == *"Seccomp: 2"* && "$sandbox" == *"NoNewPrivs: 1"* && "$sandbox" == *"CapEff: 0000000000000000"* ]]; then
        ok "the service runs sandboxed: $sandbox"
    else
        fail "the service is not sandboxed as the unit says: $sandbox"
    fi
    exposure=$(x systemd-analyze security tern.service 2>/dev/null | sed -n 's/.*Overall exposure level for tern.service: \([0-9.]*\).*/\1/p')
    if [ -n "$exposure" ] && awk -v e="$exposure" 'BEGIN { exit !(e <= 1.5) }'; then
        ok "systemd-analyze security tern.service (running): exposure $exposure (<= 1.5)"
    else
        fail "systemd-analyze security tern.service: exposure '${exposure:-?}', want <= 1.5"
    fi
    uploaded() { status_value daemon uplink uploaded; }
    some_uploaded() { local n; n=$(uploaded) && [ "${n:-0}" -ge 1 ]; }
    if wait_for 60 some_uploaded; then
        ok "positions delivered to the collector by the sandboxed service: $(uploaded)"
    else
        fail "no position delivered within 60 s (uplink.uploaded: $(uploaded || echo '?'))"
        x journalctl -u tern --no-pager -n 20 2>&1 | sed 's/^/     /' || true
    fi
else
    rc=0; x tern status >/dev/null 2>&1 || rc=$?
    fail "tern status not healthy within 60 s (exit $rc):"
    x tern status 2>&1 | sed 's/^/     /' || true
    x journalctl -u tern --no-pager -n 20 2>&1 | sed 's/^/     /' || true
fi

# --- upgrade while positions are queued -----------------------------------------------------------
# Uploads go to a closed port: positions stay in the queue. The metrics listener on 0.0.0.0 makes
# `tern config check` warn (exit 2): that must not keep a running service from its restart.
write_config $'url = "http://127.0.0.1:9/"\nbackoff_max = "10s"' $'\n[metrics]\nlisten = "0.0.0.0:9464"'
rc=0; x tern config check /etc/tern/tern.toml >/dev/null 2>&1 || rc=$?
if [ "$rc" = 2 ]; then ok "queueing config: valid with a warning (exit 2)"; else fail "queueing config: tern config check exited $rc, want 2"; fi
x systemctl restart tern.service || true
depth() { status_value queue depth; }
queued() { local d; d=$(depth) && [ "${d:-0}" -ge 3 ]; }
if wait_for 90 queued; then
    ok "positions queued while the server is unreachable: depth $(depth)"
else
    fail "no positions queued within 90 s (depth: $(depth || echo '?'))"
    x tern queue stats 2>&1 | sed 's/^/     /' || true
fi
seqs() { # the queued positions' sequence numbers, one a line
    x tern queue export --format jsonl 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    line = line.strip()
    if line:
        print(json.loads(line)["seq"])' | sort -n
}
seqs >"$WORK/before" || true
config_sum=$(x md5sum /etc/tern/tern.toml | cut -d' ' -f1)
pid_before=$(x systemctl show -p MainPID --value tern.service)
note "queued before the upgrade: $(wc -l <"$WORK/before") positions, seq $(head -1 "$WORK/before")..$(tail -1 "$WORK/before"); MainPID $pid_before"
if out=$(x env DEBIAN_FRONTEND=noninteractive dpkg -i /srv/tern-debs/new.deb 2>&1); then
    ok "dpkg -i (upgrade to $NEW_VERSION)"
    printf '%s\n' "$out" | grep '^tern:' | sed 's/^/     /' || true
else
    fail "dpkg -i (upgrade to $NEW_VERSION):"; printf '%s\n' "$out" | sed 's/^/     /'
fi
# shellcheck disable=SC2016 # dpkg-query's own ${Version}
installed=$(x dpkg-query -W -f='${Version}' tern 2>/dev/null || true)
if [ "$installed" = "$NEW_VERSION" ]; then ok "installed version $installed"; else fail "installed version '$installed', want $NEW_VERSION"; fi
if wait_for 30 x systemctl --quiet is-active tern.service; then
    pid_after=$(x systemctl show -p MainPID --value tern.service)
    if [ "$pid_after" != "$pid_before" ] && [ "$pid_after" != 0 ]; then
        ok "service restarted by the upgrade (MainPID $pid_before -> $pid_after)"
    else
        fail "service not restarted by the upgrade (MainPID $pid_before -> $pid_after)"
    fi
else
    fail "service not running after the upgrade ($(x systemctl is-active tern.service || true))"
    x journalctl -u tern --no-pager -n 20 2>&1 | sed 's/^/     /' || true
fi
if [ "$(x md5sum /etc/tern/tern.toml | cut -d' ' -f1)" = "$config_sum" ]; then
    ok "the edited /etc/tern/tern.toml kept by the upgrade"
else
    fail "/etc/tern/tern.toml changed by the upgrade"
fi
wait_for 20 x tern status --json >/dev/null 2>&1 || true
seqs >"$WORK/after" || true
missing=$(comm -23 "$WORK/before" "$WORK/after" | wc -l)
if [ -s "$WORK/before" ] && [ "$missing" = 0 ]; then
    ok "no queued position lost: all $(wc -l <"$WORK/before") still queued after the upgrade ($(wc -l <"$WORK/after") now)"
else
    fail "$missing of $(wc -l <"$WORK/before") queued positions missing after the upgrade"
fi
rc=0; x tern status >/dev/null 2>&1 || rc=$?
case "$rc" in
    0) ok "tern status after the upgrade: healthy" ;;
    3) ok "tern status after the upgrade: running, degraded ($(x tern status --json | python3 -c 'import json,sys; print("; ".join(json.load(sys.stdin).get("problems", [])))' 2>/dev/null || echo '?'))" ;;
    *) fail "tern status after the upgrade exited $rc (not running)" ;;
esac

# --- remove keeps the queue, purge deletes everything ------------------------------------------------
if out=$(x dpkg --remove tern 2>&1); then ok "dpkg --remove tern"; else fail "dpkg --remove tern: $out"; fi
check "service stopped by remove" sh_in "! systemctl --quiet is-active tern.service"
check "remove keeps /var/lib/tern/queue.sqlite, /etc/tern and the user" sh_in \
    "test -f /var/lib/tern/queue.sqlite && test -d /etc/tern && getent passwd tern >/dev/null"
if out=$(x dpkg --purge tern 2>&1); then ok "dpkg --purge tern"; else fail "dpkg --purge tern: $out"; fi
check "purge deletes /var/lib/tern and /etc/tern" sh_in "! test -e /var/lib/tern && ! test -e /etc/tern"
check "purge deletes the user and group tern" sh_in "! getent passwd tern >/dev/null && ! getent group tern >/dev/null"
check "purge leaves no enablement symlink" sh_in "! test -e /etc/systemd/system/multi-user.target.wants/tern.service"

results_exit
