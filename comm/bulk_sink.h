// Where one bulk transfer (comm/bulk_receiver.h) writes what arrives: the temporary file, or the
// temporary folder with the tree its manifest describes, locked for RemoveStaleTemps
// (comm/bulk_cache.h LockTemp) from creation until the caller has installed or removed it.
// Chunks are written at their place (manifest entry, offset), in any order.
// Thread-safety: one object belongs to the fetching thread.
#ifndef TUNEFLEET_COMM_BULK_SINK_H_
#define TUNEFLEET_COMM_BULK_SINK_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "comm/proto/bulk.pb.h"

namespace tunefleet {
namespace comm {

class BulkSink {
 public:
  // `temp`: the path to create; `server` names the bulk server in errors about what it sent.
  BulkSink(std::string temp, std::string server)
      : temp_(std::move(temp)), server_(std::move(server)) {}
  // Closes the open file and, unless released, the lock.
  ~BulkSink();
  BulkSink(const BulkSink&) = delete;
  BulkSink& operator=(const BulkSink&) = delete;

  // Creates and locks the temporary: a file (`directory` false: `manifest` holds one entry), or
  // the folder with the subfolders and empty files of `manifest`, whose sizes must add up to
  // `total` (kDataLoss otherwise, as for an unsafe path). `manifest` must outlive this object.
  absl::Status Create(const BulkManifest& manifest, bool directory, uint64_t total);

  // Writes `length` bytes of manifest entry `entry` at `offset` (checked by the caller).
  absl::Status Write(int entry, uint64_t offset, const char* data, size_t length);

  // Closes the file being written. No fsync: a process crash cannot leave a partial entry under
  // the final name (rename after verification), and an entry damaged by a power loss fails the
  // verification that every reuse performs, so it is fetched again.
  absl::Status Close();

  // The lock on the temporary, now the caller's to close; -1 if none.
  int ReleaseLock();

 private:
  absl::Status Lock();

  const std::string temp_;
  const std::string server_;
  const BulkManifest* manifest_ = nullptr;
  bool directory_ = false;
  int fd_ = -1;
  int fd_entry_ = -1;
  int lock_fd_ = -1;
};

}  // namespace comm
}  // namespace tunefleet

#endif  // TUNEFLEET_COMM_BULK_SINK_H_
