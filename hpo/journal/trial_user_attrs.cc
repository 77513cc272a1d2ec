#include "hpo/journal/trial_user_attrs.h"

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace tunefleet {
namespace hpo {
namespace {

// Visitor helpers: one overload per member type.
template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

absl::Status Expected(const TrialUserAttr& attr, const char* type, const PyJson& value) {
  return absl::InvalidArgumentError(
      absl::StrCat("user attr \"", attr.name, "\": expected ", type, ", got ", DumpPyJson(value)));
}

}  // namespace

const std::vector<TrialUserAttr>& TrialUserAttrs() {
  using W = UserAttrWritten;
  static const std::vector<TrialUserAttr>* const kRows = new std::vector<TrialUserAttr>{
      // The point's scaled lr, its phase ("random" | "grid"), its index in the sweep's plan.
      {"lr_effective", &Trial::lr_effective, W::kAtCreation},
      {"phase", &Trial::phase, W::kAtCreation},
      {"point", &Trial::point, W::kAtCreation},
      // Why it failed, and the end of the failing rank's stderr.
      {"fail_reason", &Trial::fail_reason, W::kAtFailure},
      {"stderr_tail", &Trial::stderr_tail, W::kAtFailure},
      // Where and when its ranks started, and rank 0's warm worker.
      {"placement", &Trial::placement, W::kWhileRunning},
      {"worker", &Trial::worker, W::kWhileRunning},
      {"ranks_started", &Trial::ranks_started, W::kWhileRunning},
      // It ran out of GPU memory sharing a GPU and was run again alone.
      {"requeued_alone", &Trial::requeued_alone, W::kWhileRunning},
      // Its GPU telemetry (launcher/agent/gpu_telemetry.h), before its end.
      {"gpu_util_mean", &Trial::gpu_util_mean, W::kWhileRunning},
      {"gpu_mem_peak_mib", &Trial::gpu_mem_peak_mib, W::kWhileRunning},
      {"gpu_energy_j", &Trial::gpu_energy_j, W::kWhileRunning},
  };
  return *kRows;
}

const TrialUserAttr* FindTrialUserAttr(std::string_view name) {
  for (const TrialUserAttr& attr : TrialUserAttrs()) {
    if (name == attr.name) return &attr;
  }
  return nullptr;
}

const TrialUserAttr& UserAttrOf(UserAttrMember member) {
  for (const TrialUserAttr& attr : TrialUserAttrs()) {
    if (attr.member == member) return attr;
  }
  TF_CHECK(false) << "a Trial member that is no user attr (hpo/journal/trial_user_attrs.cc)";
  return TrialUserAttrs().front();
}

bool HasUserAttr(const TrialUserAttr& attr, const Trial& t) {
  if (attr.written == UserAttrWritten::kAtCreation) return true;
  return std::visit(
      Overloaded{[&](double Trial::*) { return true; }, [&](int64_t Trial::*) { return true; },
                 [&](std::string Trial::*m) { return !(t.*m).empty(); },
                 [&](bool Trial::*m) { return t.*m; },
                 [&](std::optional<double> Trial::*m) { return (t.*m).has_value(); }},
      attr.member);
}

std::string UserAttrValue(const TrialUserAttr& attr, const Trial& t) {
  return std::visit(Overloaded{[&](double Trial::*m) { return JsonFloat(t.*m); },
                               [&](int64_t Trial::*m) { return std::to_string(t.*m); },
                               [&](std::string Trial::*m) { return JsonString(t.*m); },
                               [&](bool Trial::*m) { return std::string(t.*m ? "true" : "false"); },
                               [&](std::optional<double> Trial::*m) {
                                 return (t.*m).has_value() ? JsonFloat(*(t.*m))
                                                           : std::string("null");
                               }},
                    attr.member);
}

absl::Status ReadUserAttr(const TrialUserAttr& attr, const PyJson& v, Trial* t) {
  return std::visit(Overloaded{[&](double Trial::*m) {
                                 if (!v.is_number()) return Expected(attr, "a number", v);
                                 t->*m = v.get<double>();
                                 return absl::OkStatus();
                               },
                               [&](int64_t Trial::*m) {
                                 if (!v.is_number_integer()) return Expected(attr, "an integer", v);
                                 t->*m = v.get<int64_t>();
                                 return absl::OkStatus();
                               },
                               [&](std::string Trial::*m) {
                                 if (!v.is_string()) return Expected(attr, "a string", v);
                                 t->*m = v.get<std::string>();
                                 return absl::OkStatus();
                               },
                               [&](bool Trial::*m) {
                                 if (!v.is_boolean()) return Expected(attr, "true or false", v);
                                 t->*m = v.get<bool>();
                                 return absl::OkStatus();
                               },
                               [&](std::optional<double> Trial::*m) {
                                 if (!v.is_number()) return Expected(attr, "a number", v);
                                 t->*m = v.get<double>();
                                 return absl::OkStatus();
                               }},
                    attr.member);
}

}  // namespace hpo
}  // namespace tunefleet
