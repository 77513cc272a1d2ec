#include "comm/endpoint.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/file_util.h"

namespace tunefleet {
namespace comm {
namespace {

std::string Clip(const std::string& s) {
  return s.size() <= 200 ? s : absl::StrCat(s.substr(0, 200), "... (", s.size(), " characters)");
}

absl::Status Bad(const std::string& text, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("endpoint '", Clip(text), "': ", why));
}

}  // namespace

absl::StatusOr<Endpoint> ParseEndpoint(const std::string& text, bool for_bind) {
  Endpoint e;
  if (absl::StartsWith(text, "ipc://")) {
    e.ipc = true;
    e.path = text.substr(6);
    if (e.path.empty()) return Bad(text, "no socket path after ipc://");
    if (e.path.size() >= sizeof(sockaddr_un::sun_path)) {
      return Bad(text, absl::StrCat("a Unix socket path holds at most ",
                                    sizeof(sockaddr_un::sun_path) - 1, " bytes"));
    }
    e.text = text;
    return e;
  }
  if (!absl::StartsWith(text, "tcp://")) {
    return Bad(text, "expected tcp://HOST:PORT or ipc://PATH");
  }
  const std::string rest = text.substr(6);
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0) return Bad(text, "expected tcp://HOST:PORT");
  e.host = rest.substr(0, colon);
  e.port = rest.substr(colon + 1);
  for (char c : e.host) {
    if (absl::ascii_iscntrl(static_cast<unsigned char>(c)) || c == ' ' || c == '/') {
      return Bad(text, "the host holds a character no host name has");
    }
  }
  if (e.port == "*") {
    if (!for_bind) return Bad(text, "a client needs the port number, not *");
  } else {
    int port = 0;
    if (e.port.empty() || e.port.size() > 5 || !absl::SimpleAtoi(e.port, &port) ||
        e.port.find_first_not_of("0123456789") != std::string::npos) {
      return Bad(text, absl::StrCat("port '", Clip(e.port), "' is not a number"));
    }
    if (port > 65535 || (port == 0 && !for_bind)) {
      return Bad(text, absl::StrCat("port ", port, " is out of range (1-65535",
                                    for_bind ? ", or 0 / * for any" : "", ")"));
    }
  }
  if (e.host == "localhost") e.host = "127.0.0.1";
  e.text = absl::StrCat("tcp://", e.host, ":", e.port);
  return e;
}

