#!/usr/bin/env bash
# Builds the Debian package of Tern from a release binary (no debhelper, no source package).
#
# usage: deploy/package-deb.sh ARCH [--binary PATH] [--version V] [--depends LIST] [--lintian]
#   ARCH            Debian architecture of the binary: amd64, arm64, armhf
#   --binary PATH   the tern executable (default: .build/release/tern)
#   --version V     Debian version (default: from `tern --version`, plus the revision "-1";
#                   a V without "-" gets "-1" appended)
#   --depends LIST  the Depends: line instead of the computed one (e.g. when packaging an arm64
#                   binary on an amd64 machine without the arm64 libraries installed)
#   --lintian       run lintian on the result; exit 1 if it reports an error
#   --release R     the Debian release the binary was linked for (bookworm, trixie). Optional: it is
#                   read off the libgpiod the binary links (libgpiod.so.2: bookworm, .so.3: trixie),
#                   and a --release that contradicts it is refused. "~deb12" or "~deb13" always ends
#                   the version (and the file name): the two releases' packages never share a name
#   --sysroot DIR   the sysroot a cross-built binary was linked against (deploy/cross/toolchain.sh):
#                   Depends computed from its packages' symbols files (deploy/cross/depends.py),
#                   the version read by running the binary under qemu-user
# env: DEB_OUT (default dist/) where tern_<version>~debNN_<arch>.deb is written;
#      DEB_MAINTAINER ("Name <mail>") for control and changelog; SOURCE_DATE_EPOCH for the dates.
#
# Depends: computed from the shared libraries the binary needs (its DT_NEEDED entries): with
# dpkg-shlibdeps when the libraries of ARCH are installed here (versioned, from their symbols
# files), else from the soname (libgpiod.so.2 -> libgpiod2 on bookworm, libgpiod.so.3 ->
# libgpiod3 on trixie: one package per distribution, built from the binary linked there).
set -euo pipefail
# Stdout carries the package's path and nothing else (callers capture it): every tool's chatter goes
# to stderr, the result to fd 3.
exec 3>&1 1>&2

die() { echo "package-deb.sh: $*" >&2; exit 1; }
usage() { sed -n '2,25p' "$0"; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ARCH=""
BINARY="$REPO/.build/release/tern"
VERSION=""
DEPENDS=""
LINTIAN=0
RELEASE=""
SYSROOT=""
while [ $# -gt 0 ]; do
    case "$1" in
        --release) [ $# -ge 2 ] || die "--release needs bookworm or trixie"; RELEASE=$2; shift 2 ;;
        --sysroot) [ $# -ge 2 ] || die "--sysroot needs a directory"; SYSROOT=$2; shift 2 ;;
        --binary) [ $# -ge 2 ] || die "--binary needs a path"; BINARY=$2; shift 2 ;;
        --version) [ $# -ge 2 ] || die "--version needs a version, e.g. 0.9.0-1"; VERSION=$2; shift 2 ;;
        --depends) [ $# -ge 2 ] || die "--depends needs a list, e.g. 'libc6, libgpiod2, libsqlite3-0'"; DEPENDS=$2; shift 2 ;;
        --lintian) LINTIAN=1; shift ;;
        -h | --help) usage >&3; exit 0 ;;
        -*) die "unknown option '$1' (try --help)" ;;
        *) [ -z "$ARCH" ] || die "one ARCH only (got '$ARCH' and '$1')"; ARCH=$1; shift ;;
    esac
done
[ -n "$ARCH" ] || { usage >&2; die "missing ARCH (amd64, arm64 or armhf)"; }
case "$ARCH" in
    amd64) ELF_MACHINE="X86-64" ;;
    arm64) ELF_MACHINE="AArch64" ;;
    armhf) ELF_MACHINE="ARM" ;;
    *) die "unsupported ARCH '$ARCH': use amd64, arm64 or armhf" ;;
esac

