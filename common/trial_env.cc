#include "common/trial_env.h"

#include <algorithm>

#include "absl/strings/match.h"

namespace tunefleet {

const std::vector<std::string>& TrialEnvDefaults() {
  static const std::vector<std::string>* names = [] {
    auto* v = new std::vector<std::string>{
        // NCCL: logging, interfaces and transports, algorithms, channels and buffers.
        "NCCL_ALGO", "NCCL_BUFFSIZE", "NCCL_CROSS_NIC", "NCCL_CUMEM_ENABLE", "NCCL_DEBUG",
        "NCCL_DEBUG_SUBSYS", "NCCL_IB_DISABLE", "NCCL_IB_GID_INDEX", "NCCL_IB_HCA",
        "NCCL_IB_RETRY_CNT", "NCCL_IB_TIMEOUT", "NCCL_LAUNCH_MODE", "NCCL_MAX_NCHANNELS",
        "NCCL_MIN_NCHANNELS", "NCCL_NET", "NCCL_NET_GDR_LEVEL", "NCCL_NET_GDR_READ",
        "NCCL_NSOCKS_PERTHREAD", "NCCL_NTHREADS", "NCCL_NVLS_ENABLE", "NCCL_P2P_DISABLE",
        "NCCL_P2P_LEVEL", "NCCL_PROTO", "NCCL_SHM_DISABLE", "NCCL_SOCKET_FAMILY",
        "NCCL_SOCKET_IFNAME", "NCCL_SOCKET_NTHREADS",
        // CUDA.
        "CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING",
        // OpenMP.
        "OMP_DYNAMIC", "OMP_MAX_ACTIVE_LEVELS", "OMP_NUM_THREADS", "OMP_PLACES", "OMP_PROC_BIND",
        "OMP_SCHEDULE", "OMP_STACKSIZE", "OMP_WAIT_POLICY",
        // Gloo (CPU ranks).
        "GLOO_DEVICE_TRANSPORT", "GLOO_SOCKET_IFNAME",
        // PyTorch's allocator and c10d.
        "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING", "TORCH_CPP_LOG_LEVEL",
        "TORCH_DISTRIBUTED_DEBUG", "TORCH_NCCL_ASYNC_ERROR_HANDLING", "TORCH_NCCL_BLOCKING_WAIT",
        "TORCH_NCCL_DUMP_ON_TIMEOUT", "TORCH_NCCL_ENABLE_MONITORING",
        "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC", "TORCH_NCCL_TRACE_BUFFER_SIZE",
        "TORCH_SHOW_CPP_STACKTRACES",
        // tunefleet's trainer, per trial (the rest are the agent's: TrialEnvForbidden).
        "TUNEFLEET_DECISION_TIMEOUT_MS", "TUNEFLEET_FUSED_KERNELS", "TUNEFLEET_LOG_LEVEL"};
    std::sort(v->begin(), v->end());
    return v;
  }();
  return *names;
}

bool TrialEnvByDefault(const std::string& name) {
  const std::vector<std::string>& names = TrialEnvDefaults();
  return std::binary_search(names.begin(), names.end(), name);
}

std::string TrialEnvForbidden(const std::string& name) {
  if (absl::StartsWith(name, "LD_") || absl::StrContains(name, "PLUGIN") ||
      absl::StrContains(name, "INJECTION") || absl::StrContains(name, "PRELOAD") ||
      absl::StartsWith(name, "OMP_TOOL") || name == "GCONV_PATH" || name == "GLIBC_TUNABLES") {
    return "loads code of its choosing into the trainer";
  }
  if (absl::StartsWith(name, "TUNEFLEET_") && !TrialEnvByDefault(name)) {
    return "says which program, socket or slot the agent uses";
  }
  return "";
}

}  // namespace tunefleet
