#include "comm/ucp_worker.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <ucs/config/global_opts.h>
#include <ucs/debug/log_def.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tunefleet {
namespace comm {
namespace {

// UCX's log lines, on stderr in one write each (UCX's own handler writes to stdout).
ucs_log_func_rc_t LogToStderr(const char* file, unsigned line, const char*, ucs_log_level_t level,
                              const ucs_log_component_config_t*, const char* format, va_list ap) {
  char message[1024];
  vsnprintf(message, sizeof(message), format, ap);
  const char* base = std::strrchr(file, '/');
  const std::string text =
      absl::StrCat("UCX ", ucs_log_level_names[level], " ", base != nullptr ? base + 1 : file, ":",
                   line, "] ", message, "\n");
  const ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
  return UCS_LOG_FUNC_RC_STOP;
}

void RouteUcxLogToStderr() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::getenv("UCX_LOG_FILE") == nullptr) ucs_log_push_handler(&LogToStderr);
  });
}

// Entries of a /sys folder, "." and ".." left out; none when it is missing.
std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  return names;
}

bool IsWildcard(const sockaddr* a) {
  if (a->sa_family == AF_INET) {
    return reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr == htonl(INADDR_ANY);
  }
  return a->sa_family == AF_INET6 &&
         IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr);
}

bool IsLoopback(const sockaddr* a) {
  if (a->sa_family == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr) >> 24) == 127;
  }
  return a->sa_family == AF_INET6 &&
         IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr);
}

bool SameIp(const sockaddr* a, const sockaddr* b) {
  if (a->sa_family != b->sa_family) return false;
  if (a->sa_family == AF_INET) {
    return reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(b)->sin_addr.s_addr;
  }
  return a->sa_family == AF_INET6 &&
         std::memcmp(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr,
                     &reinterpret_cast<const sockaddr_in6*>(b)->sin6_addr, sizeof(in6_addr)) == 0;
}

// The name of the interface that holds `addr` (any loopback interface for a loopback address).
std::string InterfaceOf(const sockaddr* addr) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "";
  std::string name;
  for (const ifaddrs* i = list; i != nullptr && name.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr) continue;
    const bool loopback_if = (i->ifa_flags & IFF_LOOPBACK) != 0;
    if (IsLoopback(addr) ? loopback_if : SameIp(i->ifa_addr, addr)) name = i->ifa_name;
  }
  ::freeifaddrs(list);
  return name;
}

}  // namespace

absl::StatusOr<std::string> NetDevicesFor(const SockAddr& addr) {
  if (IsWildcard(addr.get()) || std::getenv("UCX_NET_DEVICES") != nullptr) return std::string();
  const std::string name = InterfaceOf(addr.get());
  if (name.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no network interface of this host has the address ", FormatSockAddr(addr.get())));
  }
  std::vector<std::string> devices = {name};
  const std::string ib = "/sys/class/infiniband";
  for (const std::string& dev : ListDir(ib)) {
    for (const std::string& port : ListDir(absl::StrCat(ib, "/", dev, "/ports"))) {
      devices.push_back(absl::StrCat(dev, ":", port));
    }
  }
  return absl::StrJoin(devices, ",");
}

void QuietUcxWarnings() {
  // UCX reads UCX_LOG_LEVEL when the library loads, so setenv() here would come too late (and
  // draw an "unused env variable" warning): set the global option itself.
  if (std::getenv("UCX_LOG_LEVEL") == nullptr) ucs_global_opts_set_value("LOG_LEVEL", "error");
}

