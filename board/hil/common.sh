# Shared settings for the HIL scripts (sourced). Override any of them from the environment.
HIL_DIR=${HIL_DIR:-/tmp/tern-hil}                 # work dir: kernel, module, initramfs, logs
# Guest kernel: the one Debian's linux-image-amd64 depends on, unless KVER is set.
if [ -z "${KVER:-}" ]; then
    if [ -f "$HIL_DIR/kver" ]; then
        KVER=$(cat "$HIL_DIR/kver")
    else
        KVER=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null \
            | grep -o 'linux-image-[0-9][^ ,]*-amd64' | head -1 | sed 's/^linux-image-//' || true)
    fi
fi
KERNEL=${KERNEL:-$HIL_DIR/vmlinux-$KVER}
INITRD=${INITRD:-$HIL_DIR/initramfs.cpio.gz}
GPIOSIM_KO=${GPIOSIM_KO:-$HIL_DIR/gpiosim-mod/gpio-sim.ko}
