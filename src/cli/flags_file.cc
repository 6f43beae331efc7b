#include "cli/flags_file.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/file_util.h"
#include "common/yaml_json.h"

namespace minik8s::cli {
namespace {

// A YAML scalar as the command line would spell it.
Result<std::string> scalarText(const json& v, const std::string& where) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return std::string(v.get<bool>() ? "true" : "false");
  if (v.is_number()) return v.dump();
  return Status::BadRequest(where + ": expected a string, number or boolean");
}

}  // namespace

Status applyFlagsFile(CLI::App& cmd, const std::string& path,
                      const std::set<std::string>& otherKeys) {
  auto text = readFile(path);
  if (!text.ok()) return Status::BadRequest("config file: " + text.status().message());
  auto docs = parseYamlDocuments(*text);
  if (!docs.ok()) return Status::BadRequest(path + ": " + docs.status().message());
  if (docs->size() > 1) return Status::BadRequest(path + ": expected one YAML document");
  if (docs->empty() || docs->front().is_null()) return Status::Ok();  // nothing to set
  const json& doc = docs->front();
  if (!doc.is_object()) return Status::BadRequest(path + ": expected a mapping of flag names");
  for (const auto& [key, value] : doc.items()) {
    if (otherKeys.count(key)) continue;
    const std::string where = path + ": " + key;
    CLI::Option* opt = nullptr;
    if (key != "config" && key != "help" && !key.empty() && key[0] != '-') {
      try {
        opt = cmd.get_option("--" + key);
      } catch (const CLI::OptionNotFound&) {
      }
    }
    if (opt == nullptr)
      return Status::BadRequest(where + ": unknown flag --" + key + " of `minik8s " +
                                cmd.get_name() + "`");
    if (opt->count() > 0 || value.is_null()) continue;  // the command line wins
    std::vector<std::string> inputs;
    if (value.is_array()) {
      for (const auto& item : value) {
        auto s = scalarText(item, where);
        if (!s.ok()) return s.status();
        inputs.push_back(*s);
      }
    } else {
      auto s = scalarText(value, where);
      if (!s.ok()) return s.status();
      inputs.push_back(*s);
    }
    try {
      opt->add_result(inputs);
      opt->run_callback();
    } catch (const CLI::Error& e) {
      return Status::BadRequest(where + ": " + e.what());
    }
  }
  return Status::Ok();
}

void applyFlagsFileOrExit(CLI::App& cmd, const std::string& path,
                          const std::set<std::string>& otherKeys) {
  if (path.empty()) return;
  if (Status s = applyFlagsFile(cmd, path, otherKeys); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    std::exit(1);
  }
}

}  // namespace minik8s::cli
