// Structural schemas of CRDs: validation messages as kube-apiserver words them, pruning, defaults
// and the structural rules a CRD's schema must follow.
#include <gtest/gtest.h>

#include "api/json_schema.h"

namespace minik8s::api::jsonschema {
namespace {

const json kSchema = json::parse(R"({
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "required": ["image"],
      "properties": {
        "cronSpec": {"type": "string", "pattern": "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$"},
        "image": {"type": "string", "minLength": 1, "maxLength": 10},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
        "mode": {"type": "string", "enum": ["fast", "slow"], "default": "slow"},
        "port": {"x-kubernetes-int-or-string": true},
        "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "workers": {"type": "array", "items": {"type": "object", "properties": {
          "name": {"type": "string"}, "size": {"type": "integer", "default": 3}}}}
      }
    },
    "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}
  }
})");

std::vector<std::string> messages(const std::vector<Cause>& causes) {
  std::vector<std::string> out;
  for (const auto& c : causes) out.push_back(c.field + ": " + c.message);
  return out;
}

TEST(JsonSchemaTest, ValidObjectHasNoCauses) {
  json obj = {{"apiVersion", "x/v1"},
              {"kind", "X"},
              {"metadata", {{"name", "a"}}},
              {"spec", {{"image", "img"}, {"cronSpec", "*/5 * * * *"}, {"port", "http"}}}};
  EXPECT_TRUE(validate(obj, kSchema, "").empty());
  obj["spec"]["port"] = 8080;
  EXPECT_TRUE(validate(obj, kSchema, "").empty());
}

TEST(JsonSchemaTest, MessagesMatchKubernetes) {
  json obj = {{"spec",
               {{"image", ""},
                {"cronSpec", "not a cron"},
                {"replicas", 20},
                {"mode", "medium"},
                {"tags", {"a", "a", "b"}}}}};
  auto got = messages(validate(obj, kSchema, ""));
  std::vector<std::string> want = {
      "spec.cronSpec: Invalid value: \"not a cron\": spec.cronSpec in body should match "
      "'^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'",
      "spec.image: Invalid value: \"\": spec.image in body should be at least 1 chars long",
      "spec.mode: Unsupported value: \"medium\": supported values: \"fast\", \"slow\"",
      "spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10",
      "spec.tags: Too many: 3: must have at most 2 items",
      "spec.tags[1]: Duplicate value: \"a\""};
  EXPECT_EQ(got, want);
}

TEST(JsonSchemaTest, TypeErrorsAndRequired) {
  json obj = {{"spec", {{"replicas", "three"}, {"port", true}, {"labels", {{"a", 1}}}}}};
  auto got = messages(validate(obj, kSchema, ""));
  std::vector<std::string> want = {
      "spec.image: Required value",
      "spec.labels[a]: Invalid value: \"integer\": spec.labels[a] in body must be of type string: "
      "\"integer\"",
      "spec.port: Invalid value: \"boolean\": spec.port in body must be of type "
      "integer-or-string: \"boolean\"",
      "spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: "
      "\"string\""};
  EXPECT_EQ(got, want);
  EXPECT_EQ(validate(obj, kSchema, "")[1].reason, "FieldValueTypeInvalid");
}

TEST(JsonSchemaTest, PruneDropsUndeclaredFieldsAndReportsThem) {
  json obj = {{"apiVersion", "x/v1"},
              {"kind", "X"},
              {"metadata", {{"name", "a"}, {"bogus", 1}}},
              {"spec",
               {{"image", "i"},
                {"colour", "blue"},
                {"free", {{"anything", {{"goes", 1}}}}},
                {"labels", {{"k", "v"}}},
                {"workers", {{{"name", "w"}, {"extra", 1}}}}}},
              {"top", 1}};
  std::vector<std::string> pruned;
  prune(obj, kSchema, /*isRoot=*/true, &pruned);
  EXPECT_EQ(pruned, (std::vector<std::string>{"metadata.bogus", "spec.colour",
                                              "spec.workers[0].extra", "top"}));
  EXPECT_FALSE(obj.contains("top"));
  EXPECT_FALSE(obj["spec"].contains("colour"));
  EXPECT_EQ(obj["spec"]["free"]["anything"]["goes"], 1);
  EXPECT_EQ(obj["spec"]["labels"]["k"], "v");
  EXPECT_EQ(obj["metadata"], json({{"name", "a"}}));
}

TEST(JsonSchemaTest, DefaultsFillAbsentAndNullFields) {
  json obj = {{"spec", {{"image", "i"}, {"mode", nullptr}, {"workers", {{{"name", "w"}}}}}}};
  applyDefaults(obj, kSchema);
  EXPECT_EQ(obj["spec"]["replicas"], 1);
  EXPECT_EQ(obj["spec"]["mode"], "slow");
  EXPECT_EQ(obj["spec"]["workers"][0]["size"], 3);
  json explicitValue = {{"spec", {{"replicas", 5}}}};
  applyDefaults(explicitValue, kSchema);
  EXPECT_EQ(explicitValue["spec"]["replicas"], 5);
}

TEST(JsonSchemaTest, CombinatorsAreValueValidations) {
  json s = json::parse(R"({"type": "object", "properties": {"size": {"type": "integer",
    "anyOf": [{"minimum": 10}, {"maximum": 2}], "not": {"enum": [100]}}}})");
  EXPECT_TRUE(validate({{"size", 1}}, s, "").empty());
  EXPECT_TRUE(validate({{"size", 11}}, s, "").empty());
  EXPECT_EQ(messages(validate({{"size", 5}}, s, "")),
            (std::vector<std::string>{
                "size: Invalid value: 5: size in body should match at least one schema in anyOf"}));
  EXPECT_EQ(validate({{"size", 100}}, s, "").size(), 1u);
}

TEST(JsonSchemaTest, StructuralRules) {
  EXPECT_TRUE(checkStructural(kSchema, "s").empty());
  json bad = json::parse(R"({"type": "string", "properties": {
    "a": {"description": "no type"},
    "b": {"type": "array"},
    "c": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": {"type": "string"}},
    "d": {"$ref": "#/definitions/x", "type": "object"},
    "e": {"type": "map"},
    "f": {"type": "string", "pattern": "("}}})");
  auto got = messages(checkStructural(bad, "s"));
  std::vector<std::string> want = {
      "s.type: Invalid value: \"string\": must be object at the root",
      "s.properties[a].type: Required value: must not be empty for specified object fields",
      "s.properties[b].items: Required value: must be specified for array fields",
      "s.properties[c].additionalProperties: Forbidden: additionalProperties and properties are "
      "mutual exclusive",
      "s.properties[d].$ref: Forbidden: $ref is not supported",
      "s.properties[e].type: Unsupported value: \"map\": supported values: \"array\", \"boolean\", "
      "\"integer\", \"number\", \"object\", \"string\"",
      "s.properties[f].pattern: Invalid value: \"(\": must be a valid regular expression"};
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace minik8s::api::jsonschema
