// Request metrics of the API server, with kube-apiserver's names and labels:
//
//   apiserver_request_total{verb,group,version,resource,subresource,scope,component,code}
//   apiserver_request_duration_seconds{verb,group,version,resource,subresource,scope,component}
//   apiserver_current_inflight_requests{request_kind}     readOnly / mutating, long-running
//   excluded
//   apiserver_longrunning_requests{verb,group,version,resource,subresource,scope,component}
//                                                         watches, log, exec, attach, portforward
//
// verb is Kubernetes' reported verb (GET, LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE; the
// HTTP method for non-resource URLs), scope is resource / namespace / cluster ("" for
// non-resource URLs). RequestMetricsWriter wraps the ResponseWriter of one request: it notes
// the status code as it passes and records everything when the request ends (its destructor).
// They go to metrics::defaultRegistry(), which GET /metrics serves.
#pragma once

#include <chrono>
#include <memory>

#include "apiserver/request_info.h"
#include "common/http.h"
#include "common/metrics.h"

namespace minik8s::apiserver {

class RequestMetricsWriter : public http::ResponseWriter {
 public:
  RequestMetricsWriter(const http::Request& req, http::ResponseWriter& inner);
  ~RequestMetricsWriter() override;
  RequestMetricsWriter(const RequestMetricsWriter&) = delete;
  RequestMetricsWriter& operator=(const RequestMetricsWriter&) = delete;

  // Keeps what the request addresses (the labels) and returns it for the handler to use.
  const RequestInfo& setRequestInfo(RequestInfo ri);

  void send(http::Response response) override;
  bool beginStream(int status, std::vector<std::pair<std::string, std::string>> headers) override;
  bool write(std::string_view chunk) override { return inner_.write(chunk); }
  bool writeIfReady(std::string_view chunk) override { return inner_.writeIfReady(chunk); }
  bool writesIfReady() const override { return inner_.writesIfReady(); }
  void end() override {
    record();
    inner_.end();
  }
  bool clientGone() override { return inner_.clientGone(); }
  std::unique_ptr<http::Stream> takeStream() override;

 private:
  std::string_view reportedVerb() const;
  std::string_view scope() const;
  void trackInflight(int delta);
  // Counts the request once: before the last byte goes out, so that a client that reads the
  // answer and then scrapes /metrics finds it counted.
  void record();

  const http::Request& req_;
  http::ResponseWriter& inner_;
  RequestInfo ri_;
  std::chrono::steady_clock::time_point start_;
  int code_ = 0;
  bool inflightCounted_ = false;
  bool recorded_ = false;
};

}  // namespace minik8s::apiserver
