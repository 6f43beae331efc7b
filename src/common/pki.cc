// The cluster PKI on OpenSSL 3: every object lives in a unique_ptr with its OpenSSL deleter, and
// every failure becomes a Status carrying OpenSSL's own reason.
#include "common/pki.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>

#include "common/openssl_ptr.h"

namespace minik8s::pki {
namespace {

using openssl::BioPtr;
using openssl::BnPtr;
using openssl::CertPtr;
using openssl::EkuPtr;
using openssl::ExtPtr;
using openssl::ExtStackPtr;
using openssl::KeyPtr;
using openssl::NamePtr;
using openssl::NamesPtr;
using openssl::ReqPtr;
using openssl::StoreCtxPtr;
using openssl::StorePtr;

std::string opensslErrors() {
  std::string out = takeOpenSslErrors();
  return out.empty() ? "unknown OpenSSL error" : out;
}

Status sslFailure(const std::string& what) {
  return Status::Internal(what + ": " + opensslErrors());
}
Status badInput(const std::string& what) {
  return Status::BadRequest(what + ": " + opensslErrors());
}

BioPtr memoryBio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

std::string bioText(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

Result<KeyPtr> readPrivateKey(const std::string& pem) {
  BioPtr bio = memoryBio(pem);
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return badInput("invalid private key");
  return key;
}

Result<std::string> privateKeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr)) {
    return sslFailure("cannot encode private key");
  }
  return bioText(bio.get());
}

Result<CertPtr> readCertificate(const std::string& pem) {
  BioPtr bio = memoryBio(pem);
  CertPtr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return badInput("invalid certificate");
  return cert;
}

Result<std::string> certificatePem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!PEM_write_bio_X509(bio.get(), cert)) return sslFailure("cannot encode certificate");
  return bioText(bio.get());
}

Result<ReqPtr> readCsr(const std::string& pem) {
  BioPtr bio = memoryBio(pem);
  ReqPtr req(PEM_read_bio_X509_REQ(bio.get(), nullptr, nullptr, nullptr));
  if (!req) return badInput("invalid certificate signing request");
  return req;
}

Result<KeyPtr> newEcKey() {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return sslFailure("cannot generate ECDSA P-256 key");
  return key;
}

// Subject: one O per organization (the groups), then the CN (the user), as Kubernetes writes it.
Status setSubject(X509_NAME* name, const std::string& commonName,
                  const std::vector<std::string>& organizations) {
  auto add = [&](const char* field, const std::string& value) {
    return X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                      reinterpret_cast<const unsigned char*>(value.data()),
                                      static_cast<int>(value.size()), -1, 0) == 1;
  };
  for (const auto& org : organizations) {
    if (!add("O", org)) return badInput("invalid organization \"" + org + "\"");
  }
  if (!commonName.empty() && !add("CN", commonName)) {
    return badInput("invalid common name \"" + commonName + "\"");
  }
  return Status::Ok();
}

std::string entryText(const X509_NAME_ENTRY* entry) {
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(entry);
  unsigned char* utf8 = nullptr;
  int n = ASN1_STRING_to_UTF8(&utf8, data);
  if (n < 0) return "";
  std::string out(reinterpret_cast<char*>(utf8), static_cast<size_t>(n));
  OPENSSL_free(utf8);
  return out;
}

void readSubject(const X509_NAME* name, CertInfo& info) {
  for (int i = 0; i < X509_NAME_entry_count(name); ++i) {
    const X509_NAME_ENTRY* entry = X509_NAME_get_entry(name, i);
    int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(entry));
    if (nid == NID_commonName) info.commonName = entryText(entry);
    if (nid == NID_organizationName) info.organizations.push_back(entryText(entry));
  }
}

// The SAN list built entry by entry (never from a "DNS:a,IP:b" string, so a name from a CSR
// cannot smuggle in another entry).
Result<NamesPtr> buildAltNames(const std::vector<std::string>& dnsNames,
                               const std::vector<std::string>& ipAddresses) {
  NamesPtr names(sk_GENERAL_NAME_new_null());
  for (const auto& dns : dnsNames) {
    GENERAL_NAME* gn = GENERAL_NAME_new();
    ASN1_IA5STRING* text = ASN1_IA5STRING_new();
    ASN1_STRING_set(text, dns.data(), static_cast<int>(dns.size()));
    GENERAL_NAME_set0_value(gn, GEN_DNS, text);
    sk_GENERAL_NAME_push(names.get(), gn);
  }
  for (const auto& ip : ipAddresses) {
    ASN1_OCTET_STRING* octets = a2i_IPADDRESS(ip.c_str());
    if (!octets) {
      ERR_clear_error();
      return Status::BadRequest("invalid IP address SAN \"" + ip + "\"");
    }
    GENERAL_NAME* gn = GENERAL_NAME_new();
    GENERAL_NAME_set0_value(gn, GEN_IPADD, octets);
    sk_GENERAL_NAME_push(names.get(), gn);
  }
  return names;
}

