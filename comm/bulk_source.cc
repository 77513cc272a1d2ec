#include "comm/bulk_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "comm/bulk_wire.h"
#include "comm/content_hash.h"
#include "common/file_util.h"

namespace tunefleet {
namespace comm {

absl::StatusOr<std::shared_ptr<const PublishedContent>> DescribeContent(const std::string& path,
                                                                        std::string* hash) {
  auto content = std::make_shared<PublishedContent>();
  content->path = path;
  content->directory = IsDir(path);
  if (content->directory) {
    std::vector<TreeEntry> entries;
    absl::StatusOr<std::string> h = HashDirectory(path, &entries);
    if (!h.ok()) return h.status();
    *hash = *h;
    for (const TreeEntry& e : entries) {
      BulkManifest::Entry* m = content->manifest.add_entries();
      m->set_path(e.path);
      m->set_directory(e.directory);
      m->set_size(e.size);
      content->total_bytes += e.size;
    }
    content->manifest_wire = content->manifest.SerializeAsString();
  } else {
    uint64_t size = 0;
    absl::StatusOr<std::string> h = HashFile(path, &size);
    if (!h.ok()) return h.status();
    *hash = *h;
    content->manifest.add_entries()->set_size(size);
    content->total_bytes = size;
  }
  return std::shared_ptr<const PublishedContent>(std::move(content));
}

ChunkReader::~ChunkReader() {
  if (fd_ >= 0) ::close(fd_);
}

bool ChunkReader::HasNext() {
  const BulkManifest& m = content_->manifest;
  while (entry_ < m.entries_size() &&
         (m.entries(entry_).directory() || offset_ >= m.entries(entry_).size())) {
    entry_++;
    offset_ = 0;
  }
  return entry_ < m.entries_size();
}

absl::Status ChunkReader::ReadNext(char* buffer, uint32_t* entry, uint64_t* offset,
                                   size_t* length) {
  const BulkManifest::Entry& e = content_->manifest.entries(entry_);
  const std::string path =
      content_->directory ? JoinPath(content_->path, e.path()) : content_->path;
  if (fd_entry_ != entry_) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    fd_entry_ = entry_;
    if (fd_ < 0) {
      return absl::InternalError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
    }
  }
  *length = static_cast<size_t>(std::min<uint64_t>(kBulkChunkBytes, e.size() - offset_));
  if (!ReadFully(fd_, buffer, *length, offset_)) {
    return absl::DataLossError(
        absl::StrCat("cannot read ", path, " (changed since it was published?)"));
  }
  *entry = static_cast<uint32_t>(entry_);
  *offset = offset_;
  offset_ += *length;
  return absl::OkStatus();
}

}  // namespace comm
}  // namespace tunefleet
