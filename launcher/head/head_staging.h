// The head's side of staging (TrialSpec.stage): files and folders a trial's ranks need on nodes
// that share no file system with the head. Prepare() fills in each path's content hash, the
// port of the head's UCX bulk server (comm/bulk_server.h) and its token: the server is started
// on first use, bound to the head's address (only there: StageBindIp), with a random token made
// then (comm/bulk_token.h, one per head) that travels to the agents only inside their Assign,
// over the control plane (CURVE-encrypted with --keys, else a socket only this user reaches, or
// --insecure); nobody else can fetch. Agents fetch from that port on the head's host into their
// cache. A path is hashed again only when its size or modification time changed. The agent's
// side: launcher/agent/agent_staging.h.
// Thread-safety: the head's poll loop only (FetchBack: any thread).
#ifndef TUNEFLEET_LAUNCHER_HEAD_HEAD_STAGING_H_
#define TUNEFLEET_LAUNCHER_HEAD_HEAD_STAGING_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "comm/bulk_server.h"
#include "comm/proto/messages.pb.h"

namespace tunefleet {
namespace launcher {

class Stager {
 public:
  // `bind_ip`: where the bulk server listens ("0.0.0.0": every interface).
  explicit Stager(std::string bind_ip) : bind_ip_(std::move(bind_ip)) {}

  // Publishes the spec's staged paths and fills in hash, bytes, stage_port and stage_token. A
  // path that is missing or unreadable, or a server that cannot start, is an error naming it.
  absl::Status Prepare(comm::TrialSpec* spec);

 private:
  struct Published {
    int64_t size = 0;
    int64_t mtime_ns = 0;
    std::string hash;
    uint64_t bytes = 0;
  };

  std::string bind_ip_;
  std::unique_ptr<comm::BulkServer> server_;
  int port_ = 0;
  std::string token_;  // the server's (from its start)
  std::map<std::string, Published> published_;
};

// The other direction (TrialSpec.fetch_back): puts the content `hash` that the bulk server at
// `server` ("IP:PORT", whose token is `token`: Exit.fetch_token) serves at `dest`: nothing moves
// when `dest` already holds that content (a shared file system); else it is fetched beside `dest`
// (DEST_DIR/.tunefleet-fetch), verified and renamed over it. Returns one line saying which.
// Blocking: run it on a thread.
absl::StatusOr<std::string> FetchBack(const std::string& server, const std::string& hash,
                                      const std::string& token, const std::string& dest);

// The IP a head bound to `endpoint` serves bulk data on: tcp://IP:PORT -> IP, tcp://*:PORT ->
// 0.0.0.0, ipc:// and others -> 127.0.0.1. The server listens there only (comm/bulk_server.h).
std::string StageBindIp(const std::string& endpoint);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_HEAD_HEAD_STAGING_H_
