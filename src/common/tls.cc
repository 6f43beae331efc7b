// TLS on OpenSSL over non-blocking sockets. Every SSL call runs under the stream's mutex and
// never blocks while holding it: a call that needs the socket returns WANT_READ/WANT_WRITE and
// the thread waits in poll() outside the lock. So one thread can sit in read() while another
// writes, as WebSocket sessions and the node proxy need, and ::shutdown() on the socket (the HTTP
// server's deadline watchdog, Stream::shutdown) wakes every waiter.
#include "common/tls.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <mutex>

#include "common/logging.h"
#include "common/pki.h"

namespace minik8s::http {
namespace {

constexpr unsigned char kAlpnHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

// A socket BIO that writes with MSG_NOSIGNAL: a peer that went away must not kill the process
// with SIGPIPE (OpenSSL's own socket BIO uses write()). Created once, immutable afterwards.
const BIO_METHOD* noSignalSocketMethod() {
  static const BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "minik8s socket");
    BIO_meth_set_write(m, [](BIO* b, const char* data, int len) -> int {
      BIO_clear_retry_flags(b);
      ssize_t n = ::send(static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(b))), data,
                         static_cast<size_t>(len), MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        BIO_set_retry_write(b);
      }
      return static_cast<int>(n);
    });
    BIO_meth_set_read(m, [](BIO* b, char* out, int len) -> int {
      BIO_clear_retry_flags(b);
      ssize_t n = ::recv(static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(b))), out,
                         static_cast<size_t>(len), 0);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        BIO_set_retry_read(b);
      }
      return static_cast<int>(n);
    });
    BIO_meth_set_ctrl(
        m, [](BIO*, int cmd, long, void*) -> long { return cmd == BIO_CTRL_FLUSH ? 1 : 0; });
    BIO_meth_set_create(m, [](BIO* b) -> int {
      BIO_set_init(b, 1);
      return 1;
    });
    return m;
  }();
  return method;
}

bool isIpAddress(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return ::inet_pton(AF_INET, host.c_str(), buf) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

std::string nameEntry(X509_NAME* name, int index) {
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, index));
  unsigned char* utf8 = nullptr;
  int n = ASN1_STRING_to_UTF8(&utf8, data);
  if (n < 0) return "";
  std::string out(reinterpret_cast<char*>(utf8), static_cast<size_t>(n));
  OPENSSL_free(utf8);
  return out;
}

class TlsStream : public Stream {
 public:
  TlsStream(SSL* ssl, int fd) : ssl_(ssl), fd_(fd) {}
  ~TlsStream() override {
    SSL_free(ssl_);
    if (fd_ >= 0) ::close(fd_);
  }
  // After a failed handshake: the caller keeps (and closes) the socket.
  void releaseSocket() { fd_ = -1; }

  // Runs `op` until it succeeds (returns its result > 0), the peer ended the stream (0) or it
  // fails (-1, `error` says why). `timeoutMs` bounds each wait (-1: none).
  template <typename Op>
  int drive(Op op, std::string& error, int timeoutMs = -1) {
    for (;;) {
      if (shut_) {
        error = "connection shut down";
        return -1;
      }
      int rc, err;
      {
        std::lock_guard lock(mu_);
        ERR_clear_error();
        errno = 0;
        rc = op();
        err = rc > 0 ? SSL_ERROR_NONE : SSL_get_error(ssl_, rc);
        if (err == SSL_ERROR_SSL || err == SSL_ERROR_SYSCALL) {
          error = pki::takeOpenSslErrors();
          if (error.empty()) error = errno ? std::strerror(errno) : "connection closed";
        }
      }
      if (err == SSL_ERROR_NONE) return rc;
      if (err == SSL_ERROR_ZERO_RETURN) return 0;
      short events = err == SSL_ERROR_WANT_READ    ? POLLIN
                     : err == SSL_ERROR_WANT_WRITE ? POLLOUT
                                                   : 0;
      if (events == 0) return -1;
      pollfd p{fd_, events, 0};
      // Without a deadline, wake up now and then anyway: a record that peerClosed() peeked off
      // the socket in another thread is in OpenSSL's buffer, where poll() cannot see it.
      int r = ::poll(&p, 1, timeoutMs < 0 ? 200 : timeoutMs);
      if (r < 0 && errno != EINTR) {
        error = std::strerror(errno);
        return -1;
      }
      if (r == 0 && timeoutMs >= 0) {
        error = "timed out";
        return -1;
      }
    }
  }

