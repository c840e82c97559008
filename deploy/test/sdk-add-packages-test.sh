#!/usr/bin/env bash
# deploy/sdk-add-packages.sh refuses what it cannot verify. A local mirror (file://) with its own
# signing key (a throwaway GnuPG key, given as KEYRING) holds the four packages the script wants
# as small .debs; the script must unpack the intact mirror, and refuse, unpacking nothing, a copy
# with one byte changed in a .deb, in Packages.xz, or in the signed InRelease, and the intact
# mirror checked against Debian's archive keyring (a signature by a key it does not hold).
# No network; a few seconds.
#
# usage: deploy/test/sdk-add-packages-test.sh
# Needs gpg, gpgv, dpkg-deb, xz, curl, python3. Prints one line per check, exits 1 on a FAIL.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=deploy/test/lib.sh
. "$HERE/lib.sh"
SCRIPT="$REPO/deploy/sdk-add-packages.sh"

for tool in gpg gpgv dpkg-deb xz curl python3 sha256sum; do
    command -v "$tool" >/dev/null || { fail "sdk-add-packages test: $tool not found (apt-get install gnupg gpgv dpkg xz-utils curl python3)"; results_exit; exit 1; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-sdk-test.XXXXXX")
trap 'gpgconf --homedir "$WORK/gnupg" --kill all >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
export GNUPGHOME="$WORK/gnupg"
mkdir -m 0700 "$GNUPGHOME"

# --- a signed mirror: dists/bookworm/{InRelease,main/binary-arm64/Packages.xz}, pool/ ------------
gpg --batch --quiet --passphrase '' --quick-gen-key 'Tern test archive <archive@tern.invalid>' ed25519 sign never 2>/dev/null
gpg --batch --quiet --export >"$WORK/test-keyring.gpg"
MIRROR_DIR="$WORK/mirror"
mkdir -p "$MIRROR_DIR/dists/bookworm/main/binary-arm64" "$MIRROR_DIR/pool/main"
: >"$WORK/Packages"
for package in libgpiod-dev libgpiod2 libsqlite3-dev libsqlite3-0; do
    root="$WORK/build/$package"
    mkdir -p "$root/DEBIAN" "$root/usr/include" "$root/usr/lib/aarch64-linux-gnu"
    printf 'Package: %s\nVersion: 1.0-1\nArchitecture: arm64\nMaintainer: Tern tests <tests@tern.invalid>\nDescription: test package\n' \
        "$package" >"$root/DEBIAN/control"
    case "$package" in
        libgpiod-dev) echo '/* test gpiod.h */' >"$root/usr/include/gpiod.h" ;;
        libsqlite3-dev) echo '/* test sqlite3.h */' >"$root/usr/include/sqlite3.h" ;;
        *) head -c 4096 /dev/urandom >"$root/usr/lib/aarch64-linux-gnu/$package.so.test" ;;
    esac
    file="pool/main/${package}_1.0-1_arm64.deb"
    dpkg-deb --root-owner-group --build "$root" "$MIRROR_DIR/$file" >/dev/null
    printf 'Package: %s\nVersion: 1.0-1\nArchitecture: arm64\nFilename: %s\nSize: %s\nSHA256: %s\n\n' \
        "$package" "$file" "$(stat -c %s "$MIRROR_DIR/$file")" "$(sha256sum "$MIRROR_DIR/$file" | cut -d' ' -f1)" >>"$WORK/Packages"
done
xz -c "$WORK/Packages" >"$MIRROR_DIR/dists/bookworm/main/binary-arm64/Packages.xz"
index="$MIRROR_DIR/dists/bookworm/main/binary-arm64/Packages.xz"
{
    printf 'Origin: Tern test\nSuite: stable\nCodename: bookworm\nArchitectures: arm64\nComponents: main\nSHA256:\n'
    printf ' %s %s main/binary-arm64/Packages.xz\n' "$(sha256sum "$index" | cut -d' ' -f1)" "$(stat -c %s "$index")"
} >"$WORK/Release"
gpg --batch --quiet --yes --clearsign -o "$MIRROR_DIR/dists/bookworm/InRelease" "$WORK/Release"

# flip_byte FILE [OFFSET]: changes one byte (the middle one by default).
flip_byte() {
    python3 - "$1" "${2:-}" <<'EOF'
import sys
path, offset = sys.argv[1], sys.argv[2]
data = bytearray(open(path, "rb").read())
i = int(offset) if offset else len(data) // 2
data[i] ^= 0x01
open(path, "wb").write(data)
EOF
}

