// CUDA MPS (Multi-Process Service) for trials that share a GPU: where the host has
// nvidia-cuda-mps-control on PATH, the agent starts one control daemon of its own the first time
// it runs a trial that may share its GPU (TrialSpec.trials_per_gpu > 1; with --prewarm_mps, at
// once, its server too), with its pipe and log
// folders under the agent's runtime folder, and runs those trials as its clients
// (CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY in their environment), so that their
// kernels run side by side instead of time-sliced. Trials with a GPU of their own are no
// clients. The daemon is told to quit when the agent ends.
//
// GPU numbering: the daemon runs with CUDA_VISIBLE_DEVICES set to the agent's GPUs (their ids,
// in slot order), so its server sees those alone and numbers them 0, 1, ... in that order; a
// client names its GPU in that numbering (CUDA_VISIBLE_DEVICES=SLOT), not the host's. (NVIDIA's
// MPS guide: the server remaps the devices; a client keeping the host's index of the second GPU
// of a host, "1", found no such device and hung: stop 44 on a 2-GPU host.)
//
//   std::string why;
//   std::unique_ptr<MpsDaemon> mps = MpsDaemon::Start(runtime_dir + "/mps", &why);  // null: why
//   for (auto& [k, v] : mps->ClientEnv()) env[k] = v;
// Thread-safety: the agent's poll loop only (Start and the destructor wait for the control
// command, a fraction of a second).
#ifndef TUNEFLEET_LAUNCHER_AGENT_MPS_DAEMON_H_
#define TUNEFLEET_LAUNCHER_AGENT_MPS_DAEMON_H_

#include <map>
#include <memory>
#include <string>

namespace tunefleet {
namespace launcher {

class MpsDaemon {
 public:
  // The control binary on PATH ("" when absent).
  static std::string FindControl();
  // Starts `nvidia-cuda-mps-control -d` with its folders in `dir` (made, 0700) and
  // CUDA_VISIBLE_DEVICES=`gpus` (the agent's GPU ids, comma-separated); null, with `why`, where
  // the binary is absent or the daemon does not start.
  static std::unique_ptr<MpsDaemon> Start(const std::string& dir, const std::string& gpus,
                                          std::string* why);
  ~MpsDaemon();  // `quit` to the control daemon
  MpsDaemon(const MpsDaemon&) = delete;
  MpsDaemon& operator=(const MpsDaemon&) = delete;

  std::map<std::string, std::string> ClientEnv() const;
  const std::string& dir() const { return dir_; }
  // Asks the daemon to start its server for this user now (`start_server -uid UID`), not when
  // the first client connects; the control command's exit code.
  int StartServer() const;

 private:
  MpsDaemon(std::string control, std::string dir)
      : control_(std::move(control)), dir_(std::move(dir)) {}
  std::string control_, dir_;
};

// The agent's MPS, started the first time a shared run asks for its environment (and logged
// once: started, or why not); empty where disabled, on CPU slots, or where it cannot start.
class LazyMps {
 public:
  LazyMps() = default;
  // `gpus`: the agent's GPU ids in slot order, comma-separated (MpsDaemon::Start).
  LazyMps(bool enabled, std::string dir, std::string gpus)
      : enabled_(enabled), dir_(std::move(dir)), gpus_(std::move(gpus)) {}
  std::map<std::string, std::string> ClientEnv();
  // Starts the daemon and its server now, for runs that will share GPUs (agent --prewarm_mps),
  // so that their first clients do not wait for the server to start; logged.
  void Prestart();

 private:
  bool enabled_ = false;
  std::string dir_;
  std::string gpus_;
  bool tried_ = false;
  std::unique_ptr<MpsDaemon> daemon_;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_MPS_DAEMON_H_
