#!/usr/bin/env bash
# Builds Tern and installs it as a systemd service on Raspberry Pi OS / Debian. Idempotent:
# re-running upgrades the binary and unit, keeps an existing /etc/tern/tern.toml and user.
#
# usage: sudo deploy/install.sh [--dry-run] [--skip-build] [--no-enable]
#   --dry-run     print the steps without running them
#   --skip-build  install an existing .build/release/tern (e.g. copied from a build machine)
#   --no-enable   do not enable/start the service
set -euo pipefail

DRY_RUN=0
BUILD=1
ENABLE=1
for arg in "$@"; do
    case "$arg" in
        --dry-run) DRY_RUN=1 ;;
        --skip-build) BUILD=0 ;;
        --no-enable) ENABLE=0 ;;
        -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
        *) echo "install.sh: unknown option '$arg' (try --help)" >&2; exit 64 ;;
    esac
done

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PREFIX=${PREFIX:-/usr/local}
BIN="$PREFIX/bin/tern"
CONFIG_DIR=/etc/tern
UNIT=/etc/systemd/system/tern.service
SERVICE_USER=tern

# Runs a command, or prints it under --dry-run.
run() {
    if [ "$DRY_RUN" = 1 ]; then
        printf '+'; printf ' %q' "$@"; printf '\n'
    else
        "$@"
    fi
}
step() { printf '==> %s\n' "$*"; }

if [ "$DRY_RUN" = 0 ] && [ "$(id -u)" != 0 ]; then
    echo "install.sh: run as root (sudo $0 $*), or use --dry-run to see the steps" >&2
    exit 77
fi

step "system packages (libgpiod, SQLite, gpiod tools)"
PACKAGES=(libgpiod-dev libsqlite3-dev gpiod)
MISSING=()
for package in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || MISSING+=("$package")
done
if [ "${#MISSING[@]}" -gt 0 ]; then
    run apt-get update
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${MISSING[@]}"
else
    echo "    already installed: ${PACKAGES[*]}"
fi

if [ "$BUILD" = 1 ]; then
    step "release build"
    if [ "$DRY_RUN" = 0 ] && ! command -v swift >/dev/null; then
        echo "install.sh: swift not found: install a Swift 6 toolchain, or build elsewhere and use --skip-build" >&2
        exit 69
    fi
    # The commit and date `tern --version` reports (CTernBuildInfo).
    # shellcheck source=deploy/lib/build-info.sh
    . "$REPO/deploy/lib/build-info.sh"
    [ "$DRY_RUN" = 1 ] || { write_build_info "$REPO"; trap 'remove_build_info "$REPO"' EXIT; }
    run swift build -c release --product tern --package-path "$REPO"
fi
if [ "$DRY_RUN" = 0 ] && [ ! -x "$REPO/.build/release/tern" ]; then
    echo "install.sh: $REPO/.build/release/tern is missing: build it first (drop --skip-build)" >&2
    exit 66
fi

step "binary -> $BIN"
run install -D -m 0755 "$REPO/.build/release/tern" "$BIN"
run install -D -m 0644 "$REPO/deploy/README.md" "$PREFIX/share/doc/tern/README.md"

step "groups and user '$SERVICE_USER' (dialout: serial, gpio: gpiochip)"
for group in dialout gpio; do
    if ! getent group "$group" >/dev/null; then
        run groupadd --system "$group"
    fi
done
if id "$SERVICE_USER" >/dev/null 2>&1; then
    run usermod --append --groups dialout,gpio "$SERVICE_USER"
else
    run useradd --system --user-group --groups dialout,gpio --home-dir /var/lib/tern \
        --no-create-home --shell /usr/sbin/nologin "$SERVICE_USER"
fi

step "configuration in $CONFIG_DIR"
run install -d -m 0755 "$CONFIG_DIR"
if [ -e "$CONFIG_DIR/tern.toml" ]; then
    echo "    keeping existing $CONFIG_DIR/tern.toml"
else
    run install -m 0640 -g "$SERVICE_USER" "$REPO/board/raspberry-pi-gps-hat.toml" "$CONFIG_DIR/tern.toml"
fi

# [metrics] textfile_dir: node_exporter's textfile directory belongs to root; let tern write there.
TEXTFILES=/var/lib/prometheus/node-exporter
if [ -d "$TEXTFILES" ]; then
    step "metrics: let $SERVICE_USER write $TEXTFILES (node_exporter's textfile directory)"
    if command -v setfacl >/dev/null; then
        run setfacl -m "u:$SERVICE_USER:rwx" "$TEXTFILES"
    else
        echo "    setfacl not found (apt install acl): without it set [metrics] textfile_dir to a directory tern may write"
    fi
fi

step "systemd unit -> $UNIT"
run install -m 0644 "$REPO/deploy/tern.service" "$UNIT"
if [ -d /run/systemd/system ] || [ "$DRY_RUN" = 1 ]; then
    run systemctl daemon-reload
    if [ "$ENABLE" = 1 ]; then
        run systemctl enable tern.service
        # The unit's ExecCondition (tern config gate) keeps an unconfigured tracker from starting,
        # now and at every boot; say so instead of leaving it to `systemctl status`.
        if [ "$DRY_RUN" = 0 ] && ! gate=$("$BIN" config gate "$CONFIG_DIR/tern.toml" 2>&1); then
            echo "    not started: $CONFIG_DIR/tern.toml is not configured for this tracker yet:"
            echo "$gate" | sed -e 's/^<[0-9]>//' -e 's/^tern: //' | grep -v '^not started' | sed 's/^ */      /'
        else
            run systemctl restart tern.service
        fi
    fi
else
    echo "    systemd is not running here: enable later with 'systemctl enable --now tern'"
fi

step "done: edit $CONFIG_DIR/tern.toml (tern config gate $CONFIG_DIR/tern.toml says whether it is configured), then 'systemctl restart tern' and 'journalctl -u tern -f'"