for tool in dpkg-deb readelf strip gzip help2man; do
    command -v "$tool" >/dev/null || die "$tool not found: apt-get install dpkg-dev binutils help2man"
done
[ -f "$BINARY" ] || die "no binary at $BINARY: build it (swift build -c release --static-swift-stdlib --product tern) or pass --binary PATH"
[ -x "$BINARY" ] || die "$BINARY is not executable"

machine=$(readelf -h "$BINARY" 2>/dev/null | sed -n 's/^ *Machine: *//p') || true
case "$machine" in
    *"$ELF_MACHINE"*) ;;
    "") die "$BINARY is not an ELF executable" ;;
    *) die "$BINARY is built for '$machine', not $ARCH: pass the ARCH it was built for, or the right --binary" ;;
esac

NATIVE=0
[ "$ARCH" = "$(dpkg --print-architecture)" ] && NATIVE=1

# Libraries the binary loads. The Swift runtime must be inside it (--static-swift-stdlib): no
# Debian package ships it.
mapfile -t NEEDED < <(readelf -d "$BINARY" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for lib in "${NEEDED[@]}"; do
    case "$lib" in
        libswift* | libFoundation* | lib_FoundationICU* | libdispatch* | libBlocksRuntime*)
            die "$BINARY links the Swift runtime dynamically ($lib), which no Debian package provides: build with 'swift build -c release --static-swift-stdlib --product tern'" ;;
    esac
done

# The release the binary was linked for, from the libgpiod it needs: bookworm ships libgpiod 1.6
# (libgpiod.so.2), trixie libgpiod 2.x (libgpiod.so.3); Raspberry Pi OS has the same. It ends the
# version ("~deb12", "~deb13"), and so the file name: a bookworm package must never reach a trixie
# host (its libgpiod2 does not exist there) or the other way round.
case "$RELEASE" in
    "" | bookworm | trixie) ;;
    *) die "--release must be bookworm or trixie, got '$RELEASE'" ;;
esac
GPIOD_SONAME=$(printf '%s\n' "${NEEDED[@]}" | grep -m1 '^libgpiod\.so\.' || true)
case "$GPIOD_SONAME" in
    libgpiod.so.2) LINKED_RELEASE=bookworm ;;
    libgpiod.so.3) LINKED_RELEASE=trixie ;;
    "") LINKED_RELEASE="" ;;
    *) die "$BINARY needs $GPIOD_SONAME, which neither bookworm (libgpiod.so.2) nor trixie (libgpiod.so.3) ships: build it on (or against a sysroot of) one of them" ;;
esac
if [ -z "$RELEASE" ]; then
    [ -n "$LINKED_RELEASE" ] ||
        die "$BINARY does not link libgpiod, so its Debian release cannot be told from it: pass --release bookworm or --release trixie"
    RELEASE=$LINKED_RELEASE
elif [ -n "$LINKED_RELEASE" ] && [ "$RELEASE" != "$LINKED_RELEASE" ]; then
    die "--release $RELEASE contradicts the binary: $BINARY needs $GPIOD_SONAME, which is $LINKED_RELEASE's libgpiod. Build the binary on (or against a sysroot of) $RELEASE, or pass --release $LINKED_RELEASE"
fi
case "$RELEASE" in
    bookworm) SUFFIX="~deb12" ;;
    trixie) SUFFIX="~deb13" ;;
esac
[ -z "$SYSROOT" ] || [ -d "$SYSROOT" ] || die "no sysroot at $SYSROOT (deploy/cross/toolchain.sh makes one)"
run_binary() {  # the binary, natively or under qemu-user with its sysroot
    if [ "$NATIVE" = 1 ]; then "$BINARY" "$@"
    elif [ -n "$SYSROOT" ] && command -v qemu-aarch64-static >/dev/null && [ "$ARCH" = arm64 ]; then
        qemu-aarch64-static -L "$SYSROOT" "$BINARY" "$@"
    else return 1; fi
}
if [ -z "$VERSION" ]; then
    VERSION=$(run_binary --version 2>/dev/null | sed -n '1s/^tern \([0-9][0-9A-Za-z.+~]*\).*/\1/p') ||
        die "cannot run a $ARCH binary here to read its version: pass --version, or --sysroot with qemu-user-static installed"
    [ -n "$VERSION" ] || die "'$BINARY --version' did not print 'tern X.Y.Z …': pass --version"
