// The Warning Events of the Endpoints and EndpointSlice controllers when a write fails: the
// informers follow a real in-process API server, the writes go to a fake API that answers with a
// chosen error. Conflicts (retried by the next sync) are not told.
#include <gtest/gtest.h>

#include <atomic>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "common/http.h"
#include "controllers/endpoints/endpoints_controller.h"
#include "controllers/endpoints/endpointslice_controller.h"
#include "in_process_api_server.h"

namespace minik8s::controllers {
namespace {

using namespace std::chrono_literals;
namespace res = client::resources;

class EndpointsEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api.start().ok());
    rest = std::make_unique<client::RestClient>(api.url());
    json svc = {{"apiVersion", "v1"},
                {"kind", "Service"},
                {"metadata", {{"name", "web"}, {"namespace", "default"}}},
                {"spec",
                 {{"selector", {{"app", "web"}}},
                  {"ports", {{{"name", "http"}, {"port", 80}, {"targetPort", 8080}}}}}}};
    ASSERT_TRUE(rest->create(res::kServices, "default", svc).ok());
    fakeApi = std::make_unique<http::Server>(
        [this](const http::Request& req, http::ResponseWriter& w) { w.send(answer(req)); });
    ASSERT_TRUE(fakeApi->start("127.0.0.1:0").ok());
    writes =
        std::make_unique<client::RestClient>("http://127.0.0.1:" + std::to_string(fakeApi->port()));
    services = std::make_unique<client::Informer>(*rest, res::kServices);
    pods = std::make_unique<client::Informer>(*rest, res::kPods);
  }
  void startInformers() {
    for (auto* i : {services.get(), pods.get()}) {
      i->start();
      ASSERT_TRUE(i->waitForSync(5s));
    }
  }
  void TearDown() override {
    for (auto* i : {services.get(), pods.get()}) i->stop();
    fakeApi->stop();
    api.stop();
  }

  // Reads as configured, every write fails with `writeError`.
  http::Response answer(const http::Request& req) {
    if (req.method != "GET") return http::Response::error(writeError);
    if (req.path.find("/endpointslices") != std::string::npos) {
      return http::Response::json(200, {{"apiVersion", "discovery.k8s.io/v1"},
                                        {"kind", "EndpointSliceList"},
                                        {"metadata", {{"resourceVersion", "7"}}},
                                        {"items", json::array()}});
    }
    if (!endpointsExist) return http::Response::error(Status::NotFound("endpoints", "web"));
    return http::Response::json(
        200,
        {{"apiVersion", "v1"},
         {"kind", "Endpoints"},
         {"metadata",
          {{"name", "web"}, {"namespace", "default"}, {"uid", "ep-uid"}, {"resourceVersion", "5"}}},
         {"subsets", {{{"addresses", {{{"ip", "10.244.9.9"}}}}}}}});
  }
  std::vector<std::string> recorded() {
    std::vector<std::string> out;
    for (const auto& e : events.events()) {
      out.push_back(
          e.involvedObject.value("kind", "") + " " + e.involvedObject.value("namespace", "") + "/" +
          e.involvedObject.value("name", "") + " " + e.type + " " + e.reason + ": " + e.message);
    }
    return out;
  }

  testing::InProcessApiServer api;
  std::unique_ptr<client::RestClient> rest, writes;
  std::unique_ptr<http::Server> fakeApi;
  std::unique_ptr<client::Informer> services, pods;
  client::FakeEventRecorder events;
  Status writeError = Status::Internal("etcdserver: request timed out");
  std::atomic<bool> endpointsExist{false};
};

TEST_F(EndpointsEventsTest, FailedEndpointsWritesAreWarningsOnTheEndpoints) {
  EndpointsController controller(*writes, *services, *pods, 1, &events);
  startInformers();
  const std::string failure = "etcdserver: request timed out";
  EXPECT_FALSE(controller.sync("default/web").ok());
  endpointsExist = true;
  EXPECT_FALSE(controller.sync("default/web").ok());
  std::vector<std::string> got = recorded();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].rfind("Endpoints default/web Warning FailedToCreateEndpoint: Failed to create "
                         "endpoint for service default/web: ",
                         0),
            0u)
      << got[0];
  EXPECT_EQ(got[1].rfind("Endpoints default/web Warning FailedToUpdateEndpoint: Failed to update "
                         "endpoint default/web: ",
                         0),
            0u)
      << got[1];
  EXPECT_NE(got[1].find(failure), std::string::npos) << got[1];
  EXPECT_EQ(events.events()[1].involvedObject["uid"], "ep-uid");

  // A conflict is retried, not told.
  events.clear();
  writeError = Status::Conflict("endpoints", "web");
  EXPECT_FALSE(controller.sync("default/web").ok());
  endpointsExist = false;
  EXPECT_FALSE(controller.sync("default/web").ok());
  EXPECT_TRUE(events.events().empty());
}

TEST_F(EndpointsEventsTest, FailedSliceWritesAreWarningsOnTheService) {
  EndpointSliceController controller(*writes, *services, *pods, 1, &events);
  startInformers();
  EXPECT_FALSE(controller.sync("default/web").ok());
  std::vector<std::string> got = recorded();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].rfind("Service default/web Warning FailedToUpdateEndpointSlices: Error updating "
                         "Endpoint Slices for Service default/web: ",
                         0),
            0u)
      << got[0];
  EXPECT_NE(got[0].find("etcdserver: request timed out"), std::string::npos) << got[0];
  EXPECT_EQ(events.events()[0].involvedObject["uid"],
            services->get("default/web")->at("metadata").at("uid"));

  events.clear();
  writeError = Status::Conflict("endpointslices", "web-abc");
  EXPECT_FALSE(controller.sync("default/web").ok());
  EXPECT_TRUE(events.events().empty());
}

TEST_F(EndpointsEventsTest, SuccessfulWritesTellNothing) {
  EndpointsController endpoints(*rest, *services, *pods, 1, &events);
  EndpointSliceController slices(*rest, *services, *pods, 1, &events);
  startInformers();
  EXPECT_TRUE(endpoints.sync("default/web").ok());
  EXPECT_TRUE(slices.sync("default/web").ok());
  EXPECT_TRUE(rest->get(res::kEndpoints, "default", "web").ok());
  EXPECT_TRUE(events.events().empty());
}

}  // namespace
}  // namespace minik8s::controllers
