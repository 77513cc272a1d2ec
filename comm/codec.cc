#include "comm/codec.h"

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace comm {

absl::StatusOr<std::string> EncodeEnvelope(Envelope envelope) {
  if (envelope.body_case() == Envelope::BODY_NOT_SET) {
    return absl::InvalidArgumentError("refusing to send an envelope with no message");
  }
  envelope.set_version(kProtocolVersion);
  std::string frame;
  if (!envelope.SerializeToString(&frame)) {
    return absl::InternalError(absl::StrCat("cannot serialize ", BodyName(envelope)));
  }
  if (frame.size() > kMaxFrameBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(BodyName(envelope), " message of ",
                                                     frame.size(), " bytes exceeds the ",
                                                     kMaxFrameBytes, "-byte cap"));
  }
  return frame;
}

absl::StatusOr<Envelope> DecodeEnvelope(absl::string_view frame) {
  if (frame.size() > kMaxFrameBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "frame of ", frame.size(), " bytes exceeds the ", kMaxFrameBytes, "-byte cap"));
  }
  Envelope envelope;
  if (!envelope.ParseFromArray(frame.data(), static_cast<int>(frame.size()))) {
    return absl::DataLossError(absl::StrCat("malformed frame of ", frame.size(), " bytes"));
  }
  // No version at all (an empty or foreign frame that happens to parse) is malformed, not a
  // peer of another version.
  if (envelope.version() == 0) {
    return absl::DataLossError(
        absl::StrCat("frame of ", frame.size(), " bytes has no protocol version"));
  }
  if (envelope.version() != kProtocolVersion) {
    return absl::FailedPreconditionError(absl::StrCat("protocol version ", envelope.version(),
                                                      " is not supported (this build speaks ",
                                                      kProtocolVersion, ")"));
  }
  if (envelope.body_case() == Envelope::BODY_NOT_SET) {
    return absl::DataLossError(
        absl::StrCat("frame of ", frame.size(), " bytes carries no known message"));
  }
  return envelope;
}

const char* BodyName(const Envelope& envelope) {
  switch (envelope.body_case()) {
    case Envelope::kRegister:
      return "register";
    case Envelope::kWelcome:
      return "welcome";
    case Envelope::kHeartbeat:
      return "heartbeat";
    case Envelope::kSubmit:
      return "submit";
    case Envelope::kAssign:
      return "assign";
    case Envelope::kStarted:
      return "started";
    case Envelope::kReport:
      return "report";
    case Envelope::kDecision:
      return "decision";
    case Envelope::kExit:
      return "exit";
    case Envelope::kCancel:
      return "cancel";
    case Envelope::kStatusRequest:
      return "status_request";
    case Envelope::kStatus:
      return "status";
    case Envelope::kRefused:
      return "refused";
    case Envelope::kShutdown:
      return "shutdown";
    case Envelope::kRunTrial:
      return "run_trial";
    case Envelope::kTrialDone:
      return "trial_done";
    case Envelope::kTelemetry:
      return "telemetry";
    case Envelope::BODY_NOT_SET:
      return "empty";
  }
  return "unknown";
}

}  // namespace comm
}  // namespace tunefleet
