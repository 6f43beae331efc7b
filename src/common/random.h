// Randomness behind an interface so tests can make it deterministic. newUid() gives RFC 4122
// version 4 UUIDs; randomSuffix() the 5-character suffixes of generateName. Thread-safe.
#pragma once

#include <string>

namespace minik8s {

std::string newUid();
// Kubernetes' generateName alphabet (no vowels, no digits that look like letters).
std::string randomSuffix(int length = 5);

}  // namespace minik8s
