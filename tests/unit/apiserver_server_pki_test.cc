#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "apiserver/server_pki.h"
#include "apiserver/serving_cert_rotation.h"

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

std::string servingSerial(const fs::path& dir) {
  return pki::parseCertificate(*pki::readPemFile(dir / "pki" / "apiserver.crt"))->serialHex;
}

TEST_F(ServerPkiTest, ServingCertificateIsReissuedWithTheSameSansAndOnRequest) {
  ServerPkiOptions o;
  o.dataDir = dir;
  o.ipAddresses = {"172.29.0.1"};
  o.servingValidity = std::chrono::seconds(90);
  auto pki = loadOrCreateServerPki(o);
  ASSERT_TRUE(pki.ok()) << pki.status().message();
  auto first = *pki::parseCertificate(pki->serving.certPem);
  EXPECT_LE(first.notAfter - std::chrono::system_clock::now(), std::chrono::seconds(91));
  ASSERT_TRUE(reissueServingCertificate(*pki).ok());
  auto second = *pki::parseCertificate(*pki::readPemFile(dir / "pki" / "apiserver.crt"));
  EXPECT_NE(second.serialHex, first.serialHex);
  EXPECT_EQ(second.dnsNames, first.dnsNames);
  EXPECT_EQ(second.ipAddresses, first.ipAddresses);
  EXPECT_EQ(*pki::readPemFile(dir / "pki" / "apiserver.key"), pki->serving.keyPem);
  EXPECT_TRUE(pki::verifyCertificate(pki->ca.certPem, pki->serving.certPem).ok());

  // The rotation thread re-issues at once when asked (SIGHUP), long before the deadline.
  ServingCertificateRotation rotation(*pki);
  rotation.start();
  const std::string before = servingSerial(dir);
  rotation.reissueNow();
  for (int i = 0; i < 100 && servingSerial(dir) == before; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_NE(servingSerial(dir), before);
  rotation.stop();
}

}  // namespace
}  // namespace minik8s::apiserver
