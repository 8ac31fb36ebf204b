#!/usr/bin/env bash
# Link libcauseway's shared and static libraries from the crate's staticlib (C trace
# path + Rust trace writer), after `cargo build --release -p causeway-inproc`:
#   target/release/libcauseway.a   for `cc ... -lcauseway -lpthread -ldl -lm`
#   target/release/libcauseway.so  for LD_PRELOAD (`causeway run --inproc`) or -lcauseway
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
cp "$lib" "$out/libcauseway.a"
${CC:-cc} -shared -o "$out/libcauseway.so.tmp" \
    -Wl,--whole-archive "$lib" -Wl,--no-whole-archive \
    -Wl,--version-script=crates/causeway-inproc/c/libcauseway.map \
    -Wl,-soname,libcauseway.so -Wl,-z,nodelete -Wl,--strip-debug \
    -lpthread -ldl -lm -lrt -lgcc_s
mv "$out/libcauseway.so.tmp" "$out/libcauseway.so"
cp crates/causeway-inproc/c/causeway.h "$out/causeway.h"
echo "build-libcauseway: $out/libcauseway.so, $out/libcauseway.a, $out/causeway.h"
