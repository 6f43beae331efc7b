#include "mesh/identity.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <memory>

#include "common/base64.h"
#include "common/openssl_ptr.h"

namespace minik8s::mesh {

namespace identity_detail {

using Bio = openssl::BioPtr;
using Key = openssl::KeyPtr;
using Cert = openssl::CertPtr;
using Req = openssl::ReqPtr;
using Name = openssl::NamePtr;
using Names = openssl::NamesPtr;
using Ext = openssl::ExtPtr;
using Bn = openssl::BnPtr;
using Exts = openssl::ExtStackPtr;

Status failure(const std::string& what) {
  std::string detail = pki::takeOpenSslErrors();
  return Status::BadRequest(what + (detail.empty() ? "" : ": " + detail));
}

Bio memBio(const std::string& text) {
  return Bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

std::string bioText(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

Result<Req> readReq(const std::string& pem) {
  Bio bio = memBio(pem);
  Req req(PEM_read_bio_X509_REQ(bio.get(), nullptr, nullptr, nullptr));
  if (!req) return failure("certificate signing request: not a PEM CERTIFICATE REQUEST");
  return req;
}

Result<Cert> readCert(const std::string& pem) {
  Bio bio = memBio(pem);
  Cert cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return failure("not a PEM certificate");
  return cert;
}

Result<Key> readKey(const std::string& pem) {
  Bio bio = memBio(pem);
  Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return failure("not a PEM private key");
  return key;
}

std::string asn1Text(const ASN1_STRING* s) {
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                     static_cast<size_t>(ASN1_STRING_length(s)));
}

void readNames(const GENERAL_NAMES* names, RequestedNames& out) {
  if (!names) return;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* gn = sk_GENERAL_NAME_value(names, i);
    switch (gn->type) {
      case GEN_URI:
        out.uris.push_back(asn1Text(gn->d.uniformResourceIdentifier));
        break;
      case GEN_DNS:
        out.dnsNames.push_back(asn1Text(gn->d.dNSName));
        break;
      case GEN_EMAIL:
        out.emails.push_back(asn1Text(gn->d.rfc822Name));
        break;
      case GEN_IPADD: {
        const ASN1_OCTET_STRING* s = gn->d.iPAddress;
        char buf[INET6_ADDRSTRLEN] = {};
        int len = ASN1_STRING_length(s);
        int family = len == 4 ? AF_INET : len == 16 ? AF_INET6 : 0;
        if (family && inet_ntop(family, ASN1_STRING_get0_data(s), buf, sizeof buf)) {
          out.ipAddresses.emplace_back(buf);
        } else {
          out.ipAddresses.emplace_back("?");
        }
        break;
      }
      default:
        out.dnsNames.push_back("<other name>");  // anything else makes the request refused
    }
  }
}

Result<Names> uriNames(const std::vector<std::string>& uris) {
  Names names(sk_GENERAL_NAME_new_null());
  for (const auto& uri : uris) {
    GENERAL_NAME* gn = GENERAL_NAME_new();
    ASN1_IA5STRING* text = ASN1_IA5STRING_new();
    if (!gn || !text || !ASN1_STRING_set(text, uri.data(), static_cast<int>(uri.size()))) {
      GENERAL_NAME_free(gn);
      ASN1_IA5STRING_free(text);
      return failure("cannot encode URI SAN");
    }
    GENERAL_NAME_set0_value(gn, GEN_URI, text);
    sk_GENERAL_NAME_push(names.get(), gn);
  }
  return names;
}

Status addConf(X509* cert, X509V3_CTX* ctx, int nid, const char* value) {
  Ext ext(X509V3_EXT_conf_nid(nullptr, ctx, nid, value));
  if (!ext || !X509_add_ext(cert, ext.get(), -1)) {
    return failure(std::string("cannot add extension ") + OBJ_nid2sn(nid));
  }
  return Status::Ok();
}

bool validLabel(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  }
  return true;
}

}  // namespace identity_detail

