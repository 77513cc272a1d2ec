// A reader of TensorBoard event files for the tests, written from the format's specification
// (TensorFlow's record_writer.cc and crc32c.h) and independent of common/event_file.h: its own
// bitwise CRC-32C, no table. Checks both masked CRCs of every record.
#ifndef TUNEFLEET_TESTS_TRAINER_EVENT_READER_H_
#define TUNEFLEET_TESTS_TRAINER_EVENT_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/proto/tensorboard.pb.h"

namespace tunefleet {
namespace trainer {

// CRC-32C, one bit at a time.
uint32_t BitwiseCrc32c(const std::string& data);

// Every Event of the file at `path`; an error names the first record whose length or data CRC
// is wrong, or that is cut short or does not parse.
absl::StatusOr<std::vector<tensorboard::Event>> ReadEvents(const std::string& path);

// The event files (events.out.tfevents.*) in `dir`, sorted.
std::vector<std::string> EventFiles(const std::string& dir);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TESTS_TRAINER_EVENT_READER_H_
