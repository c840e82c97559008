#!/usr/bin/env bash
# Turns a Raspberry Pi OS image into one that boots into a working Tern tracker. Idempotent: run
# again on its own output, it changes nothing.
#
# usage: sudo deploy/flash-image.sh --image RaspiOS.img[.xz] --out tracker.img --board NAME
#            [--pi5] [--hostname H] [--user NAME] [--ssh-key FILE] [--password-hash HASH]
#            [--wifi-ssid S --wifi-psk P --wifi-country CC] [--config tern.toml]
#            [--deb tern_VERSION_arm64.deb [--no-offline-packages]] [--ca-file CA.pem]
#            [--first-boot firstrun|cloud-init] [--dry-run]
#   --image         Raspberry Pi OS (Lite) image, .img or .img.xz; --out may name the same .img
#                   to edit it in place
#   --board         a profile in board/ (adafruit-ultimate-gps, waveshare-l76x, uputronics-ublox-m8,
#                   load-switch, usb-receiver, raspberry-pi-gps-hat, simulated) or a path to one
#   --pi5           Raspberry Pi 5: dtparam=uart0=on and receiver.device /dev/ttyAMA0 (serial0 is
#                   the debug connector there)
#   --hostname      host name, also Tern's `device` (default: keep the image's; Tern then uses it)
#   --user          the login user that gets the SSH key (default: pi)
#   --ssh-key       public key file for that user (password login stays off without --password-hash)
#   --password-hash for the user, from `openssl passwd -6` (default: none, key-only)
#   --wifi-*        Wi-Fi network, its passphrase and the two-letter regulatory country
#   --config        /etc/tern/tern.toml to install (default: the board profile, device = hostname)
#   --deb           Tern package to install on first boot, with the packages it needs that the
#                   image lacks (and chrony, for the receiver's time): fetched now by apt from the
#                   image's own sources (its signed index), carried on the card and installed on
#                   the first boot without a network
#   --no-offline-packages  carry only the package: its first boot waits for a network to fetch
#                   the rest (an image without apt sources, a machine without a network)
#   --ca-file       the CA certificate that signs your server's (a private CA), installed as
#                   /etc/tern/uplink-ca.pem: tern.toml's [uplink] ca_file must name that path
#   --first-boot    force the mechanism; default: cloud-init when the image carries it (trixie),
#                   else Raspberry Pi Imager's firstrun.sh (bookworm)
#   --dry-run       print every change and write nothing
#
# Boot partition (FAT, edited with mtools): config.txt gets the board's lines, cmdline.txt loses
# the serial console, and firstrun.sh or user-data/network-config/meta-data set host name, user,
# SSH key and Wi-Fi. Root partition (ext4): /var/lib/tern-flash/{tern.deb,tern.toml,debs/} and
# tern-firstboot.service, which installs them on the first boot (from the card, no network needed;
# with --no-offline-packages apt fetches the rest once the network is up), enables tern and
# disables itself.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PROG=flash-image.sh

IMAGE="" OUT="" BOARD="" PI5=0 HOSTNAME_NEW="" LOGIN_USER=pi SSH_KEY="" PASSWORD_HASH=""
WIFI_SSID="" WIFI_PSK="" WIFI_COUNTRY="" CONFIG="" DEB="" FIRST_BOOT="" DRY_RUN=0
WIFI_SSID_SET=0 WIFI_PSK_SET=0 OFFLINE_PACKAGES=1 CA_FILE=""

die() { echo "$PROG: $*" >&2; exit "${EXIT_CODE:-1}"; }
usage_error() { EXIT_CODE=64 die "$* (try --help)"; }
note() { printf '%s\n' "$*"; }

need_value() { [ $# -ge 2 ] || usage_error "$1 needs a value"; }
while [ $# -gt 0 ]; do
    case "$1" in
        --image) need_value "$@"; IMAGE=$2; shift ;;
        --out) need_value "$@"; OUT=$2; shift ;;
        --board) need_value "$@"; BOARD=$2; shift ;;
        --pi5) PI5=1 ;;
        --hostname) need_value "$@"; HOSTNAME_NEW=$2; shift ;;
        --user) need_value "$@"; LOGIN_USER=$2; shift ;;
        --ssh-key) need_value "$@"; SSH_KEY=$2; shift ;;
        --password-hash) need_value "$@"; PASSWORD_HASH=$2; shift ;;
        --wifi-ssid) need_value "$@"; WIFI_SSID=$2; WIFI_SSID_SET=1; shift ;;
        --wifi-psk) need_value "$@"; WIFI_PSK=$2; WIFI_PSK_SET=1; shift ;;
        --wifi-country) need_value "$@"; WIFI_COUNTRY=$2; shift ;;
        --config) need_value "$@"; CONFIG=$2; shift ;;
        --deb) need_value "$@"; DEB=$2; shift ;;
        --no-offline-packages) OFFLINE_PACKAGES=0 ;;
        --ca-file) need_value "$@"; CA_FILE=$2; shift ;;
        --first-boot) need_value "$@"; FIRST_BOOT=$2; shift ;;
        --dry-run) DRY_RUN=1 ;;
        -h | --help) sed -n '2,41p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) usage_error "unknown option '$1'" ;;
    esac
    shift
done

# ---------------------------------------------------------------- arguments
[ -n "$IMAGE" ] || usage_error "--image is required: a Raspberry Pi OS .img or .img.xz"
[ -f "$IMAGE" ] || usage_error "--image $IMAGE: no such file"
BOARDS=$(cd "$REPO/board" && for f in *.toml; do printf '%s ' "${f%.toml}"; done)
[ -n "$BOARD" ] || usage_error "--board is required: one of $BOARDS"
[ "$DRY_RUN" = 1 ] || [ -n "$OUT" ] || usage_error "--out is required (the image to write; may be --image itself to edit in place)"
if [ -f "$BOARD" ]; then PROFILE=$BOARD
elif [ -f "$REPO/board/$BOARD.toml" ]; then PROFILE=$REPO/board/$BOARD.toml
else usage_error "--board $BOARD: no board/$BOARD.toml; one of $BOARDS"
fi
BOARD_NAME=$(basename "$PROFILE" .toml)
case "$FIRST_BOOT" in "" | firstrun | cloud-init) ;; *) usage_error "--first-boot must be firstrun or cloud-init, got '$FIRST_BOOT'" ;; esac
if [ -n "$HOSTNAME_NEW" ] && ! [[ "$HOSTNAME_NEW" =~ ^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$ ]]; then
    usage_error "--hostname '$HOSTNAME_NEW': use 1-63 letters, digits and '-', not starting or ending with '-'"
fi
[[ "$LOGIN_USER" =~ ^[a-z_][a-z0-9_-]{0,31}$ ]] || usage_error "--user '$LOGIN_USER': use a lower-case Unix user name"
SSH_KEY_LINE=""
if [ -n "$SSH_KEY" ]; then
    [ -f "$SSH_KEY" ] || usage_error "--ssh-key $SSH_KEY: no such file (a public key, e.g. ~/.ssh/id_ed25519.pub)"
    SSH_KEY_LINE=$(grep -Ev '^[[:space:]]*(#|$)' "$SSH_KEY" | head -n1 || true)
    [[ "$SSH_KEY_LINE" =~ ^(ssh-|ecdsa-|sk-) ]] || usage_error "--ssh-key $SSH_KEY is not an OpenSSH public key (expected 'ssh-ed25519 AAAA…'; give the .pub file, never the private key)"
