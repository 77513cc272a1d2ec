#include "comm/bulk_receiver.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "comm/bulk_sink.h"
#include "comm/bulk_wire.h"
#include "comm/proto/bulk.pb.h"

namespace tunefleet {
namespace comm {
namespace {

// Limits on what a server may announce (this build's servers send 4 MiB chunks; a manifest of
// a million files is some 50 MB).
constexpr size_t kMaxChunkBytes = 64 << 20;
constexpr size_t kMaxManifestBytes = 1 << 30;

// One fetch, with its own worker and endpoint, driven on the caller's thread. As on the server,
// UCX callbacks only queue; incoming messages are handled in arrival order.
class Fetcher {
 public:
  Fetcher(std::string server, std::string hash, std::string token, absl::Duration idle_timeout,
          std::function<void(uint64_t, uint64_t)> progress)
      : server_(std::move(server)),
        hash_(std::move(hash)),
        token_(std::move(token)),
        idle_timeout_(idle_timeout),
        progress_(std::move(progress)) {}

  ~Fetcher() { Shutdown(); }

  // The lock on the temporary (bulk_cache.h LockTemp), now the caller's to close; -1 if none.
  int ReleaseLock() { return sink_ != nullptr ? sink_->ReleaseLock() : -1; }

  // Receives the content into `temp` (created here: a file, or a folder with its tree).
  absl::Status Run(const SockAddr& addr, const std::string& temp) {
    sink_ = std::make_unique<BulkSink>(temp, server_);
    addr_ = addr;
    absl::StatusOr<std::unique_ptr<UcpWorker>> worker = UcpWorker::Create();
    if (!worker.ok()) return worker.status();
    worker_ = std::move(*worker);
    const uint32_t flags = UCP_AM_FLAG_WHOLE_MSG | UCP_AM_FLAG_PERSISTENT_DATA;
    absl::Status s =
        SetAmHandler(worker_->worker(), kBulkAmResponse, &Fetcher::OnResponse, this, flags);
    if (s.ok()) s = SetAmHandler(worker_->worker(), kBulkAmChunk, &Fetcher::OnChunk, this, flags);
    if (!s.ok()) return s;

    ucp_ep_params_t params;
    std::memset(&params, 0, sizeof(params));
    params.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
                        UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    params.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
    params.sockaddr.addr = addr.get();
    params.sockaddr.addrlen = addr.length;
    params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = &Fetcher::OnEndpointError;
    params.err_handler.arg = this;
    ucs_status_t status = ucp_ep_create(worker_->worker(), &params, &ep_);
    if (status != UCS_OK) {
      ep_ = nullptr;
      return UcsError(status, absl::StrCat("cannot reach bulk server ", server_));
    }

    BulkRequest request;
    request.set_version(kBulkProtocolVersion);
    request.set_request_id(std::random_device()());
    request.set_hash(hash_);
    request.set_token(token_);
    request_wire_ = request.SerializeAsString();
    ucp_request_param_t param = SendParam(&Fetcher::OnRequestSent, this, UCP_AM_SEND_FLAG_REPLY);
    ucs_status_ptr_t sent = ucp_am_send_nbx(ep_, kBulkAmRequest, request_wire_.data(),
                                            request_wire_.size(), nullptr, 0, &param);
    if (UCS_PTR_IS_ERR(sent)) {
      ep_status_ = UCS_PTR_STATUS(sent);
      return status_ = ConnectError();
    }

    last_activity_ = BulkClock::now();
    while (status_.ok() && state_ != State::kDone) {
      bool busy = worker_->Progress();
      busy |= HandleEvents();
      if (!status_.ok() || state_ == State::kDone) break;
      if (BulkClock::now() - last_activity_ > absl::ToChronoMilliseconds(idle_timeout_)) {
        status_ = absl::DeadlineExceededError(
            state_ == State::kWaitingResponse
                ? absl::StrCat("no answer from bulk server ", server_, " within ",
                               absl::FormatDuration(idle_timeout_))
                : absl::StrCat("bulk server ", server_, " sent nothing for ",
                               absl::FormatDuration(idle_timeout_), " (", received_, " of ", total_,
                               " bytes received)"));
        break;
      }
      if (!busy) worker_->Wait(kBulkIdleWaitMs);
    }
    if (status_.ok()) status_ = sink_->Close();
    if (status_.ok() && progress_) progress_(received_, total_);
    Shutdown();
    return status_;
  }

