#!/usr/bin/env bash
# Link libcauseway's shared and static libraries from the crate's staticlib (C trace
# path + Rust trace writer), after `cargo build --release -p causeway-inproc`:
#   target/release/libcauseway.a   for `cc ... -lcauseway -lpthread -ldl -lm`
#   target/release/libcauseway.so  for LD_PRELOAD (`causeway run --inproc`) or -lcauseway
#   target/release/causeway.pc, causeway-static.pc  for pkg-config (the link lines with
#                                  the link anchor a patched-entries program needs)
# Cargo cannot export the C symbols from a cdylib (rustc's version script hides every
# non-Rust symbol), hence this link step.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/release}
lib="$out/libcauseway_inproc.a"
if [ ! -f "$lib" ]; then
    echo "build-libcauseway: $lib missing; run cargo build --release -p causeway-inproc" >&2
    exit 1
fi
# Every file goes in under a name of its own, then is renamed into place: tests that
# find the libraries stale link them again side by side, and none may read another's
# half-written file.
tmp=".tmp.$$"
cp "$lib" "$out/libcauseway.a$tmp"
mv "$out/libcauseway.a$tmp" "$out/libcauseway.a"
${CC:-cc} -shared -o "$out/libcauseway.so$tmp" \
    -Wl,--whole-archive "$lib" -Wl,--no-whole-archive \
    -Wl,--version-script=crates/causeway-inproc/c/libcauseway.map \
    -Wl,-soname,libcauseway.so -Wl,-z,nodelete -Wl,--strip-debug \
    -lpthread -ldl -lm -lrt -lgcc_s
mv "$out/libcauseway.so$tmp" "$out/libcauseway.so"
cp crates/causeway-inproc/c/causeway.h "$out/causeway.h$tmp"
mv "$out/causeway.h$tmp" "$out/causeway.h"
# pkg-config files, relocatable (${pcfiledir}: they sit beside the libraries). A
# program built with -fpatchable-function-entry alone references nothing of
# libcauseway, so the static linker would take none of libcauseway.a (the link anchor
# -u cw_link_anchor fixes that) and `--as-needed` would drop libcauseway.so (-u does
# not count for that: --no-as-needed around it does); docs/libcauseway.md, "Linking".
# Two files because `-lcauseway` picks the shared library whenever both exist:
# causeway-static names the archive itself.
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
write_pc() { # name description libs libs.private
    {
        echo 'prefix=${pcfiledir}'
        echo 'libdir=${prefix}'
        echo 'includedir=${prefix}'
        echo
        echo "Name: $1"
        echo "Description: $2"
        echo "Version: $version"
        echo 'Cflags: -I${includedir}'
        echo "Libs: $3"
        echo "Libs.private: $4"
    } >"$out/$1.pc$tmp"
    mv "$out/$1.pc$tmp" "$out/$1.pc"
}
deps="-lpthread -ldl -lm -lrt -lgcc_s"
write_pc causeway "libcauseway (shared), always-on in-process call tracing" \
    '-L${libdir} -Wl,--push-state,--no-as-needed -lcauseway -Wl,--pop-state' "$deps"
write_pc causeway-static "libcauseway (static), always-on in-process call tracing" \
    "-Wl,-u,cw_link_anchor \${libdir}/libcauseway.a $deps" ""
echo "build-libcauseway: $out/libcauseway.so, $out/libcauseway.a, $out/causeway.h," \
    "$out/causeway.pc, $out/causeway-static.pc"
