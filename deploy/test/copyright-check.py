#!/usr/bin/env python3
"""deploy/copyright names every Swift package compiled into tern.

Reads the objects a release build linked into the tern product
(.build/<triple>/release/tern.product/Objects.LinkFileList), finds what each object was compiled
from in the build manifest (.build/release.yaml): an object from .build/checkouts/<package>/ belongs
to <package>, any other to Tern. Checks that deploy/copyright has a
"Files: .build/checkouts/<package>/*" stanza for each such package. Prints one ok/FAIL line per
package (as deploy/test/lib.sh does); exits 1 on a FAIL.

usage: deploy/test/copyright-check.py [REPO [LINKFILELIST]]
"""
import glob
import json
import os
import re
import shlex
import sys

repo = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
# The build's scratch path: .build, or the one TERN_SCRATCH_PATH names (CI builds the release binary in
# its own, .build-release, while other steps use .build).
scratch = os.path.abspath(os.environ.get("TERN_SCRATCH_PATH") or os.path.join(repo, ".build"))
lists = sys.argv[2:3] or glob.glob(os.path.join(scratch, "*", "release", "tern.product", "Objects.LinkFileList"))
manifest = os.path.join(scratch, "release.yaml")
checkouts = re.compile(re.escape(os.path.join(scratch, "checkouts")) + r"/([^/]+)/")
if not lists or not os.path.isfile(manifest):
    print("FAIL copyright: no release build (.build/*/release/tern.product/Objects.LinkFileList and "
          ".build/release.yaml): build with 'swift build -c release --static-swift-stdlib --product tern'")
    sys.exit(1)
# One path a line, shell-quoted when it holds a space or another special character.
objects = [shlex.split(line)[0] for line in open(lists[0]) if line.strip()]

# The manifest's commands: "  "KEY":" then "    inputs: [...]" and "    outputs: [...]" (JSON lists).
origin, inputs = {}, []
for line in open(manifest):
    if re.match(r'^  "', line):
        inputs = []
    elif line.startswith("    inputs: "):
        inputs = json.loads(line[len("    inputs: "):])
    elif line.startswith("    outputs: "):
        for out in json.loads(line[len("    outputs: "):]):
            if out.endswith(".o"):
                origin[out] = inputs

packages, own, failed = {}, 0, 0
for obj in objects:
    match = re.search(r"/([^/]+)\.build/", obj)
    module = match.group(1) if match else obj
    sources = origin.get(obj)
    if sources is None:
        print(f"FAIL copyright: {obj} is linked into tern, but {manifest} does not say what it is compiled from")
        failed += 1
        continue
    # Its source files (the inputs also name other modules' interfaces).
    sources = [s for s in sources if re.search(r"\.(swift|c|cc|cpp|S|s)$", s)]
    found = sorted({m.group(1) for m in (checkouts.search(s) for s in sources) if m})
    if len(found) > 1:
        print(f"FAIL copyright: {obj} is compiled from sources of several packages ({', '.join(found)})")
        failed += 1
        continue
    if not found:
        own += 1
        continue
    packages.setdefault(found[0], set()).add(module)

stanzas = set(re.findall(r"^Files: \.build/checkouts/([^/]+)/\*$", open(os.path.join(repo, "deploy", "copyright")).read(), re.M))
for package in sorted(packages):
    modules = " ".join(sorted(packages[package]))
    if package in stanzas:
        print(f"ok   copyright: {package} ({modules}) has its stanza")
    else:
        print(f"FAIL copyright: {package} ({modules}) is compiled into tern, but deploy/copyright has no "
              f"'Files: .build/checkouts/{package}/*' stanza: add one with its licence")
        failed += 1
for package in sorted(stanzas - set(packages)):
    print(f"     note: deploy/copyright has a stanza for {package}, which this build does not link")
print(f"     {len(objects)} objects linked: {own} from Tern's own sources, the others from {len(packages)} packages")
sys.exit(1 if failed else 0)