  uint64_t bytes() const { return received_; }
  bool directory() const { return directory_; }

 private:
  enum class State { kWaitingResponse, kWaitingManifest, kReceiving, kDone };
  struct Incoming {
    unsigned id = 0;
    std::string header;
    void* data = nullptr;  // UCX's: a rendezvous descriptor or persistent eager data
    size_t length = 0;
    bool rndv = false;
    std::string copy;  // eager data UCX does not keep
  };
  struct RecvOp {
    Fetcher* self = nullptr;
    bool manifest = false;
    int entry = 0;
    uint64_t offset = 0;
    size_t length = 0;
    std::unique_ptr<char[]> buffer;
  };

  static ucs_status_t OnResponse(void* arg, const void* header, size_t header_length, void* data,
                                 size_t length, const ucp_am_recv_param_t* param) {
    return static_cast<Fetcher*>(arg)->Queue(kBulkAmResponse, header, header_length, data, length,
                                             param);
  }
  static ucs_status_t OnChunk(void* arg, const void* header, size_t header_length, void* data,
                              size_t length, const ucp_am_recv_param_t* param) {
    return static_cast<Fetcher*>(arg)->Queue(kBulkAmChunk, header, header_length, data, length,
                                             param);
  }
  static void OnEndpointError(void* arg, ucp_ep_h, ucs_status_t status) {
    static_cast<Fetcher*>(arg)->ep_status_ = status;
  }
  static void OnRequestSent(void* request, ucs_status_t status, void* user_data) {
    Fetcher* self = static_cast<Fetcher*>(user_data);
    if (status != UCS_OK && self->ep_status_ == UCS_OK) self->ep_status_ = status;
    ucp_request_free(request);
  }
  static void OnReceived(void* request, ucs_status_t status, size_t, void* user_data) {
    RecvOp* op = static_cast<RecvOp*>(user_data);
    op->self->received_ops_.emplace_back(op, status);
    ucp_request_free(request);
  }

  ucs_status_t Queue(unsigned id, const void* header, size_t header_length, void* data,
                     size_t length, const ucp_am_recv_param_t* param) {
    Incoming in;
    in.id = id;
    in.header.assign(static_cast<const char*>(header), header_length);
    in.length = length;
    ucs_status_t keep = UCS_INPROGRESS;
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
      in.rndv = true;
      in.data = data;
    } else if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA) {
      in.data = data;
    } else {
      in.copy.assign(static_cast<const char*>(data), length);
      keep = UCS_OK;
    }
    incoming_.push_back(std::move(in));
    return keep;
  }

  void Release(Incoming& in) {
    if (in.data != nullptr) ucp_am_data_release(worker_->worker(), in.data);
    in.data = nullptr;
  }

  bool HandleEvents() {
    bool any = false;
    while (!received_ops_.empty()) {
      any = true;
      auto [op, status] = received_ops_.front();
      received_ops_.pop_front();
      Received(op, status);
    }
    while (status_.ok() && state_ != State::kWaitingManifest && !incoming_.empty()) {
      any = true;
      Incoming in = std::move(incoming_.front());
      incoming_.pop_front();
      if (in.id == kBulkAmResponse) {
        HandleResponse(in);
      } else {
        HandleChunk(in);
      }
      Release(in);
    }
    if (any) last_activity_ = BulkClock::now();
    if (status_.ok() && state_ == State::kReceiving && received_ == total_ && live_ops_.empty()) {
      state_ = State::kDone;
    }
    if (status_.ok() && state_ != State::kDone && ep_status_ != UCS_OK) {
      status_ = state_ == State::kWaitingResponse
                    ? ConnectError()
                    : UcsError(ep_status_, absl::StrCat("lost bulk server ", server_, " after ",
                                                        received_, " of ", total_, " bytes"));
    }
    if (progress_ && state_ == State::kReceiving &&
        BulkClock::now() - last_progress_ > std::chrono::milliseconds(250)) {
      last_progress_ = BulkClock::now();
      progress_(received_, total_);
    }
    return any;
  }