using namespace identity_detail;

std::string spiffeId(const WorkloadId& id) {
  return std::string("spiffe://") + kTrustDomain + "/ns/" + id.ns + "/sa/" + id.serviceAccount;
}

std::optional<WorkloadId> parseSpiffeId(std::string_view uri) {
  const std::string prefix = std::string("spiffe://") + kTrustDomain + "/ns/";
  if (uri.substr(0, prefix.size()) != prefix) return std::nullopt;
  uri.remove_prefix(prefix.size());
  size_t slash = uri.find("/sa/");
  if (slash == std::string_view::npos) return std::nullopt;
  WorkloadId id{std::string(uri.substr(0, slash)), std::string(uri.substr(slash + 4))};
  if (!validLabel(id.ns) || !validLabel(id.serviceAccount)) return std::nullopt;
  return id;
}

std::optional<WorkloadId> serviceAccountOfUser(std::string_view username) {
  constexpr std::string_view prefix = "system:serviceaccount:";
  if (username.substr(0, prefix.size()) != prefix) return std::nullopt;
  username.remove_prefix(prefix.size());
  size_t colon = username.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  WorkloadId id{std::string(username.substr(0, colon)), std::string(username.substr(colon + 1))};
  if (!validLabel(id.ns) || !validLabel(id.serviceAccount)) return std::nullopt;
  return id;
}

Result<WorkloadId> workloadOfToken(const std::string& token) {
  size_t a = token.find('.');
  size_t b = a == std::string::npos ? a : token.find('.', a + 1);
  if (b == std::string::npos) return Status::BadRequest("service account token: not a JWT");
  auto payload = base64::decode(std::string_view(token).substr(a + 1, b - a - 1), base64::kRawUrl);
  if (!payload.ok())
    return Status::BadRequest("service account token: " + payload.status().message());
  json claims = json::parse(*payload, nullptr, false);
  if (!claims.is_object() || !claims.contains("sub") || !claims["sub"].is_string()) {
    return Status::BadRequest("service account token: no sub claim");
  }
  auto id = serviceAccountOfUser(claims["sub"].get<std::string>());
  if (!id) return Status::BadRequest("service account token: sub is not a service account");
  return *id;
}

Result<std::string> createWorkloadCsr(const std::string& keyPem, const std::string& spiffe) {
  auto key = readKey(keyPem);
  if (!key.ok()) return key.status();
  Req req(X509_REQ_new());
  if (!X509_REQ_set_version(req.get(), 0)) return failure("cannot set CSR version");
  if (!X509_REQ_set_pubkey(req.get(), key->get())) return failure("cannot set CSR key");
  auto names = uriNames({spiffe});
  if (!names.ok()) return names.status();
  Exts exts(sk_X509_EXTENSION_new_null());
  X509_EXTENSION* san = X509V3_EXT_i2d(NID_subject_alt_name, 1, names->get());
  if (!san) return failure("cannot encode subjectAltName");
  sk_X509_EXTENSION_push(exts.get(), san);
  if (!X509_REQ_add_extensions(req.get(), exts.get())) return failure("cannot add CSR extensions");
  if (!X509_REQ_sign(req.get(), key->get(), EVP_sha256())) return failure("cannot sign CSR");
  Bio bio(BIO_new(BIO_s_mem()));
  if (!PEM_write_bio_X509_REQ(bio.get(), req.get())) return failure("cannot encode CSR");
  return bioText(bio.get());
}