fi
case "$VERSION" in *-*) ;; *) VERSION="$VERSION-1" ;; esac
case "$VERSION" in
    *"$SUFFIX") ;;
    *~deb[0-9]*) die "version '$VERSION' names another release than the binary's $RELEASE ($SUFFIX): pass --version without the ~debNN part" ;;
    *) VERSION="$VERSION$SUFFIX" ;;
esac
[[ "$VERSION" =~ ^[0-9][A-Za-z0-9.+~]*-[A-Za-z0-9.+~]+$ ]] ||
    die "version '$VERSION' is not a Debian version like 0.9.0-1"
UPSTREAM=${VERSION%-*}

MAINTAINER=${DEB_MAINTAINER:-"Tern maintainers <maintainers@users.noreply.a-seed-5fa9bcad.example>"}
EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$REPO" log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH=$EPOCH
OUT=${DEB_OUT:-$REPO/dist}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-deb.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
ROOT="$WORK/root"
DOC="$ROOT/usr/share/doc/tern"
install -d -m 0755 "$ROOT/DEBIAN" "$ROOT/usr/bin" "$ROOT/lib/systemd/system" "$ROOT/lib/udev/rules.d" \
    "$ROOT/etc/tern" "$ROOT/usr/share/man/man1" "$DOC"

# --- the binary, stripped (the .swift5_* reflection sections stay: strip keeps them) -----------
install -m 0755 "$BINARY" "$ROOT/usr/bin/tern"
if [ "$NATIVE" = 1 ]; then
    STRIP="strip"
else
    STRIP=$(command -v "$(dpkg-architecture -a"$ARCH" -qDEB_HOST_GNU_TYPE 2>/dev/null)-strip" || true)
    [ -n "$STRIP" ] || die "no strip for $ARCH here: apt-get install binutils-$(dpkg-architecture -a"$ARCH" -qDEB_HOST_GNU_TYPE 2>/dev/null | tr _ -)"
fi
"$STRIP" --strip-unneeded --remove-section=.comment --remove-section=.note "$ROOT/usr/bin/tern"
if [ "$NATIVE" = 1 ]; then
    "$ROOT/usr/bin/tern" --help >/dev/null 2>&1 || die "the stripped binary does not run ('tern --help' failed)"
fi

# --- Depends ----------------------------------------------------------------------------------
soname_package() { # the Debian package shipping a soname, when dpkg-shlibdeps cannot tell
    case "$1" in
        libc.so.6 | libm.so.6 | libpthread.so.0 | libdl.so.2 | librt.so.1 | libutil.so.1) echo libc6 ;;
        libstdc++.so.6) echo libstdc++6 ;;
        libgcc_s.so.1) echo libgcc-s1 ;;
        libz.so.1) echo zlib1g ;;
        libsqlite3.so.0) echo libsqlite3-0 ;;
        libgpiod.so.*) echo "libgpiod${1#libgpiod.so.}" ;;
        ld-linux*.so.* | linux-vdso.so.*) ;;
        *) return 1 ;;
    esac
}
if [ -z "$DEPENDS" ] && [ -n "$SYSROOT" ]; then
    control="$(dirname "$SYSROOT")/debian-control"
    [ -d "$control" ] || die "no $control beside the sysroot: remake it with deploy/cross/toolchain.sh"
    DEPENDS=$(python3 "$REPO/deploy/cross/depends.py" "$ROOT/usr/bin/tern" "$control") ||
        die "cannot compute Depends from $control (see above)"
