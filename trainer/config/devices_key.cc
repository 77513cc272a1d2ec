#include "trainer/config/devices_key.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace trainer {

absl::Status ReadDevicesKey(const ConfigMap& m, int local_gpus, int64_t* devices,
                            std::vector<int64_t>* gpu_ids) {
  std::string text;
  if (m.Has("devices")) RETURN_IF_ERROR(m.GetYamlText("devices", &text));
  if (absl::StartsWith(text, "[")) {
    RETURN_IF_ERROR(m.Get("devices", gpu_ids));
    if (gpu_ids->empty()) {
      return m.Error("devices", "an empty list names no GPU (-1: every local GPU, N: N ranks)");
    }
    for (size_t i = 0; i < gpu_ids->size(); ++i) {
      const int64_t id = (*gpu_ids)[i];
      if (id < 0) return m.Error("devices", absl::StrCat("GPU ids are >= 0, got ", id));
      for (size_t j = 0; j < i; ++j) {
        if ((*gpu_ids)[j] == id) {
          return m.Error("devices", absl::StrCat("GPU ", id, " is listed twice"));
        }
      }
    }
    *devices = static_cast<int64_t>(gpu_ids->size());
  } else {
    RETURN_IF_ERROR(m.GetOptional("devices", devices));
    if (*devices == 0 || *devices < -1) {
      return m.Error("devices", absl::StrCat("must be -1 (every local GPU), a number of ranks "
                                             ">= 1 or a list of GPU ids, got ",
                                             *devices));
    }
  }
  if (local_gpus < 0) return absl::OkStatus();
  if (!gpu_ids->empty()) {
    if (local_gpus == 0) {
      return m.Error("devices",
                     "lists GPU ids but this machine has no GPU (N: N ranks on the "
                     "CPU)");
    }
    for (int64_t id : *gpu_ids) {
      if (id >= local_gpus) {
        return m.Error(
            "devices",
            absl::StrCat("GPU ", id, " is not on this machine (",
                         local_gpus == 1 ? "GPU 0 only" : absl::StrCat("GPUs 0-", local_gpus - 1),
                         ")"));
      }
    }
  } else if (local_gpus > 0 && *devices > local_gpus) {
    return m.Error("devices", absl::StrCat(*devices, " ranks, but this machine has ", local_gpus,
                                           local_gpus == 1 ? " GPU" : " GPUs"));
  }
  return absl::OkStatus();
}

}  // namespace trainer
}  // namespace tunefleet
