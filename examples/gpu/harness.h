// Host-side pieces shared by the GPU programs (matmul.cu, matadd.cu) and their CPU builds
// (cpu/matmul_cpu.cc, cpu/matadd_cpu.cc), so that all four take the same command line, fill the
// same inputs, check against the same CPU reference and print the same result line:
//
//   matmul M=4096 N=4096 K=4096 device=gpu tile=128x128 time_ms=... gflops=... check=ok
//
// Header-only standard C++ (nvcc's host compiler and g++ read the same code); no threads, no
// global state.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpu_examples {

// The positional sizes and --flags of a command line, e.g. `4096 --check --tile=64`.
struct CommandLine {
  std::vector<long> sizes;
  std::vector<std::string> flags;  // as given, "--tile=64" included

  bool has(std::string_view flag) const {
    return std::find(flags.begin(), flags.end(), flag) != flags.end();
  }
  // The value of --name=VALUE, or "" when absent.
  std::string value(std::string_view name) const {
    for (const std::string& f : flags) {
      if (f.size() > name.size() && f.compare(0, name.size(), name) == 0 && f[name.size()] == '=')
        return f.substr(name.size() + 1);
    }
    return "";
  }
};

// Parses argv into sizes and flags. A flag must be in `allowed` (a "--name=" entry allows
// --name=VALUE); sizes are integers in [1, 1<<30]. Returns false with a message in *error.
inline bool parseCommandLine(int argc, char** argv, const std::vector<std::string>& allowed,
                             CommandLine* out, std::string* error) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) == 0) {
      const auto eq = arg.find('=');
      const std::string key = eq == std::string::npos ? arg : arg.substr(0, eq + 1);
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        *error = "unknown option \"" + arg + "\" (allowed:";
        for (const std::string& a : allowed) *error += " " + a + (a.back() == '=' ? "VALUE" : "");
        *error += ")";
        return false;
      }
      out->flags.push_back(arg);
      continue;
    }
    char* end = nullptr;
    const long v = std::strtol(arg.c_str(), &end, 10);
    if (arg.empty() || *end != '\0' || v < 1 || v > (1L << 30)) {
      *error = "size \"" + arg + "\" is not an integer in [1, 1073741824]";
      return false;
    }
    out->sizes.push_back(v);
  }
  return true;
}

// Matrix sizes of C[MxN] = A[MxK] * B[KxN] from `N` or `M N K` (none: defaultN).
struct MatmulSize {
  long m, n, k;
};
inline bool matmulSize(const CommandLine& cl, long defaultN, MatmulSize* out, std::string* error) {
  if (cl.sizes.empty())
    *out = {defaultN, defaultN, defaultN};
  else if (cl.sizes.size() == 1)
    *out = {cl.sizes[0], cl.sizes[0], cl.sizes[0]};
  else if (cl.sizes.size() == 3)
    *out = {cl.sizes[0], cl.sizes[1], cl.sizes[2]};
  else {
    *error = "expected N or M N K, got " + std::to_string(cl.sizes.size()) + " sizes";
    return false;
  }
  return true;
}

// Deterministic uniform floats in [-1, 1) (splitmix64): the same inputs in every build.
inline void fillRandom(float* p, size_t n, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    p[i] = static_cast<float>(static_cast<double>(z >> 40) * 0x1p-23 - 1.0);  // 24 random bits
  }
}

// Outcome of a comparison with the CPU reference.
struct CheckResult {
  bool ok = true;
  long checked = 0;      // entries compared
  double worst = 0;      // largest |got - want| / tolerance seen (ok means <= 1)
  std::string mismatch;  // the first failing entry, for the user
};