Result<RequestedNames> parseWorkloadCsr(const std::string& csrPem) {
  auto req = readReq(csrPem);
  if (!req.ok()) return req.status();
  EVP_PKEY* pub = X509_REQ_get0_pubkey(req->get());
  if (!pub || X509_REQ_verify(req->get(), pub) != 1) {
    ERR_clear_error();
    return Status::BadRequest("certificate signing request: signature does not match its key");
  }
  RequestedNames out;
  X509_NAME* subject = X509_REQ_get_subject_name(req->get());
  for (int i = 0; subject && i < X509_NAME_entry_count(subject); ++i) {
    const X509_NAME_ENTRY* e = X509_NAME_get_entry(subject, i);
    int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(e));
    std::string text = asn1Text(X509_NAME_ENTRY_get_data(e));
    if (nid == NID_organizationName) {
      out.organizations.push_back(text);
    } else {
      out.commonName += text.empty() ? "?" : text;  // any subject entry is refused
    }
  }
  Exts exts(X509_REQ_get_extensions(req->get()));
  if (exts) {
    Names names(static_cast<GENERAL_NAMES*>(
        X509V3_get_d2i(exts.get(), NID_subject_alt_name, nullptr, nullptr)));
    readNames(names.get(), out);
  }
  ERR_clear_error();
  return out;
}

Result<std::string> signWorkloadCsr(const pki::KeyAndCert& ca, const std::string& csrPem,
                                    std::chrono::seconds validity) {
  auto names = parseWorkloadCsr(csrPem);
  if (!names.ok()) return names.status();
  if (names->uris.empty()) return Status::BadRequest("certificate signing request: no URI SAN");
  auto req = readReq(csrPem);
  if (!req.ok()) return req.status();
  auto caCert = readCert(ca.certPem);
  if (!caCert.ok()) return caCert.status();
  auto caKey = readKey(ca.keyPem);
  if (!caKey.ok()) return caKey.status();

  Cert cert(X509_new());
  if (!X509_set_version(cert.get(), 2)) return failure("cannot set version");
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return failure("no randomness for serial");
  bytes[0] &= 0x7f;
  Bn bn(BN_bin2bn(bytes, sizeof bytes, nullptr));
  if (!bn || !BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get()))) {
    return failure("cannot set serial");
  }
  Name empty(X509_NAME_new());
  if (!X509_set_subject_name(cert.get(), empty.get()) ||
      !X509_set_issuer_name(cert.get(), X509_get_subject_name(caCert->get()))) {
    return failure("cannot set names");
  }
  if (!X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60) ||
      !X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(validity.count()))) {
    return failure("cannot set validity");
  }
  if (!X509_set_pubkey(cert.get(), X509_REQ_get0_pubkey(req->get()))) {
    return failure("cannot set public key");
  }
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, caCert->get(), cert.get(), nullptr, nullptr, 0);
  for (auto [nid, value] : {std::pair{NID_basic_constraints, "critical,CA:FALSE"},
                            {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
                            {NID_ext_key_usage, "serverAuth,clientAuth"},
                            {NID_subject_key_identifier, "hash"},
                            {NID_authority_key_identifier, "keyid:always"}}) {
    if (Status s = addConf(cert.get(), &ctx, nid, value); !s.ok()) return s;
  }
  // An empty subject makes the SAN critical (RFC 5280, 4.2.1.6).
  auto sans = uriNames(names->uris);
  if (!sans.ok()) return sans.status();
  if (!X509_add1_ext_i2d(cert.get(), NID_subject_alt_name, sans->get(), 1, X509V3_ADD_DEFAULT)) {
    return failure("cannot add subjectAltName");
  }
  if (!X509_sign(cert.get(), caKey->get(), EVP_sha256())) return failure("cannot sign");
  Bio bio(BIO_new(BIO_s_mem()));
  if (!PEM_write_bio_X509(bio.get(), cert.get())) return failure("cannot encode certificate");
  return bioText(bio.get());
}

Result<std::vector<std::string>> certificateUris(const std::string& certPem) {
  auto cert = readCert(certPem);
  if (!cert.ok()) return cert.status();
  RequestedNames out;
  Names names(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert->get(), NID_subject_alt_name, nullptr, nullptr)));
  readNames(names.get(), out);
  ERR_clear_error();
  return out.uris;
}

