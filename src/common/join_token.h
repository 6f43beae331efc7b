// The cluster's node join token and what it proves.
//
// Format, when the server has a cluster CA (k3s-like, with a kubeadm-style bootstrap token):
//   K10<sha256 hex of the CA certificate's DER>::<id>.<secret>
// id is 6 and secret 16 characters of [a-z0-9]. The hash lets an agent that has nothing but the
// token fetch the CA from https://server/cacerts without verification and still trust it (it
// accepts the CA only when the hash matches). Presented as a bearer token (the whole token or
// only "<id>.<secret>"), it authenticates as user "system:bootstrap:<id>" in group
// "system:bootstrappers", which may only create node CSRs (node_credentials.h on the agent side;
// apiserver/join_token.h authenticates it).
// Old tokens without "::" ("K10<hex>" or anything else an admin gave) stay accepted: they carry
// no CA hash, and their id is derived from a hash of the token.
//
// The server creates the token at first start and keeps it in <data-dir>/token (mode 0600), or
// uses the one given with `minik8s server --token`. Thread-safe (no shared state).
#pragma once

#include <optional>
#include <string>

#include "common/status.h"

namespace minik8s {

struct JoinToken {
  std::string caHash;  // lower-case sha256 hex of the CA certificate DER; "" when absent
  std::string id;      // names the bootstrap user
  std::string secret;
  bool legacy = false;  // an old token without "::": the whole text is the secret

  // "K10<caHash>::<id>.<secret>", "<id>.<secret>" without a hash, or the legacy text.
  std::string toString() const;
  // What an agent presents as its bearer token.
  std::string bearerToken() const;
};

// A new token with a fresh id and secret; with `caPem` the token carries its hash.
Result<JoinToken> makeJoinToken(const std::string& caPem = "");
// Parses a token. Text with "::" must be "K10<64 hex>::<id>.<secret>" (BadRequest otherwise);
// "<id>.<secret>" is a token without hash; any other non-empty text is a legacy token.
Result<JoinToken> parseJoinToken(const std::string& text);

// sha256 hex of the DER of the first certificate in `caPem`.
Result<std::string> caCertificateHash(const std::string& caPem);
// True when `token` carries a CA hash and it is the hash of `caPem`.
bool caHashMatches(const std::string& caPem, const std::string& token);

// Returns `given` when not empty (and stores it), else the stored token, else a new one (with
// the hash of `caPem` when given). A given "<id>.<secret>" gets the CA hash prefixed. A stored
// token is returned as stored, so agents that joined with it keep working.
Result<std::string> loadOrCreateJoinToken(const std::string& dataDir, const std::string& given,
                                          const std::string& caPem = "");

// Whether `presented` is the token (whole, or "<id>.<secret>" for a token that is not legacy),
// compared in constant time.
bool joinTokenMatches(const JoinToken& token, const std::string& presented);
// Whether `text` has the shape of a join token ("K10..." or "<6>.<16>").
bool looksLikeJoinToken(const std::string& text);

}  // namespace minik8s