  // The connection failed before any answer. UCX's reasons are vague ("Endpoint is not
  // connected" for a refused connection): a plain TCP connect names the usual causes.
  absl::Status ConnectError() {
    const std::string what = absl::StrCat("cannot reach bulk server ", server_);
    absl::Status tcp = ProbeTcp(addr_, 3000);
    if (!tcp.ok()) return absl::UnavailableError(absl::StrCat(what, ": ", tcp.message()));
    return UcsError(ep_status_, absl::StrCat(what, " (UCX; a plain TCP connection works)"));
  }

  void HandleResponse(Incoming& in) {
    BulkResponse response;
    if (!response.ParseFromString(in.header)) {
      status_ = absl::DataLossError(absl::StrCat("malformed response from bulk server ", server_));
      return;
    }
    switch (response.error()) {
      case BULK_OK:
        break;
      case BULK_UNKNOWN_HASH:
        status_ = absl::NotFoundError(absl::StrCat("bulk server ", server_, " has no content ",
                                                   hash_, ": ", response.message()));
        return;
      case BULK_UNAUTHORIZED:
        status_ = absl::PermissionDeniedError(
            absl::StrCat("bulk server ", server_, " refused the fetch: ", response.message()));
        return;
      case BULK_UNSUPPORTED_VERSION:
        status_ = absl::FailedPreconditionError(
            absl::StrCat("bulk server ", server_, ": ", response.message()));
        return;
      default:
        status_ = absl::UnavailableError(
            absl::StrCat("bulk server ", server_, " failed: ", response.message()));
        return;
    }
    if (state_ != State::kWaitingResponse || response.version() != kBulkProtocolVersion) {
      status_ = absl::DataLossError(absl::StrCat("unexpected response from bulk server ", server_));
      return;
    }
    total_ = response.total_bytes();
    directory_ = response.directory();
    chunk_bytes_ = std::max<size_t>(response.chunk_bytes(), 1);
    if (chunk_bytes_ > kMaxChunkBytes || (directory_ && in.length > kMaxManifestBytes)) {
      status_ = absl::DataLossError(
          absl::StrCat("bulk server ", server_, " announced chunks or a manifest too large"));
      return;
    }
    if (!directory_) {
      manifest_.add_entries()->set_size(total_);
      return Prepare();
    }
    if (!in.rndv) {
      const char* data = in.data != nullptr ? static_cast<const char*>(in.data) : in.copy.data();
      if (!manifest_.ParseFromArray(data, static_cast<int>(in.length))) {
        status_ =
            absl::DataLossError(absl::StrCat("malformed manifest from bulk server ", server_));
        return;
      }
      return Prepare();
    }
    auto op = std::make_unique<RecvOp>();
    op->manifest = true;
    op->length = in.length;
    op->buffer.reset(new char[in.length]);
    state_ = State::kWaitingManifest;
    StartReceive(in, std::move(op));
  }

  // Creates the temporary file, or the folder with its subfolders and empty files.
  void Prepare() {
    status_ = sink_->Create(manifest_, directory_, total_);
    if (status_.ok()) state_ = State::kReceiving;
  }

  void HandleChunk(Incoming& in) {
    BulkChunk chunk;
    const bool ok = state_ == State::kReceiving && chunk.ParseFromString(in.header) &&
                    chunk.version() == kBulkProtocolVersion &&
                    static_cast<int>(chunk.entry()) < manifest_.entries_size() &&
                    !manifest_.entries(chunk.entry()).directory() &&
                    in.length <= manifest_.entries(chunk.entry()).size() &&
                    chunk.offset() <= manifest_.entries(chunk.entry()).size() - in.length &&
                    in.length <= chunk_bytes_;
    if (!ok) {
      status_ = absl::DataLossError(absl::StrCat("unexpected chunk from bulk server ", server_));
      return;
    }
    if (!in.rndv) {
      const char* data = in.data != nullptr ? static_cast<const char*>(in.data) : in.copy.data();
      status_ = sink_->Write(chunk.entry(), chunk.offset(), data, in.length);
      received_ += in.length;
      return;
    }
    auto op = std::make_unique<RecvOp>();
    op->entry = chunk.entry();
    op->offset = chunk.offset();
    op->length = in.length;
    if (!free_buffers_.empty()) {
      op->buffer = std::move(free_buffers_.back());
      free_buffers_.pop_back();
    } else {
      op->buffer.reset(new char[chunk_bytes_]);
    }
    StartReceive(in, std::move(op));
  }

