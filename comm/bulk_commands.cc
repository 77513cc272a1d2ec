#include "comm/bulk_commands.h"

#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "comm/bulk_fetch.h"
#include "comm/bulk_server.h"
#include "comm/bulk_token.h"
#include "comm/content_hash.h"
#include "common/cli.h"
#include "common/logging.h"
#include "common/signals.h"

namespace tunefleet {
namespace comm {

absl::Status SplitBind(const std::string& text, std::string* ip, int* port) {
  *port = 0;
  std::string rest;
  if (!text.empty() && text[0] == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("--bind: bad address '", text, "'"));
    }
    *ip = text.substr(1, close - 1);
    rest = text.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') {
      return absl::InvalidArgumentError(absl::StrCat("--bind: bad address '", text, "'"));
    }
    if (!rest.empty()) rest = rest.substr(1);
  } else {
    const size_t colon = text.find(':');
    *ip = text.substr(0, colon);
    if (colon != std::string::npos) rest = text.substr(colon + 1);
  }
  if (ip->empty()) return absl::InvalidArgumentError("--bind: missing IP address");
  if (!rest.empty() && (!absl::SimpleAtoi(rest, port) || *port < 0 || *port > 65535)) {
    return absl::InvalidArgumentError(absl::StrCat("--bind: bad port in '", text, "'"));
  }
  return absl::OkStatus();
}

namespace {

// serve's token: the one in `path`, or a new one written there (0600) when it does not exist.
absl::StatusOr<std::string> ServeToken(const std::string& path) {
  if (::access(path.c_str(), F_OK) == 0) return ReadBulkTokenFile(path);
  absl::StatusOr<std::string> token = NewBulkToken();
  if (!token.ok()) return token.status();
  if (absl::Status s = WriteBulkTokenFile(path, *token); !s.ok()) return s;
  return token;
}

}  // namespace

int BulkServe(const std::vector<std::string>& args) {
  // Before any thread (UCX starts some): SIGINT / SIGTERM arrive through this descriptor.
  SignalFd signals({SIGINT, SIGTERM});
  std::string bind, token_file;
  CommandLine cli("bulk serve", "PATH...",
                  "Publishes each PATH (a file or a folder) under its SHA-256 content hash and\n"
                  "serves them over UCX until SIGINT or SIGTERM, only to fetches that present the\n"
                  "token in --token_file (UCX authenticates nobody). Prints `serving HASH PATH`\n"
                  "for each, then `listening IP:PORT`.");
  cli.AddString("bind", &bind,
                "address to listen on, and nowhere else; port 0 or none: any free port",
                "IP[:PORT]");
  cli.AddString("token_file", &token_file,
                "the token fetches must present: read from FILE (private, as written here), or "
                "a new random one written to FILE (0600) when it does not exist; give it to "
                "`bulk fetch --token_file` through a private channel (scp)",
                "FILE");
  cli.ExpectPositional(1, -1);
  if (int rc = ParseOrExit(cli, args, "bulk serve"); rc >= 0) return rc;
  for (const auto& [name, value] :
       {std::pair<const char*, std::string*>{"bind", &bind}, {"token_file", &token_file}}) {
    if (value->empty()) {
      PrintError("bulk serve",
                 absl::InvalidArgumentError(absl::StrCat("--", name, " is required")));
      return kExitUsage;
    }
  }
  std::string ip;
  int port = 0;
  if (absl::Status s = SplitBind(bind, &ip, &port); !s.ok()) {
    PrintError("bulk serve", s);
    return kExitUsage;
  }
  absl::StatusOr<std::string> token = ServeToken(token_file);
  if (!token.ok()) {
    PrintError("bulk serve", token.status());
    return kExitUsage;
  }
  auto server = BulkServer::Start(ip, port, *token);
  if (!server.ok()) {
    PrintError("bulk serve", server.status());
    return kExitFailure;
  }
  for (const std::string& path : cli.positional()) {
    absl::StatusOr<std::string> hash = (*server)->Publish(path);
    if (!hash.ok()) {
      PrintError("bulk serve", hash.status());
      return kExitUsage;
    }
    std::cout << "serving " << *hash << " " << path << std::endl;
  }
  std::cout << "listening " << (*server)->address() << std::endl;
  while (true) {
    pollfd pfd = {signals.fd(), POLLIN, 0};
    ::poll(&pfd, 1, -1);
    if (!signals.Read().empty()) break;
  }
  const BulkServer::Stats stats = (*server)->stats();
  TF_LOG(INFO) << "stopping: " << stats.transfers_completed << " transfer(s) completed, "
               << stats.transfers_failed << " failed, " << stats.bytes_sent << " bytes sent";
  return kExitOk;
}

