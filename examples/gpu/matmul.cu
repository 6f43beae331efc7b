// matmul: FP32 C = A * B (row-major, any M, N, K) with a hand-written tiled CUDA kernel, checked
// against a CPU reference and, with --cublas, timed against cuBLAS SGEMM on the same inputs in
// the same run.
//
//   matmul [N | M N K] [--check] [--bench] [--cublas] [--tile=128|64] [--emulate]
//
//   --check    compare with a double-precision CPU reference (all entries, or a sample when big)
//   --bench    time the average of many runs instead of one
//   --cublas   also time cublasSgemm and report the ratio (and check its result with --check)
//   --tile     block tile, 128x128 (256 threads) or 64x64 (64 threads); default: 128x128 when
//              that gives every SM a block, else 64x64
//   --emulate  no GPU: run the kernel's per-thread code on the CPU, thread after thread between
//              barriers, shared memory starting as NaN; checks the tiling and bounds logic
//
// Prints `# ...` lines about the device and the kernel, then one result line:
//   matmul M=4096 N=4096 K=4096 device=gpu tile=128x128 time_ms=.. gflops=.. cublas_gflops=..
//   ratio=.. cublas_check=ok check=ok
// Exit status: 0 ok; 1 a check failed; 2 bad command line or no CUDA device; 3 a CUDA error.
// README.md explains how the kernel maps the product onto blocks, warps and shared memory.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "cuda_util.cuh"
#include "harness.h"

