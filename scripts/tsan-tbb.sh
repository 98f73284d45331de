#!/usr/bin/env bash
# Builds a ThreadSanitizer-instrumented oneTBB for the TSan phase of scripts/test.sh and prints
# its CMake package directory (pass it as -DTBB_DIR=...).
#
# Why: Debian's libtbb.so is not built with -fsanitize=thread, so TSan cannot see the
# synchronisation inside the TBB scheduler (task spawn/steal, wait) and reports dozens of false
# races for correct parallel_for code; suppressing them by module (race:libtbb.so) also hides
# real races in barrel code run by TBB workers. See test/tsan.supp for the measurements.
#
# What: the Debian source of the installed libtbb-dev version (apt-get source, through a private
# sources list and cache under build/deps/, nothing in /etc/apt is touched), with Debian's
# patches, built with TBB_SANITIZE=thread; libtbb only (no tbbmalloc, so TBB falls back to the
# intercepted malloc). Cached: about 30 s on 2 cores the first time, nothing afterwards.
#
# Environment: CXX (default: c++; must match the compiler of the TSan build),
#              BARREL_DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps="$repo/build/deps"

src_pkg=$(dpkg-query -W -f='${source:Package}' libtbb-dev)
version=$(dpkg-query -W -f='${source:Version}' libtbb-dev)
cxx=${CXX:-c++}
compiler_id=$("$cxx" --version | head -n1 | tr -c 'A-Za-z0-9.\n' '_')
prefix="$deps/onetbb-tsan-$version"
stamp="$prefix/.built-with"
package_dir="$prefix/lib/cmake/TBB"

if [[ -f "$stamp" && "$(cat "$stamp")" == "$compiler_id" && -d "$package_dir" ]]; then
    echo "$package_dir"
    exit 0
fi

log() { echo "tsan-tbb: $*" >&2; }
work="$deps/onetbb-src"
logfile="$deps/onetbb-tsan.log"
rm -rf "$work" "$prefix"
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/dl"
: > "$logfile"
# Step output goes to the log; shown only when a step fails.
run() {
    if ! "$@" >> "$logfile" 2>&1; then
        tail -n 40 "$logfile" >&2
        log "FAILED: $* (full log: $logfile)"
        exit 1
    fi
}

# Private apt configuration: deb-src lines for this Debian release, own lists and cache.
. /etc/os-release
codename=${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}
mirror=${BARREL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cat > "$work/sources.list" <<LIST
deb-src $mirror $codename main
deb-src $mirror $codename-updates main
deb-src ${mirror%/debian}/debian-security $codename-security main
LIST
apt_opts=(
    -o "Dir::Etc::SourceList=$work/sources.list"
    -o "Dir::Etc::SourceParts=/nonexistent"
    -o "Dir::State::Lists=$work/lists"
    -o "Dir::Cache=$work/cache"
    -o "Debug::NoLocking=true"
    -q
)
if [[ $(id -u) -eq 0 ]]; then
    apt_opts+=(-o "APT::Sandbox::User=root")  # _apt cannot write to the build tree
fi

log "fetching the Debian source of $src_pkg $version (needs network once)"
run apt-get "${apt_opts[@]}" update
(cd "$work/dl" && run apt-get "${apt_opts[@]}" source --download-only "$src_pkg=$version")
(cd "$work/dl" && run dpkg-source -x ./*.dsc "$work/src")

log "building libtbb with -fsanitize=thread ($cxx)"
run cmake -S "$work/src" -B "$work/build" -G Ninja \
    -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DTBB_SANITIZE=thread \
    -DTBB_TEST=OFF -DTBB_EXAMPLES=OFF -DTBBMALLOC_BUILD=OFF -DTBB_STRICT=OFF \
    -DTBB_ENABLE_IPO=OFF
run cmake --build "$work/build" -j "$(nproc)"
run cmake --install "$work/build"
echo "$compiler_id" > "$stamp"
rm -rf "$work"
log "installed in $prefix"
echo "$package_dir"
