// One benchmark program per collective; DC_BENCH_SPEC names its spec (set by CMake).
#include "bench/collectives/specs.h"

int main(int argc, char** argv) { return dcbench::run(argc, argv, dcbench::DC_BENCH_SPEC); }
