#include "storage/etcd/etcd_store.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "etcd/rpc.grpc.pb.h"
#include "storage/key_range.h"

namespace minik8s::storage::etcd {

namespace pb = ::etcdserverpb;

namespace {

constexpr auto kCallTimeout = std::chrono::seconds(30);
// How long a call waits for the members to agree on a leader again.
constexpr auto kElectionWait = std::chrono::seconds(10);

// etcd wants a non-empty key; "\0" as key or range end means "from the very first key" /
// "to the very end".
std::string rangeKey(const std::string& key) { return key.empty() ? std::string(1, '\0') : key; }
std::string rangeEnd(const std::string& prefix) {
  std::string end = prefixEnd(prefix);
  return end.empty() ? std::string(1, '\0') : end;
}

Status fromGrpc(const grpc::Status& s, const std::string& what) {
  const std::string msg = "etcd " + what + ": " + s.error_message();
  switch (s.error_code()) {
    case grpc::StatusCode::OK:
      return Status::Ok();
    case grpc::StatusCode::OUT_OF_RANGE:
      if (s.error_message().find("compacted") != std::string::npos) return Status::Expired(msg);
      return Status::BadRequest(msg);  // "required revision is a future revision"
    case grpc::StatusCode::UNAVAILABLE:
      return Status::Unavailable(msg);
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return Status::Timeout(msg);
    case grpc::StatusCode::INVALID_ARGUMENT:
      return Status::BadRequest(msg);
    default:
      return Status::Internal(msg);
  }
}

Status notFound(const std::string& key) {
  return Status::NotFoundMessage("key \"" + key + "\" not found");
}

KeyValue fromPb(const mvccpb::KeyValue& kv) {
  return KeyValue{kv.key(), kv.value(), kv.create_revision(), kv.mod_revision()};
}

pb::Compare* addCompare(pb::TxnRequest& txn, const std::string& key, int64_t expectedRevision) {
  pb::Compare* c = txn.add_compare();
  c->set_key(key);
  if (expectedRevision != 0) {
    c->set_target(pb::Compare::MOD);
    c->set_result(pb::Compare::EQUAL);
    c->set_mod_revision(expectedRevision);
  } else {  // the key exists: it has a create revision
    c->set_target(pb::Compare::CREATE);
    c->set_result(pb::Compare::GREATER);
    c->set_create_revision(0);
  }
  return c;
}

// Why a conditional update/remove failed, from the range in its failure branch.
Status refusal(const pb::TxnResponse& resp, const std::string& key, int64_t expected) {
  if (resp.responses_size() == 0 || resp.responses(0).response_range().kvs_size() == 0) {
    return notFound(key);
  }
  int64_t actual = resp.responses(0).response_range().kvs(0).mod_revision();
  return Status::ConflictMessage("key \"" + key + "\" has revision " + std::to_string(actual) +
                                 ", expected " + std::to_string(expected));
}

// The revision at which a refused create/update that had failed in flight wrote `value` itself:
// the key (from the refusal's range) holds exactly that value, written after `expected` (0 for a
// create). Found by the chaos soak: a compare-and-swap whose etcd member died after committing
// it was sent again, refused by its own first write, and the client was told 409 Conflict for
// an applied write. Two writers storing byte-identical values from the same revision cannot be
// told apart; the objects minik8s stores differ in what their writers change.
std::optional<int64_t> ownEarlierWrite(const pb::TxnResponse& resp, const std::string& value,
                                       int64_t expected) {
  if (resp.responses_size() == 0 || resp.responses(0).response_range().kvs_size() == 0)
    return std::nullopt;
  const auto& kv = resp.responses(0).response_range().kvs(0);
  if (kv.value() != value || kv.mod_revision() <= expected) return std::nullopt;
  return kv.mod_revision();
}

}  // namespace

bool writeNeverProposed(int grpcCode, const std::string& message) {
  if (grpcCode != static_cast<int>(grpc::StatusCode::UNAVAILABLE)) return false;
  // etcd refuses a request before proposing it when the member knows no leader.
  if (message.rfind("etcdserver: no leader", 0) == 0) return true;
  // gRPC could not open a connection: nothing was sent. A connection that breaks during the
  // call ("Socket closed", "Connection reset by peer", "Broken pipe") may have carried it.
  for (const char* notSent : {"failed to connect to all addresses",
                              "connections to all backends failing", "Connection refused",
                              "DNS resolution failed"})
    if (message.find(notSent) != std::string::npos) return true;
  return false;
}

namespace {

struct Endpoint {
  std::string target;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::KV::Stub> kv;
  std::unique_ptr<pb::Watch::Stub> watch;
};

class EtcdWatchStream : public WatchStream {
 public:
  EtcdWatchStream(std::unique_ptr<grpc::ClientContext> ctx,
                  std::unique_ptr<grpc::ClientReaderWriter<pb::WatchRequest, pb::WatchResponse>> rw,
                  std::shared_ptr<std::atomic<int64_t>> compactedSeen)
      : ctx_(std::move(ctx)), rw_(std::move(rw)) {
    reader_ = std::thread([this, compactedSeen] { readLoop(compactedSeen); });
  }
  ~EtcdWatchStream() override {
    close();
    reader_.join();
  }

