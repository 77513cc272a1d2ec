#include "comm/bulk_server.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "comm/bulk_source.h"
#include "comm/bulk_token.h"
#include "comm/bulk_wire.h"
#include "comm/proto/bulk.pb.h"
#include "comm/ucp_worker.h"
#include "common/logging.h"

namespace tunefleet {
namespace comm {

// One progress thread owns the UCX worker, the listener, the endpoints and the transfers. UCX
// callbacks only queue what happened; the loop acts on the queues after each progress.
class BulkServer::Impl {
 public:
  ~Impl() {
    stop_ = true;
    if (worker_ != nullptr) worker_->Signal();
    if (thread_.joinable()) thread_.join();
    if (listener_ != nullptr) ucp_listener_destroy(listener_);
    worker_.reset();  // no callback runs after this
  }

  absl::Status Start(const std::string& bind_ip, int port, const std::string& token) {
    if (token.size() < 16) {
      return absl::InvalidArgumentError("a bulk server needs a token of at least 16 bytes");
    }
    token_ = token;
    absl::StatusOr<SockAddr> addr = ResolveAddress(bind_ip, port);
    if (!addr.ok()) return addr.status();
    // Only where asked: UCX's TCP transport would otherwise listen on every interface.
    absl::StatusOr<std::string> devices = NetDevicesFor(*addr);
    if (!devices.ok()) {
      return absl::Status(devices.status().code(), absl::StrCat("cannot listen on ", bind_ip, ": ",
                                                                devices.status().message()));
    }
    absl::StatusOr<std::unique_ptr<UcpWorker>> worker = UcpWorker::Create(*devices);
    if (!worker.ok()) return worker.status();
    worker_ = std::move(*worker);
    absl::Status s = SetAmHandler(worker_->worker(), kBulkAmRequest, &Impl::OnRequest, this,
                                  UCP_AM_FLAG_WHOLE_MSG);
    if (!s.ok()) return s;

    ucp_listener_params_t params;
    std::memset(&params, 0, sizeof(params));
    params.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
    params.sockaddr.addr = addr->get();
    params.sockaddr.addrlen = addr->length;
    params.conn_handler.cb = &Impl::OnConnectionRequest;
    params.conn_handler.arg = this;
    const std::string wanted = FormatSockAddr(addr->get());
    // UCX says "Device is busy" for a port in use (after logging the bind error): try first.
    if (absl::Status free = TryBind(*addr); !free.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot listen on ", wanted, ": ", free.message()));
    }
    ucs_status_t status = ucp_listener_create(worker_->worker(), &params, &listener_);
    if (status != UCS_OK) return UcsError(status, absl::StrCat("cannot listen on ", wanted));
    ucp_listener_attr_t attr;
    attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
    status = ucp_listener_query(listener_, &attr);
    if (status != UCS_OK) return UcsError(status, "cannot query the UCX listener");
    address_ = FormatSockAddr(reinterpret_cast<const sockaddr*>(&attr.sockaddr));
    thread_ = std::thread([this] { Loop(); });
    return absl::OkStatus();
  }

  const std::string& address() const { return address_; }

  absl::StatusOr<std::string> Publish(const std::string& path) {
    std::string hash;
    absl::StatusOr<std::shared_ptr<const PublishedContent>> content = DescribeContent(path, &hash);
    if (!content.ok()) return content.status();
    absl::MutexLock lock(&mu_);
    published_[hash] = std::move(*content);
    return hash;
  }

  Stats stats() const {
    Stats s;
    s.transfers_completed = completed_.load();
    s.transfers_failed = failed_.load();
    s.bytes_sent = bytes_sent_.load();
    s.requests_refused = refused_.load();
    return s;
  }

 private:
  struct Transfer {
    uint64_t id = 0;
    uint64_t request_id = 0;  // the client's, echoed in replies
    ucp_ep_h ep = nullptr;
    std::string peer;
    std::string hash;
    std::unique_ptr<ChunkReader> reader;  // what is sent
    int in_flight = 0;                    // sends not completed (the response included)
    bool response_sent = false;
    bool all_queued = false;
    bool failed = false;
    uint64_t bytes_done = 0;
    BulkClock::time_point start = BulkClock::now();
    std::vector<std::unique_ptr<char[]>> free_buffers;
  };
  // One send in flight: what must live until UCX completes it.
  struct SendOp {
    Impl* impl = nullptr;
    uint64_t transfer_id = 0;  // 0: a refusal, no transfer
    std::string header;
    std::string data;                // response: the manifest
    std::unique_ptr<char[]> buffer;  // chunk bytes
    size_t length = 0;
    bool is_response = false;
  };
  struct RequestIn {
    ucp_ep_h ep;
    bool parsed;
    BulkRequest request;
  };