fi
if [ -z "$DEPENDS" ] && [ "$NATIVE" = 1 ] && command -v dpkg-shlibdeps >/dev/null; then
    mkdir -p "$WORK/src/debian"
    printf 'Source: tern\n\nPackage: tern\nArchitecture: any\n' >"$WORK/src/debian/control"
    if (cd "$WORK/src" && dpkg-shlibdeps -O -e"$ROOT/usr/bin/tern" 2>"$WORK/shlibdeps.err" >"$WORK/shlibdeps.out"); then
        DEPENDS=$(sed -n 's/^shlibs:Depends=//p' "$WORK/shlibdeps.out")
    else
        echo "package-deb.sh: dpkg-shlibdeps failed ($(head -1 "$WORK/shlibdeps.err")); using the soname table" >&2
    fi
fi
if [ -z "$DEPENDS" ]; then
    packages=()
    for lib in "${NEEDED[@]}"; do
        package=$(soname_package "$lib") ||
            die "$BINARY needs $lib and this script does not know its package: pass --depends"
        [ -z "$package" ] || packages+=("$package")
    done
    DEPENDS=$(printf '%s\n' "${packages[@]}" | sort -u | paste -sd, - | sed 's/,/, /g')
fi
LIBGPIOD=$(printf '%s\n' "${NEEDED[@]}" | sed -n 's/^libgpiod\.so\.\(.*\)/libgpiod\1/p')
[ -n "$LIBGPIOD" ] || echo "package-deb.sh: note: the binary does not link libgpiod" >&2
# passwd: useradd/groupadd/userdel in the maintainer scripts.
DEPENDS="$DEPENDS, passwd"

# --- systemd unit, from deploy/tern.service -----------------------------------------------------
sed -e 's|^\(Exec[A-Za-z]*=\)/usr/local/bin/tern |\1/usr/bin/tern |' \
    -e 's|^Documentation=.*|Documentation=man:tern(1) file:///usr/share/doc/tern/README.md|' \
    -e 's|^# Tern GPS tracking gateway\..*|# Tern GPS tracking gateway. Installed by the tern package (deploy/package-deb.sh).|' \
    "$REPO/deploy/tern.service" >"$ROOT/lib/systemd/system/tern.service"
{ grep -q '^ExecStart=/usr/bin/tern run ' "$ROOT/lib/systemd/system/tern.service" &&
    grep -q '^ExecCondition=/usr/bin/tern config gate ' "$ROOT/lib/systemd/system/tern.service"; } ||
    die "deploy/tern.service has no 'ExecStart=/usr/local/bin/tern run …' or 'ExecCondition=/usr/local/bin/tern config gate …' line to point at /usr/bin/tern: update the sed in $0"
chmod 0644 "$ROOT/lib/systemd/system/tern.service"

# --- udev: the gpio group owns the GPIO chips (Raspberry Pi OS does this itself) ---------------
cat >"$ROOT/lib/udev/rules.d/60-tern-gpio.rules" <<'EOF'
# tern: members of group gpio (the tern service user) may use the GPIO character devices.
SUBSYSTEM=="gpio", KERNEL=="gpiochip*", GROUP="gpio", MODE="0660"
EOF

# --- configuration (a conffile: dpkg keeps local edits on upgrade) -----------------------------
sed -e 's|^# Installed as /etc/tern/tern.toml by deploy/install.sh;|# Installed as /etc/tern/tern.toml by the tern package;|' \
    "$REPO/board/raspberry-pi-gps-hat.toml" >"$ROOT/etc/tern/tern.toml"
chmod 0644 "$ROOT/etc/tern/tern.toml"
echo /etc/tern/tern.toml >"$ROOT/DEBIAN/conffiles"

