// Compression ratio and speed of specs on one buffer: a raw little-endian float32 file or a
// generated distribution. One row per spec: every byte of the message counts (header, tables,
// scales, chunk table, checksums); ratio = the buffer's float32 bytes / the message's bytes;
// GB/s = float32 bytes in per second of this thread's CPU time, the median of the timed calls.
// --engine picks the encoder: cpu (the codec), emulated (the GPU kernels run on the CPU: slow, for
// checking bytes) or cuda (the GPU kernels on the device plugin's GPU, DEEPCOMM_DEVICE_PLUGIN or
// libdeepcomm-cuda.so; wall time from enqueue to completion), and the same engine decodes. Every
// engine writes the same message for the same input and spec: --output FILE keeps the first one
// (fresh residual, seed 0); the cuda engine's decoded values are checked against the CPU's.
//
//   compress_perf --input grad.f32 --spec topk:0.001,q8,huffman --spec q8,ef [--json]
//   compress_perf --generate laplace --count 4194304 --spec auto
//   compress_perf --generate lognormal --count 67108864 --spec q8,huffman,ef,chunk:4096 --engine cuda
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "bench/compress/device_codec.h"
#include "compression/compression.h"
#include "compression/gpu/emulated_decoder.h"
#include "compression/gpu/emulated_encoder.h"
#include "device/plugin_loader.h"

namespace {

namespace c = dc::compression;
using c::Spec;

enum class Engine { cpu, emulated, cuda };

struct Options {
  std::string input, generate, output;
  Engine engine = Engine::cpu;
  uint64_t count = 1 << 22, seed = 1;
  std::vector<std::string> specs;
  bool json = false;
  int iterations = 0;  // 0: as many as fit in about 0.3 s, at least 3
  dc::compression::Isa isa = dc::compression::Isa::best;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "compress_perf: %s\n"
               "usage: compress_perf (--input FILE | --generate normal|laplace|lognormal [--count N] [--seed S])\n"
               "                     --spec SPEC [--spec SPEC ...] [--iters N] [--isa best|baseline|avx2] [--json]\n"
               "                     [--engine cpu|emulated|cuda] [--output FILE (one --spec)]\n",
               why.c_str());
  std::exit(2);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    auto number = [&]() -> uint64_t {
      const std::string v = value();
      char* end = nullptr;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0') usage(a + " takes a whole number, not '" + v + "'");
      return n;
    };
    if (a == "--input") o.input = value();
    else if (a == "--generate") o.generate = value();
    else if (a == "--count") o.count = number();
    else if (a == "--seed") o.seed = number();
    else if (a == "--spec") o.specs.push_back(value());
    else if (a == "--iters") o.iterations = int(number());
    else if (a == "--json") o.json = true;
    else if (a == "--output") o.output = value();
    else if (a == "--engine") {
      const std::string v = value();
      if (v == "cpu") o.engine = Engine::cpu;
      else if (v == "emulated") o.engine = Engine::emulated;
      else if (v == "cuda") o.engine = Engine::cuda;
      else usage("unknown --engine " + v);
    } else if (a == "--isa") {
      const std::string v = value();
      if (v == "best") o.isa = dc::compression::Isa::best;
      else if (v == "baseline") o.isa = dc::compression::Isa::baseline;
      else if (v == "avx2") o.isa = dc::compression::Isa::avx2;
      else usage("unknown --isa " + v);
    } else {
      usage("unknown option " + a);
    }
  }
  if (o.input.empty() == o.generate.empty()) usage("give one of --input and --generate");
  if (o.specs.empty()) usage("give at least one --spec");
  if (!o.output.empty() && o.specs.size() != 1) usage("--output takes the message of one --spec");
  return o;
}