  Status handshake(bool server, int timeoutMs) {
    std::string error;
    int rc = drive([&] { return server ? SSL_accept(ssl_) : SSL_connect(ssl_); }, error, timeoutMs);
    if (rc > 0) return Status::Ok();
    if (!server && SSL_get_verify_result(ssl_) != X509_V_OK) {
      error = std::string("certificate verify failed: ") +
              X509_verify_cert_error_string(SSL_get_verify_result(ssl_));
    }
    return Status::Unavailable("TLS handshake failed: " + (error.empty() ? "closed" : error));
  }

  Result<size_t> read(char* out, size_t n) override {
    std::string error;
    int len = static_cast<int>(std::min<size_t>(n, INT_MAX));
    int rc = drive([&] { return SSL_read(ssl_, out, len); }, error);
    if (rc < 0) return Status::Unavailable("TLS read: " + error);
    return static_cast<size_t>(rc);
  }

  Status write(std::string_view data) override {
    while (!data.empty()) {
      std::string error;
      int len = static_cast<int>(std::min<size_t>(data.size(), 1 << 20));
      int rc = drive([&] { return SSL_write(ssl_, data.data(), len); }, error);
      if (rc <= 0) return Status::Unavailable("TLS write: " + (error.empty() ? "closed" : error));
      data.remove_prefix(static_cast<size_t>(rc));
    }
    return Status::Ok();
  }

  void closeWrite() override {
    {
      std::lock_guard lock(mu_);
      if (!shut_) SSL_shutdown(ssl_);  // queues and sends close_notify; no wait for the peer's
      ERR_clear_error();
    }
    ::shutdown(fd_, SHUT_WR);
  }

  void shutdown() override {
    shut_ = true;
    ::shutdown(fd_, SHUT_RDWR);
  }

  bool peerClosed() override {
    if (shut_) return true;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (p.revents & POLLERR) return true;
    std::lock_guard lock(mu_);
    char c;
    int rc = SSL_peek(ssl_, &c, 1);
    if (rc > 0) return false;
    int err = SSL_get_error(ssl_, rc);
    ERR_clear_error();
    return err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE;
  }

  int fd() const override { return fd_; }
  bool isTls() const override { return true; }

  std::optional<PeerCertificate> peerCertificate() const override { return peer_; }

  void readPeerCertificate() {
    X509* cert = SSL_get0_peer_certificate(ssl_);
    if (!cert) return;
    PeerCertificate peer;
    peer.verified = SSL_get_verify_result(ssl_) == X509_V_OK;
    X509_NAME* name = X509_get_subject_name(cert);
    for (int i = 0; i < X509_NAME_entry_count(name); ++i) {
      int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(X509_NAME_get_entry(name, i)));
      if (nid == NID_commonName) peer.commonName = nameEntry(name, i);
      if (nid == NID_organizationName) peer.organizations.push_back(nameEntry(name, i));
    }
    peer_ = std::move(peer);
  }

 private:
  SSL* ssl_;
  int fd_;
  std::mutex mu_;
  std::atomic<bool> shut_{false};
  std::optional<PeerCertificate> peer_;
};

// Adds every certificate of a PEM bundle to `store` (and, for a server, to the CA names it
// sends to clients); the number added.
int addCertificates(SSL_CTX* ctx, const std::string& pem, bool announce) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  int count = 0;
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(store, cert);
    if (announce) SSL_CTX_add_client_CA(ctx, cert);
    X509_free(cert);
    ++count;
  }
  BIO_free(bio);
  ERR_clear_error();
  return count;
}

