#!/usr/bin/env bash
# Runs deploy/ansible/site.yml against a mixed fleet: two booted Debian bookworm containers and a
# trixie one (systemd-nspawn, sshd on 127.0.0.1:22201, :22202, :22203, sharing the host's network)
# and a fourth inventory host that cannot be reached (127.0.0.1:22209, nothing listens). Checks that
# the rollout completes on the three (exit 0) and its summary names the unreachable one; that each
# host got the package of its release (tern_<v>~deb12_<arch>.deb on bookworm, ~deb13 on trixie,
# chosen by the playbook from dpkg and /etc/os-release) and ends healthy with its own device name,
# a 0640 root:tern secrets.toml and, where setfacl exists (trixie), the node_exporter textfile ACL;
# runs it again and checks that nothing changed (changed=0), rolls out the same packages under a
# higher version (upgraded, restarted, healthy), and checks that an invalid configuration fails the
# first batch, stops the rollout and leaves the host's working configuration in place, that a
# rollback to the older packages (tern_allow_downgrade) works, that the playbook restores a removed
# ACL, and that a host reporting armhf, or an unsupported release, is refused with a message.
#
# What the trixie host proves: no trixie binary is built here (that takes a trixie toolchain; CI's
# arm64 trixie build and the emulated Pi cover it), so its ~deb13 package is the bookworm binary
# repackaged under the ~deb13 version, with bookworm's libgpiod2 installed beside trixie's libgpiod3.
# It proves the selection by release, the copy of that exact file, its installation by apt and a
# healthy service on a trixie userland; not that a trixie-built binary works.
#
# usage: deploy/test/ansible-test.sh [--deb PATH]
#   --deb PATH  the bookworm package to roll out (default: the newest dist/tern_*~deb12_<host arch>.deb)
# Needs root, systemd-container, debootstrap, ansible and openssh-client. Prints one line per
# check, exits 1 on a FAIL.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=deploy/test/lib.sh
. "$HERE/lib.sh"

DEB=""
PORTS=(22201 22202 22203)
HOSTS=(tern-a tern-b tern-c)
SUITES=(bookworm bookworm trixie)
declare -A DEVICE=([tern-a]=tern-a [tern-b]=van-b [tern-c]=van-c)
declare -A TAG=([tern-a]=deb12 [tern-b]=deb12 [tern-c]=deb13)
GONE_PORT=22209 # the unreachable host: nothing may listen there
while [ $# -gt 0 ]; do
    case "$1" in
        --deb) [ $# -ge 2 ] || { echo "ansible-test.sh: --deb needs a path" >&2; exit 64; }; DEB=$2; shift 2 ;;
        -h | --help) sed -n '2,26p' "$0"; exit 0 ;;
        *) echo "ansible-test.sh: unknown argument '$1' (try --help)" >&2; exit 64 ;;
    esac
done
if [ -z "$DEB" ]; then
    DEB=$(find "${DEB_OUT:-$REPO/dist}/" -maxdepth 1 -name "tern_*~deb12_$(dpkg --print-architecture).deb" -printf '%T@ %p\n' 2>/dev/null |
        sort -n | tail -1 | cut -d' ' -f2-) || true
fi
resolve_deb
DEB=$(cd "$(dirname "$DEB")" && pwd)/$(basename "$DEB")
OLD_FULL=$(dpkg-deb -f "$DEB" Version)
case "$OLD_FULL" in
    *~deb12) OLD_VERSION=${OLD_FULL%~deb12} ;;
    *) fail "package: $DEB has version $OLD_FULL, not ...~deb12: package-deb.sh must tag a bookworm build (run on this bookworm host)"; results_exit; exit 1 ;;
esac

if ! reason=$(containers_possible); then skip "ansible test (${reason})"; results_exit; exit 0; fi
for tool in ansible-playbook ssh ssh-keygen; do
    command -v "$tool" >/dev/null || { skip "ansible test ($tool not found: apt-get install ansible openssh-client)"; results_exit; exit 0; }
done
for port in "${PORTS[@]}" "$GONE_PORT"; do
    if ss -Htln "sport = :$port" 2>/dev/null | grep -q .; then
        skip "ansible test (port $port is in use on this machine; the test needs ${PORTS[*]} and $GONE_PORT free)"
        results_exit; exit 0
    fi
