// FUZZ_CHECK: an invariant of a fuzz target. A violation prints what was expected and aborts, so
// libFuzzer records the input as a crash. Header-only; used by the *_fuzz.cc targets only.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                                  \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                       \
    }                                                                                     \
  } while (0)
