#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "apiserver/server_pki.h"

namespace minik8s::apiserver {
namespace {

namespace fs = std::filesystem;

class ServerPkiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("server-pki-" + std::to_string(::getpid()));
    fs::remove_all(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir;
};

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST_F(ServerPkiTest, CreatesEverythingOnceAndReusesIt) {
  ServerPkiOptions o;
  o.dataDir = dir;
  o.ipAddresses = {"172.29.0.1", "10.96.0.1"};
  auto first = loadOrCreateServerPki(o);
  ASSERT_TRUE(first.ok()) << first.status().message();
  for (const char* f : {"ca.crt", "ca.key", "apiserver.crt", "apiserver.key", "admin.crt",
                        "admin.key", "apiserver-kubelet-client.crt", "sa.key", "sa.pub"})
    EXPECT_TRUE(fs::exists(dir / "pki" / f)) << f;
  struct stat st {};
  ASSERT_EQ(::stat((dir / "pki" / "ca.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  auto serving = pki::parseCertificate(first->serving.certPem);
  ASSERT_TRUE(serving.ok());
  EXPECT_TRUE(serving->serverAuth);
  for (const char* ip : {"127.0.0.1", "172.29.0.1", "10.96.0.1"})
    EXPECT_TRUE(has(serving->ipAddresses, ip)) << ip;
  for (const char* n :
       {"localhost", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"})
    EXPECT_TRUE(has(serving->dnsNames, n)) << n;
  auto admin = pki::parseCertificate(first->admin.certPem);
  ASSERT_TRUE(admin.ok());
  EXPECT_EQ(admin->commonName, "kubernetes-admin");
  EXPECT_TRUE(has(admin->organizations, "system:masters"));
  EXPECT_TRUE(pki::verifyCertificate(first->ca.certPem, first->admin.certPem).ok());

  auto second = loadOrCreateServerPki(o);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->ca.certPem, first->ca.certPem);
  EXPECT_EQ(second->serving.certPem, first->serving.certPem);
  EXPECT_EQ(second->serviceAccountKey, first->serviceAccountKey);
}

TEST_F(ServerPkiTest, ANewAddressReissuesOnlyTheServingCertificate) {
  ServerPkiOptions o;
  o.dataDir = dir;
  auto first = loadOrCreateServerPki(o);
  ASSERT_TRUE(first.ok());
  o.ipAddresses = {"192.0.2.7"};
  auto second = loadOrCreateServerPki(o);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->ca.certPem, first->ca.certPem);
  EXPECT_EQ(second->admin.certPem, first->admin.certPem);
  EXPECT_NE(second->serving.certPem, first->serving.certPem);
  auto info = pki::parseCertificate(second->serving.certPem);
  ASSERT_TRUE(info.ok());
  EXPECT_TRUE(has(info->ipAddresses, "192.0.2.7"));
  EXPECT_TRUE(pki::verifyCertificate(second->ca.certPem, second->serving.certPem).ok());
}

TEST_F(ServerPkiTest, ClientCertificatesCarryUserAndGroups) {
  ServerPkiOptions o;
  o.dataDir = dir;
  auto p = loadOrCreateServerPki(o);
  ASSERT_TRUE(p.ok());
  auto c = issueClientCertificate(*p, "system:kube-scheduler", {"a", "b"});
  ASSERT_TRUE(c.ok());
  auto info = pki::parseCertificate(c->certPem);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->commonName, "system:kube-scheduler");
  EXPECT_EQ(info->organizations, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(info->clientAuth);
  EXPECT_FALSE(info->serverAuth);
}

}  // namespace
}  // namespace minik8s::apiserver