fi
if [ -n "$PASSWORD_HASH" ] && ! [[ "$PASSWORD_HASH" =~ ^\$[0-9a-z]+\$ ]]; then
    usage_error "--password-hash must be a crypt hash such as the output of 'openssl passwd -6', not the password"
fi
WIFI=0
if [ "$WIFI_SSID_SET$WIFI_PSK_SET" != 00 ] || [ -n "$WIFI_COUNTRY" ]; then
    if [ "$WIFI_SSID_SET" = 0 ] || [ "$WIFI_PSK_SET" = 0 ] || [ -z "$WIFI_COUNTRY" ]; then usage_error "Wi-Fi needs all of --wifi-ssid, --wifi-psk and --wifi-country"; fi
    [[ "${#WIFI_SSID}" -ge 1 && "${#WIFI_SSID}" -le 32 ]] || usage_error "--wifi-ssid must be 1-32 characters"
    [[ "$WIFI_PSK" =~ ^[[:print:]]{8,63}$ || "$WIFI_PSK" =~ ^[0-9a-fA-F]{64}$ ]] ||
        usage_error "--wifi-psk must be 8-63 printable characters (or 64 hex digits)"
    [[ "$WIFI_COUNTRY" =~ ^[A-Za-z]{2}$ ]] || usage_error "--wifi-country must be a two-letter ISO 3166 code such as GB or DE"
    WIFI_COUNTRY=${WIFI_COUNTRY^^}
    [[ "$WIFI_SSID" =~ [[:cntrl:]] ]] && usage_error "--wifi-ssid must not hold control characters"
    WIFI=1
fi
if [ -n "$CONFIG" ] && [ ! -f "$CONFIG" ]; then usage_error "--config $CONFIG: no such file"; fi
if [ -n "$DEB" ]; then
    [ -f "$DEB" ] || usage_error "--deb $DEB: no such file"
fi
if [ -n "$CA_FILE" ]; then
    [ -f "$CA_FILE" ] || usage_error "--ca-file $CA_FILE: no such file"
    grep -q -- '-----BEGIN CERTIFICATE-----' "$CA_FILE" || usage_error "--ca-file $CA_FILE holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
fi
case "$IMAGE" in *.xz) COMPRESSED=1 ;; *) COMPRESSED=0 ;; esac
IN_PLACE=0
if [ -n "$OUT" ]; then
    [ -b "$OUT" ] && usage_error "--out $OUT is a block device: write an image file, then flash it with rpi-imager or dd"
    if [ -e "$OUT" ] && [ "$(realpath "$OUT")" = "$(realpath "$IMAGE")" ]; then
        [ "$COMPRESSED" = 0 ] || usage_error "--out cannot be the .xz itself: name an .img to write"
        IN_PLACE=1
    fi
fi
[ "$(id -u)" = 0 ] || EXIT_CODE=77 die "run as root (sudo $0 …): it attaches the image with losetup and mounts its root partition"

missing_tools=()
for tool in losetup partx sfdisk blkid mount umount mcopy mdir mdel cmp diff sha256sum; do
    command -v "$tool" >/dev/null || missing_tools+=("$tool")
done
[ "$COMPRESSED" = 0 ] || command -v xz >/dev/null || missing_tools+=(xz)
[ -z "$DEB" ] || command -v dpkg-deb >/dev/null || missing_tools+=(dpkg-deb)
[ "${#missing_tools[@]}" = 0 ] ||
    EXIT_CODE=69 die "missing ${missing_tools[*]}: apt-get install mtools fdisk util-linux mount diffutils xz-utils dpkg"
export MTOOLS_SKIP_CHECK=1

if [ -n "$DEB" ]; then
    deb_package=$(dpkg-deb -f "$DEB" Package 2>/dev/null) || usage_error "--deb $DEB is not a Debian package (dpkg-deb cannot read it)"
    deb_arch=$(dpkg-deb -f "$DEB" Architecture)
    [ "$deb_package" = tern ] || note "warning: --deb holds package '$deb_package', not 'tern'"
    case "$deb_arch" in
        arm64 | all) ;;
        armhf | armel) usage_error "--deb is built for $deb_arch (32-bit): Tern needs the 64-bit Raspberry Pi OS (arm64) on a Pi 3, 4, 5 or Zero 2 W; Debian ships no Swift toolchain for 32-bit ARM" ;;
        *) note "warning: --deb is built for $deb_arch: a Raspberry Pi needs arm64 (64-bit Raspberry Pi OS)" ;;
    esac
fi

