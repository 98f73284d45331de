#!/usr/bin/env bash
# Installs the Debian 12 (bookworm) packages barrel needs, if any are missing.
#
#   scripts/deps.sh          what the build needs (every target; scripts/bench.sh installs these)
#   scripts/deps.sh --test   also python3 and its prometheus_client, which the tests run
#   scripts/deps.sh --fuzz   also clang, libFuzzer (libclang-rt-14-dev) and llvm (llvm-symbolizer,
#                            for symbolised stack traces from clang-built sanitizers)
#   scripts/deps.sh --style  also clang-format-14 (the style phase of scripts/test.sh)
#   scripts/deps.sh --node   also Node.js and npm (the real-client tests: test/ethers, test/viem,
#                            test/cast), unless a `node` and an `npm` are already on PATH (a
#                            nodesource or nvm install counts)
#   scripts/deps.sh --browser    also Debian's chromium, which the browser test drives headless
#                            (test/browser: a dapp page and the status page), and Node.js as --node
#   scripts/deps.sh --cometbft   also the `cometbft` binary of the release barrel speaks
#                            (`go install`, about 4 minutes once; then found in `go env GOPATH`/bin)
#
# The build also needs Go (on PATH or in /usr/local/go/bin; else Debian's golang-go is installed):
# it fetches CometBFT's .proto files with `go mod download`. --cometbft needs Go 1.22 or later
# (Debian 12's 1.19 is too old to build it): https://go.dev/dl/.
#
# Runs `apt-get update` only when something has to be installed; uses sudo when not root.
set -euo pipefail

packages=(
    build-essential cmake ninja-build pkg-config
    libtbb-dev libboost-dev libsecp256k1-dev librocksdb-dev nlohmann-json3-dev
    libgtest-dev libgmock-dev libbenchmark-dev libcrypto++-dev libcli11-dev
    libsimdjson-dev             # the node's JSON-RPC request parser, barrel-load's response reader
    libtomlplusplus-dev         # run --config FILE.toml (a shared library, libtomlplusplus3)
    prometheus-cpp-dev          # the node's /metrics (src/metrics/)
    protobuf-compiler libprotobuf-dev  # CometBFT's ABCI messages (cmake/AbciProto.cmake)
    librust-blake3-dev libssl-dev      # the state commitment: BLAKE3's C sources (built by
                                       # cmake/Blake3.cmake) and OpenSSL 3's ChaCha20
)

want_cometbft=0
want_blake3_py=0
for arg in "$@"; do
    case "$arg" in
        # The /metrics test parses a scrape with an independent parser; the RPC limits test is
        # Python too. Not the build's: a fresh machine that only benchmarks skips them.
        # The state commitment's vectors are checked by PyPI's blake3 (the Rust crate's) and
        # python3-cryptography's ChaCha20 (test/state/lattice_vectors.py): a second implementation.
        --test) packages+=(python3 python3-prometheus-client python3-cryptography python3-pip)
                want_blake3_py=1 ;;
        --fuzz) packages+=(clang libclang-rt-14-dev llvm) ;;
        --style) packages+=(clang-format-14) ;;
        --browser) packages+=(chromium) ;&
        --node)
            # Debian's nodejs and npm packages, only if no Node.js is installed at all: they
            # conflict with nodesource's nodejs, which ships its own npm.
            if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
                packages+=(nodejs npm)
            fi ;;
        --cometbft) want_cometbft=1 ;;
        -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
        *) echo "error: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
    esac
done

# The build fetches CometBFT's .proto files with `go mod download` (cmake/AbciProto.cmake): any
# Go does that, Debian's golang-go (1.19) too; building the cometbft binary needs Go 1.22 or later.
go_bin=$(command -v go || { [[ -x /usr/local/go/bin/go ]] && echo /usr/local/go/bin/go; } || true)
[[ -z $go_bin ]] && packages+=(golang-go)

missing=()
for pkg in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$pkg")
    fi
done

install_missing() {
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        if command -v sudo >/dev/null; then
            sudo=(sudo)
        else
            echo "error: missing packages (${missing[*]}) and not root, no sudo" >&2
            exit 1
        fi
    fi
    echo "deps: installing ${missing[*]}"
    "${sudo[@]}" apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "${missing[@]}"
}

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "deps: all ${#packages[@]} packages present"
else
    install_missing
fi

# The CometBFT release the ABCI messages are generated from (cmake/AbciProto.cmake): one version.
cometbft_version=v0.38.26
if [[ $want_cometbft == 1 ]]; then
    go_bin=$(command -v go || echo /usr/local/go/bin/go)
    cometbft_bin="$("$go_bin" env GOPATH)/bin/cometbft"
    if [[ -x $cometbft_bin ]] && "$cometbft_bin" version 2>/dev/null | grep -qx "${cometbft_version#v}"; then
        echo "deps: cometbft ${cometbft_version} present ($cometbft_bin)"
    else
        echo "deps: building cometbft ${cometbft_version} (go install, a few minutes once)"
        "$go_bin" install "github.com/cometbft/cometbft/cmd/cometbft@${cometbft_version}" || {
            echo "error: cometbft ${cometbft_version} needs Go 1.22 or later ($("$go_bin" version));" \
                "https://go.dev/dl/" >&2
            exit 1
        }
    fi
fi

# PyPI's blake3 (and cryptography, when the python3 on PATH is not Debian's) for the python3 the
# tests run: Debian packages no blake3 module. Pinned; installed once.
if [[ $want_blake3_py == 1 ]]; then
    if python3 -c 'import blake3, cryptography' 2>/dev/null; then
        echo "deps: python modules blake3 and cryptography present"
    else
        echo "deps: installing the python modules blake3 and cryptography (pip)"
        # Debian's python3 is externally managed (PEP 668): these two are the tests' alone.
        PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet --disable-pip-version-check \
            blake3==1.0.11 'cryptography>=38'
    fi
fi