Status useCertificateAndKey(SSL_CTX* ctx, const std::string& certPem, const std::string& keyPem) {
  BIO* bio = BIO_new_mem_buf(certPem.data(), static_cast<int>(certPem.size()));
  X509* leaf = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  bool ok = leaf && SSL_CTX_use_certificate(ctx, leaf) == 1;
  X509_free(leaf);
  while (ok) {  // the rest of the chain
    X509* extra = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    if (!extra) break;
    if (SSL_CTX_add_extra_chain_cert(ctx, extra) != 1) X509_free(extra);  // owned on success
  }
  BIO_free(bio);
  ERR_clear_error();
  if (!ok) return Status::BadRequest("TLS: invalid certificate: " + pki::takeOpenSslErrors());
  bio = BIO_new_mem_buf(keyPem.data(), static_cast<int>(keyPem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  ok = key && SSL_CTX_use_PrivateKey(ctx, key) == 1 && SSL_CTX_check_private_key(ctx) == 1;
  EVP_PKEY_free(key);
  if (!ok)
    return Status::BadRequest("TLS: invalid key or key does not match the certificate: " +
                              pki::takeOpenSslErrors());
  return Status::Ok();
}

// A certificate (with its chain) and key parsed once, shared by the handshakes that use it.
struct Credential {
  X509* leaf = nullptr;
  STACK_OF(X509) * chain = nullptr;
  EVP_PKEY* key = nullptr;
  ~Credential() {
    X509_free(leaf);
    sk_X509_pop_free(chain, X509_free);
    EVP_PKEY_free(key);
  }
};

Result<std::shared_ptr<Credential>> parseCredential(const std::string& certPem,
                                                    const std::string& keyPem) {
  auto c = std::make_shared<Credential>();
  BIO* bio = BIO_new_mem_buf(certPem.data(), static_cast<int>(certPem.size()));
  c->leaf = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  c->chain = sk_X509_new_null();
  while (c->leaf) {
    X509* extra = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    if (!extra) break;
    sk_X509_push(c->chain, extra);
  }
  BIO_free(bio);
  bio = BIO_new_mem_buf(keyPem.data(), static_cast<int>(keyPem.size()));
  c->key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  ERR_clear_error();
  if (!c->leaf) return Status::BadRequest("TLS: invalid certificate");
  if (!c->key || X509_check_private_key(c->leaf, c->key) != 1) {
    ERR_clear_error();
    return Status::BadRequest("TLS: invalid key or key does not match the certificate");
  }
  return c;
}

// The certificate and key files of a TlsContext, read again when either changes on disk
// (inode, size or modification time: a rename over the file or a rewrite in place).
class CredentialFiles {
 public:
  CredentialFiles(std::string certFile, std::string keyFile)
      : certFile_(std::move(certFile)), keyFile_(std::move(keyFile)) {}

  // The current pair: loads it when the files changed since the last call. A pair that does
  // not load (half written, key and certificate of different rotations) keeps the previous one.
  Result<std::shared_ptr<Credential>> current() {
    std::lock_guard lock(mu_);
    const std::string signature = signatureOf(certFile_) + "|" + signatureOf(keyFile_);
    if (signature == signature_ && loaded_) return loaded_;
    auto cert = pki::readPemFile(certFile_);
    auto key = pki::readPemFile(keyFile_);
    Result<std::shared_ptr<Credential>> parsed =
        !cert.ok()  ? Result<std::shared_ptr<Credential>>(cert.status())
        : !key.ok() ? Result<std::shared_ptr<Credential>>(key.status())
                    : parseCredential(*cert, *key);
    if (!parsed.ok()) {
      if (!loaded_) return parsed.status();
      if (signature != failedSignature_) {
        LOG_WARN("TLS: {} and {} changed but do not load ({}); keeping the previous certificate",
                 certFile_, keyFile_, parsed.status().message());
        failedSignature_ = signature;
      }
      return loaded_;
    }
    if (loaded_) {
      auto info = pki::parseCertificate(*cert);
      LOG_INFO("TLS: certificate {} reloaded (serial {}); new connections use it", certFile_,
               info.ok() ? info->serialHex : "?");
    }
    loaded_ = *parsed;
    signature_ = signature;
    return loaded_;
  }

 private:
  static std::string signatureOf(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return "-";
    return std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
           std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  }

  const std::string certFile_, keyFile_;
  std::mutex mu_;
  std::string signature_, failedSignature_;
  std::shared_ptr<Credential> loaded_;
};

bool isFileReference(const std::string& pem) { return pem.rfind(kFileReference, 0) == 0; }

// The files of "file:<cert>" and "file:<key>", loaded once to check them.
Result<std::unique_ptr<CredentialFiles>> credentialFiles(const std::string& certRef,
                                                         const std::string& keyRef) {
  if (!isFileReference(certRef) || !isFileReference(keyRef))
    return Status::BadRequest("TLS: a certificate given by file needs its key by file too");
  const std::string certFile = certRef.substr(sizeof kFileReference - 1);
  const std::string keyFile = keyRef.substr(sizeof kFileReference - 1);
  auto files = std::make_unique<CredentialFiles>(certFile, keyFile);
  if (auto c = files->current(); !c.ok())
    return Status::BadRequest("TLS: cannot load " + certFile + " and " + keyFile + ": " +
                              c.status().message());
  return files;
}

int selectHttp11(SSL*, const unsigned char** out, unsigned char* outLen, const unsigned char* in,
                 unsigned int inLen, void*) {
  unsigned char* chosen = nullptr;
  if (SSL_select_next_proto(&chosen, outLen, kAlpnHttp11, sizeof kAlpnHttp11, in, inLen) !=
      OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_NOACK;  // no ALPN answer: the client speaks HTTP/1.1 by default
  }
  *out = chosen;
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace

struct TlsContext::Impl {
  SSL_CTX* ctx = nullptr;
  bool server = false;
  bool verifyPeer = false;
  std::string serverName;
  std::unique_ptr<CredentialFiles> files;  // set: the certificate comes from files (reloaded)
  ~Impl() { SSL_CTX_free(ctx); }

  // Puts the files' current certificate on `ssl` (no files: the context's own applies).
  Status useCurrentCredential(SSL* ssl) const {
    if (!files) return Status::Ok();
    auto c = files->current();
    if (!c.ok()) return c.status();
    const Credential& cred = **c;
    if (SSL_use_certificate(ssl, cred.leaf) != 1 || SSL_use_PrivateKey(ssl, cred.key) != 1 ||
        SSL_set1_chain(ssl, cred.chain) != 1) {
      return Status::Internal("TLS: cannot use the certificate: " + pki::takeOpenSslErrors());
    }
    return Status::Ok();
  }
};

TlsContext::TlsContext(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TlsContext::~TlsContext() = default;

Result<std::shared_ptr<TlsContext>> TlsContext::forServer(const TlsServerConfig& config) {
  auto impl = std::make_unique<Impl>();
  impl->server = true;
  impl->ctx = SSL_CTX_new(TLS_server_method());
  if (!impl->ctx) return Status::Internal("TLS: " + pki::takeOpenSslErrors());
  SSL_CTX_set_min_proto_version(impl->ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(impl->ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
  // Idle connections (watches, kept-alive clients) give their ~34 KiB of record buffers back
  // between records: the API server holds one per informer of every component.
  SSL_CTX_set_mode(impl->ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
  if (isFileReference(config.certPem) || isFileReference(config.keyPem)) {
    auto files = credentialFiles(config.certPem, config.keyPem);
    if (!files.ok()) return files.status();
    impl->files = std::move(files).value();
  } else if (Status s = useCertificateAndKey(impl->ctx, config.certPem, config.keyPem); !s.ok()) {
    return s;
  }
  SSL_CTX_set_alpn_select_cb(impl->ctx, selectHttp11, nullptr);
  if (!config.clientCaPem.empty()) {
    if (addCertificates(impl->ctx, config.clientCaPem, true) == 0) {
      return Status::BadRequest("TLS: the client CA holds no certificate");
    }
    if (config.requireClientCertificate) {
      SSL_CTX_set_verify(impl->ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    } else {
      // Optional certificates: a bad one does not fail the handshake; the request is then
      // refused with a 401 by whoever authenticates it (PeerCertificate::verified).
      SSL_CTX_set_verify(impl->ctx, SSL_VERIFY_PEER, [](int, X509_STORE_CTX*) -> int { return 1; });
    }
    impl->verifyPeer = true;
  } else if (config.requireClientCertificate) {
    return Status::BadRequest("TLS: client certificates are required but no client CA is set");
  }
  return std::shared_ptr<TlsContext>(new TlsContext(std::move(impl)));
}

Result<std::shared_ptr<TlsContext>> TlsContext::forClient(const TlsClientConfig& config) {
  auto impl = std::make_unique<Impl>();
  impl->ctx = SSL_CTX_new(TLS_client_method());
  if (!impl->ctx) return Status::Internal("TLS: " + pki::takeOpenSslErrors());
  SSL_CTX_set_min_proto_version(impl->ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(impl->ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_mode(impl->ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_alpn_protos(impl->ctx, kAlpnHttp11, sizeof kAlpnHttp11);
  if (isFileReference(config.certPem) || isFileReference(config.keyPem)) {
    auto files = credentialFiles(config.certPem, config.keyPem);
    if (!files.ok()) return files.status();
    impl->files = std::move(files).value();
  } else if (!config.certPem.empty() || !config.keyPem.empty()) {
    if (Status s = useCertificateAndKey(impl->ctx, config.certPem, config.keyPem); !s.ok()) {
      return s;
    }
  }
  if (!config.insecureSkipVerify) {
    if (config.caPem.empty()) {
      SSL_CTX_set_default_verify_paths(impl->ctx);
    } else if (addCertificates(impl->ctx, config.caPem, false) == 0) {
      return Status::BadRequest("TLS: the CA data holds no certificate");
    }
    SSL_CTX_set_verify(impl->ctx, SSL_VERIFY_PEER, nullptr);
    impl->verifyPeer = true;
  }
  impl->serverName = config.serverName;
  return std::shared_ptr<TlsContext>(new TlsContext(std::move(impl)));
}

namespace {

// A non-blocking socket under a new SSL object; nullptr on failure.
SSL* newSsl(SSL_CTX* ctx, int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  SSL* ssl = SSL_new(ctx);
  BIO* bio = ssl ? BIO_new(noSignalSocketMethod()) : nullptr;
  if (!bio) {
    SSL_free(ssl);
    return nullptr;
  }
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<intptr_t>(fd)));
  SSL_set_bio(ssl, bio, bio);
  return ssl;
}

}  // namespace

Result<std::unique_ptr<Stream>> TlsContext::accept(int fd) const {
  SSL* ssl = newSsl(impl_->ctx, fd);
  if (!ssl) return Status::Internal("TLS: " + pki::takeOpenSslErrors());
  auto stream = std::make_unique<TlsStream>(ssl, fd);
  if (Status s = impl_->useCurrentCredential(ssl); !s.ok()) {
    stream->releaseSocket();
    return s;
  }
  if (Status s = stream->handshake(true, -1); !s.ok()) {
    stream->releaseSocket();
    return s;
  }
  stream->readPeerCertificate();
  return std::unique_ptr<Stream>(std::move(stream));
}

Result<std::unique_ptr<Stream>> TlsContext::connect(int fd, const std::string& host,
                                                    std::chrono::milliseconds timeout) const {
  SSL* ssl = newSsl(impl_->ctx, fd);
  if (!ssl) return Status::Internal("TLS: " + pki::takeOpenSslErrors());
  auto stream = std::make_unique<TlsStream>(ssl, fd);
  if (Status s = impl_->useCurrentCredential(ssl); !s.ok()) {
    stream->releaseSocket();
    return s;
  }
  const std::string& name = impl_->serverName.empty() ? host : impl_->serverName;
  const bool ip = isIpAddress(name);
  if (!ip) SSL_set_tlsext_host_name(ssl, name.c_str());
  if (impl_->verifyPeer) {
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    bool set = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str()) == 1
                  : X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size()) == 1;
    if (!set) {
      stream->releaseSocket();
      return Status::BadRequest("TLS: cannot verify against host \"" + name + "\"");
    }
  }
  if (Status s = stream->handshake(false, static_cast<int>(timeout.count())); !s.ok()) {
    stream->releaseSocket();
    return s;
  }
  stream->readPeerCertificate();
  return std::unique_ptr<Stream>(std::move(stream));
}

}  // namespace minik8s::http
