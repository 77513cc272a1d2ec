#include "launcher/backends/slurm_allocation.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "launcher/backends/slurm_hostlist.h"

namespace tunefleet {
namespace launcher {
namespace {

absl::Status BadVariable(const std::string& name, const std::string& value,
                         const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(name, "='", value, "': ", why));
}

// "2" -> 2.
absl::StatusOr<int> Count(const std::string& name, const std::string& value) {
  int n = 0;
  if (!absl::SimpleAtoi(value, &n) || n < 0 || n > 4096) {
    return BadVariable(name, value, "expected a GPU count");
  }
  return n;
}

// "2" or "a100:2" (sbatch --gpus-per-node) -> 2.
absl::StatusOr<int> TypedCount(const std::string& name, const std::string& value) {
  const size_t colon = value.rfind(':');
  return Count(name, colon == std::string::npos ? value : value.substr(colon + 1));
}

// A gres string, "gpu:2", "gpu:a100:2(IDX:0-1),nic:1", "gres:gpu:2" -> the gpu entry's count;
// 0 when it names no gpu.
absl::StatusOr<int> GresGpus(const std::string& name, const std::string& value) {
  for (std::string entry :
       std::vector<std::string>(absl::StrSplit(value, ',', absl::SkipEmpty()))) {
    if (entry.rfind("gres:", 0) == 0 || entry.rfind("gres/", 0) == 0) entry = entry.substr(5);
    const size_t paren = entry.find('(');
    if (paren != std::string::npos) entry.resize(paren);
    std::vector<std::string> parts = absl::StrSplit(entry, absl::ByAnyChar(":="));
    if (parts.empty() || parts[0] != "gpu") continue;
    if (parts.size() == 1) return 1;  // "gpu": one
    return Count(name, parts.back());
  }
  return 0;
}

}  // namespace

absl::StatusOr<SlurmAllocation> ReadSlurmAllocation(const EnvReader& getenv_fn) {
  const EnvReader env = getenv_fn ? getenv_fn : [](const char* n) { return std::getenv(n); };
  auto get = [&env](const char* name) -> std::string {
    const char* v = env(name);
    return v == nullptr ? "" : v;
  };
  SlurmAllocation a;
  a.job_id = get("SLURM_JOB_ID");
  if (a.job_id.empty()) a.job_id = get("SLURM_JOBID");
  if (a.job_id.empty()) {
    return absl::InvalidArgumentError(
        "--start_agents slurm: not inside a Slurm allocation (SLURM_JOB_ID is not set): run the "
        "head in salloc or in an sbatch script (configs/slurm/sweep.sbatch)");
  }
  std::string list_name = "SLURM_JOB_NODELIST";
  std::string list = get("SLURM_JOB_NODELIST");
  if (list.empty()) {
    list_name = "SLURM_NODELIST";
    list = get("SLURM_NODELIST");
  }
  if (list.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--start_agents slurm: job ", a.job_id, " has no SLURM_JOB_NODELIST in the environment"));
  }
  absl::StatusOr<std::vector<std::string>> nodes = ExpandHostList(list);
  if (!nodes.ok())
    return absl::InvalidArgumentError(absl::StrCat(list_name, ": ", nodes.status().message()));
  if (nodes->empty()) return BadVariable(list_name, list, "no node");
  a.nodes = *std::move(nodes);

  // The job's GPUs on each node, from the most direct variable present.
  const std::vector<
      std::pair<const char*, absl::StatusOr<int> (*)(const std::string&, const std::string&)>>
      sources = {{"SLURM_GPUS_ON_NODE", Count},
                 {"SLURM_JOB_GPUS", nullptr},
                 {"SLURM_GPUS_PER_NODE", TypedCount},
                 {"SLURM_JOB_GRES", GresGpus},
                 {"SLURM_GRES", GresGpus}};
  for (const auto& [name, parse] : sources) {
    const std::string value = get(name);
    if (value.empty()) continue;
    int gpus = 0;
    if (parse == nullptr) {  // SLURM_JOB_GPUS: a list of ids
      for (absl::string_view id : absl::StrSplit(value, ',', absl::SkipEmpty())) {
        int unused = 0;
        if (!absl::SimpleAtoi(id, &unused))
          return BadVariable(name, value, "expected GPU ids such as 0,1");
        ++gpus;
      }
    } else {
      ASSIGN_OR_RETURN(gpus, parse(name, value));
    }
    if (gpus == 0) continue;
    a.gpus_per_node = gpus;
    a.gpus_source = absl::StrCat(name, "=", value);
    break;
  }
  return a;
}

}  // namespace launcher
}  // namespace tunefleet
