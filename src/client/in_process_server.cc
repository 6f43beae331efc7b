#include "client/in_process_server.h"

#include <chrono>
#include <exception>
#include <thread>

#include "common/logging.h"
#include "common/strings.h"

namespace minik8s::client {

namespace {

// Captures a handler's answer. With onData, the chunks of a successful stream go to it as they
// are written (a watch); otherwise they are assembled into the body (a large LIST is streamed).
// Used from the handler's thread only, as every ResponseWriter.
class InProcessWriter : public http::ResponseWriter {
 public:
  InProcessWriter(const std::atomic<bool>& stopped,
                  const std::function<bool(std::string_view)>* onData,
                  const std::function<bool()>* gone)
      : stopped_(stopped), onData_(onData), gone_(gone) {}

  void send(http::Response r) override {
    if (answered()) return;
    done_ = true;
    response_ = std::move(r);
    // As an HTTP client reading a stream gets the body of a plain answer through its callback.
    if (onData_ && response_.status < 300 && !response_.body.empty()) {
      if (!(*onData_)(response_.body)) left_ = true;
      response_.body.clear();
    }
  }

  bool beginStream(int status, std::vector<std::pair<std::string, std::string>> headers) override {
    if (answered()) return false;
    streaming_ = true;
    response_.status = status;
    response_.headers = std::move(headers);
    return !clientGone();
  }

  bool write(std::string_view chunk) override {
    if (!streaming_ || done_ || clientGone()) return false;
    if (onData_ && response_.status < 300) {
      if (!(*onData_)(chunk)) {
        left_ = true;
        return false;
      }
      return true;
    }
    response_.body.append(chunk);
    return true;
  }

  void end() override { done_ = true; }

  bool clientGone() override {
    if (!left_ && (stopped_.load() || (gone_ && *gone_ && (*gone_)()))) left_ = true;
    return left_;
  }

  bool answered() const { return done_ || streaming_; }
  http::Response take() { return std::move(response_); }

 private:
  const std::atomic<bool>& stopped_;
  const std::function<bool(std::string_view)>* onData_;
  const std::function<bool()>* gone_;
  http::Response response_;
  bool streaming_ = false;
  bool done_ = false;
  bool left_ = false;  // the client went away (cancelled, stopped, onData said stop)
};

// How long a stream asked after stopStreams() waits for its caller to give it up.
constexpr std::chrono::seconds kStoppedStreamWait{10};

Status stoppingStatus() { return Status::Unavailable("the in-process API server is stopping"); }

}  // namespace

void InProcessServer::setHandler(http::Handler handler) {
  std::lock_guard lock(mu_);
  handler_ = std::make_shared<const http::Handler>(std::move(handler));
}

void InProcessServer::stopStreams() { streamsStopped_ = true; }

void InProcessServer::stop() {
  streamsStopped_ = true;
  stopped_ = true;
  std::lock_guard lock(mu_);
  handler_.reset();
}

std::shared_ptr<const http::Handler> InProcessServer::handler() const {
  if (stopped_.load()) return nullptr;
  std::lock_guard lock(mu_);
  return handler_;
}

http::Request InProcessServer::makeRequest(const std::optional<http::PeerCertificate>& identity,
                                           const std::string& method, const std::string& target,
                                           const std::string& body, const Headers& headers) const {
  // As http::Server builds a request from what it read.
  http::Request req;
  req.method = method;
  req.target = target;
  std::string_view t = req.target;
  size_t q = t.find('?');
  req.path = http::percentDecode(t.substr(0, q), false);
  if (q != std::string_view::npos) req.query = http::parseQuery(t.substr(q + 1));
  req.headers["User-Agent"] = "minik8s";
  for (const auto& [k, v] : headers) req.headers[k] = v;
  if (!body.empty() && !req.headers.count("Content-Type")) {
    req.headers["Content-Type"] = "application/json";
  }
  req.headers["Content-Length"] = std::to_string(body.size());
  req.body = body;
  req.remoteAddress = "in-process";
  req.tls = identity.has_value();
  req.clientCertificate = identity;
  return req;
}

namespace {
// Runs the handler as http::Server does: a throwing or silent handler answers 500.
void runHandler(const http::Handler& handler, const http::Request& req, InProcessWriter& w) {
  try {
    handler(req, w);
  } catch (const std::exception& e) {
    LOG_ERROR("handler for {} {} (in-process) threw: {}", req.method, req.target, e.what());
    if (!w.answered()) w.send(http::Response::error(Status::Internal(e.what())));
  }
  if (!w.answered()) w.send(http::Response::error(Status::Internal("no response")));
}
}  // namespace

bool InProcessServer::servesInProcess(std::string_view target) {
  const std::vector<std::string> segments = splitNonEmpty(target.substr(0, target.find('?')), '/');
  // /api/v1/... or /apis/GROUP/VERSION/..., then namespaces/NS/ when namespaced, then
  // RESOURCE/NAME/SUBRESOURCE.
  size_t at;
  if (!segments.empty() && segments[0] == "api") {
    at = 2;
  } else if (!segments.empty() && segments[0] == "apis") {
    at = 3;
  } else {
    return true;
  }
  if (segments.size() > at + 2 && segments[at] == "namespaces") at += 2;
  if (segments.size() <= at + 2) return true;
  const std::string& resource = segments[at];
  const std::string& subresource = segments[at + 2];
  if (subresource == "proxy") return false;
  return !(resource == "pods" && (subresource == "log" || subresource == "exec" ||
                                  subresource == "attach" || subresource == "portforward"));
}

Result<http::Response> InProcessServer::request(
    const std::optional<http::PeerCertificate>& identity, const std::string& method,
    const std::string& target, const std::string& body, const Headers& headers) const {
  auto h = handler();
  if (!h) return stopped_.load() ? stoppingStatus() : Status::Unavailable("no API server yet");
  const http::Request req = makeRequest(identity, method, target, body, headers);
  InProcessWriter w(stopped_, nullptr, nullptr);
  runHandler(*h, req, w);
  return w.take();
}

Result<http::Response> InProcessServer::stream(const std::optional<http::PeerCertificate>& identity,
                                               const std::string& method, const std::string& target,
                                               const Headers& headers,
                                               const std::function<bool(std::string_view)>& onData,
                                               const std::function<bool()>& gone) const {
  if (streamsStopped_.load()) {
    // As a server that stopped answering: the caller, an informer, is stopped soon (the process
    // is shutting down). Failing at once would send it into a back-off sleep its stop waits out.
    const auto deadline = std::chrono::steady_clock::now() + kStoppedStreamWait;
    while (gone && !gone() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return stoppingStatus();
  }
  auto h = handler();
  if (!h) return stopped_.load() ? stoppingStatus() : Status::Unavailable("no API server yet");
  const http::Request req = makeRequest(identity, method, target, "", headers);
  InProcessWriter w(streamsStopped_, &onData, &gone);
  runHandler(*h, req, w);
  // Ended by the server's shutdown: as a connection the server closed (the caller backs off).
  if (streamsStopped_.load()) return stoppingStatus();
  return w.take();
}

}  // namespace minik8s::client
