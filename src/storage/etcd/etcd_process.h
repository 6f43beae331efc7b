// EtcdProcess: a throwaway single-member etcd server on 127.0.0.1 for tests and benchmarks.
//
// start() picks free random ports, creates a temporary data directory, launches the etcd binary
// and waits until it answers a gRPC Range. The destructor kills the process by its PID and
// removes the directory; the child also gets SIGKILL if this process dies first. Not meant for
// production (no TLS, no peers). Not thread-safe; one owner.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "common/status.h"

namespace minik8s::storage::etcd {

class EtcdProcess {
 public:
  // Fails (never skips) with a clear message when `binary` is missing or etcd does not come up.
  static Result<std::unique_ptr<EtcdProcess>> start(const std::string& binary = "/usr/bin/etcd");
  EtcdProcess(const EtcdProcess&) = delete;
  EtcdProcess& operator=(const EtcdProcess&) = delete;
  ~EtcdProcess();

  const std::string& endpoint() const { return endpoint_; }  // "127.0.0.1:PORT"
  pid_t pid() const { return pid_; }

 private:
  EtcdProcess() = default;
  void stop();

  pid_t pid_ = -1;
  std::string dir_;  // temp dir holding data/ and etcd.log
  std::string endpoint_;
};

}  // namespace minik8s::storage::etcd