done
for suite in bookworm trixie; do
    rc=0; reason=$(ensure_tree "$suite") || rc=$?
    if [ "$rc" = 2 ]; then skip "ansible test (${reason})"; results_exit; exit 0; fi
    if [ "$rc" != 0 ]; then fail "$suite tree: $reason"; results_exit; exit 1; fi
done
# bookworm's libgpiod2, for the repackaged bookworm binary on the trixie host (see above).
LIBGPIOD2=$(find "$TERN_TEST_CACHE/" -maxdepth 1 -name "libgpiod2_*_$ARCH.deb" | head -1)
if [ -z "$LIBGPIOD2" ]; then
    (cd "$TERN_TEST_CACHE" && apt-get download -q libgpiod2 >/dev/null 2>&1) || true
    LIBGPIOD2=$(find "$TERN_TEST_CACHE/" -maxdepth 1 -name "libgpiod2_*_$ARCH.deb" | head -1)
    [ -n "$LIBGPIOD2" ] || { fail "cannot fetch bookworm's libgpiod2 (apt-get download libgpiod2 in $TERN_TEST_CACHE; apt-get update first?)"; results_exit; exit 1; }
fi

WORK=$(mktemp -d /var/tmp/tern-ansible-test.XXXXXX)
declare -A ROOTS=()
cleanup() {
    local host
    for host in "${HOSTS[@]}"; do
        ct_stop "$host"
        drop_root "${ROOTS[$host]:-}"
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 143' INT TERM HUP

# os_field HOST FIELD: a field of the container's /etc/os-release.
os_field() { ct_exec "$1" sh -c ". /etc/os-release; echo \"\$$2\""; }

ssh-keygen -q -t ed25519 -N '' -C tern-ansible-test -f "$WORK/id_ed25519"
for i in "${!HOSTS[@]}"; do
    host=${HOSTS[$i]}
    root=$(new_root "${SUITES[$i]}")
    ROOTS[$host]=$root
    # node_exporter's textfile directory, as Debian's prometheus-node-exporter leaves it.
    install -d -m 0755 "$root/var/lib/prometheus/node-exporter"
    install -m 0600 "$WORK/id_ed25519.pub" "$root/root/.ssh/authorized_keys"
    mkdir -p "$root/etc/ssh/sshd_config.d"
    printf 'Port %s\nListenAddress 127.0.0.1\nPermitRootLogin prohibit-password\n' "${PORTS[$i]}" \
        >"$root/etc/ssh/sshd_config.d/tern-test.conf"
    ln -sf /lib/systemd/system/ssh.service "$root/etc/systemd/system/multi-user.target.wants/ssh.service"
    # The host's network is shared: sshd's port is the only difference.
    if ct_boot "$host" "$root"; then
        ok "$host booted ($(os_field "$host" PRETTY_NAME)), sshd on 127.0.0.1:${PORTS[$i]}"
    else
        fail "$host boot: $CT_ERROR"
        results_exit; exit 1
    fi
done

install -m 0644 "$LIBGPIOD2" "${ROOTS[tern-c]}/var/tmp/libgpiod2.deb"
if ct_exec tern-c dpkg -i /var/tmp/libgpiod2.deb >"$WORK/libgpiod2.log" 2>&1; then
    note "tern-c: bookworm's $(basename "$LIBGPIOD2") installed beside trixie's libgpiod3 (for the repackaged bookworm binary)"
else
    fail "tern-c: dpkg -i $(basename "$LIBGPIOD2"): $(tail -2 "$WORK/libgpiod2.log" | tr '\n' ' ')"; results_exit; exit 1
fi

# The packages, by release, where the playbook looks for them (tern_deb_dir).
# make_debs VERSION: tern_VERSION~deb12_ARCH.deb (the package under test, renamed when VERSION is
# another) and tern_VERSION~deb13_ARCH.deb (its repack, see above).
mkdir -p "$WORK/debs"
make_debs() {
    local version=$1
    if [ "$version" = "$OLD_VERSION" ]; then
        cp "$DEB" "$WORK/debs/tern_${version}~deb12_$ARCH.deb"
    else
        repack_deb "$DEB" "$WORK/debs/tern_${version}~deb12_$ARCH.deb" "${version}~deb12"
    fi
    repack_deb "$DEB" "$WORK/debs/tern_${version}~deb13_$ARCH.deb" "${version}~deb13"
}
make_debs "$OLD_VERSION"

cat >"$WORK/inventory.yml" <<EOF
all:
  children:
    trackers:
      hosts:
        tern-a:
          ansible_port: ${PORTS[0]}
        tern-b:
          ansible_port: ${PORTS[1]}
          tern_device: van-b
        tern-c:
          ansible_port: ${PORTS[2]}
          tern_device: van-c
        tern-gone:
          ansible_port: $GONE_PORT
      vars:
        ansible_host: 127.0.0.1
        ansible_user: root
        ansible_ssh_private_key_file: $WORK/id_ed25519
        ansible_python_interpreter: /usr/bin/python3
        tern_deb_dir: $WORK/debs
        tern_version: $OLD_VERSION
        tern_receiver: {kind: simulated, speed: 10, seed: 1}
        tern_power: {method: simulated}
        tern_scheduler: {policy: adaptive, min_interval: 5s, max_interval: 2m}
        tern_uplink: {local_collector: true, batch_size: 20}
        tern_uplink_token: ansible-test-token
        tern_healthy_timeout: 90
EOF
export ANSIBLE_HOST_KEY_CHECKING=False ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=False \
    ANSIBLE_HOME="$WORK/ansible-home" ANSIBLE_LOCAL_TEMP="$WORK/ansible-tmp" \
    ANSIBLE_SSH_CONTROL_PATH_DIR="$WORK/cp" ANSIBLE_SSH_ARGS="-o BatchMode=yes -o UserKnownHostsFile=/dev/null -o ControlMaster=auto -o ControlPersist=60s" \
    ANSIBLE_CONFIG="$WORK/ansible.cfg" ANSIBLE_FORCE_COLOR=0
printf '[defaults]\n' >"$ANSIBLE_CONFIG" # no ansible.cfg of the machine or the user
unset ANSIBLE_VAULT_PASSWORD_FILE

playbook() { # LOG [ansible-playbook options...]
    local log=$1; shift
    (cd "$REPO/deploy/ansible" && timeout 600 ansible-playbook -i "$WORK/inventory.yml" "$@" site.yml) >"$log" 2>&1
}
# recap LOG HOST: the host's line of the PLAY RECAP
recap() { sed -n "/^PLAY RECAP/,\$p" "$1" | grep -E "^$2 +:" | tail -1 || true; }
# task_result LOG TASK HOST: what the task reported for the host (ok, changed, skipping, fatal, ...)
task_result() {
    awk -v task="TASK [$2]" -v host="[$3]" '
        index($0, "TASK [") == 1 { in_task = (index($0, task) == 1); next }
        in_task && index($0, host) { sub(/:.*/, ""); print; exit }' "$1"
}
ACL_TASK="Let user tern write node_exporter's textfile directory (ACL, as the package's postinst)"
TEXTFILES=/var/lib/prometheus/node-exporter
has_acl() { ct_exec "$1" getfacl -cp "$TEXTFILES" 2>/dev/null | grep -qx 'user:tern:rwx'; }
# shellcheck disable=SC2016 # dpkg-query's own ${Version}
installed_version() { ct_exec "$1" dpkg-query -W -f='${Version}' tern 2>/dev/null || true; }

SECONDS=0
if playbook "$WORK/run1.log"; then
    ok "ansible-playbook site.yml, first run (${SECONDS} s)"
else
    fail "ansible-playbook site.yml, first run (${SECONDS} s); its output:"
    tail -40 "$WORK/run1.log" | sed 's/^/     /'
    results_exit; exit 1
fi
for host in "${HOSTS[@]}" tern-gone; do note "first run: $(recap "$WORK/run1.log" "$host")"; done

# --- the unreachable host: skipped, named in the summary, not a failure ---------------------------
summary=$(sed -n '/^PLAY \[Rollout summary\]/,/^PLAY RECAP/p' "$WORK/run1.log" | grep -o '"msg": ".*"' || true)
gone=$(recap "$WORK/run1.log" tern-gone)
if [[ "$summary" == *"skipped, unreachable: tern-gone "* ]] && [[ "$gone" =~ failed=0\  ]] && [[ "$gone" =~ ignored=1\  ]]; then
    ok "tern-gone (nothing listens on :$GONE_PORT) skipped, not failed: the rollout went on and exited 0; summary: ${summary#\"msg\": }"
else
    fail "tern-gone: summary '${summary:-none}', recap '$gone'"
fi

# --- each host got its release's package ------------------------------------------------------------
for host in "${HOSTS[@]}"; do
    want="tern_${OLD_VERSION}~${TAG[$host]}_$ARCH.deb"
    copied=$(ct_exec "$host" sh -c 'ls /var/cache/ | grep "^tern-tern_" || true' | tr '\n' ' ')
    version=$(installed_version "$host")
    if [ "$copied" = "tern-$want " ] && [ "$version" = "${OLD_VERSION}~${TAG[$host]}" ]; then
        ok "$host ($(os_field "$host" VERSION_CODENAME)): the playbook copied $want and installed $version"
    else
        fail "$host: copied '${copied:-nothing}', installed '$version'; wanted $want"
    fi
done
note "tern-c's ~deb13 package is the bookworm binary repackaged: this proves the selection and install on trixie, not a trixie build"

# --- the metrics ACL: set where setfacl exists (trixie, by the postinst), reported where not -----
if has_acl tern-c && [ "$(task_result "$WORK/run1.log" "$ACL_TASK" tern-c)" = ok ]; then
    ok "tern-c: user:tern:rwx on $TEXTFILES, granted by the package's postinst (the playbook's task found it: ok)"
else
    fail "tern-c: ACL on $TEXTFILES: '$(ct_exec tern-c getfacl -cp "$TEXTFILES" 2>&1 | tr '\n' ' ')', playbook task: $(task_result "$WORK/run1.log" "$ACL_TASK" tern-c)"
fi
if grep -q "tern-a has node_exporter's /var/lib/prometheus/node-exporter but no setfacl" "$WORK/run1.log" && ! has_acl tern-a; then
    ok "tern-a (bookworm, no acl package): the playbook says that tern cannot write $TEXTFILES and what to do"
else
    fail "tern-a: no 'no setfacl' message from the playbook, or an ACL appeared without setfacl"
fi

for host in "${HOSTS[@]}"; do
    device=${DEVICE[$host]}
    rc=0; ct_exec "$host" tern status --json >/dev/null 2>&1 || rc=$?
    if [ "$rc" = 0 ]; then ok "$host: tern status healthy"; else fail "$host: tern status exited $rc"; fi
    if ct_exec "$host" grep -qx "device = \"$device\"" /etc/tern/tern.toml 2>/dev/null; then
        ok "$host: tern.toml has device = \"$device\""
    else
        fail "$host: tern.toml lacks device = \"$device\""
    fi
    perm=$(ct_exec "$host" stat -c '%U:%G %a' /etc/tern/secrets.toml 2>/dev/null || true)
    if [ "$perm" = "root:tern 640" ] && ct_exec "$host" grep -q 'token = "ansible-test-token"' /etc/tern/secrets.toml 2>/dev/null &&
        ! ct_exec "$host" grep -q 'ansible-test-token' /etc/tern/tern.toml 2>/dev/null; then
        ok "$host: token only in /etc/tern/secrets.toml ($perm)"
    else
        fail "$host: /etc/tern/secrets.toml is '$perm' or the token is misplaced"
    fi
    check "$host: tern.service enabled and active" ct_exec "$host" sh -c 'systemctl --quiet is-enabled tern 2>/dev/null && systemctl --quiet is-active tern'
done

SECONDS=0
if playbook "$WORK/run2.log"; then
    ok "ansible-playbook site.yml, second run (${SECONDS} s)"
else
    fail "ansible-playbook site.yml, second run (${SECONDS} s); its output:"
    tail -40 "$WORK/run2.log" | sed 's/^/     /'
fi
for host in "${HOSTS[@]}"; do
    line=$(recap "$WORK/run2.log" "$host")
    if [[ "$line" =~ changed=0\  ]] && [[ "$line" =~ failed=0\  ]]; then
        ok "$host: second run changed nothing ($(echo "$line" | tr -s ' ' | cut -d: -f2-))"
    else
        fail "$host: second run not idempotent: $line"
        grep -E '^(changed|TASK)' "$WORK/run2.log" | grep -B1 '^changed' | sed 's/^/     /' || true
    fi
done

# --- an upgrade: the same binary repackaged with a higher version ----------------------------------
NEW_VERSION="$OLD_VERSION+upgradetest1"
make_debs "$NEW_VERSION"
declare -A PIDS=()
for host in "${HOSTS[@]}"; do PIDS[$host]=$(ct_exec "$host" systemctl show -p MainPID --value tern.service); done
SECONDS=0
if playbook "$WORK/run3.log" -e "tern_version=$NEW_VERSION"; then
    ok "ansible-playbook site.yml, upgrade to $NEW_VERSION (${SECONDS} s)"
else
    fail "ansible-playbook site.yml, upgrade to $NEW_VERSION (${SECONDS} s); its output:"
    tail -40 "$WORK/run3.log" | sed 's/^/     /'
fi
for host in "${HOSTS[@]}"; do
    version=$(installed_version "$host")
    pid=$(ct_exec "$host" systemctl show -p MainPID --value tern.service)
    rc=0; ct_exec "$host" tern status --json >/dev/null 2>&1 || rc=$?
    if [ "$version" = "$NEW_VERSION~${TAG[$host]}" ] && [ "$pid" != "${PIDS[$host]}" ] && [ "$rc" = 0 ]; then
        ok "$host: upgraded to $version, restarted (MainPID ${PIDS[$host]} -> $pid), healthy"
    else
        fail "$host: after the upgrade: version '$version', MainPID ${PIDS[$host]} -> $pid, tern status exit $rc"
    fi
done

# --- a bad configuration stops the rollout at the first batch -----------------------------------------
before=$(ct_exec tern-a md5sum /etc/tern/tern.toml | cut -d' ' -f1)
SECONDS=0
if playbook "$WORK/run4.log" -e "tern_version=$NEW_VERSION" \
    -e '{"tern_receiver": {"kind": "simulated", "speed": 10, "seed": 1, "no_such_key": 1}}'; then
    fail "ansible-playbook with an invalid tern.toml succeeded"
else
    a=$(recap "$WORK/run4.log" tern-a)
    b=$(task_result "$WORK/run4.log" "Check the variables" tern-b)
    c=$(task_result "$WORK/run4.log" "Check the variables" tern-c)
    task=$(grep -B3 '^fatal: .*FAILED!' "$WORK/run4.log" | grep '^TASK' | tail -1 | tr -d '*' | sed 's/ *$//' || true)
    if [[ "$a" =~ failed=1 ]] && [ -z "$b$c" ] && [[ "$task" == *"Write /etc/tern/tern.toml"* ]]; then
        ok "an invalid tern.toml fails the first batch (tern-a) and stops the rollout before tern-b and tern-c (${SECONDS} s)"
        note "$task: $(grep -m1 -o 'config error at [^"\]*' "$WORK/run4.log" | head -1 || true)"
    else
        fail "an invalid tern.toml: recap tern-a '$a', tern-b '${b:-not run}', tern-c '${c:-not run}', failed at '$task'"
    fi
