// matadd: C = A + B over N floats (a matrix is just its N elements here), a grid-stride CUDA
// kernel with float4 loads and stores. It does one addition per 12 bytes moved, so its speed is
// the memory's: the run measures a device-to-device cudaMemcpy too and reports the ratio.
//
//   matadd [N] [--check] [--bench] [--emulate]
//
//   N          elements (default 2^26: 256 MiB per array, far beyond the L2 cache)
//   --check    compare every element with the CPU's A + B (exactly: one IEEE addition)
//   --bench    time the average of many runs instead of one
//   --emulate  no GPU: run the kernel's per-thread code on the CPU (a small grid), to check the
//              grid-stride and tail logic
//
// Prints `# ...` lines about the device and the launch, then one result line:
//   matadd N=67108864 device=gpu time_ms=.. gbps=.. memcpy_gbps=.. ratio=.. check=ok
// gbps counts 3 arrays moved (read A, read B, write C); memcpy_gbps counts 2 (read, write).
// Exit status: 0 ok; 1 the check failed; 2 bad command line or no CUDA device; 3 a CUDA error.
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#include "cuda_util.cuh"
#include "harness.h"

namespace {

#define HD __host__ __device__ __forceinline__

struct AddArgs {
  const float* a;
  const float* b;
  float* c;
  size_t n;
  bool vec;  // all three 16-byte aligned: float4 access
};

HD float4 load4(const float* p) {
#ifdef __CUDA_ARCH__
  return __ldg(reinterpret_cast<const float4*>(p));
#else
  float4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
#endif
}
HD float load1(const float* p) {
#ifdef __CUDA_ARCH__
  return __ldg(p);
#else
  return *p;
#endif
}
HD void store4(float* p, float4 v) {
#ifdef __CUDA_ARCH__
  *reinterpret_cast<float4*>(p) = v;
#else
  std::memcpy(p, &v, sizeof v);
#endif
}

// What thread `index` of `count` threads does: float4 number index, index + count, ... (at each
// step the warp's 32 lanes touch 512 consecutive bytes), then the < 4 elements past the last
// whole float4 one by one (all of them when the arrays are not aligned).
HD void addThread(const AddArgs& g, size_t index, size_t count) {
  const size_t n4 = g.vec ? g.n / 4 : 0;
  for (size_t i = index; i < n4; i += count) {
    const float4 x = load4(g.a + 4 * i), y = load4(g.b + 4 * i);
    store4(g.c + 4 * i, make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w));
  }
  for (size_t i = 4 * n4 + index; i < g.n; i += count) g.c[i] = load1(g.a + i) + load1(g.b + i);
}

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) mataddKernel(AddArgs g) {
  addThread(g, static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x,
            static_cast<size_t>(gridDim.x) * blockDim.x);
}

// The kernel's threads one after another on the CPU, on a grid small enough that every thread
// strides several times and the tail lands on a thread other than the first.
void emulateMatadd(const AddArgs& g) {
  const size_t blocks = 3, threads = 64;
  for (size_t i = 0; i < blocks * threads; ++i) addThread(g, i, blocks * threads);
}



bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

constexpr const char* kUsage = "usage: matadd [N] [--check] [--bench] [--emulate]\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace gpu_examples;
  CommandLine cl;
  std::string error;
  if (!parseCommandLine(argc, argv, {"--check", "--bench", "--emulate"}, &cl, &error) ||
      cl.sizes.size() > 1) {
    if (error.empty()) error = "expected one size N";
    std::fprintf(stderr, "matadd: %s\n%s", error.c_str(), kUsage);
    return 2;
  }
  const size_t n = cl.sizes.empty() ? size_t{1} << 26 : static_cast<size_t>(cl.sizes[0]);
  const bool wantCheck = cl.has("--check");
  std::vector<float> a(n), b(n), c(n, NAN);
  fillRandom(a.data(), n, 3);
  fillRandom(b.data(), n, 4);
  ResultLine line("matadd");
  line.add("N", static_cast<long>(n));
  CheckResult check;

  if (cl.has("--emulate")) {
    const AddArgs g{a.data(), b.data(), c.data(), n,
                    aligned16(a.data()) && aligned16(b.data()) && aligned16(c.data())};
    const auto t0 = std::chrono::steady_clock::now();
    emulateMatadd(g);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (wantCheck) check = checkMatadd(a.data(), b.data(), c.data(), n);
    line.add("device", "emulated").add("time_ms", ms, "%.3f");
    line.add("gbps", 12.0 * n / ms / 1e6, "%.2f");
    line.print(wantCheck ? &check : nullptr);
    return wantCheck && !check.ok ? 1 : 0;
  }

  cudaDeviceProp prop;
  if (!firstDevice("matadd", &prop)) return 2;
  std::printf(
      "# device 0: %s, compute capability %d.%d, %d SMs, %zu MiB memory (%d-bit bus), "
      "%d KiB L2\n",
      prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.totalGlobalMem >> 20,
      prop.memoryBusWidth, prop.l2CacheSize >> 10);

  const size_t bytes = n * sizeof(float);
  float *dA, *dB, *dC;
  CUDA_CHECK(cudaMalloc(&dA, bytes));
  CUDA_CHECK(cudaMalloc(&dB, bytes));
  CUDA_CHECK(cudaMalloc(&dC, bytes));
  CUDA_CHECK(cudaMemcpy(dA, a.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dB, b.data(), bytes, cudaMemcpyHostToDevice));
  const AddArgs g{dA, dB, dC, n, aligned16(dA) && aligned16(dB) && aligned16(dC)};

  // One wave: as many blocks as fit on the SMs at once, each thread striding through the
  // arrays; fewer when there are fewer float4 than threads.
  int perSM = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSM, mataddKernel, kThreads, 0));
  cudaFuncAttributes attr;
  CUDA_CHECK(cudaFuncGetAttributes(&attr, mataddKernel));
  const size_t needed = std::max<size_t>(1, (n / 4 + kThreads - 1) / kThreads);
  const int blocks = static_cast<int>(
      std::min<size_t>(needed, static_cast<size_t>(perSM) * prop.multiProcessorCount));
  std::printf("# kernel: %d blocks x %d threads (%d blocks/SM fit), %d registers/thread\n", blocks,
              kThreads, perSM, attr.numRegs);

  const bool bench = cl.has("--bench");
  const int warmups = bench ? 2 : 1;
  const int reps = bench ? repetitions(3.0 * bytes, 30e9, 5, 200) : 1;
  const double copyMs = timeRuns(
      [&] { CUDA_CHECK(cudaMemcpy(dC, dA, bytes, cudaMemcpyDeviceToDevice)); }, warmups, reps);
  CUDA_CHECK(cudaMemset(dC, 0xff, bytes));  // NaN: unwritten elements show
  const double ms = timeRuns([&] { mataddKernel<<<blocks, kThreads>>>(g); }, warmups, reps);
  CUDA_CHECK(cudaMemcpy(c.data(), dC, bytes, cudaMemcpyDeviceToHost));
  if (wantCheck) check = checkMatadd(a.data(), b.data(), c.data(), n);

  const double gbps = 3.0 * bytes / ms / 1e6, copyGbps = 2.0 * bytes / copyMs / 1e6;
  line.add("device", "gpu").add("time_ms", ms, "%.3f").add("gbps", gbps, "%.1f");
  line.add("memcpy_gbps", copyGbps, "%.1f").add("ratio", gbps / copyGbps, "%.3f");
  line.print(wantCheck ? &check : nullptr);
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dC));
  return wantCheck && !check.ok ? 1 : 0;
}
