// YAML <-> JSON (common/yaml_json.h): what cannot survive toYaml -> parseYaml is refused on input.
#include <gtest/gtest.h>

#include <string>

#include "common/yaml_json.h"

namespace minik8s {
namespace {

std::string utf8(char32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xc0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xe0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    s += static_cast<char>(0xf0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return s;
}

// yaml-cpp's emitter writes U+FFFD for every Unicode noncharacter (fuzzing found U+FDEA in a
// UTF-16 document): a value holding one is a 400 on input rather than a silent change on output.
TEST(YamlJsonTest, NoncharactersAreRefusedAndTheirNeighboursRoundTrip) {
  for (char32_t cp : {0xfdd0u, 0xfdeau, 0xfdefu, 0xfffeu, 0xffffu, 0x1fffeu, 0x10ffffu}) {
    auto parsed = parseYaml("key: \"a" + utf8(cp) + "b\"\n");
    ASSERT_FALSE(parsed.ok()) << std::hex << static_cast<uint32_t>(cp);
    EXPECT_EQ(parsed.status().code(), 400);
  }
  for (char32_t cp : {0xfdcfu, 0xfdf0u, 0xfffdu, 0x1fffdu, 0x20000u, 0x10fffdu}) {
    auto parsed = parseYaml("key: \"a" + utf8(cp) + "b\"\n");
    ASSERT_TRUE(parsed.ok()) << std::hex << static_cast<uint32_t>(cp);
    auto back = parseYaml(toYaml(*parsed));
    ASSERT_TRUE(back.ok()) << std::hex << static_cast<uint32_t>(cp);
    EXPECT_EQ(*back, *parsed) << std::hex << static_cast<uint32_t>(cp);
  }
}

}  // namespace
}  // namespace minik8s
