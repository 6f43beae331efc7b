#include "proxy/iptables.h"

#include <chrono>
#include <thread>

#include "common/command.h"
#include "common/logging.h"
#include "fmt/format.h"

namespace minik8s::proxy {

namespace {

std::string firstLine(const std::string& s) {
  auto end = s.find('\n');
  return s.substr(0, end);
}

std::vector<std::string> ruleCommand(const std::string& iptables, const std::string& op,
                                     const std::string& table, const std::string& chain,
                                     const std::vector<std::string>& rule) {
  std::vector<std::string> argv{iptables, "-w", "5", "-t", table, op, chain};
  argv.insert(argv.end(), rule.begin(), rule.end());
  return argv;
}

}  // namespace

Status ensureJumps(Iptables& iptables, const std::vector<JumpRule>& jumps) {
  for (const JumpRule& j : jumps) {
    if (Status s = iptables.ensureRule(j.table, j.chain, j.rule); !s.ok()) return s;
  }
  return Status::Ok();
}

Status removeJumpsAndChains(Iptables& iptables, const std::vector<JumpRule>& jumps,
                            const std::function<Result<std::string>()>& deleteChains,
                            std::string_view who) {
  Status last = Status::Ok();
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(200 * attempt));
    for (const JumpRule& j : jumps) {
      if (Status s = iptables.deleteRule(j.table, j.chain, j.rule); !s.ok()) return s;
    }
    auto text = deleteChains();
    if (!text.ok()) return text.status();
    if (text->empty()) return Status::Ok();
    last = iptables.restore(*text);
    if (last.ok()) return last;
    LOG_WARN("{} cleanup: {} (try {})", who, last.message(), attempt + 1);
  }
  return last;
}

std::optional<std::set<std::string>> recoverAfterFailedRestore(
    Iptables& iptables, const std::vector<JumpRule>& jumps, const std::string& table,
    const std::function<std::set<std::string>(const std::string&)>& ownChains,
    std::string_view who) {
  if (Status j = ensureJumps(iptables, jumps); !j.ok()) LOG_ERROR("{}: {}", who, j.message());
  auto saved = iptables.save(table);
  if (!saved.ok()) {
    LOG_ERROR("{}: {}", who, saved.status().message());
    return std::nullopt;
  }
  return ownChains(*saved);
}

Status ExecIptables::restore(const std::string& rules) {
  auto r = runChecked({paths_.iptablesRestore, "-w", "5", "--noflush"}, rules);
  return r.ok() ? Status::Ok() : r.status();
}

Result<std::string> ExecIptables::save(const std::string& table) {
  return runChecked({paths_.iptablesSave, "-t", table});
}

Status ExecIptables::ensureRule(const std::string& table, const std::string& chain,
                                const std::vector<std::string>& rule) {
  auto check = runProgram(ruleCommand(paths_.iptables, "-C", table, chain, rule));
  if (!check.ok()) return check.status();
  if (check->exitCode == 0) return Status::Ok();
  auto insert = runProgram(ruleCommand(paths_.iptables, "-I", table, chain, rule));
  if (!insert.ok()) return insert.status();
  if (insert->exitCode != 0) {
    return Status::Internal(
        fmt::format("iptables -t {} -I {} failed: {}", table, chain, firstLine(insert->output)));
  }
  return Status::Ok();
}

Status ExecIptables::deleteRule(const std::string& table, const std::string& chain,
                                const std::vector<std::string>& rule) {
  // -D removes one copy per call; stop at the first failure (no copy left, or no such chain).
  for (int i = 0; i < 100; ++i) {
    auto del = runProgram(ruleCommand(paths_.iptables, "-D", table, chain, rule));
    if (!del.ok()) return del.status();
    if (del->exitCode != 0) return Status::Ok();
  }
  return Status::Internal(
      fmt::format("iptables -t {} -D {}: rule keeps coming back", table, chain));
}

}  // namespace minik8s::proxy
