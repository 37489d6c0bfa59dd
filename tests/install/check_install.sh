#!/usr/bin/env bash
# Installs the build into a temporary prefix, then builds two consumers of it with
# find_package(DeepComm) and one with pkg-config, and runs them.
set -euo pipefail
build_dir=$1
source_dir=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$source_dir/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/c"
"$work/consumer/n"
flags=$(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags --libs deepcomm)
cc "$source_dir/consumer/main.c" $flags -Wl,-rpath,"$work/prefix/lib" -o "$work/pc_consumer"
"$work/pc_consumer"
