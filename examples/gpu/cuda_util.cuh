// What both CUDA programs need on the host side: CUDA_CHECK (a failed call prints the call, the
// file and line, and exits 3) and timeRuns (the average of repeated runs between two events).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

inline void checkCuda(cudaError_t e, const char* what, const char* file, int line) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "%s failed (%s:%d): %s\n", what, file, line, cudaGetErrorString(e));
  std::exit(3);
}
#define CUDA_CHECK(expr) checkCuda((expr), #expr, __FILE__, __LINE__)

// Average milliseconds of one run(): `warmups` untimed runs, then `reps` runs between two
// cudaEvents on the default stream.
template <class F>
double timeRuns(F&& run, int warmups, int reps) {
  for (int i = 0; i < warmups; ++i) run();
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  for (int i = 0; i < reps; ++i) run();
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  CUDA_CHECK(cudaGetLastError());
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return static_cast<double>(ms) / reps;
}

// Device 0's properties; false (after a message naming `program`) when there is no CUDA device.
inline bool firstDevice(const char* program, cudaDeviceProp* prop) {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "%s: no CUDA device (%s); --emulate runs the kernel on the CPU\n", program,
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return false;
  }
  CUDA_CHECK(cudaGetDeviceProperties(prop, 0));
  return true;
}
