// A real API server for unit tests of its clients (informers, scheduler, controllers) and of its
// authentication and authorization: SQLite in a private temp dir, served on a free loopback port,
// torn down (and the dir removed) by stop().
#pragma once

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "api/scheme.h"
#include "apiserver/api_server.h"
#include "apiserver/auth/bootstrap_policy.h"
#include "apiserver/registry.h"
#include "common/http.h"
#include "storage/store.h"

namespace minik8s::testing {

class InProcessApiServer {
 public:
  // Fills in the server's options before it starts, given a registry over its store (the
  // authorizers and admission plugins of a server set up as `minik8s server` does read through
  // one of their own).
  using Configure =
      std::function<void(apiserver::Registry& registry, apiserver::ApiServerOptions& options)>;

  ~InProcessApiServer() { stop(); }

  // `bootstrapPolicy`: the RBAC roles and bindings `minik8s server` writes at start.
  Status start(const Configure& configure = nullptr, bool bootstrapPolicy = false) {
    static int counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("minik8s-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(dir_);
    auto s = storage::openStore("sqlite://" + dir_.string() + "/state.db");
    if (!s.ok()) return s.status();
    store_ = std::move(s.value());
    const auto& scheme = api::Scheme::builtin();
    registry_ = std::make_unique<apiserver::Registry>(*store_, scheme);
    apiserver::ApiServerOptions options;
    if (configure) configure(*registry_, options);
    api_ = std::make_unique<apiserver::ApiServer>(*store_, scheme, options);
    if (Status st = api_->start(); !st.ok()) return st;
    if (bootstrapPolicy) {
      if (Status st = apiserver::auth::ensureBootstrapPolicy(api_->registry()); !st.ok()) return st;
    }
    server_ = std::make_unique<http::Server>(handler());
    return server_->start("127.0.0.1:0");
  }

  void stop() {
    if (server_) server_->stop();
    if (api_) api_->stop();
    server_.reset();
    api_.reset();
    registry_.reset();
    store_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
    dir_.clear();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }
  // The server itself, e.g. to register a subresource before the first request.
  apiserver::ApiServer& api() { return *api_; }
  // Its handler, to serve it another way too (over TLS, in-process).
  http::Handler handler() {
    return [this](const http::Request& req, http::ResponseWriter& w) { api_->handle(req, w); };
  }
  // Its private directory (removed by stop()).
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<storage::Store> store_;
  std::unique_ptr<apiserver::Registry> registry_;
  std::unique_ptr<apiserver::ApiServer> api_;
  std::unique_ptr<http::Server> server_;
};

}  // namespace minik8s::testing
