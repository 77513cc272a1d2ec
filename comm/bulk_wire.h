// The bulk protocol (comm/proto/bulk.proto) on UCX active messages: what the bulk server
// (comm/bulk_server.h) and receiver (comm/bulk_receiver.h) share. Message ids, request
// parameters, endpoint closing, and the positional file I/O both ends use for chunks.
// Thread-safety: stateless functions; UCX objects passed in belong to the caller's thread.
#ifndef TUNEFLEET_COMM_BULK_WIRE_H_
#define TUNEFLEET_COMM_BULK_WIRE_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include <ucp/api/ucp.h>

#include "absl/status/status.h"
#include "comm/ucp_worker.h"

namespace tunefleet {
namespace comm {

inline constexpr uint32_t kBulkProtocolVersion = 1;  // BulkRequest / BulkResponse.version
inline constexpr size_t kBulkChunkBytes = 4 << 20;   // the largest chunk a server sends
inline constexpr int kBulkWindow = 4;                // chunks in flight per transfer

// Active message ids.
inline constexpr unsigned kBulkAmRequest = 1;   // client -> server: BulkRequest
inline constexpr unsigned kBulkAmResponse = 2;  // server -> client: BulkResponse [+ BulkManifest]
inline constexpr unsigned kBulkAmChunk = 3;     // server -> client: BulkChunk + bytes

// Longest sleep of an idle event loop between checks of its own state.
inline constexpr int kBulkIdleWaitMs = 100;

using BulkClock = std::chrono::steady_clock;
double SecondsSince(BulkClock::time_point start);

// Parameters of a send whose completion calls `callback(request, status, user_data)`.
ucp_request_param_t SendParam(ucp_send_nbx_callback_t callback, void* user_data,
                              uint32_t flags = 0);

// Installs `callback` for active message `id` on `worker`.
absl::Status SetAmHandler(ucp_worker_h worker, unsigned id, ucp_am_recv_callback_t callback,
                          void* arg, uint32_t flags);

// Closes `ep` (flushing it first unless `force`), progressing `worker` until done; a flush the
// peer does not answer within 2 s is cancelled.
void CloseEndpoint(UcpWorker& worker, ucp_ep_h ep, bool force);

// Reads exactly `size` bytes at `offset`; false on an error or a short file.
bool ReadFully(int fd, char* buffer, size_t size, uint64_t offset);
// Writes all `size` bytes at `offset`; the error names `path`.
absl::Status WriteFully(int fd, const char* data, size_t size, uint64_t offset,
                        const std::string& path);

// True for a manifest path that stays inside the folder it is written to: relative, no empty,
// "." or ".." component.
bool SafeRelativePath(const std::string& path);

}  // namespace comm
}  // namespace tunefleet

#endif  // TUNEFLEET_COMM_BULK_WIRE_H_
