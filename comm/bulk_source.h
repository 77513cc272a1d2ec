// What a bulk server (comm/bulk_server.h) serves under one content hash, and how it reads that
// content in chunks for one transfer. A published file is a manifest of one entry with an empty
// path; a folder is its tree as HashDirectory lists it (folders included, sizes of files), the
// manifest the client receives first. Chunks follow the manifest's order: entry by entry, each
// file in pieces of at most kBulkChunkBytes; folders and empty files yield no chunk.
// Thread-safety: PublishedContent is immutable once built (shared by transfers); a ChunkReader
// belongs to one transfer on the server's progress thread.
#ifndef TUNEFLEET_COMM_BULK_SOURCE_H_
#define TUNEFLEET_COMM_BULK_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "comm/proto/bulk.pb.h"

namespace tunefleet {
namespace comm {

struct PublishedContent {
  std::string path;
  bool directory = false;
  uint64_t total_bytes = 0;
  BulkManifest manifest;      // a file: one entry with an empty path
  std::string manifest_wire;  // serialized manifest (folders only)
};

// Hashes `path` (a file or a folder) and describes it; `*hash` receives the content hash.
absl::StatusOr<std::shared_ptr<const PublishedContent>> DescribeContent(const std::string& path,
                                                                        std::string* hash);

// Reads one transfer's chunks, in order, from the published files.
class ChunkReader {
 public:
  explicit ChunkReader(std::shared_ptr<const PublishedContent> content)
      : content_(std::move(content)) {}
  ~ChunkReader();
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  const PublishedContent& content() const { return *content_; }

  // False once every chunk was read.
  bool HasNext();
  // Reads the next chunk (HasNext() was true) into `buffer` (kBulkChunkBytes long): its manifest
  // entry, offset and length. Errors name the file: "cannot open PATH: ...", "cannot read PATH
  // (changed since it was published?)"; the transfer ends there.
  absl::Status ReadNext(char* buffer, uint32_t* entry, uint64_t* offset, size_t* length);

 private:
  std::shared_ptr<const PublishedContent> content_;
  int entry_ = 0;  // next chunk: entry and offset
  uint64_t offset_ = 0;
  int fd_ = -1;  // open file of `fd_entry_`
  int fd_entry_ = -1;
};

}  // namespace comm
}  // namespace tunefleet

#endif  // TUNEFLEET_COMM_BULK_SOURCE_H_
