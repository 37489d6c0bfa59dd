#!/usr/bin/env bash
# Installs the build into a temporary prefix, then builds two consumers of it with
# find_package(DeepComm) and one with pkg-config, and runs them (with CONSUMER_PRELOAD, when set,
# as LD_PRELOAD: a sanitizer's runtime in sanitizer builds).
set -euo pipefail
run() { LD_PRELOAD="${CONSUMER_PRELOAD:-}" "$@"; }
build_dir=$1
source_dir=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$source_dir/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
run "$work/consumer/c"
run "$work/consumer/n"
flags=$(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags --libs deepcomm)
cc "$source_dir/consumer/main.c" $flags -Wl,-rpath,"$work/prefix/lib" -o "$work/pc_consumer"
run "$work/pc_consumer"