absl::Status UcsError(ucs_status_t status, const std::string& what) {
  const std::string message = absl::StrCat(what, ": ", ucs_status_string(status));
  switch (status) {
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_REJECTED:
    case UCS_ERR_NOT_CONNECTED:
    case UCS_ERR_CANCELED:
      return absl::UnavailableError(message);
    case UCS_ERR_TIMED_OUT:
      return absl::DeadlineExceededError(message);
    case UCS_ERR_BUSY:
    case UCS_ERR_ALREADY_EXISTS:
      return absl::AlreadyExistsError(message);
    case UCS_ERR_INVALID_PARAM:
    case UCS_ERR_INVALID_ADDR:
      return absl::InvalidArgumentError(message);
    case UCS_ERR_NO_DEVICE:
    case UCS_ERR_UNSUPPORTED:
      return absl::FailedPreconditionError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::StatusOr<std::unique_ptr<UcpWorker>> UcpWorker::Create(const std::string& net_devices) {
  RouteUcxLogToStderr();
  std::unique_ptr<UcpWorker> w(new UcpWorker());
  ucp_config_t* config = nullptr;
  ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
  if (status != UCS_OK) return UcsError(status, "cannot read the UCX configuration");
  if (!net_devices.empty()) {
    status = ucp_config_modify(config, "NET_DEVICES", net_devices.c_str());
    if (status != UCS_OK) {
      ucp_config_release(config);
      return UcsError(status, absl::StrCat("cannot set UCX's NET_DEVICES to ", net_devices));
    }
  }
  ucp_params_t params;
  std::memset(&params, 0, sizeof(params));
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  params.name = "tunefleet-bulk";
  status = ucp_init(&params, config, &w->context_);
  ucp_config_release(config);
  if (status != UCS_OK) return UcsError(status, "cannot initialise UCX");

  ucp_worker_params_t wparams;
  std::memset(&wparams, 0, sizeof(wparams));
  wparams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
  status = ucp_worker_create(w->context_, &wparams, &w->worker_);
  if (status != UCS_OK) return UcsError(status, "cannot create a UCX worker");
  status = ucp_worker_get_efd(w->worker_, &w->event_fd_);
  if (status != UCS_OK) return UcsError(status, "cannot get the UCX worker's event descriptor");
  return w;
}

UcpWorker::~UcpWorker() {
  if (worker_ != nullptr) ucp_worker_destroy(worker_);
  if (context_ != nullptr) ucp_cleanup(context_);
}

bool UcpWorker::Progress() {
  bool any = false;
  while (ucp_worker_progress(worker_) != 0) any = true;
  return any;
}

void UcpWorker::Wait(int timeout_ms) {
  const ucs_status_t status = ucp_worker_arm(worker_);
  if (status == UCS_ERR_BUSY) return;  // events pending: progress again
  pollfd pfd = {event_fd_, POLLIN, 0};
  ::poll(&pfd, 1, timeout_ms);
}

void UcpWorker::Signal() { ucp_worker_signal(worker_); }

absl::StatusOr<SockAddr> ResolveAddress(const std::string& host, int port) {
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("port ", port, " is out of range"));
  }
  addrinfo hints;
  std::memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (rc != 0 || found == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot resolve host '", host, "': ", ::gai_strerror(rc)));
  }
  SockAddr out;
  std::memcpy(&out.storage, found->ai_addr, found->ai_addrlen);
  out.length = found->ai_addrlen;
  ::freeaddrinfo(found);
  return out;
}

absl::StatusOr<SockAddr> ParseHostPort(const std::string& text) {
  std::string host;
  std::string port_text;
  if (!text.empty() && text[0] == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return absl::InvalidArgumentError(
          absl::StrCat("bad address '", text, "' (expected [IPv6]:PORT)"));
    }
    host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0 || text.find(':') != colon) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad address '", text, "' (expected IP:PORT)"));
    }
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  int port = 0;
  if (!absl::SimpleAtoi(port_text, &port) || port <= 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("bad port in address '", text, "'"));
  }
  return ResolveAddress(host, port);
}

absl::Status ProbeTcp(const SockAddr& addr, int timeout_ms) {
  const int fd = ::socket(addr.get()->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(std::strerror(errno));
  int err = 0;
  if (::connect(fd, addr.get(), addr.length) != 0) {
    err = errno;
    if (err == EINPROGRESS) {
      pollfd pfd = {fd, POLLOUT, 0};
      const int n = ::poll(&pfd, 1, timeout_ms);
      if (n == 0) {
        err = ETIMEDOUT;
      } else {
        socklen_t len = sizeof(err);
        if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      }
    }
  }
  ::close(fd);
  if (err == 0) return absl::OkStatus();
  return absl::UnavailableError(std::strerror(err));
}

absl::Status TryBind(const SockAddr& addr) {
  const int fd = ::socket(addr.get()->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(std::strerror(errno));
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  const int rc = ::bind(fd, addr.get(), addr.length);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return absl::UnavailableError(std::strerror(err));
  return absl::OkStatus();
}

std::string FormatSockAddr(const sockaddr* addr) {
  char ip[INET6_ADDRSTRLEN] = {0};
  if (addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    ::inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
    return absl::StrCat(ip, ":", ntohs(in->sin_port));
  }
  if (addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
    return absl::StrCat("[", ip, "]:", ntohs(in6->sin6_port));
  }
  return "?";
}

}  // namespace comm
}  // namespace tunefleet