# --- documentation ------------------------------------------------------------------------------
install -m 0644 "$REPO/deploy/README.md" "$DOC/README.md"
DATE_RFC2822=$(date -u -R -d "@$EPOCH")
{
    echo "tern ($VERSION) unstable; urgency=medium"
    echo
    echo "  * Release $UPSTREAM, built from commit $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)."
    echo
    echo " -- $MAINTAINER  $DATE_RFC2822"
} | gzip -9n >"$DOC/changelog.Debian.gz"
# copyright: machine-readable (DEP-5), Tern under the Apache License 2.0 (LICENSE) and a stanza for
# every package compiled into the binary (deploy/copyright; deploy/test/copyright-check.py checks
# it against what a release build links).
if ! grep -q '^Copyright [0-9-]* The Tern authors' "$REPO/LICENSE" || ! grep -q 'Apache License' "$REPO/LICENSE"; then
    die "$REPO/LICENSE is not Tern's Apache License 2.0 with its copyright line: deploy/copyright says it is; fix one of them"
fi
install -m 0644 "$REPO/deploy/copyright" "$DOC/copyright"
chmod 0644 "$DOC"/*

# --- lintian overrides: only for what is true of the binary and cannot change here -----------------
install -d -m 0755 "$ROOT/usr/share/lintian/overrides"
if grep -q -a 'inflate 1\.[0-9.]* Copyright' "$ROOT/usr/bin/tern"; then
    # swift-nio-extras (a dependency of a dependency: CNIOExtrasZlib) compiles its own copy of
    # zlib, with its symbols renamed, into the binary; Debian's zlib1g is linked too, for
    # Foundation. Fixing it means a swift-nio-extras that links the system zlib.
    echo "tern: embedded-library zlib [usr/bin/tern]" >>"$ROOT/usr/share/lintian/overrides/tern"
fi
if [ -s "$ROOT/usr/share/lintian/overrides/tern" ]; then
    chmod 0644 "$ROOT/usr/share/lintian/overrides/tern"
else
    rm -rf "$ROOT/usr/share/lintian"
fi

# --- man page -------------------------------------------------------------------------------
cat >"$WORK/man.include" <<'EOF'
[FILES]
.TP
.I /etc/tern/tern.toml
the configuration (a dpkg conffile; validate with \fBtern config check\fR)
.TP
.I /etc/tern/secrets.toml
optional: \fB[uplink]\fR token, username, password, overriding tern.toml (mode 0640, group tern)
.TP
.I /var/lib/tern/queue.sqlite
the store-and-forward queue (kept on package removal, deleted on purge)
.TP
.I /run/tern/status.json
what the daemon reports every 10 s, read by \fBtern status\fR
[EXIT STATUS]
\fBtern run\fR: 0 on SIGTERM/SIGINT, 78 on a configuration error, 1 otherwise.
.br
\fBtern status\fR: 0 healthy, 1 not running, 3 degraded.
.br
\fBtern config check\fR: 0 valid, 2 valid with warnings, 78 invalid.
[SEE ALSO]
\fBsystemctl status tern\fR, \fBjournalctl \-u tern\fR, /usr/share/doc/tern/README.md
EOF
if [ "$NATIVE" = 1 ]; then
    help2man --no-info --no-discard-stderr --version-string="$UPSTREAM" \
        --name="GPS tracking gateway that never loses a position" \
        --include="$WORK/man.include" --output="$WORK/tern.1" "$ROOT/usr/bin/tern" ||
        die "help2man failed on 'tern --help'"
else
    # help2man must run the binary; for a foreign ARCH write a minimal page.
    {
        echo ".TH TERN 1 \"$(date -u -d "@$EPOCH" +%Y-%m-%d)\" \"tern $UPSTREAM\" \"User Commands\""
        printf '%s\n' ".SH NAME" 'tern \- GPS tracking gateway that never loses a position'
        printf '%s\n' ".SH SYNOPSIS" ".B tern" '\fISUBCOMMAND\fR ...' ".SH DESCRIPTION" \
            'See \fBtern \-\-help\fR and \fBtern help\fR \fISUBCOMMAND\fR.'
        sed -e 's/^\[\(.*\)\]$/.SH \1/' "$WORK/man.include"
    } >"$WORK/tern.1"
fi
gzip -9n <"$WORK/tern.1" >"$ROOT/usr/share/man/man1/tern.1.gz"
chmod 0644 "$ROOT/usr/share/man/man1/tern.1.gz"

# --- maintainer scripts -------------------------------------------------------------------------
cat >"$ROOT/DEBIAN/postinst" <<'EOF'
#!/bin/sh
# tern postinst: user and groups, data directory, enable the unit; on first installation start it
# only with a configuration `tern config check` accepts without warnings; after an upgrade start
# it again if it was running before (prerm stopped it and left /run/tern.dpkg-was-running) and its
# configuration is not invalid.
set -e

UNIT=tern.service
CONFIG=/etc/tern/tern.toml
FLAG=/run/tern.dpkg-was-running

create_account() {
    for group in dialout gpio; do
        getent group "$group" >/dev/null || groupadd --system "$group"
    done
    if getent passwd tern >/dev/null; then
        usermod --append --groups dialout,gpio tern
    else
        getent group tern >/dev/null || groupadd --system tern
        useradd --system --gid tern --groups dialout,gpio --home-dir /var/lib/tern \
            --no-create-home --shell /usr/sbin/nologin --comment "Tern GPS tracking gateway" tern
    fi
    install -d -o tern -g tern -m 0750 /var/lib/tern
    chown tern:tern /var/lib/tern
    # The config directory: readable by the service; tern.toml (it may hold uplink.token) and
    # secrets.toml only by root and group tern. The package cannot ship group tern (it does not
    # exist at unpack), so the mode is set here, at every configure.
    chgrp tern /etc/tern && chmod 0755 /etc/tern
    if [ -e /etc/tern/tern.toml ]; then
        chown root:tern /etc/tern/tern.toml && chmod 0640 /etc/tern/tern.toml
    fi
    if [ -e /etc/tern/secrets.toml ]; then
        chown root:tern /etc/tern/secrets.toml && chmod 0640 /etc/tern/secrets.toml
    fi
}

reload_udev() {
    if [ -d /run/udev ] && command -v udevadm >/dev/null; then
        udevadm control --reload-rules >/dev/null 2>&1 || true
        udevadm trigger --subsystem-match=gpio --action=change >/dev/null 2>&1 || true
    fi
}

enable_unit() {
    # As dh_installsystemd does: enable on first install; keep an administrator's "disable".
    deb-systemd-helper unmask "$UNIT" >/dev/null || true
    if deb-systemd-helper --quiet was-enabled "$UNIT"; then
        deb-systemd-helper enable "$UNIT" >/dev/null || true
    else
        deb-systemd-helper update-state "$UNIT" >/dev/null || true
    fi
}

# config_ok first-install|upgrade: returns 0 when the service should be (re)started, else prints
# why not. An unconfigured tracker (tern config gate: a placeholder server or device name) is never
# started, here or at boot (the unit's ExecCondition runs the same gate); harmless warnings do not
# hold it back; an invalid configuration is not started on a first installation, and a service that
# was running before an upgrade is restarted unless its configuration is invalid.
config_ok() {
    gate=0
    gate_output=$(tern config gate "$CONFIG" 2>&1) || gate=$?
    if [ "$gate" = 3 ]; then
        echo "tern: the service was not started: $CONFIG is not configured for this tracker yet:"
        echo "$gate_output" | sed -e 's/^<[0-9]>//' -e 's/^tern: //' | grep -v '^not started' | sed 's/^ */tern:   /'
        echo "tern: edit $CONFIG (uplink.url, device, [receiver] and [power] for your HAT; the token"
        echo "tern: can go in /etc/tern/secrets.toml), check it with 'tern config check $CONFIG',"
        echo "tern: then 'systemctl start tern'. Until then it is not started at boot either (ExecCondition)."
        return 1
    fi
    rc=0
    output=$(tern config check "$CONFIG" 2>&1) || rc=$?
    case "$rc" in
        0) return 0 ;;
        2) echo "tern: $CONFIG has warnings (tern config check):"
           echo "$output" | grep -v '^ok' | sed 's/^/tern:   /'
           return 0 ;;
        *) echo "tern: $CONFIG is invalid (tern config check exited $rc), so the service was not started:"
           echo "$output" | sed 's/^/tern:   /'
           echo "tern: fix it, check it with 'tern config check $CONFIG', then 'systemctl start tern'." ;;
    esac
    return 1
}

