#include <gtest/gtest.h>

#include "client/rest_client.h"
#include "common/metrics.h"
#include "in_process_api_server.h"

namespace minik8s::client {
namespace {

// The count of one rest_client_requests_total series in the process registry (0 when absent).
double requestsCounted(const std::string& series) {
  const std::string text = metrics::defaultRegistry().exposition();
  const std::string prefix = "rest_client_requests_total{" + series + "} ";
  const size_t at = text.find("\n" + prefix);
  return at == std::string::npos ? 0 : std::stod(text.substr(at + 1 + prefix.size()));
}

TEST(RestClientMetricsTest, RequestsAreCountedByCodeMethodAndHost) {
  testing::InProcessApiServer server;
  ASSERT_TRUE(server.start().ok());
  RestClient rest(server.url());
  const std::string host = server.url().substr(server.url().find("://") + 3);
  const std::string ok = "code=\"200\",method=\"GET\",host=\"" + host + "\"";
  const std::string missing = "code=\"404\",method=\"GET\",host=\"" + host + "\"";
  const double ok0 = requestsCounted(ok), missing0 = requestsCounted(missing);
  ASSERT_TRUE(rest.list(resources::kPods, "default").ok());
  ASSERT_TRUE(rest.list(resources::kPods, "default").ok());
  EXPECT_FALSE(rest.get(resources::kPods, "default", "nope").ok());
  EXPECT_EQ(requestsCounted(ok) - ok0, 2);
  EXPECT_EQ(requestsCounted(missing) - missing0, 1);
  const std::string text = metrics::defaultRegistry().exposition();
  EXPECT_NE(text.find("# TYPE rest_client_request_duration_seconds histogram"), std::string::npos);
  EXPECT_NE(
      text.find("rest_client_request_duration_seconds_count{verb=\"GET\",host=\"" + host + "\"}"),
      std::string::npos);
  // A server that is not there: "<error>".
  RestClient gone("http://127.0.0.1:1");
  EXPECT_FALSE(gone.list(resources::kPods, "default").ok());
  EXPECT_GE(requestsCounted("code=\"<error>\",method=\"GET\",host=\"127.0.0.1:1\""), 1);
}

}  // namespace
}  // namespace minik8s::client
