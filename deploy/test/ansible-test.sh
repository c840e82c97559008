#!/usr/bin/env bash
# Runs deploy/ansible/site.yml against two booted Debian bookworm containers (systemd-nspawn,
# sshd on 127.0.0.1:22201 and :22202, sharing the host's network), checks both end healthy with
# their own device name and a 0640 root:tern secrets.toml, runs it again and checks that nothing
# changed (changed=0 on both), rolls out the same package under a higher version (upgraded,
# restarted, healthy), and checks that an invalid configuration fails the first batch, stops the
# rollout and leaves the host's working configuration in place, and that a rollback to the older
# package (tern_allow_downgrade) works.
#
# usage: deploy/test/ansible-test.sh [--deb PATH]
#   --deb PATH  the package to roll out (default: the newest dist/tern_*_<host arch>.deb)
# Needs root, systemd-container, debootstrap, ansible and openssh-client. Prints one line per
# check, exits 1 on a FAIL.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=deploy/test/lib.sh
. "$HERE/lib.sh"

DEB=""
PORTS=(22201 22202)
HOSTS=(tern-a tern-b)
while [ $# -gt 0 ]; do
    case "$1" in
        --deb) [ $# -ge 2 ] || { echo "ansible-test.sh: --deb needs a path" >&2; exit 64; }; DEB=$2; shift 2 ;;
        -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
        *) echo "ansible-test.sh: unknown argument '$1' (try --help)" >&2; exit 64 ;;
    esac
done
resolve_deb
DEB=$(cd "$(dirname "$DEB")" && pwd)/$(basename "$DEB")

if ! reason=$(containers_possible); then skip "ansible test (${reason})"; results_exit; exit 0; fi
for tool in ansible-playbook ssh ssh-keygen; do
    command -v "$tool" >/dev/null || { skip "ansible test ($tool not found: apt-get install ansible openssh-client)"; results_exit; exit 0; }
done
for port in "${PORTS[@]}"; do
    if ss -Htln "sport = :$port" 2>/dev/null | grep -q .; then
        skip "ansible test (port $port is in use on this machine; the containers' sshd need 22201 and 22202)"
        results_exit; exit 0
    fi
done
rc=0; reason=$(ensure_tree) || rc=$?
if [ "$rc" = 2 ]; then skip "ansible test (${reason})"; results_exit; exit 0; fi
if [ "$rc" != 0 ]; then fail "bookworm tree: $reason"; results_exit; exit 1; fi

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

ssh-keygen -q -t ed25519 -N '' -C tern-ansible-test -f "$WORK/id_ed25519"
for i in "${!HOSTS[@]}"; do
    host=${HOSTS[$i]}
    root=$(new_root)
    ROOTS[$host]=$root
    install -m 0600 "$WORK/id_ed25519.pub" "$root/root/.ssh/authorized_keys"
    mkdir -p "$root/etc/ssh/sshd_config.d"
    printf 'Port %s\nListenAddress 127.0.0.1\nPermitRootLogin prohibit-password\n' "${PORTS[$i]}" \
        >"$root/etc/ssh/sshd_config.d/tern-test.conf"
    ln -sf /lib/systemd/system/ssh.service "$root/etc/systemd/system/multi-user.target.wants/ssh.service"
    # The host's network is shared: sshd's port is the only difference.
    if ct_boot "$host" "$root"; then
        ok "$host booted, sshd on 127.0.0.1:${PORTS[$i]}"
    else
        fail "$host boot: $CT_ERROR"
        results_exit; exit 1
    fi
done

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
      vars:
        ansible_host: 127.0.0.1
        ansible_user: root
        ansible_ssh_private_key_file: $WORK/id_ed25519
        ansible_python_interpreter: /usr/bin/python3
        tern_deb: $DEB
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

SECONDS=0
if playbook "$WORK/run1.log"; then
    ok "ansible-playbook site.yml, first run (${SECONDS} s)"
else
    fail "ansible-playbook site.yml, first run (${SECONDS} s); its output:"
    tail -40 "$WORK/run1.log" | sed 's/^/     /'
    results_exit; exit 1
fi
for host in "${HOSTS[@]}"; do note "first run: $(recap "$WORK/run1.log" "$host")"; done