start_unit() {
    if ! deb-systemd-invoke "$1" "$UNIT"; then
        echo "tern: 'systemctl $1 tern' failed: see 'systemctl status tern' and 'journalctl -u tern -p warning'" >&2
    fi
}

# node_exporter's textfile directory (Debian's prometheus-node-exporter) belongs to root: let the
# service user write its metrics file there ([metrics] textfile_dir), as deploy/install.sh does.
grant_metrics_acl() {
    textfiles=/var/lib/prometheus/node-exporter
    [ -d "$textfiles" ] || return 0
    if command -v setfacl >/dev/null; then
        setfacl -m u:tern:rwx "$textfiles" ||
            echo "tern: could not let user tern write $textfiles (setfacl -m u:tern:rwx $textfiles failed)" >&2
    else
        echo "tern: setfacl not found, so user tern cannot write the metrics textfile into $textfiles:"
        echo "tern: 'apt install acl' and 'dpkg-reconfigure tern' (or 'setfacl -m u:tern:rwx $textfiles'),"
        echo "tern: or set [metrics] textfile_dir to a directory tern may write."
    fi
}

warn_install_sh() {
    # deploy/install.sh puts its own unit in /etc/systemd/system, which shadows the package's.
    if [ -f /etc/systemd/system/tern.service ] && [ ! -L /etc/systemd/system/tern.service ]; then
        echo "tern: /etc/systemd/system/tern.service (from deploy/install.sh) overrides the packaged"
        echo "tern: unit and runs $(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' /etc/systemd/system/tern.service):"
        echo "tern: remove it and /usr/local/bin/tern, then 'systemctl daemon-reload'."
    fi
}

