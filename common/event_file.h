// TensorBoard event files: DIR/events.out.tfevents.SECONDS.HOST.PID, which `tensorboard --logdir`
// reads (HF Trainer, Lightning and Ray Tune write the same).
//
// The format: a sequence of TFRecords, each
//   uint64 length (little-endian) | uint32 masked CRC-32C of those 8 bytes |
//   length bytes of a serialized Event | uint32 masked CRC-32C of them,
// where masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8. The first Event of a file holds
// file_version "brain.Event:2"; then one Event per write, its Summary holding the scalars
// (simple_value) or an HParams plugin summary (trainer/io/proto/tensorboard.proto).
//
// Each record is flushed when written, so a crash loses at most the record being written.
// Thread-safety: not thread-safe.
#ifndef TUNEFLEET_COMMON_EVENT_FILE_H_
#define TUNEFLEET_COMMON_EVENT_FILE_H_

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet {

// CRC-32C (Castagnoli) of `data`, and TFRecord's masked form of a CRC.
uint32_t Crc32c(absl::string_view data);
uint32_t MaskCrc(uint32_t crc);
// One TFRecord framing `payload`.
std::string FrameRecord(absl::string_view payload);

// A run's hyperparameters for the HParams plugin.
struct HParams {
  std::map<std::string, double> numbers;
  std::map<std::string, std::string> strings;
};
// From a flat JSON object of numbers, strings and booleans (TUNEFLEET_HPARAMS, which `hpo sweep`
// sets for each trial: {"lr": 0.001, "batch_size": 32, ...}); booleans become 0 and 1.
absl::StatusOr<HParams> ParseHParams(absl::string_view json);

class EventFileWriter {
 public:
  // Makes `dir` and a new event file in it; `wall_time` (seconds since the epoch) names it.
  static absl::StatusOr<std::unique_ptr<EventFileWriter>> Open(const std::string& dir,
                                                               double wall_time);
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  // One Event at `step` with a scalar per value (tag = key), in key order; non-finite values are
  // skipped, as metrics.jsonl writes them as null.
  absl::Status WriteScalars(int64_t step, const std::map<std::string, double>& values,
                            double wall_time);
  // The HParams plugin's session start: the hyperparameters (numbers, or strings) of this run.
  absl::Status WriteSessionStart(const HParams& hparams, const std::string& model_uri,
                                 double wall_time);
  // The HParams plugin's session end: success or failure.
  absl::Status WriteSessionEnd(bool success, double wall_time);

  const std::string& path() const { return path_; }

 private:
  EventFileWriter(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  absl::Status Write(const std::string& event);

  std::string path_;
  std::FILE* file_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_EVENT_FILE_H_