std::vector<float> load(const Options& o) {
  if (!o.input.empty()) {
    std::ifstream f(o.input, std::ios::binary | std::ios::ate);
    if (!f) usage("cannot open " + o.input);
    const std::streamsize size = f.tellg();
    if (size % 4 != 0) usage(o.input + " is not a float32 file (" + std::to_string(size) + " bytes)");
    std::vector<float> v(size_t(size) / 4);
    f.seekg(0);
    f.read(reinterpret_cast<char*>(v.data()), size);
    return v;
  }
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::exponential_distribution<double> expo(1.0);
  std::vector<float> v(o.count);
  for (float& x : v) {
    double d;
    if (o.generate == "normal") d = normal(rng);
    else if (o.generate == "laplace") d = expo(rng) * ((rng() & 1) ? 1 : -1);
    else if (o.generate == "lognormal") d = std::exp(1.5 * normal(rng)) * ((rng() & 1) ? 1 : -1);
    else usage("unknown distribution " + o.generate);
    x = float(d * 1e-3);
  }
  return v;
}

// This thread's CPU time: on a shared machine, time spent descheduled does not count.
double thread_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

template <class F>
double median_seconds(int iterations, F&& call) {
  std::vector<double> times;
  const double start = thread_seconds();
  while (true) {
    const double t0 = thread_seconds();
    call();
    const double t1 = thread_seconds();
    times.push_back(t1 - t0);
    if (iterations > 0 ? int(times.size()) >= iterations : (times.size() >= 3 && t1 - start > 0.3)) break;
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct Row {
  std::string spec, applied, reason;
  uint64_t bytes_in = 0, bytes_out = 0, kept = 0;
  double ratio = 0, bits_per_kept = 0, encode_gbps = 0, decode_gbps = 0;
};

// The message of the first encode (fresh residual, seed 0) and the median seconds of an encode
// and of a decode (added into a buffer; on the device, written over one, to check its values).
struct Timed {
  c::EncodeResult first;
  std::vector<uint8_t> message;
  double encode_seconds = 0, decode_seconds = 0;
};

template <class F>
double median_of_calls(int iterations, F&& call) {
  std::vector<double> times;
  while (times.size() < 3 || (iterations > 0 && int(times.size()) < iterations)) times.push_back(call());
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

Timed run_on_host(const Spec& spec, const std::vector<float>& x, const Options& o) {
  const uint64_t n = x.size();
  std::vector<uint8_t> msg(c::max_message_bytes(spec, n));
  c::Encoder encoder(o.isa);
  std::vector<float> residual(spec.error_feedback ? n : 0, 0.0f);
  const std::span<float> r = spec.error_feedback ? std::span<float>(residual) : std::span<float>();
  const bool emulated = o.engine == Engine::emulated;
  auto encode = [&](uint64_t seed) {
    if (emulated) return c::gpu::encode_emulated(spec, dcFloat32, x.data(), n, r, seed, msg);
    return encoder.encode(spec, dcFloat32, x.data(), n, r, seed, msg);
  };
  Timed t;
  t.first = encode(0);
  t.message.assign(msg.begin(), msg.begin() + t.first.bytes);
  uint64_t seed = 1;
  t.encode_seconds = median_seconds(o.iterations, [&] { encode(seed++); });
  std::vector<float> sum(n, 0.0f);
  const c::Target target{dcFloat32, sum.data(), n};
  t.decode_seconds = median_seconds(o.iterations, [&] {
    if (emulated) c::gpu::decode_accumulate_emulated(t.message, target);
    else c::decode_accumulate(t.message, target, o.isa);
  });
  return t;
}

Timed run_on_device(const Spec& spec, const std::vector<float>& x, const Options& o) {
  const char* plugin = std::getenv("DEEPCOMM_DEVICE_PLUGIN");
  dc::bench::DeviceCodec device(plugin && *plugin ? plugin : dc::device::kCudaPluginLibrary, spec, x);
  Timed t;
  const dc::bench::DeviceCodec::Call first = device.encode(0);
  t.first.bytes = first.bytes;
  t.first.nonfinite = first.nonfinite;
  t.first.sent = first.sent;
  t.first.applied = spec;
  t.message = device.message(first.bytes);
  uint64_t seed = 1;
  t.encode_seconds = median_of_calls(o.iterations, [&] { return device.encode(seed++).seconds; });
  device.upload(t.message);
  t.decode_seconds = median_of_calls(o.iterations, [&] { return device.decode(); });
  std::vector<float> want(x.size(), 0.0f);
  c::decode_accumulate(t.message, {dcFloat32, want.data(), want.size(), true});
  const std::vector<float> got = device.decoded();
  if (std::memcmp(got.data(), want.data(), 4 * want.size()) != 0)
    dc::fail(dcInternalError, "the GPU decoder's values differ from the CPU decoder's");
  return t;
}

Row measure(const std::string& text, const std::vector<float>& x, const Options& o) {
  const Spec spec = c::parse_spec(text);
  const uint64_t n = x.size();
  const Timed t = o.engine == Engine::cuda ? run_on_device(spec, x, o) : run_on_host(spec, x, o);
  if (!o.output.empty()) {
    std::ofstream f(o.output, std::ios::binary);
    f.write(reinterpret_cast<const char*>(t.message.data()), std::streamsize(t.message.size()));
    if (!f) dc::fail(dcSystemError, "cannot write " + o.output);
  }
  Row row;
  row.spec = text;
  row.applied = t.first.applied.to_string();
  row.reason = t.first.reason;
  row.bytes_in = 4 * n;
  row.bytes_out = t.first.bytes;
  row.kept = t.first.sent;
  row.ratio = double(row.bytes_in) / double(row.bytes_out);
  row.bits_per_kept = row.kept ? 8.0 * double(row.bytes_out) / double(row.kept) : 0.0;
  row.encode_gbps = double(row.bytes_in) / t.encode_seconds / 1e9;
  row.decode_gbps = double(row.bytes_in) / t.decode_seconds / 1e9;
  return row;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

void print(const std::vector<Row>& rows, bool json) {
  if (json) {
    std::printf("[\n");
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      std::printf(
          "  {\"spec\": %s, \"applied\": %s, \"bytes_in\": %llu, \"bytes_out\": %llu, \"ratio\": %.3f, "
          "\"kept\": %llu, \"bits_per_kept\": %.3f, \"encode_gbps\": %.3f, \"decode_gbps\": %.3f, "
          "\"reason\": %s}%s\n",
          json_string(r.spec).c_str(), json_string(r.applied).c_str(), (unsigned long long)r.bytes_in,
          (unsigned long long)r.bytes_out, r.ratio, (unsigned long long)r.kept, r.bits_per_kept, r.encode_gbps,
          r.decode_gbps, json_string(r.reason).c_str(), i + 1 < rows.size() ? "," : "");
    }
    std::printf("]\n");
    return;
  }
  std::printf("%-40s %12s %10s %10s %10s %9s %9s %9s\n", "spec", "bytes_in", "bytes_out", "ratio", "kept", "bits/kept",
              "enc_GB/s", "dec_GB/s");
  for (const Row& r : rows) {
    std::printf("%-40s %12llu %10llu %10.2f %10llu %9.2f %9.2f %9.2f\n", r.spec.c_str(), (unsigned long long)r.bytes_in,
                (unsigned long long)r.bytes_out, r.ratio, (unsigned long long)r.kept, r.bits_per_kept, r.encode_gbps,
                r.decode_gbps);
    if (!r.reason.empty()) std::printf("  -> %s: %s\n", r.applied.c_str(), r.reason.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  try {
    const std::vector<float> x = load(o);
    std::vector<Row> rows;
    for (const std::string& s : o.specs) rows.push_back(measure(s, x, o));
    print(rows, o.json);
  } catch (const dc::Error& e) {
    std::fprintf(stderr, "compress_perf: %s\n", e.what());
    return 1;
  }
  return 0;
}