case "$1" in
    configure | abort-upgrade | abort-deconfigure | abort-remove)
        create_account
        grant_metrics_acl
        warn_install_sh
        reload_udev
        enable_unit
        if [ -d /run/systemd/system ]; then
            systemctl --system daemon-reload >/dev/null || true
            if [ -e "$FLAG" ]; then
                # Upgrade (or an aborted one) of a running service: run it again.
                rm -f "$FLAG"
                if config_ok upgrade; then start_unit restart; fi
            elif [ "$1" = configure ] && [ -z "$2" ]; then
                # First installation.
                if config_ok first-install; then start_unit start; fi
            fi
        fi
        ;;
    triggered) ;;
    *) echo "tern postinst called with unknown argument '$1'" >&2; exit 1 ;;
esac
exit 0
EOF

cat >"$ROOT/DEBIAN/prerm" <<'EOF'
#!/bin/sh
# tern prerm: stop the service (SIGTERM: tern writes what is still waiting into the queue);
# on upgrade remember whether it was running, so that postinst starts the new version.
set -e

UNIT=tern.service
FLAG=/run/tern.dpkg-was-running

case "$1" in
    remove | upgrade | deconfigure | failed-upgrade)
        if [ -d /run/systemd/system ]; then
            if [ "$1" = upgrade ] || [ "$1" = failed-upgrade ]; then
                if systemctl --quiet is-active "$UNIT" 2>/dev/null; then
                    : >"$FLAG"
                fi
            fi
            deb-systemd-invoke stop "$UNIT" >/dev/null || true
        fi
        ;;
    *) echo "tern prerm called with unknown argument '$1'" >&2; exit 1 ;;
