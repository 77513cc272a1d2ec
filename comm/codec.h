// Encoding and decoding of control-plane frames: one serialized Envelope per ZeroMQ frame,
// stamped with the protocol version and capped in size. Pure functions (no sockets), so every
// message type can be fuzzed through DecodeEnvelope.
//
// Decode errors are distinguishable by code, so receivers can act on them:
//   kResourceExhausted  frame larger than kMaxFrameBytes   -> drop and log
//   kDataLoss           not a valid Envelope, or no body    -> drop and log
//   kFailedPrecondition another protocol version            -> refuse with a clear error
#ifndef TUNEFLEET_COMM_CODEC_H_
#define TUNEFLEET_COMM_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "comm/proto/messages.pb.h"

namespace tunefleet {
namespace comm {

inline constexpr uint32_t kProtocolVersion = 2;    // 2: Report.samples
inline constexpr size_t kMaxFrameBytes = 1 << 20;  // 1 MiB: control messages are small
// The head's Refused reason for a peer it does not know (never registered, or declared lost):
// an agent that gets it registers again.
inline constexpr char kRefusedRegisterFirst[] = "register first";

// Serializes `envelope` with version = kProtocolVersion. Fails on an empty body or a frame over
// kMaxFrameBytes.
absl::StatusOr<std::string> EncodeEnvelope(Envelope envelope);

absl::StatusOr<Envelope> DecodeEnvelope(absl::string_view frame);

// "register", "report", ... for logs.
const char* BodyName(const Envelope& envelope);

}  // namespace comm
}  // namespace tunefleet

#endif  // TUNEFLEET_COMM_CODEC_H_