  static void OnConnectionRequest(ucp_conn_request_h request, void* arg) {
    static_cast<Impl*>(arg)->conn_requests_.push_back(request);
  }
  static void OnEndpointError(void* arg, ucp_ep_h ep, ucs_status_t status) {
    static_cast<Impl*>(arg)->ep_errors_.emplace_back(ep, status);
  }
  static ucs_status_t OnRequest(void* arg, const void* header, size_t header_length, void* data,
                                size_t length, const ucp_am_recv_param_t* param) {
    Impl* self = static_cast<Impl*>(arg);
    RequestIn in;
    in.ep = (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ? param->reply_ep : nullptr;
    in.parsed = in.request.ParseFromArray(header, static_cast<int>(header_length));
    self->requests_.push_back(std::move(in));
    return UCS_OK;
  }
  static void OnSent(void* request, ucs_status_t status, void* user_data) {
    SendOp* op = static_cast<SendOp*>(user_data);
    op->impl->sent_.emplace_back(op, status);
    ucp_request_free(request);
  }

  void Loop() {
    while (!stop_) {
      bool busy = worker_->Progress();
      busy |= HandleEvents();
      busy |= Pump();
      if (!busy) worker_->Wait(kBulkIdleWaitMs);
    }
    // Shutdown: cut every connection; outstanding sends complete (cancelled) meanwhile.
    for (auto& [ep, peer] : connections_) CloseEndpoint(*worker_, ep, /*force=*/true);
    connections_.clear();
    requests_.clear();
    worker_->Progress();
    HandleEvents();
    failed_ += transfers_.size();
    transfers_.clear();
    for (ucp_conn_request_h r : conn_requests_) ucp_listener_reject(listener_, r);
    conn_requests_.clear();
  }

  bool HandleEvents() {
    bool any = false;
    while (!conn_requests_.empty()) {
      any = true;
      ucp_conn_request_h r = conn_requests_.front();
      conn_requests_.pop_front();
      Accept(r);
    }
    while (!requests_.empty()) {
      any = true;
      RequestIn in = std::move(requests_.front());
      requests_.pop_front();
      HandleRequest(in);
    }
    while (!sent_.empty()) {
      any = true;
      auto [op, status] = sent_.front();
      sent_.pop_front();
      Completed(std::unique_ptr<SendOp>(op), status);
    }
    while (!ep_errors_.empty()) {
      any = true;
      auto [ep, status] = ep_errors_.front();
      ep_errors_.pop_front();
      auto it = connections_.find(ep);
      if (it == connections_.end()) continue;
      bool active = false;
      for (auto& [id, t] : transfers_) {
        // A client closes its endpoint as soon as it holds every byte, which may be before
        // this loop has retired the transfer: that one is complete, not failed.
        if (t->ep == ep && !t->failed && !Finished(*t)) {
          active = true;
          Fail(*t, ucs_status_string(status));
        }
      }
      if (active) {
        TF_LOG(WARNING) << "bulk client " << it->second << " lost: " << ucs_status_string(status);
      } else {
        TF_LOG(DEBUG) << "bulk client " << it->second << " disconnected";
      }
      connections_.erase(it);
      CloseEndpoint(*worker_, ep, /*force=*/true);
    }
    return any;
  }

  void Accept(ucp_conn_request_h request) {
    ucp_conn_request_attr_t attr;
    attr.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
    std::string peer = "?";
    if (ucp_conn_request_query(request, &attr) == UCS_OK) {
      peer = FormatSockAddr(reinterpret_cast<const sockaddr*>(&attr.client_address));
    }
    ucp_ep_params_t params;
    std::memset(&params, 0, sizeof(params));
    params.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLER |
                        UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    params.conn_request = request;
    params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = &Impl::OnEndpointError;
    params.err_handler.arg = this;
    ucp_ep_h ep = nullptr;
    const ucs_status_t status = ucp_ep_create(worker_->worker(), &params, &ep);
    if (status != UCS_OK) {
      TF_LOG(WARNING) << "cannot accept bulk client " << peer << ": " << ucs_status_string(status);
      return;
    }
    TF_LOG(DEBUG) << "bulk client " << peer << " connected";
    connections_[ep] = peer;
  }

  void HandleRequest(const RequestIn& in) {
    auto conn = connections_.find(in.ep);
    if (in.ep == nullptr || conn == connections_.end()) {
      TF_LOG(WARNING) << "dropping a bulk request from an unknown endpoint";
      return;
    }
    const std::string& peer = conn->second;
    BulkResponse response;
    response.set_version(kBulkProtocolVersion);
    response.set_request_id(in.request.request_id());
    std::shared_ptr<const PublishedContent> content;
    if (!in.parsed) {
      response.set_error(BULK_SERVER_ERROR);
      response.set_message("malformed request");
    } else if (!SameBulkToken(in.request.token(), token_)) {
      // Before anything else: a client without the token learns nothing, not even which
      // hashes exist.
      response.set_error(BULK_UNAUTHORIZED);
      response.set_message(
          "missing or wrong token: only clients the server's owner told may fetch");
    } else if (in.request.version() != kBulkProtocolVersion) {
      response.set_error(BULK_UNSUPPORTED_VERSION);
      response.set_message(absl::StrCat("bulk protocol version ", in.request.version(),
                                        " is not supported (the server speaks ",
                                        kBulkProtocolVersion, ")"));
    } else {
      absl::MutexLock lock(&mu_);
      auto it = published_.find(in.request.hash());
      if (it != published_.end()) content = it->second;
    }
    if (in.parsed && response.error() == BULK_OK && content == nullptr) {
      response.set_error(BULK_UNKNOWN_HASH);
      response.set_message("unknown hash");
    }
    if (response.error() == BULK_UNAUTHORIZED) {
      refused_++;
      const std::string ip = peer.substr(0, peer.rfind(':'));
      if (refused_ips_.size() < 1000 && refused_ips_.insert(ip).second) {
        TF_LOG(WARNING) << "refusing bulk requests from " << ip
                        << " without the right token (logged once per address)";
      }
    } else if (response.error() != BULK_OK) {
      TF_LOG(WARNING) << "refusing bulk request from " << peer << " for " << in.request.hash()
                      << ": " << response.message();
    }
    if (response.error() != BULK_OK) {
      failed_++;
      auto op = std::make_unique<SendOp>();
      op->header = response.SerializeAsString();
      Send(in.ep, kBulkAmResponse, std::move(op), 0);
      return;
    }
    auto t = std::make_unique<Transfer>();
    t->id = next_transfer_id_++;
    t->request_id = in.request.request_id();
    t->ep = in.ep;
    t->peer = peer;
    t->hash = in.request.hash();
    t->reader = std::make_unique<ChunkReader>(content);
    response.set_directory(content->directory);
    response.set_total_bytes(content->total_bytes);
    response.set_chunk_bytes(kBulkChunkBytes);
    auto op = std::make_unique<SendOp>();
    op->transfer_id = t->id;
    op->is_response = true;
    op->header = response.SerializeAsString();
    if (content->directory) op->data = content->manifest_wire;
    op->length = op->data.size();
    TF_LOG(INFO) << "sending " << t->hash << " (" << content->total_bytes << " bytes) to " << peer;
    Transfer& ref = *t;
    transfers_[t->id] = std::move(t);
    ref.in_flight++;
    Send(in.ep, kBulkAmResponse, std::move(op), 0);
  }

  // Starts a send; its completion arrives through sent_ (also when it completes at once).
  void Send(ucp_ep_h ep, unsigned id, std::unique_ptr<SendOp> op, uint32_t flags) {
    op->impl = this;
    const void* data = op->buffer ? static_cast<const void*>(op->buffer.get())
                                  : static_cast<const void*>(op->data.data());
    ucp_request_param_t param = SendParam(&Impl::OnSent, op.get(), flags);
    ucs_status_ptr_t request =
        ucp_am_send_nbx(ep, id, op->header.data(), op->header.size(), data, op->length, &param);
    SendOp* raw = op.release();
    if (request == nullptr) {
      sent_.emplace_back(raw, UCS_OK);
    } else if (UCS_PTR_IS_ERR(request)) {
      sent_.emplace_back(raw, UCS_PTR_STATUS(request));
    }
  }

  void Completed(std::unique_ptr<SendOp> op, ucs_status_t status) {
    if (op->transfer_id == 0) return;
    auto it = transfers_.find(op->transfer_id);
    if (it == transfers_.end()) return;
    Transfer& t = *it->second;
    t.in_flight--;
    if (status != UCS_OK) {
      if (!t.failed) Fail(t, ucs_status_string(status));
    } else if (op->is_response) {
      t.response_sent = true;
    } else {
      t.bytes_done += op->length;
      bytes_sent_ += op->length;
      if (op->buffer) t.free_buffers.push_back(std::move(op->buffer));
    }
  }

  // Every byte sent and acknowledged.
  static bool Finished(const Transfer& t) {
    return t.response_sent && t.in_flight == 0 && t.bytes_done == t.reader->content().total_bytes;
  }

  void Fail(Transfer& t, const std::string& why) {
    t.failed = true;
    TF_LOG(WARNING) << "sending " << t.hash << " to " << t.peer << " failed after " << t.bytes_done
                    << " of " << t.reader->content().total_bytes << " bytes: " << why;
  }

  // Queues chunks while the window has room; retires finished transfers.
  bool Pump() {
    bool any = false;
    for (auto it = transfers_.begin(); it != transfers_.end();) {
      Transfer& t = *it->second;
      while (!t.failed && t.response_sent && !t.all_queued && t.in_flight < kBulkWindow) {
        QueueChunk(t);
        any = true;
      }
      if ((t.failed && t.in_flight == 0) || (!t.failed && Finished(t))) {
        if (t.failed) {
          failed_++;
        } else {
          completed_++;
          const double secs = SecondsSince(t.start);
          TF_LOG(INFO) << "sent " << t.hash << " to " << t.peer << ": " << t.bytes_done
                       << " bytes in " << absl::StrFormat("%.2f", secs) << " s ("
                       << absl::StrFormat("%.1f", t.bytes_done / 1e6 / std::max(secs, 1e-9))
                       << " MB/s)";
        }
        it = transfers_.erase(it);
        any = true;
      } else {
        ++it;
      }
    }
    return any;
  }

  void QueueChunk(Transfer& t) {
    if (!t.reader->HasNext()) {
      t.all_queued = true;
      return;
    }
    auto op = std::make_unique<SendOp>();
    if (!t.free_buffers.empty()) {
      op->buffer = std::move(t.free_buffers.back());
      t.free_buffers.pop_back();
    } else {
      op->buffer.reset(new char[kBulkChunkBytes]);
    }
    uint32_t entry = 0;
    uint64_t offset = 0;
    if (absl::Status read = t.reader->ReadNext(op->buffer.get(), &entry, &offset, &op->length);
        !read.ok()) {
      return Abort(t, std::string(read.message()));
    }
    BulkChunk chunk;
    chunk.set_version(kBulkProtocolVersion);
    chunk.set_request_id(t.request_id);
    chunk.set_entry(entry);
    chunk.set_offset(offset);
    op->header = chunk.SerializeAsString();
    op->transfer_id = t.id;
    t.in_flight++;
    Send(t.ep, kBulkAmChunk, std::move(op), 0);
  }

  // Fails the transfer and tells the client why.
  void Abort(Transfer& t, const std::string& why) {
    Fail(t, why);
    BulkResponse response;
    response.set_version(kBulkProtocolVersion);
    response.set_request_id(t.request_id);
    response.set_error(BULK_SERVER_ERROR);
    response.set_message(why);
    auto op = std::make_unique<SendOp>();
    op->header = response.SerializeAsString();
    Send(t.ep, kBulkAmResponse, std::move(op), 0);
  }

  std::string token_;  // set before the thread starts, then read-only
  std::unique_ptr<UcpWorker> worker_;
  ucp_listener_h listener_ = nullptr;
  std::string address_;
  std::thread thread_;
  std::atomic<bool> stop_{false};

  // Progress thread only.
  std::deque<ucp_conn_request_h> conn_requests_;
  std::deque<std::pair<ucp_ep_h, ucs_status_t>> ep_errors_;
  std::deque<RequestIn> requests_;
  std::deque<std::pair<SendOp*, ucs_status_t>> sent_;
  std::map<ucp_ep_h, std::string> connections_;  // endpoint -> peer address
  std::map<uint64_t, std::unique_ptr<Transfer>> transfers_;
  uint64_t next_transfer_id_ = 1;
  absl::flat_hash_set<std::string> refused_ips_;  // logged refusals (bounded)

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const PublishedContent>> published_
      ABSL_GUARDED_BY(mu_);

  std::atomic<uint64_t> completed_{0};
  std::atomic<uint64_t> failed_{0};
  std::atomic<uint64_t> bytes_sent_{0};
  std::atomic<uint64_t> refused_{0};
};

absl::StatusOr<std::unique_ptr<BulkServer>> BulkServer::Start(const std::string& bind_ip, int port,
                                                              const std::string& token) {
  auto impl = std::make_unique<Impl>();
  absl::Status s = impl->Start(bind_ip, port, token);
  if (!s.ok()) return s;
  return std::unique_ptr<BulkServer>(new BulkServer(std::move(impl)));
}

BulkServer::BulkServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BulkServer::~BulkServer() = default;
std::string BulkServer::address() const { return impl_->address(); }
absl::StatusOr<std::string> BulkServer::Publish(const std::string& path) {
  return impl_->Publish(path);
}
BulkServer::Stats BulkServer::stats() const { return impl_->stats(); }

}  // namespace comm
}  // namespace tunefleet
