#include "bench/collectives/perf_options.h"

#include <getopt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace dcbench {

namespace {

const char* kTypeNames[] = {"int8", "uint8", "int32",  "uint32",   "int64",  "uint64",
                            "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2"};
const char* kOpNames[] = {"sum", "prod", "max", "min", "avg"};

// nccl-tests' size suffixes: K, M, G (powers of 1024).
bool parse_size(const char* s, size_t* out) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (end == s || v < 0) return false;
  switch (*end) {
    case 'G':
    case 'g':
      v *= 1024.0 * 1024 * 1024;
      ++end;
      break;
    case 'M':
    case 'm':
      v *= 1024.0 * 1024;
      ++end;
      break;
    case 'K':
    case 'k':
      v *= 1024.0;
      ++end;
      break;
    default: break;
  }
  if (*end) return false;
  *out = static_cast<size_t>(v);
  return true;
}

void usage(const char* prog) {
  fprintf(stderr,
          "USAGE: %s\n"
          "  [-b,--minbytes <min size in bytes>] [-e,--maxbytes <max size in bytes>]\n"
          "  [-i,--stepbytes <increment size>] [-f,--stepfactor <increment factor>]\n"
          "  [-n,--iters <iteration count>] [-w,--warmup_iters <warmup iteration count>]\n"
          "  [-c,--check <0/1>] [-d,--datatype <nccltype/all>] [-o,--op <sum/prod/min/max/avg/all>]\n"
          "  [-r,--root <root/-1 for all>] [-z,--blocking <0/1>] [-a,--average <0/1/2/3>]\n"
          "  [-G,--cudagraph <num graph launches>] [-R,--local_register <0/1>]\n"
          "  [-J,--output_file <json file>] [-h,--help]\n",
          prog);
}

}  // namespace

const char* type_name(dcDataType_t t) { return t >= 0 && t < dcNumTypes ? kTypeNames[t] : "?"; }
const char* op_name(dcRedOp_t op) { return op >= 0 && op < dcNumOps ? kOpNames[op] : "?"; }

bool parse_options(int argc, char** argv, Options* o) {
  static option long_options[] = {{"minbytes", required_argument, nullptr, 'b'},
                                  {"maxbytes", required_argument, nullptr, 'e'},
                                  {"stepbytes", required_argument, nullptr, 'i'},
                                  {"stepfactor", required_argument, nullptr, 'f'},
                                  {"iters", required_argument, nullptr, 'n'},
                                  {"warmup_iters", required_argument, nullptr, 'w'},
                                  {"check", required_argument, nullptr, 'c'},
                                  {"datatype", required_argument, nullptr, 'd'},
                                  {"op", required_argument, nullptr, 'o'},
                                  {"root", required_argument, nullptr, 'r'},
                                  {"blocking", required_argument, nullptr, 'z'},
                                  {"average", required_argument, nullptr, 'a'},
                                  {"cudagraph", required_argument, nullptr, 'G'},
                                  {"output_file", required_argument, nullptr, 'J'},
                                  {"local_register", required_argument, nullptr, 'R'},
                                  {"help", no_argument, nullptr, 'h'},
                                  {nullptr, 0, nullptr, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "b:e:i:f:n:w:c:d:o:r:z:a:G:J:R:t:g:m:p:h", long_options, nullptr)) != -1) {
    switch (c) {
      case 'b':
        if (!parse_size(optarg, &o->min_bytes)) goto bad;
        break;
      case 'e':
        if (!parse_size(optarg, &o->max_bytes)) goto bad;
        break;
      case 'i':
        if (!parse_size(optarg, &o->step_bytes)) goto bad;
        o->use_factor = false;
        break;
      case 'f':
        o->step_factor = std::atof(optarg);
        o->use_factor = true;
        if (o->step_factor <= 1) goto bad;
        break;
      case 'n':
        o->iters = std::atoi(optarg);
        if (o->iters < 1) goto bad;
        break;
      case 'w':
        o->warmup = std::atoi(optarg);
        if (o->warmup < 0) goto bad;
        break;
      case 'c': o->check = std::atoi(optarg); break;
      case 'd': {
        o->types.clear();
        for (int t = 0; t < dcNumTypes; ++t)
          if (!strcmp(optarg, "all") || !strcmp(optarg, kTypeNames[t]))
            o->types.push_back(static_cast<dcDataType_t>(t));
        if (o->types.empty()) goto bad;
        break;
      }
      case 'o': {
        o->ops.clear();
        for (int p = 0; p < dcNumOps; ++p)
          if (!strcmp(optarg, "all") || !strcmp(optarg, kOpNames[p])) o->ops.push_back(static_cast<dcRedOp_t>(p));
        if (o->ops.empty()) goto bad;
        break;
      }
      case 'r': o->root = std::atoi(optarg); break;
      case 'z': o->blocking = std::atoi(optarg); break;
      case 'a':
        o->average = std::atoi(optarg);
        if (o->average < 0 || o->average > 3) goto bad;
        break;
      case 'G': o->graph_iters = std::atoi(optarg); break;
      case 'J': o->json_path = optarg; break;
      // nccl-tests' 2 (symmetric window registration) has no host-memory counterpart.
      case 'R':
        o->local_register = std::atoi(optarg);
        if (o->local_register != 0 && o->local_register != 1) goto bad;
        break;
      case 't':
      case 'g':
      case 'm':
      case 'p': break;  // threads/GPUs per process: one rank per process here
      case 'h': usage(argv[0]); return false;
      default: goto bad;
    }
  }
  if (o->min_bytes > o->max_bytes) goto bad;
  return true;
bad:
  usage(argv[0]);
  return false;
}

}  // namespace dcbench
