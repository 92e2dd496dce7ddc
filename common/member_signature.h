// What a member says about a broadcast, signed with its TLS identity: a source's digest key
// (Payload.digest_key) and an allgather holder's part key (Part.digest_key). Those keys reach
// the other members through the control tree, whose relays are members too; a relay can
// forward them but, lacking the source's private key, cannot put its own in their place
// unnoticed. A cluster without TLS has no per-member identity, and these are not made.
//
// Members verify as the data plane checks a peer (daemon/transport/tls/tls_transport.cc): the
// certificate chains to the cluster's CA and names, in its subjectAltName, the host of the
// member's data address in the member's own cluster file (not the plan's, which came through
// the relays). Thread-safe.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "common/ids.h"
#include "common/signing.h"
#include "include/gridcast/result.h"

namespace gridcast {

// The bytes a source signs for the digest key of plan `plan`; an allgather holder for its
// part's key described with `nonce`.
std::string DigestKeyStatement(const PlanId& plan, const PublicKey& key);
std::string PartKeyStatement(std::string_view nonce, const PublicKey& key);

class MemberSigner {
 public:
  // This member's certificate (PEM, with its chain) and private key, as gridcastd --tls-cert and
  // --tls-key name them.
  static Result<std::shared_ptr<const MemberSigner>> Load(const std::string& cert_path, const std::string& key_path);
  ~MemberSigner();

  const std::string& certificate() const { return certificate_pem_; }
  // The private key's signature of `message` (SHA-256 for RSA and ECDSA keys, none for Ed25519).
  Result<std::string> Sign(std::string_view message) const;

 private:
  MemberSigner() = default;
  std::string certificate_pem_;
  void* key_ = nullptr;  // EVP_PKEY
};

class MemberVerifier {
 public:
  // The cluster's CA (PEM), as the cluster file's tls_ca names it.
  static Result<std::shared_ptr<const MemberVerifier>> Load(const std::string& ca_path);
  ~MemberVerifier();

  // OK when `certificate` (PEM, leaf first) chains to the CA, names `host` and signed `message`
  // with `signature`; Unauthenticated saying which failed. `who` names the signer in errors.
  Status Verify(std::string_view certificate, const std::string& host, std::string_view message,
                std::string_view signature, const std::string& who) const;

 private:
  MemberVerifier() = default;
  void* store_ = nullptr;  // X509_STORE
};

}  // namespace gridcast