  Status next(std::vector<WatchEvent>& out, std::chrono::milliseconds timeout) override {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return closed_ || !queue_.empty() || !failure_.ok(); });
    if (closed_) return Status::Unavailable("watch stream closed");
    // Deliver what arrived before a failure first; the failure comes on the next call.
    if (queue_.empty() && !failure_.ok()) return failure_;
    for (auto& ev : queue_) out.push_back(std::move(ev));
    queue_.clear();
    return Status::Ok();
  }

  void close() override {
    {
      std::lock_guard lock(mu_);
      if (closed_) return;
      closed_ = true;
    }
    cv_.notify_all();
    ctx_->TryCancel();
  }

 private:
  void readLoop(std::shared_ptr<std::atomic<int64_t>> compactedSeen) {
    pb::WatchResponse resp;
    Status failure;
    while (rw_->Read(&resp)) {
      if (resp.compact_revision() != 0) {
        int64_t seen = compactedSeen->load();
        while (seen < resp.compact_revision() &&
               !compactedSeen->compare_exchange_weak(seen, resp.compact_revision())) {
        }
        failure = Status::Expired("etcd watch: revision compacted at " +
                                  std::to_string(resp.compact_revision()));
        break;
      }
      if (resp.canceled()) {
        failure = Status::Unavailable("etcd watch canceled: " + resp.cancel_reason());
        break;
      }
      std::lock_guard lock(mu_);
      for (const mvccpb::Event& e : resp.events()) {
        WatchEvent ev;
        ev.kv.key = e.kv().key();
        ev.kv.modRevision = e.kv().mod_revision();
        if (e.type() == mvccpb::Event::DELETE) {
          ev.type = WatchEvent::Type::kDelete;
        } else {
          ev.type = WatchEvent::Type::kPut;
          ev.kv.value = e.kv().value();
          ev.kv.createRevision = e.kv().create_revision();
        }
        if (e.has_prev_kv()) ev.prevValue = e.prev_kv().value();
        queue_.push_back(std::move(ev));
      }
      if (resp.events_size() > 0) cv_.notify_all();
    }
    if (failure.ok()) {
      ctx_->TryCancel();
      grpc::Status s = rw_->Finish();
      failure = fromGrpc(s.ok() ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "stream ended") : s,
                         "watch");
    } else {
      ctx_->TryCancel();
      rw_->Finish();
    }
    std::lock_guard lock(mu_);
    failure_ = failure;
    cv_.notify_all();
  }

  std::unique_ptr<grpc::ClientContext> ctx_;
  std::unique_ptr<grpc::ClientReaderWriter<pb::WatchRequest, pb::WatchResponse>> rw_;
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<WatchEvent> queue_;
  Status failure_;
  bool closed_ = false;
};

}  // namespace

struct EtcdStore::Impl {
  std::vector<Endpoint> endpoints;
  std::atomic<size_t> preferred{0};
  // Shared with watch streams, which may outlive the store.
  std::shared_ptr<std::atomic<int64_t>> compacted = std::make_shared<std::atomic<int64_t>>(0);