# ---------------------------------------------------------------- helpers
WORK=$(mktemp -d /tmp/tern-flash.XXXXXX)
ROOT_MNT=$WORK/root
LOOPS=()
MOUNTED=0
PARTIAL=""
cleanup() {
    local status=$?
    set +e
    [ "$MOUNTED" = 1 ] && umount "$ROOT_MNT"
    local loop
    for loop in "${LOOPS[@]}"; do losetup -d "$loop" 2>/dev/null; done
    [ -n "$PARTIAL" ] && [ -e "$PARTIAL" ] && rm -f "$PARTIAL"
    rm -rf "$WORK"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

CHANGES=0
# The value of KEY in [SECTION] ("" for the top level) of a TOML file; strings unquoted.
toml_get() {
    awk -v want_section="$1" -v want_key="$2" '
        /^[[:space:]]*\[/ { line = $0; gsub(/^[[:space:]]*\[|\][[:space:]]*(#.*)?$/, "", line); section = line; next }
        section == want_section && $0 ~ "^[[:space:]]*" want_key "[[:space:]]*=" {
            value = $0; sub(/^[^=]*=[[:space:]]*/, "", value)
            if (value ~ /^"/) { sub(/^"/, "", value); sub(/".*$/, "", value) } else { sub(/[[:space:]]*(#.*)?$/, "", value) }
            print value; exit
        }' "$3"
}
# Lines "# PREFIX: value" of the profile's machine-readable block.
profile_facts() { sed -n "s/^# $1: *//p" "$PROFILE"; }

# Prints how FILE would change into NEW (a file), for the log; secret files only by size.
show_change() { # label old new secret
    if [ "$4" = secret ]; then
        note "    ($(wc -c <"$3") bytes; holds secrets, not shown)"
    elif [ -f "$2" ]; then
        diff -u --label "$1 (before)" --label "$1 (after)" "$2" "$3" | sed 's/^/    /' || true
    else
        sed 's/^/    + /' "$3"
    fi
}
verb() { if [ "$DRY_RUN" = 1 ]; then printf 'would %s' "$1"; else printf '%s' "$1"; fi; }

# Boot partition (FAT) through mtools: read NAME into FILE; false if absent.
boot_read() { mcopy -n -i "$BOOT_DEV" "::/$1" "$2" 2>/dev/null; }
boot_has() { mdir -b -i "$BOOT_DEV" "::/$1" >/dev/null 2>&1; }
# Writes FILE as NAME unless identical. $3: "secret" hides the content from the log.
boot_put() {
    local name=$1 new=$2 old=$WORK/old.boot
    rm -f "$old"
    if boot_read "$name" "$old" && cmp -s "$old" "$new"; then note "unchanged  boot:/$name"; return; fi
    if [ -f "$old" ]; then note "$(verb change) boot:/$name"; else note "$(verb create) boot:/$name"; fi
    show_change "boot:/$name" "$old" "$new" "${3:-}"
    CHANGES=$((CHANGES + 1))
    [ "$DRY_RUN" = 1 ] || mcopy -o -i "$BOOT_DEV" "$new" "::/$name" 2>"$WORK/mtools.err" ||
        die "cannot write boot:/$name: $(cat "$WORK/mtools.err") (is the FAT partition full? mdir -i $BOOT_DEV ::/)"
}
boot_remove() {
    boot_has "$1" || return 0
    note "$(verb remove) boot:/$1"
    CHANGES=$((CHANGES + 1))
    [ "$DRY_RUN" = 1 ] || mdel -i "$BOOT_DEV" "::/$1" 2>/dev/null || die "cannot remove boot:/$1 (mdel -i $BOOT_DEV ::/$1)"
}
# Root partition (ext4, mounted): writes FILE as PATH with MODE unless identical.
root_put() {
    local path=$1 new=$2 mode=$3 target=$ROOT_MNT$1
    if [ -f "$target" ] && cmp -s "$target" "$new" && [ "$(stat -c %a "$target")" = "${mode#0}" ]; then
        note "unchanged  root:$path"; return
    fi
    if [ -f "$target" ]; then note "$(verb change) root:$path (mode $mode)"; else note "$(verb create) root:$path (mode $mode)"; fi
    case "$path" in *.deb) note "    ($(du -h "$new" | cut -f1) package)" ;; *) show_change "root:$path" "$target" "$new" "${4:-}" ;; esac
    CHANGES=$((CHANGES + 1))
    [ "$DRY_RUN" = 1 ] && return
    install -D -o root -g root -m "$mode" "$new" "$target" ||
        die "cannot write root:$path: is the root file system full? ($(df -h --output=avail "$ROOT_MNT" | tail -n1 | tr -d ' ') free; grow the image: truncate -s +1G IMG, then sfdisk/resize2fs partition 2)"
}
root_link() { # link target
    local link=$ROOT_MNT$1
    if [ -L "$link" ] && [ "$(readlink "$link")" = "$2" ]; then note "unchanged  root:$1 -> $2"; return; fi
    note "$(verb link) root:$1 -> $2"
    CHANGES=$((CHANGES + 1))
    [ "$DRY_RUN" = 1 ] || { mkdir -p "$(dirname "$link")" && ln -sfn "$2" "$link"; }
}
# A double-quoted YAML scalar.
yaml_str() {
    local s=$1
    [[ "$s" =~ [[:cntrl:]] ]] && die "cannot put a control character into cloud-init YAML: '$s'"
    s=${s//\\/\\\\}; s=${s//\"/\\\"}
    printf '"%s"' "$s"
}

# ---------------------------------------------------------------- the image
SOURCE=$IMAGE
if [ "$DRY_RUN" = 1 ]; then
    if [ "$COMPRESSED" = 1 ]; then
        note "decompressing $IMAGE to a scratch file to inspect it (dry run: --out is not written)"
        xz -dc "$IMAGE" >"$WORK/image.img" || die "cannot decompress $IMAGE: is it a complete .xz? (xz -t $IMAGE)"
        SOURCE=$WORK/image.img
    fi
    TARGET=$SOURCE
    note "dry run: would write $([ -n "$OUT" ] && echo "$OUT" || echo "an output image") from $IMAGE; nothing is written"
elif [ "$IN_PLACE" = 1 ]; then
    TARGET=$OUT
    note "editing $OUT in place"
else
    PARTIAL="$OUT.partial"
    if [ "$COMPRESSED" = 1 ]; then
        note "decompressing $IMAGE -> $OUT"
        xz -dc "$IMAGE" >"$PARTIAL" || die "cannot decompress $IMAGE into $OUT: is it a complete .xz (xz -t), and is there room for the image?"
    else
        note "copying $IMAGE -> $OUT"
        cp --sparse=always "$IMAGE" "$PARTIAL" || die "cannot copy $IMAGE to $OUT: is there room?"
    fi
    TARGET=$PARTIAL
fi

ro=()
[ "$DRY_RUN" = 1 ] && ro=(-r)
LOOP=$(losetup -f --show -P "${ro[@]}" "$TARGET" 2>"$WORK/losetup.err") ||
    die "losetup cannot attach $TARGET: $(cat "$WORK/losetup.err") (needs root and loop devices: modprobe loop; in a container, run it privileged)"
LOOPS+=("$LOOP")
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -b "${LOOP}p2" ] && break; sleep 0.2; done
[ -b "${LOOP}p2" ] || partx -a "$LOOP" 2>/dev/null || true
if [ -b "${LOOP}p1" ] && [ -b "${LOOP}p2" ]; then
    BOOT_DEV=${LOOP}p1 ROOT_DEV=${LOOP}p2
else
    # No partition nodes (no udev): one loop device per partition, from the partition table.
    read -r s1 n1 s2 n2 < <(sfdisk -d "$TARGET" | awk -F'[=,]' '/start=/ { for (i = 1; i <= NF; i++) { if ($i ~ /start/) s = $(i+1); if ($i ~ /size/) n = $(i+1) } gsub(/ /, "", s); gsub(/ /, "", n); printf "%s %s ", s, n } END { print "" }') || true
    [ -n "${n2:-}" ] || die "$IMAGE has no second partition: not a Raspberry Pi OS image (expected bootfs FAT + rootfs ext4)"
    BOOT_DEV=$(losetup -f --show "${ro[@]}" -o $((s1 * 512)) --sizelimit $((n1 * 512)) "$TARGET"); LOOPS+=("$BOOT_DEV")
    ROOT_DEV=$(losetup -f --show "${ro[@]}" -o $((s2 * 512)) --sizelimit $((n2 * 512)) "$TARGET"); LOOPS+=("$ROOT_DEV")
fi
boot_type=$(blkid -p -o value -s TYPE "$BOOT_DEV" 2>/dev/null || true)
root_type=$(blkid -p -o value -s TYPE "$ROOT_DEV" 2>/dev/null || true)
[[ "$boot_type" = vfat && "$root_type" = ext4 ]] ||
    die "$IMAGE is not a Raspberry Pi OS image: partition 1 is '${boot_type:-unknown}' (expected vfat bootfs), partition 2 '${root_type:-unknown}' (expected ext4 rootfs)"
mkdir -p "$ROOT_MNT"
mount_opts=rw
[ "$DRY_RUN" = 1 ] && mount_opts=ro,noload
mount -t ext4 -o "$mount_opts" "$ROOT_DEV" "$ROOT_MNT" 2>"$WORK/mount.err" ||
    die "cannot mount the root partition $ROOT_DEV: $(cat "$WORK/mount.err") (needs root and ext4 support; in a container, run it privileged)"
MOUNTED=1
{ boot_has config.txt && boot_has cmdline.txt; } ||
    die "the FAT partition has no config.txt/cmdline.txt: not a Raspberry Pi OS image"

# ---------------------------------------------------------------- what the image is
codename=$(sed -n 's/^VERSION_CODENAME=//p' "$ROOT_MNT/etc/os-release" 2>/dev/null | tr -d '"' || true)
pretty=$(sed -n 's/^PRETTY_NAME=//p' "$ROOT_MNT/etc/os-release" 2>/dev/null | tr -d '"' || true)
BOOT_MOUNT=$(awk '$3 == "vfat" && $2 ~ /^\/boot/ { print $2; exit }' "$ROOT_MNT/etc/fstab" 2>/dev/null || true)
if [ -z "$BOOT_MOUNT" ]; then
    case "$codename" in buster | bullseye) BOOT_MOUNT=/boot ;; *) BOOT_MOUNT=/boot/firmware ;; esac
fi
if [ -z "$FIRST_BOOT" ]; then
    if boot_has user-data || [ -e "$ROOT_MNT/usr/bin/cloud-init" ] || [ -e "$ROOT_MNT/etc/cloud/cloud.cfg" ]; then
        FIRST_BOOT=cloud-init why="the image carries cloud-init"
    else
        FIRST_BOOT=firstrun why="no cloud-init in the image"
    fi
else
    why="--first-boot"
fi
if [ -e "$ROOT_MNT/usr/lib/ld-linux-armhf.so.3" ] || [ -e "$ROOT_MNT/lib/ld-linux-armhf.so.3" ]; then
    [ -e "$ROOT_MNT/usr/lib/ld-linux-aarch64.so.1" ] || [ -e "$ROOT_MNT/lib/ld-linux-aarch64.so.1" ] ||
        EXIT_CODE=65 die "the image is a 32-bit Raspberry Pi OS (armhf): Tern needs the 64-bit one (arm64); Debian ships no Swift toolchain for 32-bit ARM"
fi
if [ -n "${DEB:-}" ] && [ "$codename" = bookworm ] && dpkg-deb -f "$DEB" Version | grep -q '~deb13'; then
    note "warning: --deb is built for trixie (~deb13) and the image is bookworm: it will not install (it needs trixie's glibc and libgpiod 2)"
fi
note "image      ${pretty:-unknown OS} (${codename:-no VERSION_CODENAME}); boot partition at $BOOT_MOUNT"
note "first boot $FIRST_BOOT ($why)"
note "board      $BOARD_NAME ($(profile_facts board | head -n1))$([ "$PI5" = 1 ] && echo ", Raspberry Pi 5")"

# ---------------------------------------------------------------- config.txt
mapfile -t CONFIG_LINES < <(profile_facts config.txt)
mapfile -t PI5_LINES < <(profile_facts 'config.txt (pi5)')
if [ "${#CONFIG_LINES[@]}" = 0 ]; then
    # A profile without the block (raspberry-pi-gps-hat, simulated): the UART lines when it uses
    # the header UART.
    kind=$(toml_get receiver kind "$PROFILE"); serial=$(toml_get receiver device "$PROFILE")
    if [ "${kind:-serial}" = serial ] && [ "${serial:-/dev/serial0}" = /dev/serial0 ]; then
        CONFIG_LINES=(enable_uart=1 dtoverlay=disable-bt) PI5_LINES=(dtparam=uart0=on)
    fi
fi
[ "${CONFIG_LINES[0]:-}" = none ] && CONFIG_LINES=()
USES_UART=0
for line in "${CONFIG_LINES[@]}"; do [ "$line" = enable_uart=1 ] && USES_UART=1; done
[ "$PI5" = 1 ] && CONFIG_LINES+=("${PI5_LINES[@]}")

boot_read config.txt "$WORK/config.txt.old"
cp "$WORK/config.txt.old" "$WORK/config.txt.new"
# Lines that hold for every board: outside any [filter] section, or under [all].
present_lines=$(awk '
    BEGIN { all = 1 }
    { sub(/\r$/, "") }
    /^[[:space:]]*\[.*\][[:space:]]*$/ { s = $0; gsub(/[][[:space:]]/, "", s); all = (tolower(s) == "all"); next }
    all { l = $0; sub(/[[:space:]]*#.*$/, "", l); sub(/^[[:space:]]+/, "", l); if (l != "") print l }' "$WORK/config.txt.old")
missing=()
for line in "${CONFIG_LINES[@]}"; do
    grep -qxF -- "$line" <<<"$present_lines" && continue
    # miniuart-bt also frees the PL011 for the receiver.
    [ "$line" = dtoverlay=disable-bt ] && grep -qxF dtoverlay=miniuart-bt <<<"$present_lines" && continue
    missing+=("$line")
done
if [ "${#missing[@]}" -gt 0 ]; then
    [ -z "$(tail -c1 "$WORK/config.txt.new")" ] || echo >>"$WORK/config.txt.new"
    {
        echo
        echo "# Tern GPS receiver: board $BOARD_NAME$([ "$PI5" = 1 ] && echo ", Raspberry Pi 5") (deploy/flash-image.sh)"
        echo "[all]"
        printf '%s\n' "${missing[@]}"
    } >>"$WORK/config.txt.new"
fi
boot_put config.txt "$WORK/config.txt.new"

# ---------------------------------------------------------------- cmdline.txt
boot_read cmdline.txt "$WORK/cmdline.txt.old"
read -r -a tokens <"$WORK/cmdline.txt.old" || true
kept=() removed=()
for token in "${tokens[@]}"; do
    case "$token" in
        console=serial0,* | console=serial0 | console=ttyAMA0,* | console=ttyAMA0 | console=ttyS0,* | console=ttyS0)
            if [ "$USES_UART" = 1 ]; then removed+=("$token"); continue; fi ;;
        systemd.run=* | systemd.run_success_action=* | systemd.unit=kernel-command-line.target)
            # Ours is appended again below, last (firstrun.sh cuts " systemd.run.*" off the line).
            removed+=("$token"); continue ;;
    esac
    kept+=("$token")
done
if [ "$FIRST_BOOT" = firstrun ] && { [ -n "$HOSTNAME_NEW" ] || [ -n "$SSH_KEY" ] || [ "$WIFI" = 1 ] || [ -n "$PASSWORD_HASH" ]; }; then
    WANT_FIRSTRUN=1
    kept+=("systemd.run=$BOOT_MOUNT/firstrun.sh" systemd.run_success_action=reboot systemd.unit=kernel-command-line.target)
else
    WANT_FIRSTRUN=0
fi
printf '%s\n' "${kept[*]}" >"$WORK/cmdline.txt.new"
if [ "${tokens[*]}" = "${kept[*]}" ]; then
    cp "$WORK/cmdline.txt.old" "$WORK/cmdline.txt.new"   # keep it byte for byte
fi
boot_put cmdline.txt "$WORK/cmdline.txt.new"

# ---------------------------------------------------------------- tern.toml
if [ -n "$CONFIG" ]; then cp "$CONFIG" "$WORK/tern.toml.src"; else cp "$PROFILE" "$WORK/tern.toml.src"; fi
awk -v host="$HOSTNAME_NEW" -v pi5="$PI5" '
    BEGIN { top = 1 }
    top && /^[[:space:]]*\[/ {
        if (host != "" && !done) { print "device = \"" host "\"            # the host name (flash-image.sh --hostname)"; print ""; done = 1 }
        top = 0
    }
    /^[[:space:]]*\[/ { s = $0; gsub(/[][[:space:]]/, "", s); sub(/#.*/, "", s); section = s }
    top && host != "" && /^[[:space:]]*device[[:space:]]*=/ {
        if (!done) print "device = \"" host "\"            # the host name (flash-image.sh --hostname)"
        done = 1; next
    }
    pi5 == 1 && section == "receiver" && /^[[:space:]]*device[[:space:]]*=[[:space:]]*"\/dev\/serial0"/ {
        sub(/"\/dev\/serial0"/, "\"/dev/ttyAMA0\""); sub(/#.*$/, "# Raspberry Pi 5: the header UART (dtparam=uart0=on)")
    }
    { print }
    END { if (host != "" && !done) print "device = \"" host "\"" }' "$WORK/tern.toml.src" >"$WORK/tern.toml"
# ---------------------------------------------------------------- time from the receiver (chrony)
# Tern gives its receiver's time to chrony (docs/time.md): tern.toml gets
# [time] chrony_socket unless it sets the key already (`chrony_socket = ""`: off); the simulated
# board keeps no real time. [time] pps (a PPS device) adds chrony's `refclock PPS … lock GPS`.
toml_has() { # SECTION KEY FILE: whether KEY is set in [SECTION]
    awk -v want_section="$1" -v want_key="$2" '
        /^[[:space:]]*\[/ { line = $0; gsub(/^[[:space:]]*\[|\][[:space:]]*(#.*)?$/, "", line); section = line; next }
        section == want_section && $0 ~ "^[[:space:]]*" want_key "[[:space:]]*=" { found = 1; exit }
        END { exit !found }' "$3"
}
CHRONY_SOCKET="" PPS_DEVICE=""
if [ "$(toml_get receiver kind "$WORK/tern.toml")" != simulated ]; then
    if toml_has time chrony_socket "$WORK/tern.toml"; then
        CHRONY_SOCKET=$(toml_get time chrony_socket "$WORK/tern.toml")
    else
        CHRONY_SOCKET=/run/chrony.tern.sock
        socket_line="chrony_socket = \"$CHRONY_SOCKET\"   # chronyd's SOCK refclock (flash-image.sh; /etc/chrony/conf.d/tern.conf)"
        if grep -qE '^[[:space:]]*\[time\][[:space:]]*(#.*)?$' "$WORK/tern.toml"; then
            awk -v line="$socket_line" '{ print } /^[[:space:]]*\[time\][[:space:]]*(#.*)?$/ && !done { print line; done = 1 }' \
                "$WORK/tern.toml" >"$WORK/tern.toml.time" && mv "$WORK/tern.toml.time" "$WORK/tern.toml"
        else
            last_char=$(tail -c1 "$WORK/tern.toml")
            { [ -z "$last_char" ] || echo; echo; echo "[time]"; echo "$socket_line"; } >>"$WORK/tern.toml"
        fi
    fi
    PPS_DEVICE=$(toml_get time pps "$WORK/tern.toml")
fi
# ---------------------------------------------------------------- (end of time from the receiver)
config_device=$(toml_get receiver device "$WORK/tern.toml")
if [ "$PI5" = 1 ] && [ "$config_device" = /dev/serial0 ]; then
    die "--pi5: receiver.device stays /dev/serial0, the Pi 5 debug connector: set it to /dev/ttyAMA0 in ${CONFIG:-$PROFILE}"
fi
case "$config_device" in
    /dev/ttyACM* | /dev/ttyUSB* | /dev/serial/by-id/*)
        profile_facts 'systemd drop-in' | grep -q . ||
            note "warning: receiver.device is $config_device but board $BOARD_NAME adds no DeviceAllow for it: use --board usb-receiver" ;;
esac
# The server's CA (--ca-file) goes to /etc/tern/uplink-ca.pem: tern.toml must name that path.
if [ -n "$CA_FILE" ]; then
    ca_path=$(toml_get uplink ca_file "$WORK/tern.toml")
    [ "$ca_path" = /etc/tern/uplink-ca.pem ] ||
        usage_error "--ca-file is installed as /etc/tern/uplink-ca.pem, but tern.toml's [uplink] ca_file is '${ca_path}': set ca_file = \"/etc/tern/uplink-ca.pem\" in ${CONFIG:-$PROFILE}"
fi
# The first tern that runs here (an older build without --version is passed over).
TERN_BIN=""
for candidate in "${TERN:-}" "$(command -v tern || true)" "$REPO/.build/release/tern" "$REPO/.build/debug/tern"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] && "$candidate" --version >/dev/null 2>&1; then
        TERN_BIN=$candidate; break
    fi
done
if [ -n "$TERN_BIN" ]; then
    # Checked here as the Pi will read it: with --ca-file, the CA the Pi will have at
    # /etc/tern/uplink-ca.pem is this machine's file.
    cp "$WORK/tern.toml" "$WORK/tern.check.toml"
    if [ -n "$CA_FILE" ]; then
        sed -i "s#^\([[:space:]]*ca_file[[:space:]]*=[[:space:]]*\)\"/etc/tern/uplink-ca.pem\"#\1\"$(realpath "$CA_FILE")\"#" "$WORK/tern.check.toml"
    fi
    check_status=0
    "$TERN_BIN" config check "$WORK/tern.check.toml" >"$WORK/check.out" 2>&1 || check_status=$?
    case "$check_status" in
        0) note "tern.toml  valid ($TERN_BIN config check)" ;;
        2) note "tern.toml  valid, with warnings ($TERN_BIN config check):"; grep '^warn' "$WORK/check.out" | sed 's/^/    /' || true ;;
        *) EXIT_CODE=78 die "the tern.toml for the image is invalid ($TERN_BIN config check exit $check_status): $(grep -v '^ok' "$WORK/check.out" | head -n3 | tr '\n' ' ')— fix ${CONFIG:-$PROFILE}" ;;
    esac
    # A placeholder (no --config: the board profile's tracker.example.com) is not started on the Pi.
    if ! "$TERN_BIN" config gate "$WORK/tern.check.toml" >"$WORK/gate.out" 2>&1; then
        note "warning: tern.toml is not configured for a tracker yet, so tern will not start on the Pi until"
        note "         /etc/tern/tern.toml there is edited (or flash again with --config FILE):"
        sed -e 's/^<[0-9]>//' -e 's/^tern: //' "$WORK/gate.out" | grep -v -e '^not started' -e '^edit ' | sed 's/^ */    /' || true
    fi
else
    note "tern.toml  not checked: no tern binary runs here (set TERN=/path/to/tern, or build it)"
fi

# ---------------------------------------------------------------- root partition
STAGE=/var/lib/tern-flash
root_put "$STAGE/tern.toml" "$WORK/tern.toml" 0600 "$(grep -qE '^[[:space:]]*(token|password)[[:space:]]*=' "$WORK/tern.toml" && echo secret)"
if [ -n "$DEB" ]; then
    root_put "$STAGE/tern.deb" "$DEB" 0644
else
    note "no --deb: the first boot installs only /etc/tern/tern.toml; install Tern with deploy/install.sh (it keeps that file)"
fi
# ---------------------------------------------------------------- packages for an offline first boot
# What the package needs and the image lacks, and chrony when tern.toml gives it the receiver's
# time: resolved by apt against the image's own dpkg status and sources (their keyrings read from
# the image: apt checks the signed index and every package's hash), downloaded here and listed with
# their SHA-256 in debs/SHA256SUMS, which the first boot checks before installing them.
if [ -n "$DEB" ] && [ "$OFFLINE_PACKAGES" = 1 ]; then
    aw=$WORK/apt
    mkdir -p "$aw/lists/partial" "$aw/archives/partial" "$aw/sources.list.d" "$aw/prefs" "$aw/cache"
    for list in "$ROOT_MNT"/etc/apt/sources.list "$ROOT_MNT"/etc/apt/sources.list.d/*.list; do
        [ -f "$list" ] || continue
        sed -E "s#signed-by=/#signed-by=$ROOT_MNT/#Ig" "$list" >"$aw/sources.list.d/image-$(basename "$list" .list).list"
    done
    for sources in "$ROOT_MNT"/etc/apt/sources.list.d/*.sources; do
        [ -f "$sources" ] || continue
        sed -E "s#^(Signed-By:[[:space:]]*)/#\1$ROOT_MNT/#I" "$sources" >"$aw/sources.list.d/image-$(basename "$sources")"
    done
    grep -rqsE '^[[:space:]]*(deb |Types:.*deb)' "$aw/sources.list.d" ||
        EXIT_CODE=65 die "the image lists no apt sources (etc/apt/sources.list*), so the packages Tern needs cannot be fetched for an offline first boot: pass --no-offline-packages (the Pi then fetches them on its first boot with a network)"
    command -v apt-get >/dev/null || EXIT_CODE=69 die "apt-get is missing here: the offline packages are fetched with apt (run this on Debian or Ubuntu, or pass --no-offline-packages)"
    apt_opts=(-q -o "Dir::State::status=$ROOT_MNT/var/lib/dpkg/status" -o "Dir::State::Lists=$aw/lists"
        -o "Dir::State::extended_states=$aw/extended_states" -o "Dir::Cache=$aw/cache" -o "Dir::Cache::archives=$aw/archives"
        -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache=" -o "Dir::Etc::SourceList=/dev/null"
        -o "Dir::Etc::SourceParts=$aw/sources.list.d" -o "Dir::Etc::TrustedParts=$ROOT_MNT/etc/apt/trusted.gpg.d"
        -o "Dir::Etc::Trusted=/dev/null" -o "Dir::Etc::Preferences=/dev/null" -o "Dir::Etc::PreferencesParts=$aw/prefs"
        -o "APT::Architecture=arm64" -o "APT::Architectures=arm64" -o "APT::Install-Recommends=false"
        -o "Acquire::Languages=none" -o "Debug::NoLocking=1")
    wanted=("$(realpath "$DEB")")
    [ -z "$CHRONY_SOCKET" ] || wanted+=(chrony)
    note "fetching   what $(basename "$DEB")${CHRONY_SOCKET:+ and chrony} need beyond the image (apt, the image's sources)"
    apt-get "${apt_opts[@]}" update >"$WORK/apt.log" 2>&1 ||
        EXIT_CODE=69 die "apt-get update with the image's sources failed: $(grep -E '^(E|W):' "$WORK/apt.log" | head -n3 | tr '\n' ' ')(no network here? then pass --no-offline-packages)"
    apt-get "${apt_opts[@]}" install -y --download-only "${wanted[@]}" >>"$WORK/apt.log" 2>&1 ||
        EXIT_CODE=69 die "apt cannot fetch what $(basename "$DEB") needs for this image: $(grep -E '^(E|W):' "$WORK/apt.log" | head -n3 | tr '\n' ' ')"
    debs=("$aw"/archives/*.deb)
    [ -e "${debs[0]}" ] || debs=()
    (cd "$aw/archives" && { [ "${#debs[@]}" = 0 ] || sha256sum -- *.deb; }) >"$WORK/SHA256SUMS"
    for staged in "$ROOT_MNT$STAGE"/debs/*.deb; do   # a package from an earlier run that is not wanted now
        [ -f "$staged" ] || continue
        [ -f "$aw/archives/$(basename "$staged")" ] && continue
        note "$(verb remove) root:$STAGE/debs/$(basename "$staged")"; CHANGES=$((CHANGES + 1))
        [ "$DRY_RUN" = 1 ] || rm -f "$staged"
    done
    for pkg in ${debs[@]+"${debs[@]}"}; do root_put "$STAGE/debs/$(basename "$pkg")" "$pkg" 0644; done
    root_put "$STAGE/debs/SHA256SUMS" "$WORK/SHA256SUMS" 0644
    note "offline    ${#debs[@]} package(s) for the first boot: $(for pkg in ${debs[@]+"${debs[@]}"}; do b=$(basename "$pkg"); printf '%s ' "${b%%_*}"; done)"
elif [ -n "$DEB" ]; then
    note "no offline packages (--no-offline-packages): the Pi's first boot fetches what $(basename "$DEB") needs once it has a network"
fi
[ -z "$CA_FILE" ] || root_put /etc/tern/uplink-ca.pem "$CA_FILE" 0644
drop_in=$(profile_facts 'systemd drop-in' | head -n1)
if [ -n "$drop_in" ]; then
    [ -f "$REPO/$drop_in" ] || die "board $BOARD_NAME names the drop-in $drop_in, which is missing from $REPO"
    root_put "/etc/systemd/system/tern.service.d/$(basename "$drop_in")" "$REPO/$drop_in" 0644
fi
# ---------------------------------------------------------------- chrony: the receiver's time
# chrony's SOCK refclock at [time] chrony_socket (deploy/chrony/tern.conf, path substituted), PPS
# when [time] pps is set; and a chrony.service drop-in handing the socket (created root-owned, 0755)
# to group tern, so that tern.service (User=tern) may send to it.
if [ -n "$CHRONY_SOCKET" ]; then
    {
        sed "s#/run/chrony.tern.sock#$CHRONY_SOCKET#g" "$REPO/deploy/chrony/tern.conf"
        if [ -n "$PPS_DEVICE" ]; then
            echo "# [time] pps: the receiver's pulse per second, numbered by the GPS source's times (dtoverlay=pps-gpio)."
            echo "refclock PPS $PPS_DEVICE refid PPS lock GPS"
        fi
    } >"$WORK/chrony-tern.conf"
    root_put /etc/chrony/conf.d/tern.conf "$WORK/chrony-tern.conf" 0644
    {
        echo "# Written by Tern's deploy/flash-image.sh: chronyd creates Tern's SOCK refclock socket as root with"
        echo "# mode 0755; group tern may then write to it (tern.service runs as User=tern). \"-\": no tern group yet"
        echo "# (tern-firstboot.service restarts chrony once Tern is installed)."
        echo "[Service]"
        echo "ExecStartPost=-+/bin/sh -c 'chgrp tern $CHRONY_SOCKET && chmod 0660 $CHRONY_SOCKET'"
    } >"$WORK/chrony-dropin.conf"
    root_put /etc/systemd/system/chrony.service.d/tern.conf "$WORK/chrony-dropin.conf" 0644
fi
# ---------------------------------------------------------------- (end of chrony)

cat >"$WORK/firstboot.sh" <<'EOF'
#!/bin/bash
# Installs Tern on the first boot: the package staged by deploy/flash-image.sh with the packages it
# needs (debs/, checked against debs/SHA256SUMS; no network needed), or, without them, apt fetches
# those once the network is up; then /etc/tern/tern.toml. Enables tern and disables itself. Run by
# tern-firstboot.service, which retries every minute until this succeeds.
set -euo pipefail
stage=/var/lib/tern-flash
export DEBIAN_FRONTEND=noninteractive
apt_install=(apt-get install -y --no-install-recommends
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
if [ -f "$stage/tern.deb" ] && [ -f "$stage/debs/SHA256SUMS" ]; then
    (cd "$stage/debs" && sha256sum --quiet --strict -c SHA256SUMS) ||
        { echo "tern-firstboot: a package on the card does not match its checksum (debs/SHA256SUMS): flash the card again" >&2; exit 1; }
    offline=()
    for deb in "$stage"/debs/*.deb; do [ -f "$deb" ] && offline+=("$deb"); done
    # Every package apt needs is a file here: nothing is downloaded (the clock may still be wrong).
    # (Not --no-download: with it, apt 3.0 loses the local files' paths, "Pathname to install is
    # not absolute".)
    "${apt_install[@]}" "$stage/tern.deb" ${offline[@]+"${offline[@]}"} ||
        { echo "tern-firstboot: installing from the card failed (above); retrying in a minute" >&2; exit 75; }
    echo "tern-firstboot: installed $(basename "$stage/tern.deb") and ${#offline[@]} package(s) from the card, offline"
elif [ -f "$stage/tern.deb" ]; then
    if ! "${apt_install[@]}" "$stage/tern.deb"; then
        echo "tern-firstboot: installing from the local cache failed; updating the package lists" >&2
        apt-get update || { echo "tern-firstboot: apt-get update failed: no network yet? retrying in a minute" >&2; exit 75; }
        "${apt_install[@]}" "$stage/tern.deb"
    fi
fi
if [ -f "$stage/tern.toml" ]; then
    if getent group tern >/dev/null; then
        install -D -o root -g tern -m 0640 "$stage/tern.toml" /etc/tern/tern.toml
    else
        install -D -o root -g root -m 0644 "$stage/tern.toml" /etc/tern/tern.toml
    fi
fi
# --- time from the receiver (flash-image.sh's chrony block): chronyd reads Tern's socket.
if [ -f /etc/chrony/conf.d/tern.conf ]; then
    command -v chronyd >/dev/null || "${apt_install[@]}" chrony ||
        echo "tern-firstboot: cannot install chrony: the clock will not follow the receiver (apt-get install chrony)" >&2
    systemctl daemon-reload
    systemctl try-restart chrony.service || true  # its drop-in hands the socket to the tern group, now there
fi
# --- (end of time from the receiver)
systemctl daemon-reload
if systemctl cat tern.service >/dev/null 2>&1; then
    systemctl enable tern.service
    # The unit's ExecCondition (tern config gate) skips the start of an unconfigured tracker.
    if tern config gate /etc/tern/tern.toml; then
        systemctl restart tern.service
    else
        echo "tern-firstboot: tern enabled, not started: /etc/tern/tern.toml is not configured (above); edit it, then systemctl start tern" >&2
    fi
else
    echo "tern-firstboot: no tern.service: install Tern (deploy/install.sh keeps /etc/tern/tern.toml)" >&2
fi
rm -rf "$stage/tern.deb" "$stage/tern.toml" "$stage/debs"
systemctl disable tern-firstboot.service
echo "tern-firstboot: done"
EOF
cat >"$WORK/tern-firstboot.service" <<'EOF'
# Written by Tern's deploy/flash-image.sh: installs Tern on the first boot, from the card (no
# network needed); without the packages on the card, apt fetches them (it retries every minute
# until the network is up).
[Unit]
Description=Tern first boot: install the Tern package and /etc/tern/tern.toml
After=local-fs.target
ConditionPathExists=/var/lib/tern-flash

[Service]
Type=oneshot
ExecStart=/usr/local/lib/tern-flash/firstboot.sh
Restart=on-failure
RestartSec=60s
StandardOutput=journal+console

[Install]
WantedBy=multi-user.target
EOF
root_put /usr/local/lib/tern-flash/firstboot.sh "$WORK/firstboot.sh" 0755
root_put /etc/systemd/system/tern-firstboot.service "$WORK/tern-firstboot.service" 0644
root_link /etc/systemd/system/multi-user.target.wants/tern-firstboot.service /etc/systemd/system/tern-firstboot.service

# ---------------------------------------------------------------- first boot: host, user, SSH, Wi-Fi
q() { printf '%q' "$1"; }
if [ "$FIRST_BOOT" = firstrun ]; then
    if [ "$WANT_FIRSTRUN" = 1 ]; then
        {
            cat <<EOF
#!/bin/bash
# Written by Tern's deploy/flash-image.sh in the shape Raspberry Pi Imager writes: run once by
# systemd.run= from cmdline.txt, before the network; Tern itself is installed afterwards by
# tern-firstboot.service.
set +e

NEW_HOSTNAME=$(q "$HOSTNAME_NEW")
NEW_USER=$(q "$LOGIN_USER")
PASSWORD_HASH=$(q "${PASSWORD_HASH:-*}")
SSH_KEY=$(q "$SSH_KEY_LINE")
WIFI_SSID=$(q "$WIFI_SSID")
WIFI_PSK=$(q "$WIFI_PSK")
WIFI_COUNTRY=$(q "$WIFI_COUNTRY")
IMAGER_CUSTOM=/usr/lib/raspberrypi-sys-mods/imager_custom

if [ -n "\$NEW_HOSTNAME" ]; then
   CURRENT_HOSTNAME=\$(tr -d " \t\n\r" </etc/hostname)
   if [ -f "\$IMAGER_CUSTOM" ]; then
      "\$IMAGER_CUSTOM" set_hostname "\$NEW_HOSTNAME"
   else
      echo "\$NEW_HOSTNAME" >/etc/hostname
      sed -i "s/127.0.1.1.*\$CURRENT_HOSTNAME/127.0.1.1\t\$NEW_HOSTNAME/g" /etc/hosts
   fi
fi

# The login user: the image's uid 1000 user, renamed (no password: SSH key only, unless hashed).
FIRSTUSER=\$(getent passwd 1000 | cut -d: -f1)
if [ -z "\$SSH_KEY" ] && [ "\$PASSWORD_HASH" = "*" ]; then
   : # neither key nor password: the image's own first-boot user setup stays
elif [ -f /usr/lib/userconf-pi/userconf ]; then
   /usr/lib/userconf-pi/userconf "\$NEW_USER" "\$PASSWORD_HASH"
elif [ -z "\$FIRSTUSER" ]; then
   useradd -m -u 1000 -s /bin/bash -G sudo,adm,dialout,gpio,video,plugdev,netdev "\$NEW_USER"
   echo "\$NEW_USER:\$PASSWORD_HASH" | chpasswd -e
else
   if [ "\$FIRSTUSER" != "\$NEW_USER" ]; then
      usermod -l "\$NEW_USER" "\$FIRSTUSER"
      usermod -m -d "/home/\$NEW_USER" "\$NEW_USER"
      groupmod -n "\$NEW_USER" "\$FIRSTUSER"
   fi
   echo "\$NEW_USER:\$PASSWORD_HASH" | chpasswd -e
fi
FIRSTUSERHOME=\$(getent passwd "\$NEW_USER" | cut -d: -f6)

if [ -n "\$SSH_KEY" ]; then
   install -o "\$NEW_USER" -g "\$NEW_USER" -m 700 -d "\$FIRSTUSERHOME/.ssh"
   printf '%s\n' "\$SSH_KEY" >"\$FIRSTUSERHOME/.ssh/authorized_keys"
   chown "\$NEW_USER:\$NEW_USER" "\$FIRSTUSERHOME/.ssh/authorized_keys"
   chmod 600 "\$FIRSTUSERHOME/.ssh/authorized_keys"
   if [ "\$PASSWORD_HASH" = "*" ]; then
      echo 'PasswordAuthentication no' >/etc/ssh/sshd_config.d/tern-key-only.conf
   fi
   systemctl enable ssh
fi

if [ -n "\$WIFI_SSID" ]; then
   if [ -f "\$IMAGER_CUSTOM" ]; then
      "\$IMAGER_CUSTOM" set_wlan "\$WIFI_SSID" "\$WIFI_PSK" "\$WIFI_COUNTRY"
   else
      install -d -m 700 /etc/NetworkManager/system-connections
      cat >/etc/NetworkManager/system-connections/preconfigured.nmconnection <<NMEOF
[connection]
id=preconfigured
uuid=\$(cat /proc/sys/kernel/random/uuid)
type=wifi
[wifi]
mode=infrastructure
ssid=\$WIFI_SSID
hidden=false
[ipv4]
method=auto
[ipv6]
addr-gen-mode=default
method=auto
[proxy]
[wifi-security]
key-mgmt=wpa-psk
psk=\$WIFI_PSK
NMEOF
      chmod 600 /etc/NetworkManager/system-connections/preconfigured.nmconnection
      raspi-config nonint do_wifi_country "\$WIFI_COUNTRY" 2>/dev/null || iw reg set "\$WIFI_COUNTRY"
      rfkill unblock wifi
      for filename in /var/lib/systemd/rfkill/*:wlan; do
         [ -e "\$filename" ] && echo 0 >"\$filename"
      done
   fi
fi

rm -f $BOOT_MOUNT/firstrun.sh
sed -i 's| systemd.run.*||g' $BOOT_MOUNT/cmdline.txt
exit 0
EOF
        } >"$WORK/firstrun.sh"
        bash -n "$WORK/firstrun.sh" || die "internal error: the generated firstrun.sh does not parse"
        boot_put firstrun.sh "$WORK/firstrun.sh" secret
    else
        note "first boot: nothing to set (no --hostname, --ssh-key, --wifi-*): no firstrun.sh"
    fi
else
    {
        echo "#cloud-config"
        echo "# Written by Tern's deploy/flash-image.sh (board $BOARD_NAME): host name, user, SSH key."
        echo "# Wi-Fi is in network-config; tern-firstboot.service installs Tern from the card."
        if [ -n "$HOSTNAME_NEW" ]; then
            echo "hostname: $(yaml_str "$HOSTNAME_NEW")"
            echo "manage_etc_hosts: true"
        fi
        if [ -n "$SSH_KEY" ] || [ -n "$PASSWORD_HASH" ]; then
            echo "users:"
            echo "  - name: $(yaml_str "$LOGIN_USER")"
            echo "    groups: [users, adm, dialout, audio, netdev, video, plugdev, cdrom, games, input, gpio, spi, i2c, render, sudo]"
            echo "    shell: /bin/bash"
            echo "    sudo: \"ALL=(ALL) NOPASSWD:ALL\""
            if [ -n "$PASSWORD_HASH" ]; then
                echo "    lock_passwd: false"
                echo "    passwd: $(yaml_str "$PASSWORD_HASH")"
            else
                echo "    lock_passwd: true"
            fi
            if [ -n "$SSH_KEY" ]; then
                echo "    ssh_authorized_keys:"
                echo "      - $(yaml_str "$SSH_KEY_LINE")"
            fi
            if [ -n "$SSH_KEY" ] && [ -z "$PASSWORD_HASH" ]; then echo "ssh_pwauth: false"; fi
        fi
        if [ -n "$SSH_KEY" ] || [ "$WIFI" = 1 ]; then
            echo "runcmd:"
            [ -z "$SSH_KEY" ] || echo "  - [systemctl, enable, --now, ssh]"
            [ "$WIFI" = 0 ] || echo "  - [sh, -c, $(yaml_str "raspi-config nonint do_wifi_country $WIFI_COUNTRY || iw reg set $WIFI_COUNTRY || true")]"
        fi
    } >"$WORK/user-data"
    boot_put user-data "$WORK/user-data" "$([ -n "$PASSWORD_HASH" ] && echo secret)"
    if [ "$WIFI" = 1 ]; then
        cat >"$WORK/network-config" <<EOF
# Written by Tern's deploy/flash-image.sh: Wi-Fi (netplan v2, rendered by NetworkManager).
network:
  version: 2
  wifis:
    renderer: NetworkManager
    wlan0:
      dhcp4: true
      optional: true
      regulatory-domain: $(yaml_str "$WIFI_COUNTRY")
      access-points:
        $(yaml_str "$WIFI_SSID"):
          password: $(yaml_str "$WIFI_PSK")
EOF
        boot_put network-config "$WORK/network-config" secret
    fi
    # The instance id follows the settings: new settings are applied, the same ones are not twice.
    iid=$({ cat "$WORK/user-data"; [ ! -f "$WORK/network-config" ] || cat "$WORK/network-config"; } | sha256sum | cut -c1-16)
    {
        echo "# Written by Tern's deploy/flash-image.sh."
        echo "instance-id: tern-$iid"
        [ -z "$HOSTNAME_NEW" ] || echo "local-hostname: $(yaml_str "$HOSTNAME_NEW")"
    } >"$WORK/meta-data"
    boot_put meta-data "$WORK/meta-data"
    boot_remove firstrun.sh
fi

# ---------------------------------------------------------------- done
if [ "$DRY_RUN" = 1 ]; then
    note "dry run: $CHANGES change(s) listed; nothing written"
    exit 0
fi
sync
umount "$ROOT_MNT"; MOUNTED=0
for loop in "${LOOPS[@]}"; do losetup -d "$loop"; done
LOOPS=()
if [ -n "$PARTIAL" ]; then mv -f "$PARTIAL" "$OUT"; PARTIAL=""; fi
note "$CHANGES change(s); wrote $OUT: flash it with rpi-imager (Use custom) or"
note "    sudo dd if=$OUT of=/dev/sdX bs=4M conv=fsync status=progress"
