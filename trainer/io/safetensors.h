// Reading and writing the safetensors format (https://github.com/huggingface/safetensors):
//
//   [8 bytes: N, little-endian u64][N bytes: JSON header][data]
//   header = {"__metadata__": {str: str}, NAME: {"dtype": "F32", "shape": [..],
//             "data_offsets": [BEGIN, END]}, ...}   (offsets relative to the start of data)
//
// Reading is strict, as the spec and the reference Rust reader are: N within the file, the header
// a JSON object starting with '{' (trailing spaces allowed), no duplicate keys at any level, known
// dtypes, non-negative integer shapes and offsets, shape x dtype size == END - BEGIN, the tensors'
// spans in order of BEGIN tiling [0, data size) with no hole and no overlap. Every error is one
// line that starts with the file's name. Reading never trusts the header: any byte string either
// parses or yields an error (tests/trainer/io/safetensors_fuzz_test.cc checks this on mutated
// headers).
//
// Writing produces the bytes Hugging Face's safetensors writes: compact JSON with "__metadata__"
// first, tensors ordered by dtype (widest first, the Rust crate's order) then name, data in the
// same order, the header padded with spaces to a multiple of 8. Files are written atomically
// (common/file_util.h's AtomicFile: temporary file in the same folder, fsync, rename, fsync of
// the folder). The checkpoint's JSON and tokenizer files use WriteFileAtomically from there.
//
// Tensors are little-endian and row-major; this code assumes a little-endian host.
// Thread-safety: all functions are thread-compatible (no shared state).
#ifndef TUNEFLEET_TRAINER_IO_SAFETENSORS_H_
#define TUNEFLEET_TRAINER_IO_SAFETENSORS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/types.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet {
namespace trainer {

// The reference reader refuses headers above 100 MB; so does this one.
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

// One header entry, validated.
struct SafetensorsEntry {
  std::string name;
  std::string dtype;  // "F32", "BF16", ... as in the file
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // byte offsets relative to the start of the data section
  uint64_t end = 0;
};

struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries;  // sorted by name
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;  // 8 + N: where the data section starts in the file
};

struct SafetensorsContents {
  std::map<std::string, torch::Tensor> tensors;  // CPU, contiguous, owning their memory
  std::map<std::string, std::string> metadata;
};

struct SafetensorsReadOptions {
  // Convert floating-point tensors (F16, BF16, F64) to float32; integer and bool tensors keep
  // their dtype.
  bool to_float32 = false;
};

// Validates the header of `bytes` (a whole file) and returns it. `name` starts error messages.
absl::StatusOr<SafetensorsHeader> ParseSafetensorsHeader(absl::string_view bytes,
                                                         absl::string_view name);

// Parses a whole file held in memory into tensors (copies; `bytes` may be freed afterwards).
// Dtypes LibTorch lacks (U16/U32/U64, F8 on LibTorch < 2.1) are an error naming the tensor.
absl::StatusOr<SafetensorsContents> ParseSafetensors(absl::string_view bytes,
                                                     absl::string_view name,
                                                     const SafetensorsReadOptions& options = {});

// Reads `path` (memory-mapped) and parses it; errors start with the path.
absl::StatusOr<SafetensorsContents> ReadSafetensors(const std::string& path,
                                                    const SafetensorsReadOptions& options = {});

// The whole file Hugging Face would write for these tensors, in memory. Tensors may live on any
// device and be non-contiguous; they are copied to CPU. Empty metadata writes none.
absl::StatusOr<std::string> SerializeSafetensors(
    const std::map<std::string, torch::Tensor>& tensors,
    const std::map<std::string, std::string>& metadata = {{"format", "pt"}});

// Writes the same bytes to `path` atomically, streaming one tensor at a time.
absl::Status WriteSafetensors(const std::string& path,
                              const std::map<std::string, torch::Tensor>& tensors,
                              const std::map<std::string, std::string>& metadata = {
                                  {"format", "pt"}});

// "F32" -> torch::kFloat32, ...; an error for dtypes LibTorch lacks or unknown names.
absl::StatusOr<torch::Dtype> SafetensorsDtypeToTorch(absl::string_view dtype);
absl::StatusOr<std::string> TorchDtypeToSafetensors(torch::Dtype dtype);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_IO_SAFETENSORS_H_
