#include "launcher/agent/program_events.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace tunefleet {
namespace launcher {
namespace {

double WallSeconds() { return absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()); }

}  // namespace

absl::StatusOr<std::unique_ptr<ProgramEvents>> ProgramEvents::Open(const std::string& trial_dir,
                                                                   const std::string& params_json) {
  absl::StatusOr<std::unique_ptr<EventFileWriter>> writer =
      EventFileWriter::Open(trial_dir + "/tensorboard", WallSeconds());
  if (!writer.ok()) return writer.status();
  std::unique_ptr<ProgramEvents> events(new ProgramEvents(std::move(*writer)));
  if (params_json.empty()) return events;
  absl::StatusOr<HParams> hparams = ParseHParams(params_json);
  if (!hparams.ok()) return hparams.status();
  if (absl::Status s = events->writer_->WriteSessionStart(*hparams, trial_dir, WallSeconds());
      !s.ok()) {
    return s;
  }
  events->session_ = true;
  return events;
}

absl::Status ProgramEvents::Add(const comm::Report& report) {
  std::map<std::string, double> scalars(report.metrics().begin(), report.metrics().end());
  scalars["samples"] = static_cast<double>(report.samples());
  return writer_->WriteScalars(report.step(), scalars, WallSeconds());
}

absl::Status ProgramEvents::End(bool success) {
  if (!session_) return absl::OkStatus();
  session_ = false;
  return writer_->WriteSessionEnd(success, WallSeconds());
}

}  // namespace launcher
}  // namespace tunefleet