namespace {

// Code that runs on the GPU and, for --emulate, on the CPU.
#define HD __host__ __device__ __forceinline__
#ifdef __CUDA_ARCH__
#define UNROLL _Pragma("unroll")
#else
#define UNROLL  // the host compiler's own unrolling is enough for the emulator
#endif

// ---------------------------------------------------------------------------------------------
// Tile geometry. A block computes a kBM x kBN tile of C, walking K in steps of kBK. Its warps
// each own a 64x32 piece of that tile; a lane owns an 8x8 register block of it, split into four
// 4x4 quarters at row offsets 0/32 and column offsets 0/16 of the warp's piece:
//
//   lane = 4 * lm + ln  (lm 0..7 down the rows, ln 0..3 across the columns)
//   rows: wm*64 + lm*4 + {0..3} and +32      cols: wn*32 + ln*4 + {0..3} and +16
//
// so that at each k the 32 lanes of a warp read 8 distinct float4 of A's row of the tile and 4
// of B's (128 and 64 contiguous bytes: broadcast, no bank conflict).
template <int BM, int BN, int MinBlocksPerSM>
struct Tile {
  static constexpr int kBM = BM, kBN = BN, kBK = 8;
  static constexpr int kWarpsM = BM / 64, kWarpsN = BN / 32;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  // __launch_bounds__: the register budget is 65536 / (kMinBlocksPerSM * kThreads) per thread.
  static constexpr int kMinBlocksPerSM = MinBlocksPerSM;
  // A's tile is stored transposed (k-major) so that a lane reads 4 rows with one float4. The
  // +4 floats of padding per k row keep float4 alignment and make the transposing stores of a
  // warp (16 rows x 2 k quads) land in 32 different banks.
  static constexpr int kAStride = BM + 4;
  static constexpr int kLoadsA = BM * kBK / 4 / kThreads;  // float4 per thread per A tile
  static constexpr int kLoadsB = kBK * BN / 4 / kThreads;  // float4 per thread per B tile
  static_assert(BM % 64 == 0 && BN % 32 == 0, "the block tile is made of 64x32 warp tiles");
  static_assert(kLoadsA >= 1 && BM * kBK == kLoadsA * 4 * kThreads, "A tile splits evenly");
  static_assert(kLoadsB >= 1 && kBK * BN == kLoadsB * 4 * kThreads, "B tile splits evenly");
};
// 256 threads, 8 warps (2 x 4); 2 blocks (16 warps) per SM: at most 128 registers per thread.
using Tile128 = Tile<128, 128, 2>;
// 64 threads, 2 warps (1 x 2): 4x as many blocks for matrices too small to fill the SMs with
// 128x128 tiles. Such grids put only a few blocks on an SM, so registers are not the limit:
// allow 256 rather than spill.
using Tile64 = Tile<64, 64, 4>;

struct GemmArgs {
  const float* a;  // M x K
  const float* b;  // K x N
  float* c;        // M x N
  int m, n, k;
  // Every row starts 16-byte aligned (base aligned and row length % 4 == 0): float4 access.
  bool vecA, vecB, vecC;
};

// Shared memory of a block: two stages, one being multiplied while the next is filled.
template <class T>
struct Shared {
  alignas(16) float a[2][T::kBK * T::kAStride];  // a[s][k * kAStride + m] = A[m0 + m][k0 + k]
  alignas(16) float b[2][T::kBK * T::kBN];       // b[s][k * kBN + n]      = B[k0 + k][n0 + n]
};

// Registers of a thread: the next tiles' elements on their way to shared memory, and its 8x8
// block of C.
template <class T>
struct ThreadState {
  float4 nextA[T::kLoadsA];
  float4 nextB[T::kLoadsB];
  float acc[8][8];
};

HD float4 loadGlobal4(const float* p) {
#ifdef __CUDA_ARCH__
  return __ldg(reinterpret_cast<const float4*>(p));  // read-only path, one 128-bit load
#else
  float4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
#endif
}
HD float loadGlobal(const float* p) {
#ifdef __CUDA_ARCH__
  return __ldg(p);
#else
  return *p;
#endif
}
HD float4 loadShared4(const float* p) {
#ifdef __CUDA_ARCH__
  return *reinterpret_cast<const float4*>(p);
#else
  float4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
#endif
}
HD void store4(float* p, float4 v) {
#ifdef __CUDA_ARCH__
  *reinterpret_cast<float4*>(p) = v;
#else
  std::memcpy(p, &v, sizeof v);
#endif
}

// p[row][col .. col+3] of a rows x cols row-major matrix, 0 where out of range (so the ragged
// last tiles add nothing to the sums). One float4 load when rows are aligned; then col % 4 == 0
// and cols % 4 == 0, so the four are all in range or all out. Else up to four scalar loads.
HD float4 loadRow4(const float* p, int rows, int cols, int row, int col, bool vec) {
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
  if (row >= rows || col >= cols) return v;
  const float* q = p + static_cast<size_t>(row) * cols + col;
  if (vec) return loadGlobal4(q);
  v.x = loadGlobal(q);
  if (col + 1 < cols) v.y = loadGlobal(q + 1);
  if (col + 2 < cols) v.z = loadGlobal(q + 2);
  if (col + 3 < cols) v.w = loadGlobal(q + 3);
  return v;
}

// Global -> registers: the A tile (kBM x kBK at m0, k0) and the B tile (kBK x kBN at k0, n0).
// Consecutive threads take consecutive float4 of a row: a warp's loads are coalesced.
template <class T>
HD void loadTiles(const GemmArgs& g, int m0, int n0, int k0, int tid, ThreadState<T>& s) {
  UNROLL
  for (int i = 0; i < T::kLoadsA; ++i) {
    const int idx = tid + i * T::kThreads;
    const int r = idx / (T::kBK / 4), kq = idx % (T::kBK / 4) * 4;
    s.nextA[i] = loadRow4(g.a, g.m, g.k, m0 + r, k0 + kq, g.vecA);
  }
  UNROLL
  for (int i = 0; i < T::kLoadsB; ++i) {
    const int idx = tid + i * T::kThreads;
    const int r = idx / (T::kBN / 4), cq = idx % (T::kBN / 4) * 4;
    s.nextB[i] = loadRow4(g.b, g.k, g.n, k0 + r, n0 + cq, g.vecB);
  }
}

// Registers -> shared stage `stage`: A transposed (four scalar stores), B as one float4. Every
// element of the stage is written, zeros included, so nothing stale is ever multiplied.
template <class T>
HD void storeTiles(const ThreadState<T>& s, int tid, Shared<T>& sh, int stage) {
  UNROLL
  for (int i = 0; i < T::kLoadsA; ++i) {
    const int idx = tid + i * T::kThreads;
    const int r = idx / (T::kBK / 4), kq = idx % (T::kBK / 4) * 4;
    float* dst = &sh.a[stage][kq * T::kAStride + r];
    dst[0] = s.nextA[i].x;
    dst[T::kAStride] = s.nextA[i].y;
    dst[2 * T::kAStride] = s.nextA[i].z;
    dst[3 * T::kAStride] = s.nextA[i].w;
  }
  UNROLL
  for (int i = 0; i < T::kLoadsB; ++i) {
    const int idx = tid + i * T::kThreads;
    const int r = idx / (T::kBN / 4), cq = idx % (T::kBN / 4) * 4;
    store4(&sh.b[stage][r * T::kBN + cq], s.nextB[i]);
  }
}

// The top-left corner, in the block tile, of a thread's 8x8 register block (see Tile).
struct Place {
  int row, col;
};
template <class T>
HD Place placeOf(int tid) {
  const int warp = tid / 32, lane = tid % 32;
  const int wm = warp / T::kWarpsN, wn = warp % T::kWarpsN;
  return {wm * 64 + lane / 4 * 4, wn * 32 + lane % 4 * 4};
}

// The heart of it: kBK rank-1 updates of the thread's 8x8 block, 64 FMAs per 4 float4 read
// from shared memory.
template <class T>
HD void multiplyTile(const Shared<T>& sh, int stage, Place p, ThreadState<T>& s) {
  const float* as = sh.a[stage];
  const float* bs = sh.b[stage];
  UNROLL
  for (int kk = 0; kk < T::kBK; ++kk) {
    const float4 a0 = loadShared4(as + kk * T::kAStride + p.row);
    const float4 a1 = loadShared4(as + kk * T::kAStride + p.row + 32);
    const float4 b0 = loadShared4(bs + kk * T::kBN + p.col);
    const float4 b1 = loadShared4(bs + kk * T::kBN + p.col + 16);
    const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
    const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
    UNROLL
    for (int i = 0; i < 8; ++i) {
      UNROLL
      for (int j = 0; j < 8; ++j) s.acc[i][j] = fmaf(a[i], b[j], s.acc[i][j]);
    }
  }
}

// The kernel in three pieces, each what a thread does between two barriers; the kernel and the
// emulator both call exactly these.

// Zero the accumulators, bring the first k tile to shared stage 0.
template <class T>
HD void beginBlock(const GemmArgs& g, int m0, int n0, int tid, Shared<T>& sh, ThreadState<T>& s) {
  UNROLL
  for (int i = 0; i < 8; ++i) {
    UNROLL
    for (int j = 0; j < 8; ++j) s.acc[i][j] = 0.f;
  }
  loadTiles<T>(g, m0, n0, 0, tid, s);
  storeTiles<T>(s, tid, sh, 0);
}

// k tile t of `tiles`: start loading tile t+1 (its latency hides behind the FMAs), multiply the
// tile in stage t&1, then store tile t+1 into the other stage, which nobody reads until after
// the next barrier (and nobody has read since the last one).
template <class T>
HD void stepBlock(const GemmArgs& g, int m0, int n0, int tid, int t, int tiles, Shared<T>& sh,
                  ThreadState<T>& s) {
  const int stage = t & 1;
  const bool more = t + 1 < tiles;
  if (more) loadTiles<T>(g, m0, n0, (t + 1) * T::kBK, tid, s);
  multiplyTile<T>(sh, stage, placeOf<T>(tid), s);
  if (more) storeTiles<T>(s, tid, sh, stage ^ 1);
}

// Registers -> C, skipping rows and columns past the matrix edges.
template <class T>
HD void endBlock(const GemmArgs& g, int m0, int n0, int tid, const ThreadState<T>& s) {
  const Place p = placeOf<T>(tid);
  UNROLL
  for (int i = 0; i < 8; ++i) {
    const int row = m0 + p.row + i / 4 * 32 + i % 4;
    if (row >= g.m) continue;
    UNROLL
    for (int h = 0; h < 2; ++h) {
      const int col = n0 + p.col + h * 16;
      if (col >= g.n) continue;
      float* q = g.c + static_cast<size_t>(row) * g.n + col;
      const float* v = &s.acc[i][h * 4];
      if (g.vecC) {  // n % 4 == 0, so col + 3 < n too
        store4(q, make_float4(v[0], v[1], v[2], v[3]));
      } else {
        UNROLL
        for (int j = 0; j < 4; ++j) {
          if (col + j < g.n) q[j] = v[j];
        }
      }
    }
  }
}

template <class T>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocksPerSM) sgemmKernel(GemmArgs g) {
  __shared__ Shared<T> sh;
  ThreadState<T> s;
  const int tid = threadIdx.x;
  const int m0 = blockIdx.y * T::kBM, n0 = blockIdx.x * T::kBN;
  const int tiles = (g.k + T::kBK - 1) / T::kBK;
  beginBlock<T>(g, m0, n0, tid, sh, s);
  __syncthreads();
  for (int t = 0; t < tiles; ++t) {
    stepBlock<T>(g, m0, n0, tid, t, tiles, sh, s);
    __syncthreads();
  }
  endBlock<T>(g, m0, n0, tid, s);
}