void readAltNames(const GENERAL_NAMES* names, CertInfo& info) {
  if (!names) return;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* gn = sk_GENERAL_NAME_value(names, i);
    if (gn->type == GEN_DNS) {
      const ASN1_IA5STRING* s = gn->d.dNSName;
      info.dnsNames.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                                 static_cast<size_t>(ASN1_STRING_length(s)));
    } else if (gn->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* s = gn->d.iPAddress;
      int len = ASN1_STRING_length(s);
      char buf[INET6_ADDRSTRLEN] = {};
      int family = len == 4 ? AF_INET : len == 16 ? AF_INET6 : 0;
      if (family && inet_ntop(family, ASN1_STRING_get0_data(s), buf, sizeof buf)) {
        info.ipAddresses.emplace_back(buf);
      }
    }
  }
}

void readExtendedKeyUsage(const EXTENDED_KEY_USAGE* eku, CertInfo& info) {
  if (!eku) return;
  for (int i = 0; i < sk_ASN1_OBJECT_num(eku); ++i) {
    int nid = OBJ_obj2nid(sk_ASN1_OBJECT_value(eku, i));
    if (nid == NID_server_auth) info.serverAuth = true;
    if (nid == NID_client_auth) info.clientAuth = true;
  }
}

// An extension from OpenSSL's config syntax, for the fixed-vocabulary ones (no caller text).
Status addConfExtension(X509* cert, X509V3_CTX* ctx, int nid, const char* value) {
  ExtPtr ext(X509V3_EXT_conf_nid(nullptr, ctx, nid, value));
  if (!ext || !X509_add_ext(cert, ext.get(), -1)) {
    return sslFailure(std::string("cannot add extension ") + OBJ_nid2sn(nid));
  }
  return Status::Ok();
}

Status setRandomSerial(X509* cert) {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return sslFailure("no randomness for serial");
  bytes[0] &= 0x7f;  // DER integers are signed: keep the serial positive
  BnPtr bn(BN_bin2bn(bytes, sizeof bytes, nullptr));
  if (!bn || !BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert))) {
    return sslFailure("cannot set serial");
  }
  return Status::Ok();
}

// Everything but the key usages: the serial, names, validity, key, SKI/AKI. A clock skew of a
// few minutes between machines must not make a fresh certificate "not yet valid"; a short-lived
// one (tests of rotation) is backdated by a fifth of its validity at most, so that most of its
// lifetime lies ahead.
Status fillCertificate(X509* cert, X509* issuer, EVP_PKEY* publicKey, const X509_NAME* subject,
                       std::chrono::seconds validity) {
  const long kBackdateSeconds = std::min<long>(5 * 60, static_cast<long>(validity.count() / 5));
  if (!X509_set_version(cert, 2)) return sslFailure("cannot set version");
  if (Status s = setRandomSerial(cert); !s.ok()) return s;
  if (!X509_set_subject_name(cert, const_cast<X509_NAME*>(subject))) {
    return sslFailure("cannot set subject");
  }
  X509_NAME* issuerName = issuer ? X509_get_subject_name(issuer) : const_cast<X509_NAME*>(subject);
  if (!X509_set_issuer_name(cert, issuerName)) return sslFailure("cannot set issuer");
  long seconds =
      static_cast<long>(std::chrono::duration_cast<std::chrono::seconds>(validity).count());
  if (!X509_gmtime_adj(X509_getm_notBefore(cert), -kBackdateSeconds) ||
      !X509_gmtime_adj(X509_getm_notAfter(cert), seconds)) {
    return sslFailure("cannot set validity");
  }
  if (!X509_set_pubkey(cert, publicKey)) return sslFailure("cannot set public key");
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer ? issuer : cert, cert, nullptr, nullptr, 0);
  if (Status s = addConfExtension(cert, &ctx, NID_subject_key_identifier, "hash"); !s.ok()) {
    return s;
  }
  return addConfExtension(cert, &ctx, NID_authority_key_identifier, "keyid:always");
}

