// Kubeconfig files and TLS clients: loadKubeconfig reads what kubectl reads (data fields, files
// relative to the kubeconfig, tokens, contexts), writeKubeconfig writes what both read back, a
// RestClient built from it talks to a real in-process API server over TLS with a client
// certificate (also failing over from a dead server), and the real kubectl does too.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "api/scheme.h"
#include "apiserver/api_server.h"
#include "apiserver/kubeconfig.h"
#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "common/http.h"
#include "common/pki.h"
#include "storage/store.h"

namespace minik8s::client {
namespace {

namespace fs = std::filesystem;

class KubeconfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("minik8s-kubeconfig-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "pki");
    ca_ = pki::createCA("minik8s-ca").value();
    pki::CertSpec admin;
    admin.commonName = "kubernetes-admin";
    admin.organizations = {"system:masters"};
    admin.clientAuth = true;
    admin_ = pki::issue(ca_, admin).value();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }

  // A real API server (SQLite in dir_) behind a TLS http::Server that records who called.
  void startTlsApiServer(bool requireClientCertificate) {
    auto store = storage::openStore("sqlite://" + (dir_ / "state.db").string());
    ASSERT_TRUE(store.ok()) << store.status().toString();
    store_ = std::move(store).value();
    api_ = std::make_unique<apiserver::ApiServer>(*store_, api::Scheme::builtin());
    ASSERT_TRUE(api_->start().ok());
    server_ =
        std::make_unique<http::Server>([this](const http::Request& req, http::ResponseWriter& w) {
          {
            std::lock_guard lock(mu_);
            lastUser_ = req.clientCertificate ? req.clientCertificate->commonName : "";
            lastAuthorization_ = req.header("Authorization");
          }
          api_->handle(req, w);
        });
    pki::CertSpec serving;
    serving.commonName = "kube-apiserver";
    serving.dnsNames = {"localhost", "kubernetes"};
    serving.ipAddresses = {"127.0.0.1"};
    serving.serverAuth = true;
    auto cert = pki::issue(ca_, serving).value();
    ASSERT_TRUE(
        server_->enableTls({cert.certPem, cert.keyPem, ca_.certPem, requireClientCertificate})
            .ok());
    ASSERT_TRUE(server_->start("127.0.0.1:0").ok());
  }
  std::string serverUrl() const { return "https://127.0.0.1:" + std::to_string(server_->port()); }
  std::string lastUser() {
    std::lock_guard lock(mu_);
    return lastUser_;
  }
  std::string lastAuthorization() {
    std::lock_guard lock(mu_);
    return lastAuthorization_;
  }

