#include <getopt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bench/peers/peer_harness.h"

namespace dcpeer {

namespace {

const char* const kNames[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "alltoall"};

// nccl-tests' size syntax: a number with an optional K, M or G (powers of 1024).
bool parse_size(const char* text, size_t* out) {
  char* end = nullptr;
  const double value = strtod(text, &end);
  if (end == text || value < 0) return false;
  double scale = 1;
  switch (*end) {
    case 'K':
    case 'k':
      scale = 1024.0;
      ++end;
      break;
    case 'M':
    case 'm':
      scale = 1024.0 * 1024;
      ++end;
      break;
    case 'G':
    case 'g':
      scale = 1024.0 * 1024 * 1024;
      ++end;
      break;
    default: break;
  }
  if (*end != '\0') return false;
  *out = static_cast<size_t>(value * scale);
  return true;
}

void usage(const char* argv0) {
  fprintf(stderr,
          "usage: %s [-C all_reduce|all_gather|reduce_scatter|broadcast|alltoall] [-b min] [-e max] "
          "[-f factor] [-n iters] [-w warmup] [-c 0|1] [-J json] [-S gloo_store_dir]\n",
          argv0);
}

}  // namespace

const char* collective_name(Collective c) { return kNames[static_cast<int>(c)]; }

bool parse_options(int argc, char** argv, Options* o) {
  int c;
  while ((c = getopt(argc, argv, "C:b:e:f:n:w:c:J:S:")) != -1) {
    bool ok = true;
    switch (c) {
      case 'C': {
        ok = false;
        for (int i = 0; i < 5; ++i)
          if (strcmp(optarg, kNames[i]) == 0) {
            o->collective = static_cast<Collective>(i);
            ok = true;
          }
        break;
      }
      case 'b': ok = parse_size(optarg, &o->min_bytes); break;
      case 'e': ok = parse_size(optarg, &o->max_bytes); break;
      case 'f':
        o->step_factor = atof(optarg);
        ok = o->step_factor > 1;
        break;
      case 'n':
        o->iters = atoi(optarg);
        ok = o->iters > 0;
        break;
      case 'w':
        o->warmup = atoi(optarg);
        ok = o->warmup >= 0;
        break;
      case 'c': o->check = atoi(optarg); break;
      case 'J': o->json_path = optarg; break;
      case 'S': o->store_dir = optarg; break;
      default: ok = false; break;
    }
    if (!ok) {
      usage(argv[0]);
      return false;
    }
  }
  if (optind != argc || o->min_bytes > o->max_bytes) {
    usage(argv[0]);
    return false;
  }
  return true;
}

}  // namespace dcpeer