# run_case NAME MIRROR KEYRING: runs the script into a new sysroot; sets CASE_RC, CASE_ERR, CASE_ROOT.
run_case() {
    CASE_ROOT="$WORK/sysroot-$1"
    mkdir -p "$CASE_ROOT"
    CASE_RC=0
    MIRROR="file://$2" KEYRING="$3" "$SCRIPT" "$CASE_ROOT" bookworm arm64 >"$WORK/$1.out" 2>"$WORK/$1.err" || CASE_RC=$?
    CASE_ERR=$(cat "$WORK/$1.err")
}
# expect_refused NAME WHAT PATTERN: the case failed, said REFUSED and PATTERN, unpacked nothing.
expect_refused() {
    local name=$1 what=$2 pattern=$3 unpacked
    unpacked=$(find "$CASE_ROOT" -mindepth 1 | head -1)
    if [ "$CASE_RC" != 0 ] && grep -q "REFUSED" <<<"$CASE_ERR" && grep -q -- "$pattern" <<<"$CASE_ERR" && [ -z "$unpacked" ]; then
        ok "$what: refused, nothing unpacked ($(sed -n 's|.*REFUSED [^ ]*/\([^/ ]*\): \(.\{0,40\}\).*|\1: \2…|p' <<<"$CASE_ERR" | head -1))"
    else
        fail "$what: exit $CASE_RC, unpacked '${unpacked:-nothing}', said: $(tail -2 <<<"$CASE_ERR" | tr '\n' ' ')"
    fi
}

# 1. The intact mirror, with its key: unpacked.
run_case intact "$MIRROR_DIR" "$WORK/test-keyring.gpg"
if [ "$CASE_RC" = 0 ] && [ -f "$CASE_ROOT/usr/include/gpiod.h" ] && [ -f "$CASE_ROOT/usr/include/sqlite3.h" ]; then
    ok "intact signed mirror: verified and unpacked (gpiod.h, sqlite3.h)"
else
    fail "intact signed mirror: exit $CASE_RC: $(tail -3 <<<"$CASE_ERR" | tr '\n' ' ')"
fi

# 2. One byte changed in a .deb (its Packages entry, and so the signature, unchanged).
cp -a "$MIRROR_DIR" "$WORK/m-deb"
flip_byte "$WORK/m-deb/pool/main/libsqlite3-0_1.0-1_arm64.deb"
run_case deb "$WORK/m-deb" "$WORK/test-keyring.gpg"
expect_refused deb "one byte changed in libsqlite3-0's .deb" "pool/main/libsqlite3-0_1.0-1_arm64.deb: its SHA256"

# 3. One byte changed in Packages.xz.
cp -a "$MIRROR_DIR" "$WORK/m-index"
flip_byte "$WORK/m-index/dists/bookworm/main/binary-arm64/Packages.xz"
run_case index "$WORK/m-index" "$WORK/test-keyring.gpg"
expect_refused index "one byte changed in Packages.xz" "Packages.xz: its SHA256"

# 4. One byte changed in the signed text of InRelease (the Packages.xz checksum line).
cp -a "$MIRROR_DIR" "$WORK/m-release"
offset=$(grep -b -o 'main/binary-arm64/Packages.xz' "$WORK/m-release/dists/bookworm/InRelease" | head -1 | cut -d: -f1)
flip_byte "$WORK/m-release/dists/bookworm/InRelease" "$((offset - 20))"
run_case release "$WORK/m-release" "$WORK/test-keyring.gpg"
expect_refused release "one byte changed in InRelease's signed text" "no good signature"

# 5. The intact mirror against Debian's archive keyring: signed, but not by Debian.
debian_keyring=""
for candidate in /usr/share/keyrings/debian-archive-keyring.pgp /usr/share/keyrings/debian-archive-keyring.gpg; do
    [ -f "$candidate" ] && { debian_keyring=$candidate; break; }
done
if [ -n "$debian_keyring" ]; then
    run_case foreign "$MIRROR_DIR" "$debian_keyring"
    expect_refused foreign "a mirror signed by a key not in Debian's archive keyring" "no good signature"
else
    fail "Debian's archive keyring is not installed: apt-get install debian-archive-keyring"
fi

results_exit
