#include "comm/bulk_wire.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"

namespace tunefleet {
namespace comm {
namespace {

constexpr auto kCloseTimeout = std::chrono::seconds(2);

}  // namespace

double SecondsSince(BulkClock::time_point start) {
  return std::chrono::duration<double>(BulkClock::now() - start).count();
}

bool ReadFully(int fd, char* buffer, size_t size, uint64_t offset) {
  while (size > 0) {
    const ssize_t n = ::pread(fd, buffer, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

absl::Status WriteFully(int fd, const char* data, size_t size, uint64_t offset,
                        const std::string& path) {
  while (size > 0) {
    const ssize_t n = ::pwrite(fd, data, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, absl::StrCat(path, ": cannot write"));
    data += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

void CloseEndpoint(UcpWorker& worker, ucp_ep_h ep, bool force) {
  ucp_request_param_t param;
  std::memset(&param, 0, sizeof(param));
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
  void* request = ucp_ep_close_nbx(ep, &param);
  if (request == nullptr || UCS_PTR_IS_ERR(request)) return;
  const auto start = BulkClock::now();
  while (ucp_request_check_status(request) == UCS_INPROGRESS) {
    if (!worker.Progress()) {
      if (BulkClock::now() - start > kCloseTimeout) {
        // The peer does not answer the flush: cancel. The request completes as cancelled.
        ucp_request_cancel(worker.worker(), request);
      }
      worker.Wait(10);
    }
  }
  ucp_request_free(request);
}

ucp_request_param_t SendParam(ucp_send_nbx_callback_t callback, void* user_data, uint32_t flags) {
  ucp_request_param_t param;
  std::memset(&param, 0, sizeof(param));
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  param.cb.send = callback;
  param.user_data = user_data;
  param.flags = flags;
  return param;
}

absl::Status SetAmHandler(ucp_worker_h worker, unsigned id, ucp_am_recv_callback_t callback,
                          void* arg, uint32_t flags) {
  ucp_am_handler_param_t param;
  std::memset(&param, 0, sizeof(param));
  param.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                     UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
  param.id = id;
  param.cb = callback;
  param.arg = arg;
  param.flags = flags;
  const ucs_status_t status = ucp_worker_set_am_recv_handler(worker, &param);
  if (status != UCS_OK) return UcsError(status, "cannot set a UCX active message handler");
  return absl::OkStatus();
}

bool SafeRelativePath(const std::string& path) {
  if (path.empty() || path[0] == '/') return false;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

}  // namespace comm
}  // namespace tunefleet