// Leaf extensions: not a CA, digitalSignature+keyEncipherment, the asked EKUs and SANs.
Status addLeafExtensions(X509* cert, X509* issuer, const CertSpec& usage,
                         const std::vector<std::string>& dnsNames,
                         const std::vector<std::string>& ipAddresses) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  if (Status s = addConfExtension(cert, &ctx, NID_basic_constraints, "critical,CA:FALSE");
      !s.ok()) {
    return s;
  }
  if (Status s =
          addConfExtension(cert, &ctx, NID_key_usage, "critical,digitalSignature,keyEncipherment");
      !s.ok()) {
    return s;
  }
  std::string eku;
  if (usage.serverAuth) eku = "serverAuth";
  if (usage.clientAuth) eku += eku.empty() ? "clientAuth" : ",clientAuth";
  if (!eku.empty()) {
    if (Status s = addConfExtension(cert, &ctx, NID_ext_key_usage, eku.c_str()); !s.ok()) return s;
  }
  if (!dnsNames.empty() || !ipAddresses.empty()) {
    auto names = buildAltNames(dnsNames, ipAddresses);
    if (!names.ok()) return names.status();
    if (!X509_add1_ext_i2d(cert, NID_subject_alt_name, names->get(), 0, X509V3_ADD_DEFAULT)) {
      return sslFailure("cannot add subjectAltName");
    }
  }
  return Status::Ok();
}

Result<std::string> signAndEncode(X509* cert, EVP_PKEY* signer) {
  if (!X509_sign(cert, signer, EVP_sha256())) return sslFailure("cannot sign certificate");
  return certificatePem(cert);
}

struct LoadedCa {
  CertPtr cert;
  KeyPtr key;
};

Result<LoadedCa> loadCa(const KeyAndCert& ca) {
  auto cert = readCertificate(ca.certPem);
  if (!cert.ok()) return cert.status();
  auto key = readPrivateKey(ca.keyPem);
  if (!key.ok()) return key.status();
  if (X509_check_private_key(cert->get(), key->get()) != 1) {
    return badInput("CA key does not match the CA certificate");
  }
  return LoadedCa{std::move(cert).value(), std::move(key).value()};
}

std::chrono::system_clock::time_point toTimePoint(const ASN1_TIME* t) {
  std::tm tm{};
  if (!t || ASN1_TIME_to_tm(t, &tm) != 1) return {};
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

}  // namespace

Result<std::string> generateKey() {
  auto key = newEcKey();
  if (!key.ok()) return key.status();
  return privateKeyPem(key->get());
}

Result<std::string> generateRsaKey(int bits) {
  KeyPtr key(EVP_RSA_gen(static_cast<unsigned int>(bits)));
  if (!key) return sslFailure("cannot generate RSA key");
  return privateKeyPem(key.get());
}

Result<std::string> publicKeyOf(const std::string& privateKeyPem) {
  auto key = readPrivateKey(privateKeyPem);
  if (!key.ok()) return key.status();
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!PEM_write_bio_PUBKEY(bio.get(), key->get())) return sslFailure("cannot encode public key");
  return bioText(bio.get());
}

Result<KeyAndCert> createCA(const std::string& commonName, std::chrono::hours validity) {
  auto key = newEcKey();
  if (!key.ok()) return key.status();
  CertPtr cert(X509_new());
  NamePtr subject(X509_NAME_new());
  if (Status s = setSubject(subject.get(), commonName, {}); !s.ok()) return s;
  if (Status s = fillCertificate(cert.get(), nullptr, key->get(), subject.get(), validity);
      !s.ok()) {
    return s;
  }
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
  if (Status s = addConfExtension(cert.get(), &ctx, NID_basic_constraints, "critical,CA:TRUE");
      !s.ok()) {
    return s;
  }
  if (Status s = addConfExtension(cert.get(), &ctx, NID_key_usage,
                                  "critical,digitalSignature,keyCertSign,cRLSign");
      !s.ok()) {
    return s;
  }
  auto certPem = signAndEncode(cert.get(), key->get());
  if (!certPem.ok()) return certPem.status();
  auto keyPem = privateKeyPem(key->get());
  if (!keyPem.ok()) return keyPem.status();
  return KeyAndCert{std::move(keyPem).value(), std::move(certPem).value()};
}