  fs::path dir_;
  pki::KeyAndCert ca_, admin_;
  std::unique_ptr<storage::Store> store_;
  std::unique_ptr<apiserver::ApiServer> api_;
  std::unique_ptr<http::Server> server_;
  std::mutex mu_;
  std::string lastUser_, lastAuthorization_;
};

TEST_F(KubeconfigTest, ReadsFilesRelativeToTheKubeconfigAndTheCurrentContext) {
  ASSERT_TRUE(pki::writePemFile((dir_ / "pki/ca.crt").string(), ca_.certPem, false).ok());
  ASSERT_TRUE(pki::writePemFile((dir_ / "pki/admin.crt").string(), admin_.certPem, false).ok());
  ASSERT_TRUE(pki::writePemFile((dir_ / "pki/admin.key").string(), admin_.keyPem, true).ok());
  write("token", "s3cret\n");
  std::string path = write("config", R"(apiVersion: v1
kind: Config
current-context: main
clusters:
- name: c1
  cluster:
    server: https://10.0.0.1:6443,https://10.0.0.2:6443
    certificate-authority: pki/ca.crt
    tls-server-name: kubernetes
- name: c2
  cluster:
    server: https://other:6443
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    client-certificate: pki/admin.crt
    client-key: pki/admin.key
- name: robot
  user:
    tokenFile: token
contexts:
- name: main
  context: {cluster: c1, user: admin}
- name: bot
  context: {cluster: c2, user: robot}
)");
  auto main = loadKubeconfig(path);
  ASSERT_TRUE(main.ok()) << main.status().toString();
  EXPECT_EQ(main->servers, "https://10.0.0.1:6443,https://10.0.0.2:6443");
  EXPECT_EQ(main->tls.caPem, ca_.certPem);
  EXPECT_EQ(main->tls.certPem, admin_.certPem);
  EXPECT_EQ(main->tls.keyPem, admin_.keyPem);
  EXPECT_EQ(main->tls.serverName, "kubernetes");
  EXPECT_FALSE(main->tls.insecureSkipVerify);
  EXPECT_EQ(main->bearerToken, "");

  auto bot = loadKubeconfig(path, "bot");
  ASSERT_TRUE(bot.ok()) << bot.status().toString();
  EXPECT_EQ(bot->servers, "https://other:6443");
  EXPECT_TRUE(bot->tls.insecureSkipVerify);
  EXPECT_EQ(bot->tls.caPem, "");
  EXPECT_EQ(bot->bearerToken, "s3cret");

  EXPECT_EQ(loadKubeconfig(path, "ghost").status().code(), 400);
  EXPECT_FALSE(loadKubeconfig((dir_ / "missing").string()).ok());
}

TEST_F(KubeconfigTest, RefusesWhatItCannotUse) {
  std::string halfUser = write("half", R"(current-context: x
clusters: [{name: c, cluster: {server: "https://a:1"}}]
users: [{name: u, user: {client-certificate-data: "AAAA"}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
)");
  EXPECT_EQ(loadKubeconfig(halfUser).status().code(), 400);
  std::string plugin = write("plugin", R"(current-context: x
clusters: [{name: c, cluster: {server: "https://a:1"}}]
users: [{name: u, user: {exec: {command: aws}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
)");
  EXPECT_EQ(loadKubeconfig(plugin).status().code(), 400);
  std::string missingFile = write("nofile", R"(current-context: x
clusters: [{name: c, cluster: {server: "https://a:1", certificate-authority: nope.crt}}]
contexts: [{name: x, context: {cluster: c}}]
)");
  EXPECT_EQ(loadKubeconfig(missingFile).status().code(), 404);
  EXPECT_EQ(loadKubeconfig(write("list", "[1, 2]")).status().code(), 400);
}

TEST_F(KubeconfigTest, WrittenKubeconfigReadsBack) {
  const std::string path = (dir_ / "admin.conf").string();
  apiserver::KubeconfigCredentials creds;
  creds.caPem = ca_.certPem;
  creds.clientCertPem = admin_.certPem;
  creds.clientKeyPem = admin_.keyPem;
  ASSERT_TRUE(apiserver::writeKubeconfig(path, "https://127.0.0.1:6443", creds).ok());
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  auto back = loadKubeconfig(path);
  ASSERT_TRUE(back.ok()) << back.status().toString();
  EXPECT_EQ(back->servers, "https://127.0.0.1:6443");
  EXPECT_EQ(back->tls.caPem, ca_.certPem);
  EXPECT_EQ(back->tls.certPem, admin_.certPem);
  EXPECT_EQ(back->tls.keyPem, admin_.keyPem);

  apiserver::KubeconfigCredentials tokenOnly;
  tokenOnly.caPem = ca_.certPem;
  tokenOnly.token = "abc.def";
  tokenOnly.userName = "system:serviceaccount:kube-system:x";
  ASSERT_TRUE(apiserver::writeKubeconfig(path, "https://h:1", tokenOnly, "c").ok());
  back = loadKubeconfig(path);
  ASSERT_TRUE(back.ok()) << back.status().toString();
  EXPECT_EQ(back->bearerToken, "abc.def");
  EXPECT_EQ(back->tls.certPem, "");

  apiserver::KubeconfigCredentials certWithoutKey;
  certWithoutKey.clientCertPem = admin_.certPem;
  EXPECT_FALSE(apiserver::writeKubeconfig(path, "https://h:1", certWithoutKey).ok());
  // The old form still works: plain HTTP, no credentials.
  ASSERT_TRUE(apiserver::writeKubeconfig(path, "http://127.0.0.1:8080").ok());
  back = loadKubeconfig(path);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->servers, "http://127.0.0.1:8080");
}

TEST_F(KubeconfigTest, RestClientOverTlsWithClientCertificateTokenAndFailover) {
  startTlsApiServer(false);
  const std::string path = (dir_ / "admin.conf").string();
  apiserver::KubeconfigCredentials creds;
  creds.caPem = ca_.certPem;
  creds.clientCertPem = admin_.certPem;
  creds.clientKeyPem = admin_.keyPem;
  ASSERT_TRUE(apiserver::writeKubeconfig(path, serverUrl(), creds).ok());
  auto config = loadKubeconfig(path);
  ASSERT_TRUE(config.ok());
  RestClient rest(*config);
  json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "tls"}}}};
  auto created = rest.create(resources::kNamespaces, "", ns);
  ASSERT_TRUE(created.ok()) << created.status().toString();
  auto got = rest.get(resources::kNamespaces, "", "tls");
  ASSERT_TRUE(got.ok()) << got.status().toString();
  EXPECT_EQ(lastUser(), "kubernetes-admin");

  // A dead first server: the client moves on to the TLS one.
  ClientConfig twoServers = *config;
  twoServers.servers = "https://127.0.0.1:1," + serverUrl();
  twoServers.bearerToken = "tok";
  RestClient failover(twoServers);
  got = failover.get(resources::kNamespaces, "", "tls");
  ASSERT_TRUE(got.ok()) << got.status().toString();
  EXPECT_EQ(failover.currentUrl(), serverUrl());
  EXPECT_EQ(lastAuthorization(), "Bearer tok");

  // A client that does not trust the CA gets nowhere.
  ClientConfig untrusting = *config;
  untrusting.tls.caPem = pki::createCA("other").value().certPem;
  RestClient stranger(untrusting);
  EXPECT_FALSE(stranger.get(resources::kNamespaces, "", "tls").ok());
}

// Runs a command, returning its exit code and output (stdout and stderr).
int run(const std::string& command, std::string& output) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) output.append(buf.data(), n);
  int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(KubeconfigTest, KubectlTalksTlsWithTheWrittenKubeconfig) {
  if (std::system("command -v kubectl > /dev/null 2>&1") != 0) GTEST_SKIP() << "no kubectl";
  startTlsApiServer(true);
  const std::string path = (dir_ / "admin.conf").string();
  apiserver::KubeconfigCredentials creds;
  creds.caPem = ca_.certPem;
  creds.clientCertPem = admin_.certPem;
  creds.clientKeyPem = admin_.keyPem;
  ASSERT_TRUE(apiserver::writeKubeconfig(path, serverUrl(), creds).ok());
  std::string out;
  int code = run("kubectl --kubeconfig " + path + " --request-timeout=10s get --raw /version", out);
  EXPECT_EQ(code, 0) << out;
  json version = json::parse(out, nullptr, false);
  ASSERT_TRUE(version.is_object()) << out;
  EXPECT_TRUE(version.contains("gitVersion")) << out;
  EXPECT_EQ(lastUser(), "kubernetes-admin");

  out.clear();
  code = run("kubectl --kubeconfig " + path + " --request-timeout=10s get namespaces -o name", out);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("namespace/default"), std::string::npos) << out;

  // Without the client certificate the handshake is refused.
  apiserver::KubeconfigCredentials caOnly;
  caOnly.caPem = ca_.certPem;
  const std::string anonymous = (dir_ / "anonymous.conf").string();
  ASSERT_TRUE(apiserver::writeKubeconfig(anonymous, serverUrl(), caOnly).ok());
  out.clear();
  code = run("kubectl --kubeconfig " + anonymous + " --request-timeout=5s get --raw /version", out);
  EXPECT_NE(code, 0) << out;
}

}  // namespace
}  // namespace minik8s::client