  // Receives a rendezvous message's data into op->buffer; UCX owns the descriptor from here.
  void StartReceive(Incoming& in, std::unique_ptr<RecvOp> op) {
    op->self = this;
    ucp_request_param_t param;
    std::memset(&param, 0, sizeof(param));
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.recv_am = &Fetcher::OnReceived;
    param.user_data = op.get();
    void* desc = in.data;
    in.data = nullptr;
    ucs_status_ptr_t request =
        ucp_am_recv_data_nbx(worker_->worker(), desc, op->buffer.get(), op->length, &param);
    RecvOp* raw = op.get();
    live_ops_.push_back(std::move(op));
    if (request == nullptr) {
      Received(raw, UCS_OK);
    } else if (UCS_PTR_IS_ERR(request)) {
      Received(raw, UCS_PTR_STATUS(request));
    }
  }

  void Received(RecvOp* raw, ucs_status_t status) {
    auto it = std::find_if(live_ops_.begin(), live_ops_.end(),
                           [raw](const std::unique_ptr<RecvOp>& p) { return p.get() == raw; });
    if (it == live_ops_.end()) return;
    std::unique_ptr<RecvOp> op = std::move(*it);
    live_ops_.erase(it);
    if (!status_.ok()) return;
    if (status != UCS_OK) {
      status_ = UcsError(status, absl::StrCat("lost bulk server ", server_, " after ", received_,
                                              " of ", total_, " bytes"));
      return;
    }
    if (op->manifest) {
      if (!manifest_.ParseFromArray(op->buffer.get(), static_cast<int>(op->length))) {
        status_ =
            absl::DataLossError(absl::StrCat("malformed manifest from bulk server ", server_));
        return;
      }
      return Prepare();
    }
    status_ = sink_->Write(op->entry, op->offset, op->buffer.get(), op->length);
    received_ += op->length;
    free_buffers_.push_back(std::move(op->buffer));
  }

  void Shutdown() {
    if (worker_ == nullptr) return;
    for (Incoming& in : incoming_) Release(in);
    incoming_.clear();
    if (ep_ != nullptr) {
      // A clean close tells the server at once; after an error, do not wait for the peer.
      CloseEndpoint(*worker_, ep_, /*force=*/!status_.ok() || ep_status_ != UCS_OK);
      ep_ = nullptr;
    }
    worker_->Progress();
    for (Incoming& in : incoming_) Release(in);
    incoming_.clear();
    worker_.reset();  // no callback runs after this; live_ops_ go with the object
  }

  const std::string server_;
  const std::string hash_;
  const std::string token_;
  const absl::Duration idle_timeout_;
  const std::function<void(uint64_t, uint64_t)> progress_;
  SockAddr addr_;
  std::unique_ptr<BulkSink> sink_;  // from Run()

  std::vector<std::unique_ptr<RecvOp>> live_ops_;  // outlive worker_ (declared before it)
  std::unique_ptr<UcpWorker> worker_;
  ucp_ep_h ep_ = nullptr;
  std::string request_wire_;
  ucs_status_t ep_status_ = UCS_OK;
  std::deque<Incoming> incoming_;
  std::deque<std::pair<RecvOp*, ucs_status_t>> received_ops_;
  std::vector<std::unique_ptr<char[]>> free_buffers_;

  absl::Status status_;
  State state_ = State::kWaitingResponse;
  BulkManifest manifest_;
  bool directory_ = false;
  uint64_t total_ = 0;
  uint64_t received_ = 0;
  size_t chunk_bytes_ = kBulkChunkBytes;
  BulkClock::time_point last_activity_;
  BulkClock::time_point last_progress_;
};

}  // namespace

absl::Status FetchIntoTemp(const std::string& server, const SockAddr& addr, const std::string& hash,
                           const std::string& token, const std::string& temp,
                           absl::Duration idle_timeout,
                           const std::function<void(uint64_t, uint64_t)>& progress,
                           BulkReceipt* receipt) {
  Fetcher fetcher(server, hash, token, idle_timeout, progress);
  absl::Status s = fetcher.Run(addr, temp);
  receipt->bytes = fetcher.bytes();
  receipt->directory = fetcher.directory();
  if (s.ok()) receipt->lock_fd = fetcher.ReleaseLock();
  return s;
}

}  // namespace comm
}  // namespace tunefleet
