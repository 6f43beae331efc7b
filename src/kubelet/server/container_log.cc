#include "kubelet/server/container_log.h"

#include <fstream>
#include <thread>
#include <vector>

namespace minik8s::kubelet::server {

namespace {

Result<std::optional<int64_t>> intParam(const http::Request& req, const std::string& name) {
  auto v = req.param(name);
  if (!v || v->empty()) return std::optional<int64_t>();
  try {
    size_t used = 0;
    int64_t n = std::stoll(*v, &used);
    if (used != v->size() || n < 0) throw std::invalid_argument(name);
    return std::optional<int64_t>(n);
  } catch (const std::exception&) {
    return Status::BadRequest("invalid " + name + " \"" + *v +
                              "\": must be a non-negative integer");
  }
}

bool boolParam(const http::Request& req, const std::string& name) {
  auto v = req.param(name);
  return v && (*v == "true" || *v == "1" || *v == "True");
}

// Turns records into output text, keeping the state needed across follow reads.
class LogPrinter {
 public:
  LogPrinter(const LogOptions& opts, const LogSink& sink) : opts_(opts), sink_(sink) {}

  // False once the sink refused or limitBytes was reached.
  bool print(const CriLogRecord& r) {
    if (opts_.since && !partialOpen_) {
      auto t = parseRfc3339(std::string(r.time));
      if (t && *t < *opts_.since) return true;
    }
    std::string out;
    if (opts_.timestamps && !partialOpen_) {
      out.append(r.time);
      out.push_back(' ');
    }
    out.append(r.text);
    if (!r.partial) out.push_back('\n');
    partialOpen_ = r.partial;
    return emit(out);
  }

  bool stopped() const { return stopped_; }

 private:
  bool emit(std::string_view s) {
    if (stopped_) return false;
    if (opts_.limitBytes) {
      int64_t left = *opts_.limitBytes - written_;
      if (static_cast<int64_t>(s.size()) >= left) {
        s = s.substr(0, static_cast<size_t>(left));
        stopped_ = true;
      }
    }
    written_ += static_cast<int64_t>(s.size());
    if (!s.empty() && !sink_(s)) stopped_ = true;
    return !stopped_;
  }

  const LogOptions& opts_;
  const LogSink& sink_;
  int64_t written_ = 0;
  bool partialOpen_ = false;
  bool stopped_ = false;
};

// Index of the first record to print so that `n` complete lines (and any trailing fragment)
// remain.
size_t tailStart(const std::vector<CriLogRecord>& records, int64_t n) {
  if (n == 0) return records.size();
  int64_t complete = 0;
  for (size_t i = records.size(); i > 0; --i) {
    if (!records[i - 1].partial) {
      if (complete == n) return i;
      ++complete;
    }
  }
  return 0;
}

}  // namespace

Result<LogOptions> parseLogOptions(const http::Request& req, Clock::time_point now) {
  LogOptions o;
  o.follow = boolParam(req, "follow");
  o.previous = boolParam(req, "previous");
  o.timestamps = boolParam(req, "timestamps");
  auto tail = intParam(req, "tailLines");
  if (!tail.ok()) return tail.status();
  o.tailLines = *tail;
  auto limit = intParam(req, "limitBytes");
  if (!limit.ok()) return limit.status();
  o.limitBytes = *limit;
  if (o.limitBytes && *o.limitBytes == 0) {
    return Status::BadRequest("invalid limitBytes \"0\": must be greater than 0");
  }
  auto since = intParam(req, "sinceSeconds");
  if (!since.ok()) return since.status();
  if (*since) o.since = now - std::chrono::seconds(**since);
  if (auto t = req.param("sinceTime"); t && !t->empty()) {
    if (o.since) return Status::BadRequest("at most one of sinceSeconds or sinceTime may be given");
    auto parsed = parseRfc3339(*t);
    if (!parsed) return Status::BadRequest("invalid sinceTime \"" + *t + "\": must be RFC 3339");
    o.since = *parsed;
  }
  return o;
}

std::optional<CriLogRecord> parseCriLogLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  CriLogRecord r;
  size_t s1 = line.find(' ');
  if (s1 == std::string_view::npos || s1 == 0) return std::nullopt;
  r.time = line.substr(0, s1);
  size_t s2 = line.find(' ', s1 + 1);
  if (s2 == std::string_view::npos) return std::nullopt;
  r.stream = line.substr(s1 + 1, s2 - s1 - 1);
  if (r.stream != "stdout" && r.stream != "stderr") return std::nullopt;
  std::string_view rest = line.substr(s2 + 1);
  // The tag field may carry several ':'-separated tags; the first is F or P.
  size_t s3 = rest.find(' ');
  std::string_view tag = rest.substr(0, s3);
  std::string_view first = tag.substr(0, tag.find(':'));
  if (first == "P") {
    r.partial = true;
  } else if (first != "F") {
    return std::nullopt;
  }
  r.text = s3 == std::string_view::npos ? std::string_view() : rest.substr(s3 + 1);
  return r;
}

Status streamContainerLog(const std::string& path, const LogOptions& opts, const LogSink& sink,
                          const KeepFollowing& keepFollowing,
                          std::chrono::milliseconds pollInterval) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFoundMessage("log file " + path + " does not exist");
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t complete = content.rfind('\n');
  complete = complete == std::string::npos ? 0 : complete + 1;

  std::vector<CriLogRecord> records;
  for (size_t pos = 0; pos < complete;) {
    size_t nl = content.find('\n', pos);
    if (auto r = parseCriLogLine(std::string_view(content).substr(pos, nl - pos))) {
      records.push_back(*r);
    }
    pos = nl + 1;
  }
  size_t start = opts.tailLines ? tailStart(records, *opts.tailLines) : 0;
  LogPrinter printer(opts, sink);
  for (size_t i = start; i < records.size(); ++i) {
    if (!printer.print(records[i])) return Status::Ok();
  }
  if (!opts.follow) return Status::Ok();

  // Follow: read what is appended after the last complete line.
  std::string pending = content.substr(complete);
  int64_t offset = static_cast<int64_t>(content.size());
  content.clear();
  records.clear();
  for (;;) {
    std::ifstream f(path, std::ios::binary);
    std::string fresh;
    if (f) {
      f.seekg(0, std::ios::end);
      int64_t size = f.tellg();
      if (size < offset) {  // truncated or replaced: start over at its beginning
        offset = 0;
        pending.clear();
      }
      if (size > offset) {
        f.seekg(offset);
        fresh.resize(static_cast<size_t>(size - offset));
        f.read(fresh.data(), static_cast<std::streamsize>(fresh.size()));
        fresh.resize(static_cast<size_t>(f.gcount()));
        offset += static_cast<int64_t>(fresh.size());
      }
    }
    if (fresh.empty()) {
      if (!keepFollowing()) return Status::Ok();
      std::this_thread::sleep_for(pollInterval);
      continue;
    }
    pending += fresh;
    size_t pos = 0;
    for (size_t nl; (nl = pending.find('\n', pos)) != std::string::npos; pos = nl + 1) {
      if (auto r = parseCriLogLine(std::string_view(pending).substr(pos, nl - pos))) {
        if (!printer.print(*r)) return Status::Ok();
      }
    }
    pending.erase(0, pos);
  }
}

}  // namespace minik8s::kubelet::server