dim3 gridOf(const GemmArgs& g, int bm, int bn) {
  return dim3((g.n + bn - 1) / bn, (g.m + bm - 1) / bm);
}

// Runs the kernel's blocks one after another on the CPU. Between two barriers the threads run
// one at a time, alternately in forward and reverse order, so a thread that wrote shared memory
// another thread still had to read in the same phase spoils the result. Shared memory starts as
// NaN in every block, as garbage would on a GPU.
template <class T>
void emulateSgemm(const GemmArgs& g) {
  auto sh = std::make_unique<Shared<T>>();
  std::vector<ThreadState<T>> threads(T::kThreads);
  const dim3 grid = gridOf(g, T::kBM, T::kBN);
  const int tiles = (g.k + T::kBK - 1) / T::kBK;
  bool forward = true;
  auto phase = [&](auto&& f) {
    for (int i = 0; i < T::kThreads; ++i) f(forward ? i : T::kThreads - 1 - i);
    forward = !forward;
  };
  for (unsigned by = 0; by < grid.y; ++by) {
    for (unsigned bx = 0; bx < grid.x; ++bx) {
      const int m0 = static_cast<int>(by) * T::kBM, n0 = static_cast<int>(bx) * T::kBN;
      std::fill_n(&sh->a[0][0], sizeof sh->a / sizeof(float), NAN);
      std::fill_n(&sh->b[0][0], sizeof sh->b / sizeof(float), NAN);
      phase([&](int tid) { beginBlock<T>(g, m0, n0, tid, *sh, threads[tid]); });
      for (int t = 0; t < tiles; ++t)
        phase([&](int tid) { stepBlock<T>(g, m0, n0, tid, t, tiles, *sh, threads[tid]); });
      phase([&](int tid) { endBlock<T>(g, m0, n0, tid, threads[tid]); });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Host side.

void checkCublas(cublasStatus_t e, const char* what, int line) {
  if (e == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "matmul: %s failed (matmul.cu:%d): %s\n", what, line,
               cublasGetStatusString(e));
  std::exit(3);
}
#define CUBLAS_CHECK(expr) checkCublas((expr), #expr, __LINE__)


template <class T>
void describeKernel(int sms) {
  cudaFuncAttributes attr;
  CUDA_CHECK(cudaFuncGetAttributes(&attr, sgemmKernel<T>));
  int blocks = 0;
  CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, sgemmKernel<T>, T::kThreads, 0));
  std::printf(
      "# kernel %dx%d: %d threads/block, %d registers/thread, %zu B shared/block, "
      "%zu B local/thread, %d blocks/SM (%d warps/SM) on %d SMs\n",
      T::kBM, T::kBN, T::kThreads, attr.numRegs, attr.sharedSizeBytes, attr.localSizeBytes, blocks,
      blocks * T::kThreads / 32, sms);
}

template <class T>
void launchSgemm(const GemmArgs& g) {
  sgemmKernel<T><<<gridOf(g, T::kBM, T::kBN), T::kThreads>>>(g);
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

GemmArgs gemmArgs(const float* a, const float* b, float* c, int m, int n, int k) {
  GemmArgs g{a, b, c, m, n, k, false, false, false};
  g.vecA = k % 4 == 0 && aligned16(a);
  g.vecB = n % 4 == 0 && aligned16(b);
  g.vecC = n % 4 == 0 && aligned16(c);
  return g;
}

constexpr const char* kUsage =
    "usage: matmul [N | M N K] [--check] [--bench] [--cublas] [--tile=128|64] [--emulate]\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace gpu_examples;
  CommandLine cl;
  std::string error;
  MatmulSize size{};
  if (!parseCommandLine(argc, argv, {"--check", "--bench", "--cublas", "--tile=", "--emulate"}, &cl,
                        &error) ||
      !matmulSize(cl, 1024, &size, &error)) {
    std::fprintf(stderr, "matmul: %s\n%s", error.c_str(), kUsage);
    return 2;
  }
  const std::string tileArg = cl.value("--tile");
  if (!tileArg.empty() && tileArg != "128" && tileArg != "64") {
    std::fprintf(stderr, "matmul: --tile=%s: the tile is 128 or 64\n%s", tileArg.c_str(), kUsage);
    return 2;
  }
  const int m = static_cast<int>(size.m), n = static_cast<int>(size.n),
            k = static_cast<int>(size.k);
  const double flops = 2.0 * m * n * k;
  std::vector<float> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(k) * n),
      c(static_cast<size_t>(m) * n, NAN);
  fillRandom(a.data(), a.size(), 1);
  fillRandom(b.data(), b.size(), 2);

  ResultLine line("matmul");
  line.add("M", static_cast<long>(m)).add("N", static_cast<long>(n)).add("K", static_cast<long>(k));
  CheckResult check;
  const bool wantCheck = cl.has("--check");

  if (cl.has("--emulate")) {
    const bool small = tileArg == "64";
    const GemmArgs g = gemmArgs(a.data(), b.data(), c.data(), m, n, k);
    const auto t0 = std::chrono::steady_clock::now();
    small ? emulateSgemm<Tile64>(g) : emulateSgemm<Tile128>(g);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (wantCheck) check = checkMatmul(a.data(), b.data(), c.data(), m, n, k);
    line.add("device", "emulated").add("tile", small ? "64x64" : "128x128");
    line.add("time_ms", ms, "%.3f").add("gflops", flops / ms / 1e6, "%.3f");
    line.print(wantCheck ? &check : nullptr);
    return wantCheck && !check.ok ? 1 : 0;
  }

  cudaDeviceProp prop;
  if (!firstDevice("matmul", &prop)) return 2;
  std::printf("# device 0: %s, compute capability %d.%d, %d SMs\n", prop.name, prop.major,
              prop.minor, prop.multiProcessorCount);

  float *dA, *dB, *dC;
  CUDA_CHECK(cudaMalloc(&dA, a.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dB, b.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dC, c.size() * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(dA, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dB, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dC, 0xff, c.size() * sizeof(float)));  // NaN: unwritten entries show

  const GemmArgs g = gemmArgs(dA, dB, dC, m, n, k);
  const long blocks128 = static_cast<long>(gridOf(g, 128, 128).x) * gridOf(g, 128, 128).y;
  const bool small = tileArg.empty() ? blocks128 < prop.multiProcessorCount : tileArg == "64";
  small ? describeKernel<Tile64>(prop.multiProcessorCount)
        : describeKernel<Tile128>(prop.multiProcessorCount);
  const bool bench = cl.has("--bench");
  const int warmups = bench ? 2 : 1, reps = bench ? repetitions(flops, 1e13, 5, 200) : 1;

  const double ms =
      timeRuns([&] { small ? launchSgemm<Tile64>(g) : launchSgemm<Tile128>(g); }, warmups, reps);
  const double gflops = flops / ms / 1e6;
  CUDA_CHECK(cudaMemcpy(c.data(), dC, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
  if (wantCheck) check = checkMatmul(a.data(), b.data(), c.data(), m, n, k);
  line.add("device", "gpu").add("tile", small ? "64x64" : "128x128");
  line.add("time_ms", ms, "%.3f").add("gflops", gflops, "%.1f");

  if (cl.has("--cublas")) {
    // Row-major C = A*B is column-major C^T = B^T * A^T: cuBLAS gets B first, no transposes.
    // Default math mode: true FP32 SGEMM (TF32 tensor cores only if asked for).
    cublasHandle_t handle;
    CUBLAS_CHECK(cublasCreate(&handle));
    CUDA_CHECK(cudaMemset(dC, 0xff, c.size() * sizeof(float)));
    const float one = 1.f, zero = 0.f;
    const double cublasMs = timeRuns(
        [&] {
          CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, dB, n, dA, k,
                                   &zero, dC, n));
        },
        warmups, reps);
    const double cublasGflops = flops / cublasMs / 1e6;
    line.add("cublas_gflops", cublasGflops, "%.1f").add("ratio", gflops / cublasGflops, "%.3f");
    if (wantCheck) {
      std::vector<float> c2(c.size());
      CUDA_CHECK(cudaMemcpy(c2.data(), dC, c2.size() * sizeof(float), cudaMemcpyDeviceToHost));
      const CheckResult cublasCheck = checkMatmul(a.data(), b.data(), c2.data(), m, n, k);
      line.add("cublas_check", cublasCheck.ok ? "ok" : "FAIL");
    }
    CUBLAS_CHECK(cublasDestroy(handle));
  }
  line.print(wantCheck ? &check : nullptr);
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dC));
  return wantCheck && !check.ok ? 1 : 0;
}
