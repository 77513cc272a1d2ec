// The process group of one data-parallel job: c10d collectives between its ranks, set up from
// the torchrun-style environment (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT) that the agent gives each trainer rank.
//
// Rendezvous: rank 0 serves a c10d TCPStore on MASTER_ADDR:MASTER_PORT and every rank (rank 0
// too) connects to it, waiting at most the timeout. Backends: NCCL for CUDA tensors (LibTorch
// with NCCL; each rank on cuda:LOCAL_RANK), Gloo over TCP for CPU tensors. Gloo binds to the
// interface named by GLOO_SOCKET_IFNAME, else to the local address this host uses to reach
// MASTER_ADDR (so ranks on different hosts, or network namespaces, find each other); NCCL reads
// NCCL_SOCKET_IFNAME itself.
// Every rank must issue the same collectives in the same order. A collective that does not
// complete within the timeout (a peer stalled or gone) fails with a Status on the ranks that wait
// (Gloo), or is aborted by NCCL's watchdog. Errors are one line naming what failed: a port in
// use, a rendezvous that timed out, a malformed variable.
// The header carries no c10d type (pimpl): its users need not see c10d's headers.
// Thread-safety: collectives from one thread at a time, or from the autograd thread of a
// backward the issuing thread waits for.
#ifndef TUNEFLEET_COMM_PROCESS_GROUP_H_
#define TUNEFLEET_COMM_PROCESS_GROUP_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tunefleet {
namespace comm {

struct DistEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;

  bool distributed() const { return world_size > 1; }
  // The variables above; none set means one process. A malformed or inconsistent value is an
  // error naming the variable.
  static absl::StatusOr<DistEnv> FromEnvironment();
};

// A job's rendezvous: the c10d TCPStore that rank 0 serves on MASTER_ADDR:MASTER_PORT and every
// rank connects to (Connect returns once all world_size ranks have). A process group is set up
// over one (ProcessGroup::Join); its ranks may also swap short strings over it, as a warm
// worker's ranks do to agree whether to reuse their group (trainer/distributed/trial_group.h).
class Rendezvous {
 public:
  static absl::StatusOr<std::unique_ptr<Rendezvous>> Connect(const DistEnv& env,
                                                             std::chrono::milliseconds timeout);
  ~Rendezvous();

  const DistEnv& env() const { return env_; }
  // Every rank's `mine`, in rank order: each rank sets KEY/RANK, then waits (at most the
  // timeout) for the others'. Every rank must call it with the same key.
  absl::StatusOr<std::vector<std::string>> Exchange(const std::string& key,
                                                    const std::string& mine);

 private:
  friend class ProcessGroup;
  struct Impl;
  Rendezvous(std::unique_ptr<Impl> impl, DistEnv env);
  std::unique_ptr<Impl> impl_;
  DistEnv env_;
};

class ProcessGroup {
 public:
  enum class Backend { kGloo, kNccl };

  // An asynchronous collective; Wait() before reading its tensors. Waiting on an NCCL
  // collective makes the current CUDA stream wait (the host does not block).
  class Pending {
   public:
    Pending();
    ~Pending();
    Pending(Pending&&) noexcept;
    Pending& operator=(Pending&&) noexcept;
    absl::Status Wait();
    bool valid() const;

   private:
    friend class ProcessGroup;
    struct Work;
    std::unique_ptr<Work> work_;
  };

  // kNccl needs a LibTorch with NCCL and the current CUDA device set to the rank's GPU.
  static absl::StatusOr<std::unique_ptr<ProcessGroup>> Connect(const DistEnv& env, Backend backend,
                                                               std::chrono::milliseconds timeout);
  // The same over a rendezvous all ranks have connected (its env's rank and world size); the
  // group keeps the rendezvous' store alive, so the Rendezvous object may go first.
  static absl::StatusOr<std::unique_ptr<ProcessGroup>> Join(const Rendezvous& rendezvous,
                                                            Backend backend,
                                                            std::chrono::milliseconds timeout);
  ~ProcessGroup();

  int rank() const { return rank_; }
  int size() const { return size_; }
  Backend backend() const { return backend_; }
  static const char* BackendName(Backend backend);
  // Whether this LibTorch has the NCCL backend; the Gloo backend (PyTorch's wheels ship no
  // Gloo headers).
  static bool NcclAvailable();
  static bool GlooAvailable();

  // In place: each tensor becomes the sum over ranks.
  Pending AllReduceSumAsync(torch::Tensor tensor);
  // In place: the mean over ranks (NCCL's AVG in one pass; Gloo divides, then sums).
  Pending AllReduceMeanAsync(torch::Tensor tensor);
  absl::Status AllReduceSum(torch::Tensor tensor);
  // In place: every rank gets root's tensor.
  absl::Status Broadcast(torch::Tensor tensor, int root = 0);
  // Every rank's `input` (same shape everywhere), concatenated along dimension 0 in rank order.
  absl::StatusOr<torch::Tensor> AllGather(const torch::Tensor& input);

  // The sharded collectives of ZeRO (trainer/optim/sharded_adamw.h), in place on a contiguous 1-D
  // `buffer` of size() equal parts, part r = buffer.narrow(0, r * n, n):
  //   ReduceScatterMeanAsync: this rank's part becomes the mean over ranks of that part; the
  //     other parts are left unspecified. NCCL: one in-place reduce-scatter (AVG). Gloo, which
  //     has no reduce-scatter in LibTorch 1.13: a mean all-reduce of the whole buffer.
  //   AllGatherInPlaceAsync: every rank's own part to every rank (NCCL: one in-place
  //     all-gather; Gloo: an all-gather into the parts).
  // A buffer whose size is not a multiple of size() is a programming error (TORCH_CHECK).
  Pending ReduceScatterMeanAsync(torch::Tensor buffer);
  Pending AllGatherInPlaceAsync(torch::Tensor buffer);
  absl::Status Barrier();
  // Waits until every rank got here and this rank's collectives finished (one small all-reduce,
  // on the current CUDA device for NCCL; the host waits for it). The first one on a new NCCL
  // group sets up its communicator.
  absl::Status Sync();

  // Ends the group cleanly, as torch.distributed.destroy_process_group(): waits for every rank
  // to get here (Sync), then NCCL's
  // communicators finish their work and are destroyed. Call it on every rank after the job's
  // last collective; the group serves no collective afterwards. A group destroyed without it
  // (a failed job, a peer gone), or whose all-reduce here fails, is aborted instead, without
  // waiting for peers. Either way nothing is printed at exit.
  absl::Status Shutdown();

 private:
  struct Impl;
  ProcessGroup(std::unique_ptr<Impl> impl, int rank, int size, Backend backend);
  Pending AllReduceAsync(torch::Tensor tensor, bool mean);
  std::unique_ptr<Impl> impl_;
  int rank_;
  int size_;
  Backend backend_;
};

}  // namespace comm
}  // namespace tunefleet

#endif  // TUNEFLEET_COMM_PROCESS_GROUP_H_