Result<KeyAndCert> issue(const KeyAndCert& ca, const CertSpec& spec) {
  auto signer = loadCa(ca);
  if (!signer.ok()) return signer.status();
  auto key = newEcKey();
  if (!key.ok()) return key.status();
  NamePtr subject(X509_NAME_new());
  if (Status s = setSubject(subject.get(), spec.commonName, spec.organizations); !s.ok()) return s;
  CertPtr cert(X509_new());
  if (Status s =
          fillCertificate(cert.get(), signer->cert.get(), key->get(), subject.get(), spec.validity);
      !s.ok()) {
    return s;
  }
  if (Status s =
          addLeafExtensions(cert.get(), signer->cert.get(), spec, spec.dnsNames, spec.ipAddresses);
      !s.ok()) {
    return s;
  }
  auto certPem = signAndEncode(cert.get(), signer->key.get());
  if (!certPem.ok()) return certPem.status();
  auto keyPem = privateKeyPem(key->get());
  if (!keyPem.ok()) return keyPem.status();
  return KeyAndCert{std::move(keyPem).value(), std::move(certPem).value()};
}

Result<std::string> createCsr(const std::string& keyPem, const CertSpec& spec) {
  auto key = readPrivateKey(keyPem);
  if (!key.ok()) return key.status();
  ReqPtr req(X509_REQ_new());
  if (!X509_REQ_set_version(req.get(), 0)) return sslFailure("cannot set CSR version");
  if (Status s =
          setSubject(X509_REQ_get_subject_name(req.get()), spec.commonName, spec.organizations);
      !s.ok()) {
    return s;
  }
  if (!X509_REQ_set_pubkey(req.get(), key->get())) return sslFailure("cannot set CSR key");
  if (!spec.dnsNames.empty() || !spec.ipAddresses.empty()) {
    auto names = buildAltNames(spec.dnsNames, spec.ipAddresses);
    if (!names.ok()) return names.status();
    ExtStackPtr exts(sk_X509_EXTENSION_new_null());
    X509_EXTENSION* san = X509V3_EXT_i2d(NID_subject_alt_name, 0, names->get());
    if (!san) return sslFailure("cannot encode subjectAltName");
    sk_X509_EXTENSION_push(exts.get(), san);
    if (!X509_REQ_add_extensions(req.get(), exts.get())) {
      return sslFailure("cannot add CSR extensions");
    }
  }
  if (!X509_REQ_sign(req.get(), key->get(), EVP_sha256())) return sslFailure("cannot sign CSR");
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!PEM_write_bio_X509_REQ(bio.get(), req.get())) return sslFailure("cannot encode CSR");
  return bioText(bio.get());
}

Result<CertInfo> parseCsr(const std::string& csrPem) {
  auto req = readCsr(csrPem);
  if (!req.ok()) return req.status();
  EVP_PKEY* publicKey = X509_REQ_get0_pubkey(req->get());
  if (!publicKey || X509_REQ_verify(req->get(), publicKey) != 1) {
    ERR_clear_error();
    return Status::BadRequest("certificate signing request: signature does not match its key");
  }
  CertInfo info;
  readSubject(X509_REQ_get_subject_name(req->get()), info);
  ExtStackPtr exts(X509_REQ_get_extensions(req->get()));
  if (exts) {
    NamesPtr names(static_cast<GENERAL_NAMES*>(
        X509V3_get_d2i(exts.get(), NID_subject_alt_name, nullptr, nullptr)));
    readAltNames(names.get(), info);
    EkuPtr eku(static_cast<EXTENDED_KEY_USAGE*>(
        X509V3_get_d2i(exts.get(), NID_ext_key_usage, nullptr, nullptr)));
    readExtendedKeyUsage(eku.get(), info);
  }
  ERR_clear_error();
  return info;
}