  // Runs one unary KV call, trying the endpoints in order while they are unreachable. While
  // the members that answer say UNAVAILABLE ("etcdserver: leader changed", "no leader": an
  // election after a member died takes a second or two) it tries again with a growing pause, as
  // etcd's clientv3 retries; when no member answers at all it fails at once.
  // Our writes are transactions guarded by a compare, so one that did apply before the error
  // is never applied twice; `inFlightFailure` (when given) is set when a call failed in a way
  // that may have applied it, for the caller to recognise its own first attempt in a refusal.
  template <typename Call>
  grpc::Status callKv(Call&& call, bool* inFlightFailure = nullptr) {
    const size_t n = endpoints.size();
    const auto giveUp = std::chrono::steady_clock::now() + kElectionWait;
    auto pause = std::chrono::milliseconds(50);
    grpc::Status last;
    while (true) {
      const size_t first = preferred.load();
      bool electing = false;
      for (size_t i = 0; i < n; ++i) {
        size_t idx = (first + i) % n;
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + kCallTimeout);
        last = call(*endpoints[idx].kv, &ctx);
        if (last.error_code() != grpc::StatusCode::UNAVAILABLE) {
          preferred.store(idx);
          return last;
        }
        if (inFlightFailure && !writeNeverProposed(last.error_code(), last.error_message()))
          *inFlightFailure = true;
        electing = electing || last.error_message().rfind("etcdserver:", 0) == 0;
      }
      if (!electing || std::chrono::steady_clock::now() + pause > giveUp) return last;
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(800));
    }
  }

  Result<pb::TxnResponse> txn(const pb::TxnRequest& req, const std::string& what,
                              bool* inFlightFailure = nullptr) {
    pb::TxnResponse resp;
    grpc::Status s = callKv(
        [&](pb::KV::Stub& kv, grpc::ClientContext* ctx) { return kv.Txn(ctx, req, &resp); },
        inFlightFailure);
    if (!s.ok()) return fromGrpc(s, what);
    return resp;
  }

  Result<pb::RangeResponse> range(const pb::RangeRequest& req, const std::string& what) {
    pb::RangeResponse resp;
    grpc::Status s = callKv(
        [&](pb::KV::Stub& kv, grpc::ClientContext* ctx) { return kv.Range(ctx, req, &resp); });
    if (!s.ok()) return fromGrpc(s, what);
    return resp;
  }

  void noteCompacted(int64_t revision) {
    int64_t seen = compacted->load();
    while (seen < revision && !compacted->compare_exchange_weak(seen, revision)) {
    }
  }
};

EtcdStore::EtcdStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EtcdStore::~EtcdStore() = default;

Result<std::unique_ptr<EtcdStore>> EtcdStore::open(const std::string& endpoints) {
  auto impl = std::make_unique<Impl>();
  std::stringstream in(endpoints);
  std::string target;
  while (std::getline(in, target, ',')) {
    if (target.empty()) continue;
    if (target.find(':') == std::string::npos) {
      return Status::BadRequest("etcd endpoint \"" + target + "\" needs host:port");
    }
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);  // large lists
    args.SetMaxSendMessageSize(-1);
    // Notice a restarted etcd within seconds, not gRPC's default two minutes.
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
    Endpoint ep;
    ep.target = target;
    ep.channel = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
    ep.kv = pb::KV::NewStub(ep.channel);
    ep.watch = pb::Watch::NewStub(ep.channel);
    impl->endpoints.push_back(std::move(ep));
  }
  if (impl->endpoints.empty()) {
    return Status::BadRequest("no etcd endpoint in \"" + endpoints + "\"; want host:port[,...]");
  }
  return std::unique_ptr<EtcdStore>(new EtcdStore(std::move(impl)));
}

Result<KeyValue> EtcdStore::get(const std::string& key) {
  pb::RangeRequest req;
  req.set_key(key);
  auto resp = impl_->range(req, "get " + key);
  if (!resp.ok()) return resp.status();
  if (resp->kvs_size() == 0) return notFound(key);
  return fromPb(resp->kvs(0));
}

Result<ListResult> EtcdStore::list(const std::string& prefix, int64_t revision, int64_t limit,
                                   const std::string& startKey) {
  if (revision < 0 || limit < 0) return Status::BadRequest("revision and limit must be >= 0");
  pb::RangeRequest req;
  req.set_key(rangeKey(std::max(prefix, startKey)));
  req.set_range_end(rangeEnd(prefix));
  req.set_limit(limit);
  req.set_revision(revision);
  auto resp = impl_->range(req, "list " + prefix);
  if (!resp.ok()) return resp.status();
  ListResult result;
  result.items.reserve(resp->kvs_size());
  for (const auto& kv : resp->kvs()) result.items.push_back(fromPb(kv));
  result.more = resp->more();
  result.revision = revision != 0 ? revision : resp->header().revision();
  return result;
}

Result<int64_t> EtcdStore::create(const std::string& key, const std::string& value) {
  pb::TxnRequest req;
  pb::Compare* c = req.add_compare();
  c->set_key(key);
  c->set_target(pb::Compare::CREATE);
  c->set_result(pb::Compare::EQUAL);
  c->set_create_revision(0);
  pb::PutRequest* put = req.add_success()->mutable_request_put();
  put->set_key(key);
  put->set_value(value);
  req.add_failure()->mutable_request_range()->set_key(key);
  bool inFlightFailure = false;
  auto resp = impl_->txn(req, "create " + key, &inFlightFailure);
  if (!resp.ok()) return resp.status();
  if (!resp->succeeded()) {
    if (auto rev = inFlightFailure ? ownEarlierWrite(*resp, value, 0) : std::nullopt) return *rev;
    return Status::AlreadyExists("key", key);
  }
  return resp->header().revision();
}

