// matmul_cpu: the CPU build of matmul (../matmul.cu) for machines without a GPU, so that a
// SlurmJob's build, run and output can be tested anywhere. Same command line, inputs, check and
// result line; the product is blocked for the caches the way the GPU kernel tiles for shared
// memory (a panel of B is reused by a block of rows of A while it is cache-resident).
//
//   matmul_cpu [N | M N K] [--check] [--bench] [--cublas]
//
// --cublas is accepted (the same job's command line runs) and noted on stderr as not available.
// Prints one line:  matmul M=256 N=256 K=256 device=cpu time_ms=.. gflops=.. check=ok
// Exit status: 0 ok; 1 the check failed; 2 bad command line.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "harness.h"

namespace {

// C = A * B, all row-major; any sizes (the last blocks are ragged).
void multiplyBlocked(const float* a, const float* b, float* c, long m, long n, long k) {
  constexpr long kRows = 64, kDepth = 128, kCols = 256;  // a 128 KiB panel of B
  std::fill(c, c + m * n, 0.f);
  for (long i0 = 0; i0 < m; i0 += kRows) {
    for (long p0 = 0; p0 < k; p0 += kDepth) {
      for (long j0 = 0; j0 < n; j0 += kCols) {
        const long i1 = std::min(i0 + kRows, m), p1 = std::min(p0 + kDepth, k),
                   j1 = std::min(j0 + kCols, n);
        for (long i = i0; i < i1; ++i) {
          float* ci = c + i * n;
          for (long p = p0; p < p1; ++p) {
            const float aip = a[i * k + p];
            const float* bp = b + p * n;
            for (long j = j0; j < j1; ++j) ci[j] += aip * bp[j];  // unit stride: vectorisable
          }
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpu_examples;
  CommandLine cl;
  std::string error;
  MatmulSize size{};
  if (!parseCommandLine(argc, argv, {"--check", "--bench", "--cublas"}, &cl, &error) ||
      !matmulSize(cl, 256, &size, &error)) {
    std::fprintf(stderr, "matmul_cpu: %s\nusage: matmul_cpu [N | M N K] [--check] [--bench]\n",
                 error.c_str());
    return 2;
  }
  if (cl.has("--cublas"))
    std::fprintf(stderr, "matmul_cpu: --cublas: no cuBLAS on the CPU build\n");
  const long m = size.m, n = size.n, k = size.k;
  const double flops = 2.0 * m * n * k;
  std::vector<float> a(m * k), b(k * n), c(m * n);
  fillRandom(a.data(), a.size(), 1);
  fillRandom(b.data(), b.size(), 2);

  const bool bench = cl.has("--bench");
  const int reps = bench ? repetitions(flops, 4e9, 3, 100) : 1;
  if (bench) multiplyBlocked(a.data(), b.data(), c.data(), m, n, k);  // warm-up
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) multiplyBlocked(a.data(), b.data(), c.data(), m, n, k);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
      reps;

  ResultLine line("matmul");
  line.add("M", m).add("N", n).add("K", k).add("device", "cpu");
  line.add("time_ms", ms, "%.3f").add("gflops", flops / ms / 1e6, "%.3f");
  const bool wantCheck = cl.has("--check");
  CheckResult check;
  if (wantCheck) check = checkMatmul(a.data(), b.data(), c.data(), m, n, k);
  line.print(wantCheck ? &check : nullptr);
  return wantCheck && !check.ok ? 1 : 0;
}
