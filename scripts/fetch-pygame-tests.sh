#!/usr/bin/env bash
# Fetches pygame 2.1.2's own tests, which Debian's python3-pygame (2.1.2) does not ship, for RealProgramsTests: from
# Debian's source package of that very pygame (pygame_2.1.2+dfsg.orig.tar.xz, checked against the SHA-256 its .dsc
# gives), over the apt mirror this machine already uses. Only the pure-Python tests (test/ → pygame/tests/) and the
# example sounds they load (examples/data/ → pygame/examples/data/) are kept, in FOLDER (default
# .build/pygame-tests), fetched again only when missing. Nothing of it is committed.
#
#   scripts/fetch-pygame-tests.sh [FOLDER]
#
# Why Debian's source and not the PyPI wheel: it is the same release's tests byte for byte (mixer_test.py and
# mixer_music_test.py are identical to the cp310 wheel's), it needs only what apt needs (plain HTTP to the mirror,
# signed archives' checksums), and PyPI is reached over TLS, which a machine behind an intercepting proxy without its
# certificate (a fresh root, a CI box) cannot do.
set -euo pipefail
cd "$(dirname "$0")/.."

folder=${1:-.build/pygame-tests}
source=pygame_2.1.2+dfsg.orig.tar.xz
sha256=3401c47c757f417cfd5227d0ef7371e3af6b95f2022dfef245e8e49ee02bb145
stamp="$folder/fetched-from"

[ "$(cat "$stamp" 2>/dev/null)" = "$source $sha256" ] && exit 0

# The mirror apt uses (deb822 or the one-line format), else Debian's own.
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
echo "fetch-pygame-tests: downloading $source from $mirror"
# Debian's own python3: another python3 on PATH (pyenv) may lack what this needs.
/usr/bin/python3 - "${mirror%/}/pool/main/p/pygame/$source" "$scratch/$source" "$sha256" "$folder" <<'PYTHON'
import hashlib, os, sys, tarfile, urllib.request
url, path, expected, folder = sys.argv[1:5]
with urllib.request.urlopen(url, timeout=120) as response, open(path, "wb") as out:
    out.write(response.read())
digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
if digest != expected:
    sys.exit(f"fetch-pygame-tests: {url}: SHA-256 {digest}, expected {expected}")
kept = 0
with tarfile.open(path) as archive:
    for member in archive.getmembers():
        parts = member.name.split("/", 1)
        if len(parts) < 2 or not member.isfile():
            continue
        inner = parts[1]
        if inner.startswith("test/") and inner.endswith(".py"):
            target = "pygame/tests/" + inner[len("test/"):]
        elif inner.startswith("examples/data/") and inner.count("/") == 2:
            target = "pygame/" + inner
        else:
            continue
        os.makedirs(os.path.join(folder, os.path.dirname(target)), exist_ok=True)
        with archive.extractfile(member) as source, open(os.path.join(folder, target), "wb") as out:
            out.write(source.read())
        kept += 1
print(f"fetch-pygame-tests: kept {kept} files of {os.path.basename(path)} in {folder}")
PYTHON
echo "$source $sha256" > "$stamp"