// Compares C (row-major MxN) with a double-precision reference of A*B. All entries when the
// product is small (M*N*K <= 2^28), otherwise the four corners, the last row and column (the
// ragged tiles) and a random sample. Tolerance per entry: 8 * sqrt(K) * 2^-24 * sum_k |a||b|,
// generous for FP32 rounding in any summation order (its typical error grows like sqrt(K)) yet
// far below the size of one missing or doubled product term.
inline CheckResult checkMatmul(const float* a, const float* b, const float* c, long m, long n,
                               long k) {
  CheckResult r;
  const double tolFactor = 8.0 * std::sqrt(static_cast<double>(k)) * 0x1p-24;
  auto checkEntry = [&](long i, long j) {
    double want = 0, absdot = 0;
    for (long p = 0; p < k; ++p) {
      const double x = static_cast<double>(a[i * k + p]) * static_cast<double>(b[p * n + j]);
      want += x;
      absdot += std::fabs(x);
    }
    const double got = c[i * n + j];
    const double tol = tolFactor * absdot + 1e-30;
    const double err = std::fabs(got - want);
    ++r.checked;
    r.worst = std::max(r.worst, err / tol);
    if (!(err <= tol) && r.ok) {  // NaN fails too
      r.ok = false;
      char buf[160];
      std::snprintf(buf, sizeof buf, "C[%ld][%ld] = %.9g, want %.9g (tolerance %.3g)", i, j, got,
                    want, tol);
      r.mismatch = buf;
    }
  };
  if (static_cast<double>(m) * n * k <= 0x1p28) {
    for (long i = 0; i < m; ++i)
      for (long j = 0; j < n; ++j) checkEntry(i, j);
    return r;
  }
  uint64_t s = 12345;
  auto next = [&s](long bound) {  // xorshift64, uniform enough for picking entries
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return static_cast<long>(s % static_cast<uint64_t>(bound));
  };
  checkEntry(0, 0), checkEntry(0, n - 1), checkEntry(m - 1, 0), checkEntry(m - 1, n - 1);
  for (int t = 0; t < 256; ++t) checkEntry(m - 1, next(n)), checkEntry(next(m), n - 1);
  for (int t = 0; t < 2048; ++t) checkEntry(next(m), next(n));
  return r;
}

// Compares c with a + b exactly (one IEEE float addition gives the same bits on CPU and GPU).
inline CheckResult checkMatadd(const float* a, const float* b, const float* c, size_t n) {
  CheckResult r;
  for (size_t i = 0; i < n; ++i) {
    const float want = a[i] + b[i];
    ++r.checked;
    if (!(c[i] == want) && r.ok) {
      r.ok = false;
      r.worst = 1e30;
      char buf[128];
      std::snprintf(buf, sizeof buf, "C[%zu] = %.9g, want %.9g", i, c[i], want);
      r.mismatch = buf;
    }
  }
  return r;
}

// Builds the one machine-readable result line: `NAME key=value key=value ...`.
class ResultLine {
 public:
  explicit ResultLine(std::string name) : line_(std::move(name)) {}
  ResultLine& add(const char* key, const std::string& value) {
    line_ += ' ';
    line_ += key;
    line_ += '=';
    line_ += value;
    return *this;
  }
  ResultLine& add(const char* key, long value) { return add(key, std::to_string(value)); }
  ResultLine& add(const char* key, double value, const char* format) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, value);
    return add(key, std::string(buf));
  }
  // check=ok | check=FAIL | check=skipped, then prints the line (and the mismatch on stderr).
  void print(const CheckResult* check) {
    add("check", check == nullptr ? "skipped" : check->ok ? "ok" : "FAIL");
    std::printf("%s\n", line_.c_str());
    std::fflush(stdout);
    if (check != nullptr && !check->ok)
      std::fprintf(stderr, "mismatch: %s\n", check->mismatch.c_str());
  }

 private:
  std::string line_;
};

// Repetitions for a timed measurement: about `targetWork` units in total, within [lo, hi].
inline int repetitions(double workPerRun, double targetWork, int lo, int hi) {
  const double r = targetWork / std::max(workPerRun, 1.0);
  return static_cast<int>(std::clamp(r, static_cast<double>(lo), static_cast<double>(hi)));
}

}  // namespace gpu_examples
