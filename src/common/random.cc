#include "common/random.h"

#include <cstdio>
#include <mutex>
#include <random>

namespace minik8s {

namespace {
uint64_t next64() {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard lock(mu);
  return rng();
}
}  // namespace

std::string newUid() {
  uint64_t a = next64(), b = next64();
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // variant 10
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xffff),
                static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

std::string randomSuffix(int length) {
  static const char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  for (int i = 0; i < length; ++i) out.push_back(kAlphabet[next64() % (sizeof kAlphabet - 1)]);
  return out;
}

}  // namespace minik8s
