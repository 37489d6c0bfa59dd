// The device plugin loader (device/plugin_loader.h) and the queue over a plugin's C ABI
// (device/plugin_queue.h), with plugins the tests build (test_plugin.cpp): a good one is loaded
// and runs steps, at post and through its completion descriptor; one of another ABI version, one
// without the entry point and an absent one are refused with a message naming the reason.
#include <gtest/gtest.h>
#include <poll.h>

#include <chrono>
#include <vector>

#include "device/plugin_loader.h"
#include "device/plugin_queue.h"
#include "kernels/reduce.h"

namespace dc::device {
namespace {

std::string refusal(const std::string& library, dcResult_t* code) {
  try {
    load_device_plugin(library);
  } catch (const Error& e) {
    *code = e.code();
    return e.what();
  }
  return "";
}

TEST(PluginLoader, LoadsAPluginAndRunsStepsThroughIt) {
  const DevicePlugin plugin = load_device_plugin(TEST_PLUGIN_GOOD);
  ASSERT_NE(plugin.api, nullptr);
  EXPECT_STREQ(plugin.api->name, "cpu-test");
  PluginQueue queue(plugin);
  EXPECT_TRUE(queue.element_steps_end_at_post());
  std::vector<float> a(1000), b(1000), got(1000), want(1000);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.5f * i, b[i] = 3.0f - i;
  Posted p = queue.post(LocalStep::reduce(dcFloat32, dcMax, got.data(), a.data(), b.data(), a.size()), {}, {});
  reduce(dcFloat32, dcMax, want.data(), a.data(), b.data(), a.size());
  ASSERT_TRUE(p.done);
  ASSERT_TRUE(p.status.ok()) << p.status.message;
  EXPECT_EQ(got, want);

  // On a stream this plugin completes later: through the descriptor and poll, in post order.
  std::vector<uint64_t> order;
  auto record = [](void* order, uint64_t tag, const Status& s) {
    EXPECT_TRUE(s.ok()) << s.message;
    static_cast<std::vector<uint64_t>*>(order)->push_back(tag);
  };
  std::vector<float> c(1000, 0.f);
  ASSERT_FALSE(queue.post(LocalStep::copy(c.data(), a.data(), 4000), Stream{3}, Completion{record, &order, 1}).done);
  ASSERT_FALSE(
      queue.post(LocalStep::finalize_avg(dcFloat32, c.data(), 1000, 2), Stream{3}, Completion{record, &order, 2}).done);
  pollfd fd{queue.completion_fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&fd, 1, 5000), 1) << "the plugin's descriptor never became readable";
  EXPECT_TRUE(queue.has_completions());
  EXPECT_EQ(queue.poll(), 2u);
  EXPECT_EQ(order, (std::vector<uint64_t>{1, 2}));
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], a[i] / 2) << i;
  EXPECT_FALSE(queue.has_completions());
  // Codec steps are not in ABI version 1.
  compression::EncodeResult result;
  EncodeStep e;
  e.result = &result;
  p = queue.post(LocalStep::encode_step(dcFloat32, a.data(), a.size(), e), {}, {});
  ASSERT_TRUE(p.done);
  EXPECT_EQ(p.status.code, dcInvalidUsage);
}

TEST(PluginLoader, RefusesAnotherAbiVersion) {
  dcResult_t code = dcSuccess;
  const std::string message = refusal(TEST_PLUGIN_WRONG_VERSION, &code);
  EXPECT_EQ(code, dcInvalidUsage);
  EXPECT_NE(message.find("ABI version 99"), std::string::npos) << message;
  EXPECT_NE(message.find("needs " + std::to_string(DEEPCOMM_DEVICE_PLUGIN_ABI_VERSION)), std::string::npos) << message;
  EXPECT_NE(message.find(TEST_PLUGIN_WRONG_VERSION), std::string::npos) << message;
}

TEST(PluginLoader, RefusesALibraryWithoutTheEntryPoint) {
  dcResult_t code = dcSuccess;
  const std::string message = refusal(TEST_PLUGIN_NO_ENTRY, &code);
  EXPECT_EQ(code, dcSystemError);
  EXPECT_NE(message.find("not a DeepComm device plugin"), std::string::npos) << message;
  EXPECT_NE(message.find(DEEPCOMM_DEVICE_PLUGIN_ENTRY), std::string::npos) << message;
}

TEST(PluginLoader, AnAbsentPluginIsAClearError) {
  dcResult_t code = dcSuccess;
  const std::string library = "/nonexistent/dir/libdeepcomm-cuda.so";
  const std::string message = refusal(library, &code);
  EXPECT_EQ(code, dcSystemError);
  EXPECT_NE(message.find("cannot be loaded"), std::string::npos) << message;
  EXPECT_NE(message.find(library), std::string::npos) << message;
  EXPECT_NE(message.find("CUDA toolkit"), std::string::npos) << message;
}

}  // namespace
}  // namespace dc::device