fi
after=$(ct_exec tern-a md5sum /etc/tern/tern.toml | cut -d' ' -f1)
if [ "$before" = "$after" ] && ct_exec tern-a systemctl --quiet is-active tern.service; then
    ok "tern-a keeps its valid tern.toml (template validate: tern config check) and runs on"
else
    fail "tern-a: tern.toml replaced by the invalid one, or tern stopped"
fi

# --- a rollback to the older package -----------------------------------------------------------------
SECONDS=0
if playbook "$WORK/run5.log" -e tern_allow_downgrade=true; then
    ok "ansible-playbook site.yml, rollback to $OLD_VERSION~debNN with tern_allow_downgrade (${SECONDS} s)"
else
    fail "ansible-playbook site.yml, rollback to $OLD_VERSION (${SECONDS} s); its output:"
    tail -40 "$WORK/run5.log" | sed 's/^/     /'
fi
for host in "${HOSTS[@]}"; do
    version=$(installed_version "$host")
    rc=0; ct_exec "$host" tern status --json >/dev/null 2>&1 || rc=$?
    if [ "$version" = "$OLD_VERSION~${TAG[$host]}" ] && [ "$rc" = 0 ]; then
        ok "$host: rolled back to $version, healthy"
    else
        fail "$host: after the rollback: version '$version', tern status exit $rc"
    fi