for host in "${HOSTS[@]}"; do
    device=$host; [ "$host" = tern-b ] && device=van-b
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
OLD_VERSION=$(dpkg-deb -f "$DEB" Version)
NEW_VERSION="$OLD_VERSION+upgradetest1"
repack_deb "$DEB" "$WORK/tern_${NEW_VERSION}_$ARCH.deb" "$NEW_VERSION"
declare -A PIDS=()
for host in "${HOSTS[@]}"; do PIDS[$host]=$(ct_exec "$host" systemctl show -p MainPID --value tern.service); done
SECONDS=0
if playbook "$WORK/run3.log" -e "tern_deb=$WORK/tern_${NEW_VERSION}_$ARCH.deb"; then
    ok "ansible-playbook site.yml, upgrade to $NEW_VERSION (${SECONDS} s)"
else
    fail "ansible-playbook site.yml, upgrade to $NEW_VERSION (${SECONDS} s); its output:"
    tail -40 "$WORK/run3.log" | sed 's/^/     /'
fi
for host in "${HOSTS[@]}"; do
    # shellcheck disable=SC2016 # dpkg-query's own ${Version}
    version=$(ct_exec "$host" dpkg-query -W -f='${Version}' tern 2>/dev/null || true)
    pid=$(ct_exec "$host" systemctl show -p MainPID --value tern.service)
    rc=0; ct_exec "$host" tern status --json >/dev/null 2>&1 || rc=$?
    if [ "$version" = "$NEW_VERSION" ] && [ "$pid" != "${PIDS[$host]}" ] && [ "$rc" = 0 ]; then
        ok "$host: upgraded to $version, restarted (MainPID ${PIDS[$host]} -> $pid), healthy"
    else
        fail "$host: after the upgrade: version '$version', MainPID ${PIDS[$host]} -> $pid, tern status exit $rc"
    fi
done

# --- a bad configuration stops the rollout at the first batch -----------------------------------------
before=$(ct_exec tern-a md5sum /etc/tern/tern.toml | cut -d' ' -f1)
SECONDS=0
if playbook "$WORK/run4.log" -e "tern_deb=$WORK/tern_${NEW_VERSION}_$ARCH.deb" \
    -e '{"tern_receiver": {"kind": "simulated", "speed": 10, "seed": 1, "no_such_key": 1}}'; then
    fail "ansible-playbook with an invalid tern.toml succeeded"
else
    a=$(recap "$WORK/run4.log" tern-a); b=$(recap "$WORK/run4.log" tern-b)
    task=$(grep -B3 '^fatal:' "$WORK/run4.log" | grep -m1 '^TASK' | tr -d '*' | sed 's/ *$//' || true)
    if [[ "$a" =~ failed=1 ]] && [ -z "$b" ] && [[ "$task" == *"Write /etc/tern/tern.toml"* ]]; then
        ok "an invalid tern.toml fails the first batch (tern-a) and stops the rollout before tern-b (${SECONDS} s)"
        note "$task: $(grep -m1 -o 'config error at [^"\]*' "$WORK/run4.log" | head -1 || true)"
    else
        fail "an invalid tern.toml: recap tern-a '$a', tern-b '${b:-not run}', failed at '$task'"
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
    ok "ansible-playbook site.yml, rollback to $OLD_VERSION with tern_allow_downgrade (${SECONDS} s)"
else
    fail "ansible-playbook site.yml, rollback to $OLD_VERSION (${SECONDS} s); its output:"
    tail -40 "$WORK/run5.log" | sed 's/^/     /'
fi
for host in "${HOSTS[@]}"; do
    # shellcheck disable=SC2016 # dpkg-query's own ${Version}
    version=$(ct_exec "$host" dpkg-query -W -f='${Version}' tern 2>/dev/null || true)
    rc=0; ct_exec "$host" tern status --json >/dev/null 2>&1 || rc=$?
    if [ "$version" = "$OLD_VERSION" ] && [ "$rc" = 0 ]; then
        ok "$host: rolled back to $version, healthy"
    else
        fail "$host: after the rollback: version '$version', tern status exit $rc"
    fi
done

results_exit