bool IsLocalEndpoint(const std::string& text) {
  absl::string_view rest = text;
  if (!absl::ConsumePrefix(&rest, "tcp://")) return true;
  const size_t colon = rest.rfind(':');
  absl::string_view host = rest.substr(0, colon);
  // tcp://eth0;192.168.1.1:5555 names a source; the bound address follows ';'.
  if (const size_t semi = host.find(';'); semi != absl::string_view::npos)
    host = host.substr(semi + 1);
  host = absl::StripPrefix(absl::StripSuffix(host, "]"), "[");
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

absl::Status PrepareIpcBind(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return absl::OkStatus();  // nothing there
  if (!S_ISSOCK(st.st_mode)) {
    return absl::AlreadyExistsError(absl::StrCat(path, ": exists and is no socket"));
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  const int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  const int err = errno;
  ::close(fd);
  if (rc == 0) {
    return absl::AlreadyExistsError(absl::StrCat("another process listens on ", path));
  }
  if (err == ECONNREFUSED && ::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot remove the stale socket ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

void AcceptOnlyOwnUid(zmq::socket_t& socket) {
  const int uid = static_cast<int>(::geteuid());
  // Deprecated in libzmq 4.3 but kept there; where it is missing, the 0700 folder still keeps
  // other users out.
  zmq_setsockopt(static_cast<void*>(socket), ZMQ_IPC_FILTER_UID, &uid, sizeof(uid));
}

absl::Status CheckIpcReachable(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == EACCES) {
      // A folder on the way is closed to us: whose is it?
      std::string dir = path.substr(0, path.rfind('/'));
      while (!dir.empty() && ::stat(dir.c_str(), &st) != 0) dir = dir.substr(0, dir.rfind('/'));
      return absl::PermissionDeniedError(
          absl::StrCat("ipc://", path, " belongs to another user (uid ",
                       dir.empty() ? -1 : static_cast<int>(st.st_uid),
                       "): a head without keys takes sweeps only from its own user"));
    }
    return absl::NotFoundError(
        absl::StrCat("nothing listens at ipc://", path, ": ", std::strerror(err)));
  }
  if (st.st_uid != ::geteuid() || ::access(path.c_str(), R_OK | W_OK) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("ipc://", path, " belongs to another user (uid ", st.st_uid,
                     "): a head without keys takes sweeps only from its own user"));
  }
  return absl::OkStatus();
}

std::string EndpointHost(const std::string& endpoint) {
  if (!absl::StartsWith(endpoint, "tcp://")) return "127.0.0.1";
  const std::string host = endpoint.substr(6);
  const size_t colon = host.rfind(':');
  return colon == std::string::npos ? host : host.substr(0, colon);
}

absl::StatusOr<std::string> HostName() {
  char name[256] = {0};
  if (::gethostname(name, sizeof(name) - 1) != 0) return ErrnoStatus(errno, "gethostname");
  return std::string(name);
}

absl::StatusOr<std::string> LocalAddressToward(const std::string& host, const std::string& port,
                                               const std::string& name_in_errors) {
  const std::string& name = name_in_errors.empty() ? host : name_in_errors;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return absl::InvalidArgumentError(absl::StrCat(name, " does not resolve: ", gai_strerror(rc)));
  }
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  std::string out;
  if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0) {
    sockaddr_in local{};
    socklen_t len = sizeof(local);
    char text[INET_ADDRSTRLEN];
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0 &&
        ::inet_ntop(AF_INET, &local.sin_addr, text, sizeof(text)) != nullptr) {
      out = text;
    }
  }
  const int err = errno;
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(found);
  if (out.empty()) {
    return absl::UnavailableError(absl::StrCat("no route to ", name, ": ", std::strerror(err)));
  }
  return out;
}

std::string LocalAddressForEndpoint(const std::string& endpoint) {
  if (!absl::StartsWith(endpoint, "tcp://")) return "127.0.0.1";
  const std::string hostport = endpoint.substr(6);
  const size_t colon = hostport.rfind(':');
  const std::string host = hostport.substr(0, colon);
  const std::string port = colon == std::string::npos ? "5555" : hostport.substr(colon + 1);
  return LocalAddressToward(host, port).value_or("127.0.0.1");
}

absl::StatusOr<int> FreeTcpPort(const std::string& ip) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return ErrnoStatus(errno, "socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  if (::inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1) addr.sin_addr.s_addr = INADDR_ANY;
  socklen_t len = sizeof(addr);
  absl::Status status;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    status = ErrnoStatus(errno, absl::StrCat("cannot bind a TCP port on ", ip));
  }
  ::close(fd);
  if (!status.ok()) return status;
  return static_cast<int>(ntohs(addr.sin_port));
}

absl::Status WaitForTcpListener(const std::string& host, int port, absl::Duration timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
      rc != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(host, " does not resolve: ", ::gai_strerror(rc)));
  }
  const absl::Time deadline = absl::Now() + timeout;
  bool listening = false;
  while (!listening) {
    for (const addrinfo* a = found; a != nullptr && !listening; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      listening = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0;
      ::close(fd);
    }
    if (listening || absl::Now() >= deadline) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  ::freeaddrinfo(found);
  if (listening) return absl::OkStatus();
  return absl::DeadlineExceededError(absl::StrCat("nothing listens on ", host, ":", port, " after ",
                                                  absl::FormatDuration(timeout)));
}

}  // namespace comm
}  // namespace tunefleet