done

# --- the playbook itself restores the ACL (the postinst granted it so far) --------------------------
ct_exec tern-c setfacl -x u:tern "$TEXTFILES" || true
SECONDS=0
playbook "$WORK/run6.log" --limit tern-c || true
line=$(recap "$WORK/run6.log" tern-c)
changed_tasks=$(awk '/^TASK \[/ { t = $0 } /^changed: \[tern-c\]/ { print t }' "$WORK/run6.log" | sed 's/^TASK \[//; s/\] \**$//' | paste -sd';' -)
if has_acl tern-c && [[ "$line" =~ changed=1\  ]] && [[ "$line" =~ failed=0\  ]] && [ "$changed_tasks" = "$ACL_TASK" ]; then
    ok "tern-c: the ACL removed by hand is restored by the playbook, the one change of that run (${SECONDS} s)"
else
    fail "tern-c: after removing the ACL: acl $(has_acl tern-c && echo present || echo absent), recap '$line', changed: '$changed_tasks'"
fi

# --- refusals: what the host reports through dpkg and /etc/os-release is faked in tern-b -------------
# (No armhf or bullseye container here: this proves the playbook reads those reports and refuses
# with its message, before copying anything.)
# shellcheck disable=SC2016 # the shim's own "$1" and "$@"
printf '#!/bin/sh\n[ "$1" = --print-architecture ] && { echo armhf; exit 0; }\nexec /usr/bin/dpkg "$@"\n' \
    >"${ROOTS[tern-b]}/usr/local/bin/dpkg"
