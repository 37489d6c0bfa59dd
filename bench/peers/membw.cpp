// Single-thread memory bandwidth on 256 MiB float32 arrays: c = a + b, a += b, memcpy. Bytes
// counted as STREAM does (every array read or written once, no write-allocate traffic); the best of
// -r repetitions (default 5). Prints a line per kernel and, with -J, a JSON object.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr size_t kElems = 256u * 1024 * 1024 / sizeof(float);

template <typename Kernel>
double best_gbs(int reps, double bytes, Kernel kernel) {
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    kernel();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, bytes / s / 1e9);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  std::string json_path;
  for (int c; (c = getopt(argc, argv, "r:J:")) != -1;) {
    if (c == 'r') reps = std::max(1, atoi(optarg));
    else if (c == 'J') json_path = optarg;
    else {
      fprintf(stderr, "usage: %s [-r repetitions] [-J json]\n", argv[0]);
      return 1;
    }
  }
  auto* a = static_cast<float*>(std::aligned_alloc(64, kElems * sizeof(float)));
  auto* b = static_cast<float*>(std::aligned_alloc(64, kElems * sizeof(float)));
  auto* c = static_cast<float*>(std::aligned_alloc(64, kElems * sizeof(float)));
  for (size_t i = 0; i < kElems; ++i) {  // touch every page before timing
    a[i] = 1.0f;
    b[i] = 2.0f;
    c[i] = 0.0f;
  }
  const double array = kElems * sizeof(float);
  const double add = best_gbs(reps, 3 * array, [&] {
    for (size_t i = 0; i < kElems; ++i) c[i] = a[i] + b[i];
  });
  const double accumulate = best_gbs(reps, 3 * array, [&] {
    for (size_t i = 0; i < kElems; ++i) a[i] += b[i];
  });
  const double copy = best_gbs(reps, 2 * array, [&] { std::memcpy(c, b, kElems * sizeof(float)); });
  // Keeps the loops from being optimized away.
  if (c[kElems / 2] != 2.0f || a[1] != 1.0f + 2.0f * reps) fprintf(stderr, "membw: unexpected values\n");
  printf("c=a+b  %7.2f GB/s\na+=b   %7.2f GB/s\nmemcpy %7.2f GB/s\n", add, accumulate, copy);
  if (!json_path.empty()) {
    FILE* f = fopen(json_path.c_str(), "w");
    if (!f) return 1;
    fprintf(f, "{\"array_bytes\": %.0f, \"add_gbs\": %.3f, \"accumulate_gbs\": %.3f, \"memcpy_gbs\": %.3f}\n", array,
            add, accumulate, copy);
    fclose(f);
  }
  std::free(a);
  std::free(b);
  std::free(c);
  return 0;
}
