// matadd_cpu: the CPU build of matadd (../matadd.cu) for machines without a GPU. Same command
// line, inputs, check and result line; its baseline is std::memcpy of the same N floats, as the
// GPU program's is a device-to-device cudaMemcpy.
//
//   matadd_cpu [N] [--check] [--bench]
//
// Prints one line:  matadd N=4194304 device=cpu time_ms=.. gbps=.. memcpy_gbps=.. ratio=.. check=ok
// gbps counts 3 arrays moved (read A, read B, write C); memcpy_gbps counts 2 (read, write).
// Exit status: 0 ok; 1 the check failed; 2 bad command line.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"

namespace {

void add(const float* a, const float* b, float* c, size_t n) {
  for (size_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}

// Average milliseconds of one run(), after one warm-up when reps > 1.
template <class F>
double timeRuns(F&& run, int reps) {
  if (reps > 1) run();
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) run();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
         reps;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpu_examples;
  CommandLine cl;
  std::string error;
  if (!parseCommandLine(argc, argv, {"--check", "--bench"}, &cl, &error) || cl.sizes.size() > 1) {
    if (error.empty()) error = "expected one size N";
    std::fprintf(stderr, "matadd_cpu: %s\nusage: matadd_cpu [N] [--check] [--bench]\n",
                 error.c_str());
    return 2;
  }
  const size_t n = cl.sizes.empty() ? size_t{1} << 22 : static_cast<size_t>(cl.sizes[0]);
  std::vector<float> a(n), b(n), c(n);
  fillRandom(a.data(), n, 3);
  fillRandom(b.data(), n, 4);
  const size_t bytes = n * sizeof(float);
  const int reps = cl.has("--bench") ? repetitions(3.0 * bytes, 4e9, 3, 1000) : 1;

  const double copyMs = timeRuns([&] { std::memcpy(c.data(), a.data(), bytes); }, reps);
  const double ms = timeRuns([&] { add(a.data(), b.data(), c.data(), n); }, reps);
  const double gbps = 3.0 * bytes / ms / 1e6, copyGbps = 2.0 * bytes / copyMs / 1e6;

  ResultLine line("matadd");
  line.add("N", static_cast<long>(n)).add("device", "cpu").add("time_ms", ms, "%.3f");
  line.add("gbps", gbps, "%.2f")
      .add("memcpy_gbps", copyGbps, "%.2f")
      .add("ratio", gbps / copyGbps, "%.3f");
  const bool wantCheck = cl.has("--check");
  CheckResult check;
  if (wantCheck) check = checkMatadd(a.data(), b.data(), c.data(), n);
  line.print(wantCheck ? &check : nullptr);
  return wantCheck && !check.ok ? 1 : 0;
}