Result<std::string> signCsr(const KeyAndCert& ca, const std::string& csrPem,
                            const CertSpec& usage) {
  auto info = parseCsr(csrPem);
  if (!info.ok()) return info.status();
  auto req = readCsr(csrPem);
  if (!req.ok()) return req.status();
  auto signer = loadCa(ca);
  if (!signer.ok()) return signer.status();
  // The subject is rebuilt from the parsed names so nothing but CN and O reaches the certificate.
  NamePtr subject(X509_NAME_new());
  if (Status s = setSubject(subject.get(), info->commonName, info->organizations); !s.ok()) {
    return s;
  }
  CertPtr cert(X509_new());
  if (Status s = fillCertificate(cert.get(), signer->cert.get(), X509_REQ_get0_pubkey(req->get()),
                                 subject.get(), usage.validity);
      !s.ok()) {
    return s;
  }
  if (Status s = addLeafExtensions(cert.get(), signer->cert.get(), usage, info->dnsNames,
                                   info->ipAddresses);
      !s.ok()) {
    return s;
  }
  return signAndEncode(cert.get(), signer->key.get());
}

Result<CertInfo> parseCertificate(const std::string& certPem) {
  auto cert = readCertificate(certPem);
  if (!cert.ok()) return cert.status();
  CertInfo info;
  readSubject(X509_get_subject_name(cert->get()), info);
  NamesPtr names(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert->get(), NID_subject_alt_name, nullptr, nullptr)));
  readAltNames(names.get(), info);
  EkuPtr eku(static_cast<EXTENDED_KEY_USAGE*>(
      X509_get_ext_d2i(cert->get(), NID_ext_key_usage, nullptr, nullptr)));
  readExtendedKeyUsage(eku.get(), info);
  info.isCA =
      X509_check_ca(cert->get()) >= 1 && (X509_get_extension_flags(cert->get()) & EXFLAG_CA) != 0;
  info.notBefore = toTimePoint(X509_get0_notBefore(cert->get()));
  info.notAfter = toTimePoint(X509_get0_notAfter(cert->get()));
  if (BIGNUM* serial = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert->get()), nullptr)) {
    if (char* hex = BN_bn2hex(serial)) {
      info.serialHex = hex;
      OPENSSL_free(hex);
    }
    BN_free(serial);
  }
  ERR_clear_error();
  return info;
}

std::chrono::system_clock::time_point rotationDeadline(const CertInfo& cert, double random01,
                                                       double minFraction, double maxFraction) {
  const auto lifetime = cert.notAfter - cert.notBefore;
  const double fraction = minFraction + (maxFraction - minFraction) * random01;
  return cert.notBefore +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(lifetime * fraction);
}

Status verifyCertificate(const std::string& caPem, const std::string& certPem) {
  auto cert = readCertificate(certPem);
  if (!cert.ok()) {
    return Status::Unauthorized("certificate is malformed: " + cert.status().message());
  }
  StorePtr store(X509_STORE_new());
  BioPtr bio = memoryBio(caPem);
  int loaded = 0;
  while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(store.get(), ca);
    X509_free(ca);
    ++loaded;
  }
  ERR_clear_error();  // the end of the PEM list is reported as an error
  if (loaded == 0) return Status::Unauthorized("no CA certificate to verify against");
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (!ctx || !X509_STORE_CTX_init(ctx.get(), store.get(), cert->get(), nullptr)) {
    return sslFailure("cannot set up certificate verification");
  }
  if (X509_verify_cert(ctx.get()) != 1) {
    int err = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    return Status::Unauthorized(std::string("certificate not accepted: ") +
                                X509_verify_cert_error_string(err));
  }
  return Status::Ok();
}

Status writePemFile(const std::string& path, const std::string& pem, bool isPrivate) {
  std::string temp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, isPrivate ? 0600 : 0644);
  if (fd < 0) return Status::Internal("cannot create " + temp + ": " + std::strerror(errno));
  // The umask must not widen or narrow what we promise.
  ::fchmod(fd, isPrivate ? 0600 : 0644);
  size_t done = 0;
  while (done < pem.size()) {
    ssize_t n = ::write(fd, pem.data() + done, pem.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string err = std::strerror(errno);
      ::close(fd);
      ::unlink(temp.c_str());
      return Status::Internal("cannot write " + temp + ": " + err);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(temp.c_str());
    return Status::Internal("cannot write " + temp + ": " + std::strerror(errno));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    std::string err = std::strerror(errno);
    ::unlink(temp.c_str());
    return Status::Internal("cannot rename " + temp + " to " + path + ": " + err);
  }
  return Status::Ok();
}

Result<std::string> readPemFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFoundMessage("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().find("-----BEGIN ") == std::string::npos) {
    return Status::BadRequest(path + " holds no PEM data");
  }
  return text.str();
}

std::string takeOpenSslErrors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out;
}

}  // namespace minik8s::pki