int BulkFetch(const std::vector<std::string>& args) {
  std::string from, hash, cache, token_file;
  double timeout_s = 30;
  CommandLine cli("bulk fetch", "",
                  "Puts the content HASH into CACHE/HASH: reuses an entry already there that\n"
                  "verifies, else fetches it from the bulk server, verifies its SHA-256 and\n"
                  "renames it into place. Prints one line: fetched or reused, bytes, MB/s, path.");
  cli.AddString("from", &from, "the bulk server", "IP:PORT");
  cli.AddString("hash", &hash, "SHA-256 content hash (as `bulk serve` printed it)", "HASH");
  cli.AddString("cache", &cache, "cache folder (created if missing)", "DIR");
  cli.AddString("token_file", &token_file,
                "the server's token file (`bulk serve --token_file`; not group- or "
                "world-readable): the server serves nothing without its token",
                "FILE");
  cli.AddDouble("timeout_s", &timeout_s, "give up when the server sends nothing for this long",
                "SECONDS");
  cli.ExpectPositional(0, 0);
  if (int rc = ParseOrExit(cli, args, "bulk fetch"); rc >= 0) return rc;
  for (const auto& [name, value] : {std::pair<const char*, std::string*>{"from", &from},
                                    {"hash", &hash},
                                    {"cache", &cache},
                                    {"token_file", &token_file}}) {
    if (value->empty()) {
      PrintError("bulk fetch",
                 absl::InvalidArgumentError(absl::StrCat("--", name, " is required")));
      return kExitUsage;
    }
  }
  if (!IsContentHash(hash)) {
    PrintError("bulk fetch", absl::InvalidArgumentError(absl::StrCat(
                                 "--hash: '", hash, "' is not a SHA-256 hash (64 hex digits)")));
    return kExitUsage;
  }
  absl::StatusOr<std::string> token = ReadBulkTokenFile(token_file);
  if (!token.ok()) {
    PrintError("bulk fetch", token.status());
    return kExitUsage;
  }
  FetchOptions options;
  options.token = *token;
  options.idle_timeout = absl::Seconds(timeout_s);
  const auto start = std::chrono::steady_clock::now();
  bool progress_shown = false;
  if (::isatty(STDERR_FILENO)) {
    options.progress = [&](uint64_t done, uint64_t total) {
      if (total < (64u << 20)) return;
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::fprintf(stderr, "\r%8.1f / %.1f MB (%3.0f%%) %8.1f MB/s", done / 1e6, total / 1e6,
                   100.0 * done / total, done / 1e6 / std::max(secs, 1e-9));
      progress_shown = true;
    };
  }
  absl::StatusOr<FetchResult> r = FetchToCache(from, hash, cache, options);
  if (progress_shown) std::fprintf(stderr, "\n");
  if (!r.ok()) {
    PrintError("bulk fetch", r.status());
    return r.status().code() == absl::StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  if (r->reused) {
    std::cout << absl::StrFormat("reused 0 bytes, verified in %.3f s: %s", r->verify_seconds,
                                 r->path)
              << std::endl;
  } else {
    std::cout << absl::StrFormat("fetched %d bytes in %.3f s, %.1f MB/s, verified in %.3f s: %s",
                                 r->bytes, r->transfer_seconds,
                                 r->bytes / 1e6 / std::max(r->transfer_seconds, 1e-9),
                                 r->verify_seconds, r->path)
              << std::endl;
  }
  return kExitOk;
}

int BulkHash(const std::vector<std::string>& args) {
  CommandLine cli("bulk hash", "PATH...",
                  "Prints `HASH  PATH` for each file or folder: the content hash `bulk serve`\n"
                  "publishes it under (for a file, what sha256sum prints).");
  cli.ExpectPositional(1, -1);
  if (int rc = ParseOrExit(cli, args, "bulk hash"); rc >= 0) return rc;
  for (const std::string& path : cli.positional()) {
    absl::StatusOr<std::string> hash = HashPath(path);
    if (!hash.ok()) {
      PrintError("bulk hash", hash.status());
      return kExitFailure;
    }
    std::cout << *hash << "  " << path << std::endl;
  }
  return kExitOk;
}

}  // namespace comm
}  // namespace tunefleet