Result<int64_t> EtcdStore::update(const std::string& key, const std::string& value,
                                  int64_t expectedRevision) {
  pb::TxnRequest req;
  addCompare(req, key, expectedRevision);
  pb::PutRequest* put = req.add_success()->mutable_request_put();
  put->set_key(key);
  put->set_value(value);
  req.add_failure()->mutable_request_range()->set_key(key);
  bool inFlightFailure = false;
  auto resp = impl_->txn(req, "update " + key, &inFlightFailure);
  if (!resp.ok()) return resp.status();
  if (!resp->succeeded()) {
    if (auto rev = inFlightFailure ? ownEarlierWrite(*resp, value, expectedRevision) : std::nullopt)
      return *rev;
    return refusal(*resp, key, expectedRevision);
  }
  return resp->header().revision();
}

Result<KeyValue> EtcdStore::remove(const std::string& key, int64_t expectedRevision) {
  pb::TxnRequest req;
  addCompare(req, key, expectedRevision);
  pb::DeleteRangeRequest* del = req.add_success()->mutable_request_delete_range();
  del->set_key(key);
  del->set_prev_kv(true);
  req.add_failure()->mutable_request_range()->set_key(key);
  auto resp = impl_->txn(req, "remove " + key);
  if (!resp.ok()) return resp.status();
  if (!resp->succeeded()) return refusal(*resp, key, expectedRevision);
  const auto& deleted = resp->responses(0).response_delete_range();
  if (deleted.prev_kvs_size() == 0) return notFound(key);
  KeyValue kv = fromPb(deleted.prev_kvs(0));
  kv.modRevision = resp->header().revision();
  return kv;
}

Result<std::unique_ptr<WatchStream>> EtcdStore::watch(const std::string& prefix,
                                                      int64_t afterRevision) {
  if (afterRevision < 0) return Status::BadRequest("afterRevision must be >= 0");
  if (afterRevision > 0) {
    // etcd reports a compacted start only later, asynchronously; a read at afterRevision tells
    // now, and with the Store's meaning (history after afterRevision is still complete).
    pb::RangeRequest probe;
    probe.set_key(rangeKey(prefix));
    probe.set_range_end(rangeEnd(prefix));
    probe.set_revision(afterRevision);
    probe.set_count_only(true);
    auto resp = impl_->range(probe, "watch " + prefix);
    if (!resp.ok() && resp.status().reason() == "Expired") return resp.status();
  }
  pb::WatchRequest req;
  pb::WatchCreateRequest* create = req.mutable_create_request();
  create->set_key(rangeKey(prefix));
  create->set_range_end(rangeEnd(prefix));
  if (afterRevision > 0) create->set_start_revision(afterRevision + 1);
  create->set_prev_kv(true);

  const size_t n = impl_->endpoints.size();
  const size_t first = impl_->preferred.load();
  Status last;
  for (size_t i = 0; i < n; ++i) {
    size_t idx = (first + i) % n;
    auto ctx = std::make_unique<grpc::ClientContext>();
    auto rw = impl_->endpoints[idx].watch->Watch(ctx.get());
    pb::WatchResponse created;
    // The first answer confirms the watch; an unreachable endpoint fails here instead.
    if (rw->Write(req) && rw->Read(&created) && created.created()) {
      if (created.canceled()) {
        ctx->TryCancel();
        rw->Finish();
        return Status::BadRequest("etcd refused the watch: " + created.cancel_reason());
      }
      impl_->preferred.store(idx);
      return std::unique_ptr<WatchStream>(
          std::make_unique<EtcdWatchStream>(std::move(ctx), std::move(rw), impl_->compacted));
    }
    ctx->TryCancel();
    last = fromGrpc(rw->Finish(), "watch " + prefix + " on " + impl_->endpoints[idx].target);
    if (last.ok()) last = Status::Unavailable("etcd watch: stream ended before it was created");
    if (last.code() != 503) return last;
  }
  return last;
}

Result<int64_t> EtcdStore::currentRevision() {
  pb::RangeRequest req;
  req.set_key(std::string(1, '\0'));
  req.set_count_only(true);
  auto resp = impl_->range(req, "revision");
  if (!resp.ok()) return resp.status();
  return resp->header().revision();
}

Status EtcdStore::compact(int64_t revision) {
  pb::CompactionRequest req;
  req.set_revision(revision);
  req.set_physical(true);
  pb::CompactionResponse resp;
  grpc::Status s = impl_->callKv(
      [&](pb::KV::Stub& kv, grpc::ClientContext* ctx) { return kv.Compact(ctx, req, &resp); });
  Status st = fromGrpc(s, "compact " + std::to_string(revision));
  if (!st.ok() && st.reason() != "Expired") return st;  // Expired: already compacted that far
  impl_->noteCompacted(revision);
  return Status::Ok();
}

int64_t EtcdStore::compactedRevision() { return impl_->compacted->load(); }

}  // namespace minik8s::storage::etcd
