#!/usr/bin/env python3
"""The Depends: line of a binary built against a sysroot of another architecture.

    deploy/cross/depends.py BINARY CONTROL_DIR

dpkg-shlibdeps' rule, read from the target release's own packages rather than this machine's dpkg
database: for every library the binary needs (DT_NEEDED), the package whose `symbols` file (else
`shlibs` file) declares that soname, at the highest minimum version among the symbols the binary
imports from it. CONTROL_DIR holds one folder per package, with the control files of the .debs the
sysroot was unpacked from (deploy/cross/toolchain.sh keeps them). Prints e.g.
`libc6 (>= 2.38), libgcc-s1 (>= 3.0), libgpiod3 (>= 2.0), ...`; exit 1 naming a library that no
package declares.
"""
import os
import re
import subprocess
import sys

LOADER = re.compile(r"^(ld-linux.*|linux-vdso.*)")


def readelf(*args):
    return subprocess.run(["readelf", *args], check=True, capture_output=True, text=True).stdout


def needed(binary):
    return re.findall(r"\(NEEDED\).*\[(.+?)\]", readelf("-d", "-W", binary))


def version_files(binary):
    """{symbol version name: soname} from .gnu.version_r."""
    out, lib = {}, None
    for line in readelf("-V", "-W", binary).splitlines():
        if m := re.search(r"File: (\S+)", line):
            lib = m[1]
        elif lib and (m := re.search(r"Name: (\S+)\s+Flags", line)):
            out[m[1]] = lib
    return out


def imports(binary):
    """[(symbol, version or None)] the binary takes from shared libraries."""
    out = []
    for line in readelf("--dyn-syms", "-W", binary).splitlines():
        fields = line.split()
        if len(fields) >= 8 and fields[6] == "UND" and fields[7]:
            name, _, version = fields[7].partition("@")
            out.append((name, version.lstrip("@").split(" ")[0] or None))
    return out


def parse_symbols(path):
    """{soname: (template, {symbol@version: minver})} from a symbols file."""
    files, current = {}, None
    for line in open(path, encoding="utf-8"):
        if line.startswith((" ", "\t")):
            if current is not None:
                parts = line.split()
                if len(parts) >= 2:
                    files[current][1][parts[0]] = parts[1]
        elif line[:1] in ("|", "*", "#", "\n", ""):
            continue
        else:
            soname, template = line.rstrip("\n").split(" ", 1)
            current = soname
            files[soname] = (template.strip(), {})
    return files


def parse_shlibs(path):
    """{soname: dependency} from a shlibs file ("libsqlite3 0 libsqlite3-0 (>= 3.46.1)")."""
    out = {}
    for line in open(path, encoding="utf-8"):
        parts = line.split(None, 2)
        if len(parts) == 3 and not line.startswith("#") and ":" not in parts[0]:
            name, version, dependency = parts
            soname = f"{name}.so.{version}" if not re.search(r"\d$", name) else f"{name}-{version}.so"
            out[soname] = dependency.strip()
    return out


def newer(a, b):
    return subprocess.run(["dpkg", "--compare-versions", a, "gt", b]).returncode == 0


def main(binary, control_dir):
    symbols, shlibs = {}, {}
    for package in sorted(os.listdir(control_dir)):
        folder = os.path.join(control_dir, package)
        if os.path.exists(os.path.join(folder, "symbols")):
            symbols.update(parse_symbols(os.path.join(folder, "symbols")))
        if os.path.exists(os.path.join(folder, "shlibs")):
            shlibs.update(parse_shlibs(os.path.join(folder, "shlibs")))
    owners = version_files(binary)
    used = imports(binary)
    depends, unknown = {}, []
    for soname in needed(binary):
        if LOADER.match(soname):
            continue
        if soname in symbols:
            template, table = symbols[soname]
            minimum = None
            for name, version in used:
                if version and owners.get(version) != soname:
                    continue
                key = f"{name}@{version or 'Base'}"
                if key in table and (minimum is None or newer(table[key], minimum)):
                    minimum = table[key]
            # dpkg-shlibdeps drops a minimum of 0 (any version will do).
            versioned = minimum and minimum != "0"
            dependency = template.replace("#MINVER#", f"(>= {minimum})" if versioned else "").strip()
        elif soname in shlibs:
            dependency = shlibs[soname]
        else:
            unknown.append(soname)
            continue
        package, _, constraint = dependency.partition(" ")
        old = depends.get(package)
        if old is None or (constraint and (not old or newer(constraint.strip("()>= "), old.strip("()>= ")))):
            depends[package] = constraint
    if unknown:
        print(f"depends.py: no package in {control_dir} declares {', '.join(unknown)}", file=sys.stderr)
        return 1
    print(", ".join(f"{p} {c}".strip() for p, c in sorted(depends.items())))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