esac
exit 0
EOF

cat >"$ROOT/DEBIAN/postrm" <<'EOF'
#!/bin/sh
# tern postrm: "remove" keeps the queue (/var/lib/tern), the configuration and the user;
# "purge" deletes them.
set -e

UNIT=tern.service

case "$1" in
    remove)
        if [ -d /run/systemd/system ]; then
            systemctl --system daemon-reload >/dev/null || true
        fi
        if command -v deb-systemd-helper >/dev/null; then
            deb-systemd-helper mask "$UNIT" >/dev/null || true
        fi
        rm -f /run/tern.dpkg-was-running
        ;;
    purge)
        if command -v deb-systemd-helper >/dev/null; then
            deb-systemd-helper purge "$UNIT" >/dev/null || true
            deb-systemd-helper unmask "$UNIT" >/dev/null || true
        fi
        rm -rf /var/lib/tern /etc/tern /run/tern
        rm -f /run/tern.dpkg-was-running
        if getent passwd tern >/dev/null && command -v userdel >/dev/null; then
            userdel tern >/dev/null 2>&1 || echo "tern: could not delete the user tern (userdel tern)" >&2
        fi
        if getent group tern >/dev/null && command -v groupdel >/dev/null; then
            groupdel tern >/dev/null 2>&1 || true
        fi
        ;;
    upgrade | failed-upgrade | abort-install | abort-upgrade | disappear) ;;
    *) echo "tern postrm called with unknown argument '$1'" >&2; exit 1 ;;
esac
exit 0
EOF
chmod 0755 "$ROOT/DEBIAN/postinst" "$ROOT/DEBIAN/prerm" "$ROOT/DEBIAN/postrm"

# --- control ------------------------------------------------------------------------------------
INSTALLED_SIZE=$(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)
cat >"$ROOT/DEBIAN/control" <<EOF
Package: tern
Version: $VERSION
Architecture: $ARCH
Maintainer: $MAINTAINER
Installed-Size: $INSTALLED_SIZE
Depends: $DEPENDS
Recommends: acl
Section: misc
Priority: optional
Description: GPS tracking gateway that never loses a position
 Tern reads a GPS receiver (a Raspberry Pi GPS HAT on the UART), duty-cycles
 its power with an adaptive scheduler, filters the fixes and stores them in a
 SQLite queue until a server (Tern's protocol, Traccar, OwnTracks or MQTT)
 confirms them.
 .
 The service runs as user tern with /etc/tern/tern.toml; it is enabled on
 installation and started once that configuration passes "tern config check".
EOF

# md5sums: what `dpkg --verify tern` checks the installed files against (conffiles have their own).
(cd "$ROOT" && find . -type f ! -path './DEBIAN/*' ! -path './etc/*' -printf '%P\0' | LC_ALL=C sort -z |
    xargs -0 md5sum) >"$ROOT/DEBIAN/md5sums"
chmod 0644 "$ROOT/DEBIAN/md5sums"

DEB="$OUT/tern_${VERSION}_${ARCH}.deb"
dpkg-deb --root-owner-group -Zxz --build "$ROOT" "$DEB" >/dev/null
echo "$DEB" >&3
echo "  Depends: $DEPENDS" >&2

if [ "$LINTIAN" = 1 ]; then
    command -v lintian >/dev/null || die "lintian not found: apt-get install lintian"
    lintian_out=$(lintian --tag-display-limit 0 --show-overrides "$DEB" 2>&1) || true
    [ -z "$lintian_out" ] || printf '%s\n' "$lintian_out" >&2
    if printf '%s\n' "$lintian_out" | grep -q '^E: '; then
        die "lintian reports errors for $DEB (above)"
    fi
fi