CsrDecision decideWorkloadCsr(const json& csr) {
  CsrDecision d;
  const json spec = csr.value("spec", json::object());
  if (spec.value("signerName", "") != kWorkloadSigner) return d;
  d.ours = true;
  const std::string user = spec.value("username", "");
  auto id = serviceAccountOfUser(user);
  if (!id) {
    d.reason = "requester " + user + " is not a service account";
    return d;
  }
  auto pem = base64::decode(spec.value("request", ""));
  if (!pem.ok()) {
    d.reason = "spec.request: " + pem.status().message();
    return d;
  }
  auto names = parseWorkloadCsr(*pem);
  if (!names.ok()) {
    d.reason = "spec.request: " + names.status().message();
    return d;
  }
  const std::string want = spiffeId(*id);
  if (!names->commonName.empty() || !names->organizations.empty()) {
    d.reason = "the request must have an empty subject";
  } else if (!names->dnsNames.empty() || !names->ipAddresses.empty() || !names->emails.empty()) {
    d.reason = "the request may only name a URI SAN";
  } else if (names->uris.size() != 1 || names->uris[0] != want) {
    d.reason = "the request must name exactly " + want + " (the requester's identity)";
  }
  if (!d.reason.empty()) return d;
  d.approve = true;
  d.validity = kDefaultWorkloadCertTtl;
  if (spec.contains("expirationSeconds") && spec["expirationSeconds"].is_number_integer()) {
    d.validity = std::chrono::seconds(spec["expirationSeconds"].get<int64_t>());
  }
  d.validity = std::clamp(d.validity, std::chrono::seconds(kMinWorkloadCertTtl),
                          std::chrono::seconds(kMaxWorkloadCertTtl));
  return d;
}

Hello classifyHello(std::string_view b) {
  if (b.empty()) return Hello::kIncomplete;
  if (static_cast<uint8_t>(b[0]) != 0x16) return Hello::kPlain;  // handshake record
  if (b.size() < 5) return Hello::kIncomplete;
  if (b[1] != 0x03) return Hello::kPlain;
  auto u8 = [&b](size_t i) { return static_cast<size_t>(static_cast<uint8_t>(b[i])); };
  size_t recordLen = (u8(3) << 8) | u8(4);
  if (b.size() < 5 + recordLen) return Hello::kIncomplete;
  // Within the first record: handshake type 1 (ClientHello), 3-byte length, version, random.
  std::string_view r = b.substr(5, recordLen);
  auto at = [&r](size_t i) { return static_cast<size_t>(static_cast<uint8_t>(r[i])); };
  size_t pos = 0;
  if (r.size() < 4 || at(0) != 1) return Hello::kOtherTls;
  pos = 4 + 2 + 32;
  if (pos + 1 > r.size()) return Hello::kOtherTls;
  pos += 1 + at(pos);  // session id
  if (pos + 2 > r.size()) return Hello::kOtherTls;
  pos += 2 + ((at(pos) << 8) | at(pos + 1));  // cipher suites
  if (pos + 1 > r.size()) return Hello::kOtherTls;
  pos += 1 + at(pos);  // compression methods
  if (pos + 2 > r.size()) return Hello::kOtherTls;
  size_t end = std::min(r.size(), pos + 2 + ((at(pos) << 8) | at(pos + 1)));
  pos += 2;
  while (pos + 4 <= end) {
    size_t type = (at(pos) << 8) | at(pos + 1);
    size_t len = (at(pos + 2) << 8) | at(pos + 3);
    pos += 4;
    if (pos + len > end) break;
    if (type == 16 && len >= 2) {  // application_layer_protocol_negotiation
      size_t p = pos + 2;
      while (p < pos + len) {
        size_t n = at(p);
        if (p + 1 + n > pos + len) break;
        if (r.substr(p + 1, n) == kMeshAlpn) return Hello::kMeshTls;
        p += 1 + n;
      }
    }
    pos += len;
  }
  return Hello::kOtherTls;
}

}  // namespace minik8s::mesh
