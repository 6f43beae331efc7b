#include "slurm/slurm_cli.h"

#include "common/command.h"
#include "common/strings.h"

namespace minik8s::slurm {

namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  size_t start = s.find_first_not_of(" \n");
  return start == std::string::npos ? std::string() : s.substr(start);
}

}  // namespace

Status slurmError(const std::string& command, const std::string& output) {
  std::string text = trimmed(output);
  // The commands repeat their name and "error:" on each line; keep the lines that say something.
  std::string message;
  for (auto& line : splitNonEmpty(text, '\n')) {
    if (!message.empty()) message += "; ";
    message += line;
  }
  if (message.empty()) message = command + " failed";
  const bool unreachable =
      message.find("Unable to contact slurm controller") != std::string::npos ||
      message.find("Connection refused") != std::string::npos ||
      message.find("Munge encode failed") != std::string::npos ||
      message.find("Socket timed out") != std::string::npos;
  return unreachable ? Status::Unavailable(message) : Status::BadRequest(message);
}

Result<std::string> CommandSlurmCli::submit(const std::string& scriptPath) {
  auto r = runProgram({"sbatch", "--parsable", scriptPath});
  if (!r.ok()) return r.status();
  if (r->exitCode != 0) return slurmError("sbatch", r->output);
  // --parsable prints "ID" or "ID;CLUSTER", possibly after warnings on earlier lines.
  auto lines = splitNonEmpty(trimmed(r->output), '\n');
  if (lines.empty()) return Status::Internal("sbatch printed no job id");
  std::string id = lines.back().substr(0, lines.back().find(';'));
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
    return Status::Internal("sbatch printed no job id: " + trimmed(r->output));
  }
  return id;
}

Result<SlurmJobInfo> CommandSlurmCli::show(const std::string& jobId) {
  auto r = runProgram({"scontrol", "show", "job", "-o", jobId});
  if (!r.ok()) return r.status();
  if (r->exitCode != 0) {
    if (r->output.find("Invalid job id") != std::string::npos) {
      return Status::NotFoundMessage("Slurm job " + jobId + " is not known to slurmctld");
    }
    return slurmError("scontrol", r->output);
  }
  for (const auto& line : splitNonEmpty(r->output, '\n')) {
    auto info = parseScontrolJobLine(line);
    if (info && info->id == jobId) return *info;
  }
  return Status::NotFoundMessage("Slurm job " + jobId + " is not known to slurmctld");
}

Result<std::optional<std::string>> CommandSlurmCli::findByComment(const std::string& comment) {
  auto r = runProgram({"squeue", "--noheader", "--states=all", "--format=%i|%k"});
  if (!r.ok()) return r.status();
  if (r->exitCode != 0) return slurmError("squeue", r->output);
  for (const auto& line : splitNonEmpty(r->output, '\n')) {
    auto bar = line.find('|');
    if (bar == std::string::npos) continue;
    if (trimmed(line.substr(bar + 1)) == comment) {
      return std::optional<std::string>(trimmed(line.substr(0, bar)));
    }
  }
  return std::optional<std::string>();
}

Status CommandSlurmCli::cancel(const std::string& jobId) {
  auto r = runProgram({"scancel", jobId});
  if (!r.ok()) return r.status();
  if (r->exitCode != 0 && r->output.find("already completing or completed") == std::string::npos &&
      r->output.find("Invalid job id") == std::string::npos) {
    return slurmError("scancel", r->output);
  }
  return {};
}

}  // namespace minik8s::slurm