chmod 0755 "${ROOTS[tern-b]}/usr/local/bin/dpkg"
SECONDS=0
if playbook "$WORK/run7.log" --limit tern-b; then
    fail "tern-b reporting armhf: the playbook succeeded"
elif grep -q "tern-b runs .* with Debian architecture 'armhf' (dpkg --print-architecture): Tern packages exist for arm64 and amd64" "$WORK/run7.log" &&
    [ "$(task_result "$WORK/run7.log" "Copy the package" tern-b)" = "" ]; then
    ok "tern-b reporting armhf (a 32-bit userland) is refused before the copy, naming the host and the fix (${SECONDS} s)"
else
    fail "tern-b reporting armhf: $(grep -m1 '^fatal' "$WORK/run7.log" || tail -3 "$WORK/run7.log")"
fi
rm -f "${ROOTS[tern-b]}/usr/local/bin/dpkg"
# shellcheck disable=SC2016 # expanded in the container
ct_exec tern-b sh -c 'cp --remove-destination "$(readlink -f /etc/os-release)" /etc/os-release &&
    sed -i "s/^VERSION_CODENAME=.*/VERSION_CODENAME=bullseye/; s/^PRETTY_NAME=.*/PRETTY_NAME=\"Debian GNU\/Linux 11 (bullseye)\"/" /etc/os-release'
SECONDS=0
if playbook "$WORK/run8.log" --limit tern-b; then
    fail "tern-b reporting bullseye: the playbook succeeded"
elif grep -q "tern-b runs Debian GNU/Linux 11 (bullseye) .*, release 'bullseye' (VERSION_CODENAME in /etc/os-release): Tern packages are built for bookworm (~deb12) and trixie (~deb13)" "$WORK/run8.log"; then
    ok "tern-b reporting bullseye is refused, naming the host, its release and the fix (${SECONDS} s)"
else
    fail "tern-b reporting bullseye: $(grep -m1 '^fatal' "$WORK/run8.log" || tail -3 "$WORK/run8.log")"
fi

results_exit
