// FlatObject, the member storage of minik8s' json: the same values, order, comparisons and
// operations as nlohmann's std::map-based json, checked side by side.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>

#include "common/flat_object.h"
#include "common/json_compact.h"
#include "common/status.h"

namespace minik8s {
namespace {

using MapJson = nlohmann::json;  // std::map members: the reference behaviour

TEST(FlatObject, KeepsMembersInKeyOrderWhateverTheInsertionOrder) {
  json obj;
  for (const char* key : {"kind", "apiVersion", "spec", "metadata", "status", "a", "zz"})
    obj[key] = key;
  std::string keys;
  for (const auto& [key, value] : obj.items()) keys += key + ",";
  EXPECT_EQ(keys, "a,apiVersion,kind,metadata,spec,status,zz,");
  EXPECT_EQ(obj.dump(), R"({"a":"a","apiVersion":"apiVersion","kind":"kind","metadata":"metadata",)"
                        R"("spec":"spec","status":"status","zz":"zz"})");
}

TEST(FlatObject, LooksUpByAnyStringType) {
  json obj = {{"metadata", {{"name", "web"}}}, {"kind", "Pod"}};
  const json& c = obj;
  EXPECT_EQ(c.at("kind"), "Pod");
  EXPECT_EQ(c.at(std::string_view("kind")), "Pod");
  EXPECT_EQ(c.at(std::string("kind")), "Pod");
  EXPECT_TRUE(c.contains("metadata"));
  EXPECT_FALSE(c.contains("metadat"));
  EXPECT_FALSE(c.contains("metadataa"));
  EXPECT_EQ(c.count("kind"), 1u);
  EXPECT_EQ(c.find("spec"), c.end());
  EXPECT_THROW((void)c.at("spec"), json::out_of_range);
  EXPECT_EQ(c.value("kind", ""), "Pod");
  EXPECT_EQ(c.value("spec", "none"), "none");
}

TEST(FlatObject, InsertKeepsAnExistingMemberAndEraseRemovesOne) {
  json obj = {{"b", 1}, {"d", 2}};
  auto [it, inserted] = obj.emplace("b", 5);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(it.value(), 1);
  EXPECT_TRUE(obj.emplace("c", 3).second);
  EXPECT_TRUE(obj.emplace("a", 0).second);
  EXPECT_EQ(obj.dump(), R"({"a":0,"b":1,"c":3,"d":2})");
  EXPECT_EQ(obj.erase("c"), 1u);
  EXPECT_EQ(obj.erase("c"), 0u);
  obj.erase(obj.find("a"));
  EXPECT_EQ(obj.dump(), R"({"b":1,"d":2})");
  obj.update(json{{"a", 9}, {"d", 7}});
  EXPECT_EQ(obj.dump(), R"({"a":9,"b":1,"d":7})");
  obj.clear();
  EXPECT_TRUE(obj.empty());
  EXPECT_TRUE(obj.is_object());
}

TEST(FlatObject, ParsingADuplicateKeyKeepsTheLastValueAsStdMapDid) {
  EXPECT_EQ(json::parse(R"({"a":1,"b":2,"a":3})").dump(),
            MapJson::parse(R"({"a":1,"b":2,"a":3})").dump());
}

TEST(FlatObject, ConvertsToAndFromStandardMaps) {
  std::map<std::string, std::string> labels = {{"tier", "web"}, {"app", "shop"}};
  json j = labels;
  EXPECT_EQ(j.dump(), R"({"app":"shop","tier":"web"})");
  const auto back = j.get<std::map<std::string, std::string>>();
  EXPECT_EQ(back, labels);
}

#ifdef MINIK8S_FLAT_OBJECT_MOVE_ON_CHANGE
// The sanitizer build: every change moves the members, so AddressSanitizer reports a reference kept
// across one even when the vector had room for the new member.
TEST(FlatObject, SanitizerBuildMovesEveryMemberOnEachChange) {
  json obj = json::object();
  obj["a"] = 1;
  const json* before = &obj["a"];
  obj["b"] = 2;
  EXPECT_NE(&obj["a"], before);
  before = &obj["a"];
  obj.erase("b");
  EXPECT_NE(&obj["a"], before);
}
#endif

// A random JSON text of nested objects and arrays with keys that collide, share prefixes and come
// in any order.
std::string randomDocument(std::mt19937& rng, int depth) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  static const char* kKeys[] = {"a",    "b",    "ab", "abc", "name",    "metadata",
                                "spec", "kind", "z",  "",    "\\u00e9", "A"};
  switch (depth <= 0 ? pick(3) : pick(5)) {
    case 0:
      return std::to_string(pick(1000) - 500);
    case 1:
      return "\"s" + std::to_string(pick(50)) + "\"";
    case 2:
      return pick(2) ? "true" : "null";
    case 3: {
      std::string out = "[";
      for (int i = 0, n = pick(4); i < n; ++i)
        out += (i ? "," : "") + randomDocument(rng, depth - 1);
      return out + "]";
    }
    default: {
      std::string out = "{";
      for (int i = 0, n = pick(8); i < n; ++i) {
        out += (i ? ",\"" : "\"") + std::string(kKeys[pick(12)]) +
               "\":" + randomDocument(rng, depth - 1);
      }
      return out + "}";
    }
  }
}

TEST(FlatObject, ParsesDumpsComparesAndPatchesExactlyAsStdMapJson) {
  std::mt19937 rng(20261127);
  for (int i = 0; i < 2000; ++i) {
    const std::string a = randomDocument(rng, 4);
    const std::string b = randomDocument(rng, 4);
    SCOPED_TRACE(a + "  vs  " + b);
    const json fa = json::parse(a), fb = json::parse(b);
    const MapJson ma = MapJson::parse(a), mb = MapJson::parse(b);
    ASSERT_EQ(fa.dump(), ma.dump());
    EXPECT_EQ(fa == fb, ma == mb);
    EXPECT_EQ(fa < fb, ma < mb);
    EXPECT_EQ(fa == json::parse(fa.dump()), true);
    json merged = fa;
    merged.merge_patch(fb);
    MapJson mapMerged = ma;
    mapMerged.merge_patch(mb);
    EXPECT_EQ(merged.dump(), mapMerged.dump());
    EXPECT_EQ(json::diff(fa, fb).dump(), MapJson::diff(ma, mb).dump());
    EXPECT_EQ(fa.patch(json::diff(fa, fb)), fb);
    json trimmed = json::parse(a);
    shrinkToFit(trimmed);
    EXPECT_EQ(trimmed, fa);
    EXPECT_EQ(trimmed.dump(), fa.dump());
  }
}

TEST(JsonCompactTest, ShrinkToFitLeavesContainersNoSpareRoom) {
  json doc = json::parse(R"({"b": [1, 2, 3], "a": {"x": [{"y": 1}, {"z": [true, null]}]}})");
  json nested = json::array();
  for (int i = 0; i < 5; ++i) nested.push_back(i);  // grown by doubling: room for 8
  doc["c"] = nested;
  const json before = doc;
  shrinkToFit(doc);
  EXPECT_EQ(doc, before);
  EXPECT_EQ(doc["c"].get_ref<json::array_t&>().capacity(), 5u);
  EXPECT_EQ(doc["b"].get_ref<json::array_t&>().capacity(), 3u);
}

}  // namespace
}  // namespace minik8s
