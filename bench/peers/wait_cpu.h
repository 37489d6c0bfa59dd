// CPU use of ranks blocked in a collective: every rank but 0 enters a small all-reduce while rank 0
// sleeps before joining; each waiting rank reads its process's utime+stime (/proc/self/stat, all
// threads) around the call. Shared by the DeepComm and Open MPI variants.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace dcpeer {

// User + system CPU seconds of this process, every thread included.
inline double process_cpu_seconds() {
  FILE* f = fopen("/proc/self/stat", "r");
  if (!f) return 0;
  char buf[1024];
  const size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const char* p = buf;
  for (const char* q = buf; *q; ++q)
    if (*q == ')') p = q + 1;
  unsigned long utime = 0, stime = 0;
  // Fields 3..13 skipped; 14 utime, 15 stime.
  if (sscanf(p, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2) return 0;
  return static_cast<double>(utime + stime) / sysconf(_SC_CLK_TCK);
}

// Prints the table (rank 0) from every rank's percent of a core (index = rank; rank 0 is the sleeper).
inline void print_wait_cpu(const char* library, double sleep_s, const std::vector<double>& percent,
                           const char* json_path) {
  std::vector<double> waiting(percent.begin() + 1, percent.end());
  std::sort(waiting.begin(), waiting.end());
  const double median = waiting.empty() ? 0 : waiting[waiting.size() / 2];
  const double worst = waiting.empty() ? 0 : waiting.back();
  printf("# %s: %zu ranks wait %.1f s in an all-reduce for rank 0\n", library, percent.size(), sleep_s);
  for (size_t r = 1; r < percent.size(); ++r) printf("rank %2zu  %6.2f %% of a core\n", r, percent[r]);
  printf("median %.2f %%  max %.2f %%\n", median, worst);
  if (json_path) {
    FILE* f = fopen(json_path, "w");
    if (!f) return;
    fprintf(f,
            "{\"library\": \"%s\", \"nranks\": %zu, \"sleep_s\": %.3f, \"median_percent\": %.3f, "
            "\"max_percent\": %.3f}\n",
            library, percent.size(), sleep_s, median, worst);
    fclose(f);
  }
}

}  // namespace dcpeer
