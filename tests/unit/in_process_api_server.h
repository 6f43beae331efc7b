// A real API server for unit tests of its clients (informers, scheduler, controllers): SQLite in
// a private temp dir, served on a free loopback port, torn down (and the dir removed) by stop().
#pragma once

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "api/scheme.h"
#include "apiserver/api_server.h"
#include "common/http.h"
#include "storage/store.h"

namespace minik8s::testing {

class InProcessApiServer {
 public:
  ~InProcessApiServer() { stop(); }

  Status start() {
    static int counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("minik8s-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(dir_);
    auto s = storage::openStore("sqlite://" + dir_ + "/state.db");
    if (!s.ok()) return s.status();
    store_ = std::move(s.value());
    api_ = std::make_unique<apiserver::ApiServer>(*store_, api::Scheme::builtin());
    if (Status st = api_->start(); !st.ok()) return st;
    server_ = std::make_unique<http::Server>(
        [this](const http::Request& req, http::ResponseWriter& w) { api_->handle(req, w); });
    return server_->start("127.0.0.1:0");
  }

  void stop() {
    if (server_) server_->stop();
    if (api_) api_->stop();
    server_.reset();
    api_.reset();
    store_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
    dir_.clear();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }
  // The server itself, e.g. to register a subresource before the first request.
  apiserver::ApiServer& api() { return *api_; }

 private:
  std::string dir_;
  std::unique_ptr<storage::Store> store_;
  std::unique_ptr<apiserver::ApiServer> api_;
  std::unique_ptr<http::Server> server_;
};

}  // namespace minik8s::testing
