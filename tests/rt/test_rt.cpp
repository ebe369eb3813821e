#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "strata/core/status.hpp"
#include "strata/rt/device.hpp"
#include "strata/rt/stream.hpp"

using namespace strata;
using namespace strata::rt;

TEST(Device, ParseAndName) {
  EXPECT_EQ(Device::parse("cpu"), Device::cpu());
  EXPECT_EQ(Device::parse("cuda"), Device::cuda(0));
  EXPECT_EQ(Device::parse("cuda:3"), Device::cuda(3));
  EXPECT_EQ(Device::cuda(2).name(), "cuda:2");
  for (const char* bad : {"gpu", "cuda:", "cuda:-1", "cuda:1x", ""}) EXPECT_THROW(Device::parse(bad), Error) << bad;
}

TEST(Device, CpuIsAlwaysListedFirst) {
  auto devs = list_devices();
  ASSERT_FALSE(devs.empty());
  EXPECT_EQ(devs[0].device, Device::cpu());
  EXPECT_GT(devs[0].memory_bytes, 0u);
  EXPECT_GE(devs[0].multiprocessors, 1);
  EXPECT_EQ(int(devs.size()), 1 + cuda_device_count());
}

TEST(Device, MissingCudaDeviceIsAClearError) {
  std::string reason;
  int n = cuda_device_count(&reason);
  if (n == 0) {
    EXPECT_FALSE(reason.empty());
  }
  try {
    Buffer b(Device::cuda(n), 16);
    FAIL() << "allocating on a device that does not exist must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.argument(), "device");
    EXPECT_NE(std::string(e.what()).find("cuda:" + std::to_string(n)), std::string::npos);
  }
}

TEST(Stream, CpuCopiesAndEvents) {
  Stream s;
  Buffer a(Device::cpu(), 1024), b(Device::cpu(), 1024);
  std::memset(a.data(), 7, 1024);
  Event start, stop;
  start.record(s);
  copy(b.data(), Device::cpu(), a.data(), Device::cpu(), 1024, s);
  stop.record(s);
  s.synchronize();
  EXPECT_EQ(std::memcmp(a.data(), b.data(), 1024), 0);
  EXPECT_GE(Event::elapsed_ms(start, stop), 0.0);
  Buffer moved = std::move(a);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(moved.size(), 1024u);
}

// Runs only where a GPU is present (e.g. on the lent H200): host → device → device → host.
TEST(Stream, CudaRoundTrip) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  Stream s(Device::cuda(0));
  std::vector<int> host(1000), back(1000, 0);
  for (int i = 0; i < 1000; ++i) host[size_t(i)] = i * 3;
  Buffer d1(Device::cuda(0), 4000), d2(Device::cuda(0), 4000);
  Event start(Device::cuda(0)), stop(Device::cuda(0));
  start.record(s);
  copy(d1.data(), Device::cuda(0), host.data(), Device::cpu(), 4000, s);
  copy(d2.data(), Device::cuda(0), d1.data(), Device::cuda(0), 4000, s);
  copy(back.data(), Device::cpu(), d2.data(), Device::cuda(0), 4000, s);
  stop.record(s);
  s.synchronize();
  EXPECT_EQ(host, back);
  EXPECT_GE(Event::elapsed_ms(start, stop), 0.0);
}
