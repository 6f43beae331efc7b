// The fixture of the proxy's tests against the real kernel (iptables and nftables modes): an
// in-process API server and a client, inside the process' private network namespace
// (private_netns.h); every rule of both modes is removed after each test.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "client/rest_client.h"
#include "in_process_api_server.h"
#include "private_netns.h"
#include "proxy/service_proxy.h"

namespace minik8s::proxy {

class ProxyNetnsFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_NETNS();
    ASSERT_TRUE(api.start().ok());
    rest = std::make_unique<client::RestClient>(api.url());
  }
  void TearDown() override {
    if (testing::kInPrivateNetns) {
      EXPECT_TRUE(cleanupAllProxyRules(ProxyOptions{}).ok());
    }
    api.stop();
  }
  ProxyOptions options(ProxyMode mode = ProxyMode::kIptables) {
    ProxyOptions o;
    o.mode = mode;
    o.nodeName = "node-a";
    o.nodeIPs = {"192.168.50.2"};
    return o;
  }

  minik8s::testing::InProcessApiServer api;
  std::unique_ptr<client::RestClient> rest;
};

}  // namespace minik8s::proxy
