#include "launcher/head/head_staging.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "comm/bulk_fetch.h"
#include "comm/bulk_token.h"
#include "comm/content_hash.h"
#include "comm/endpoint.h"
#include "common/file_util.h"
#include "common/logging.h"

namespace tunefleet {
namespace launcher {
namespace {

// Bytes under a file or folder (what a fetch moves), for the logs.
uint64_t TreeBytes(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return 0;
  return S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
}

}  // namespace

absl::StatusOr<std::string> FetchBack(const std::string& server, const std::string& hash,
                                      const std::string& token, const std::string& dest) {
  if (PathExists(dest)) {
    absl::StatusOr<std::string> here = comm::HashPath(dest);
    if (here.ok() && *here == hash) return std::string("already here (same content)");
  }
  const size_t slash = dest.rfind('/');
  const std::string parent = slash == std::string::npos || slash == 0 ? "." : dest.substr(0, slash);
  if (absl::Status made = MakeDirs(parent); !made.ok()) return made;
  const std::string cache = JoinPath(parent, ".tunefleet-fetch");
  comm::FetchOptions options;
  options.token = token;
  absl::StatusOr<comm::FetchResult> got = comm::FetchToCache(server, hash, cache, options);
  if (!got.ok()) return got.status();
  if (PathExists(dest)) {
    if (absl::Status removed = RemoveTree(dest); !removed.ok()) return removed;
  }
  if (absl::Status moved = RenamePath(got->path, dest); !moved.ok()) return moved;
  ::rmdir(cache.c_str());  // when nothing else is cached there
  return absl::StrCat("fetched ", got->bytes, " bytes from ", server, " in ",
                      absl::StrFormat("%.3f", got->transfer_seconds), " s, verified");
}

std::string StageBindIp(const std::string& endpoint) {
  const std::string host = comm::EndpointHost(endpoint);
  if (host == "*" || host.empty()) return "0.0.0.0";
  return host;
}

absl::Status Stager::Prepare(comm::TrialSpec* spec) {
  if (spec->stage_size() == 0) return absl::OkStatus();
  if (server_ == nullptr) {
    absl::StatusOr<std::string> token = comm::NewBulkToken();
    if (!token.ok()) return token.status();
    absl::StatusOr<std::unique_ptr<comm::BulkServer>> started =
        comm::BulkServer::Start(bind_ip_, 0, *token);
    if (!started.ok()) {
      return absl::Status(started.status().code(), absl::StrCat("cannot start the staging server: ",
                                                                started.status().message()));
    }
    server_ = std::move(*started);
    const std::string address = server_->address();
    int port = 0;
    if (!absl::SimpleAtoi(address.substr(address.rfind(':') + 1), &port)) {
      return absl::InternalError(absl::StrCat("staging server address ", address));
    }
    port_ = port;
    token_ = *token;
    TF_LOG(INFO) << "staging server (UCX) listening on " << address
                 << " (only for this head's agents: token-authenticated)";
  }
  for (comm::StagedPath& staged : *spec->mutable_stage()) {
    const std::string& path = staged.path();
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      return absl::NotFoundError(absl::StrCat("cannot stage ", path, ": ", std::strerror(errno)));
    }
    const int64_t mtime_ns =
        static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    Published& p = published_[path];
    if (p.hash.empty() || p.size != static_cast<int64_t>(st.st_size) || p.mtime_ns != mtime_ns) {
      const absl::Time start = absl::Now();
      absl::StatusOr<std::string> hash = server_->Publish(path);
      if (!hash.ok()) {
        published_.erase(path);
        return absl::Status(hash.status().code(),
                            absl::StrCat("cannot stage ", path, ": ", hash.status().message()));
      }
      p = Published{static_cast<int64_t>(st.st_size), mtime_ns, *hash, TreeBytes(path)};
      TF_LOG(INFO) << "staging " << path << " as " << p.hash.substr(0, 12) << " (hashed in "
                   << absl::FormatDuration(absl::Trunc(absl::Now() - start, absl::Milliseconds(1)))
                   << ")";
    }
    staged.set_hash(p.hash);
    staged.set_bytes(p.bytes);
  }
  spec->set_stage_port(port_);
  spec->set_stage_token(token_);
  return absl::OkStatus();
}

}  // namespace launcher
}  // namespace tunefleet
