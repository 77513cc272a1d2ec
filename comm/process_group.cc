#include "comm/process_group.h"

#include <cstdlib>
#include <cstring>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>
// PyTorch's wheels ship LibTorch without Gloo's headers: there, only NCCL is available.
#if __has_include(<gloo/algorithm.h>)
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#define TUNEFLEET_HAS_GLOO 1
#else
#define TUNEFLEET_HAS_GLOO 0
#endif
#include <torch/version.h>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "comm/endpoint.h"

namespace tunefleet {
namespace comm {
namespace {

// LibTorch 2 made the process groups c10d::Backend implementations; 1.x derived them from
// c10d::ProcessGroup. Either offers the collectives used here.
#if TORCH_VERSION_MAJOR >= 2
using Collectives = c10d::Backend;
#else
using Collectives = c10d::ProcessGroup;
#endif

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

// A collective's failure; a timeout says what it most likely means.
absl::Status CollectiveError(const std::string& what, const std::string& message) {
  const std::string line = FirstLine(message);
  const bool timeout = absl::StrContains(line, "Timed out") ||
                       absl::StrContains(line, "timed out") || absl::StrContains(line, "Timeout");
  return absl::UnavailableError(absl::StrCat(
      what, " failed",
      timeout ? " (a peer rank stalled or exited: nothing within the timeout)" : "", ": ", line));
}

absl::Status FromTorch(const char* what, const c10::Error& e) {
  return CollectiveError(what, e.what_without_backtrace());
}

// Part `index` of a buffer of `parts` equal parts.
torch::Tensor Part(const torch::Tensor& buffer, int parts, int index) {
  TORCH_CHECK(buffer.dim() == 1 && buffer.is_contiguous() && buffer.numel() % parts == 0,
              "a sharded collective needs a contiguous 1-D buffer of ", parts, " equal parts, got ",
              buffer.numel(), " elements");
  const int64_t n = buffer.numel() / parts;
  return buffer.narrow(0, index * n, n);
}

}  // namespace

struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<Collectives> pg;
  bool shut_down = false;
};

struct ProcessGroup::Pending::Work {
  c10::intrusive_ptr<c10d::Work> work;
  std::string what;
};

ProcessGroup::Pending::Pending() = default;
ProcessGroup::Pending::~Pending() = default;
ProcessGroup::Pending::Pending(Pending&&) noexcept = default;
ProcessGroup::Pending& ProcessGroup::Pending::operator=(Pending&&) noexcept = default;
bool ProcessGroup::Pending::valid() const { return work_ != nullptr; }

absl::Status ProcessGroup::Pending::Wait() {
  if (work_ == nullptr) return absl::FailedPreconditionError("no collective to wait for");
  if (!work_->work) return absl::UnavailableError(absl::StrCat(work_->what, " failed"));
  try {
    work_->work->wait();
  } catch (const c10::Error& e) {
    return FromTorch(work_->what.c_str(), e);
  } catch (const std::exception& e) {
    return CollectiveError(work_->what, e.what());
  }
  work_.reset();
  return absl::OkStatus();
}

absl::StatusOr<DistEnv> DistEnv::FromEnvironment() {
  DistEnv env;
  auto read = [](const char* name, int* out, int min) -> absl::Status {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return absl::OkStatus();
    if (!absl::SimpleAtoi(v, out) || *out < min) {
      return absl::InvalidArgumentError(absl::StrCat(name, "=", v, " is not an integer >= ", min));
    }
    return absl::OkStatus();
  };
  for (auto [name, field, min] : {std::tuple<const char*, int*, int>{"RANK", &env.rank, 0},
                                  {"WORLD_SIZE", &env.world_size, 1},
                                  {"LOCAL_RANK", &env.local_rank, 0},
                                  {"LOCAL_WORLD_SIZE", &env.local_world_size, 1},
                                  {"MASTER_PORT", &env.master_port, 1}}) {
    if (absl::Status s = read(name, field, min); !s.ok()) return s;
  }
  if (const char* a = std::getenv("MASTER_ADDR"); a != nullptr && *a != '\0') env.master_addr = a;
  if (env.rank >= env.world_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("RANK=", env.rank, " is not below WORLD_SIZE=", env.world_size));
  }
  if (env.master_port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("MASTER_PORT=", env.master_port, " is not a port"));
  }
  return env;
}

const char* ProcessGroup::BackendName(Backend backend) {
  return backend == Backend::kNccl ? "nccl" : "gloo";
}

bool ProcessGroup::NcclAvailable() {
#ifdef USE_C10D_NCCL
  return true;
#else
  return false;
#endif
}

bool ProcessGroup::GlooAvailable() { return TUNEFLEET_HAS_GLOO != 0; }

ProcessGroup::ProcessGroup(std::unique_ptr<Impl> impl, int rank, int size, Backend backend)
    : impl_(std::move(impl)), rank_(rank), size_(size), backend_(backend) {}

namespace {

// ProcessGroupNCCL's shutdown() and abort() (LibTorch 2.x); a backend without them (Gloo, or
// LibTorch 1.13's groups) needs neither.
template <typename T>
auto ShutdownBackend(T* pg, bool clean, int) -> decltype(pg->shutdown(), pg->abort(), void()) {
  if (clean) {
    pg->shutdown();
  } else {
    pg->abort();
  }
}
template <typename T>
void ShutdownBackend(T*, bool, long) {}

// Shuts an NCCL group down (clean) or aborts it; nothing for the other backends.
template <typename Collectives>
void EndNccl(Collectives* pg, bool clean) {
#ifdef USE_C10D_NCCL
  if (auto* nccl = dynamic_cast<c10d::ProcessGroupNCCL*>(pg); nccl != nullptr) {
    ShutdownBackend(nccl, clean, 0);
  }
#else
  (void)pg;
  (void)clean;
#endif
}

}  // namespace

absl::Status ProcessGroup::Sync() {
  torch::Tensor one = torch::ones({1}, torch::kFloat);
  if (backend_ == Backend::kNccl) one = one.to(torch::Device(torch::kCUDA));
  if (absl::Status s = AllReduceSum(one); !s.ok()) return s;
  if (backend_ == Backend::kNccl) one.cpu();  // waits for it on the host
  return absl::OkStatus();
}

absl::Status ProcessGroup::Shutdown() {
  if (impl_ == nullptr || impl_->pg == nullptr || impl_->shut_down) return absl::OkStatus();
  // Every rank here first: a rank that finished early must not tear down the store (rank 0
  // serves it) or its communicator while a peer still waits on it.
  if (absl::Status s = Sync(); !s.ok()) return s;  // then aborted by the destructor
  impl_->shut_down = true;
  try {
    EndNccl(impl_->pg.get(), /*clean=*/true);
  } catch (const c10::Error& e) {
    return FromTorch("process group shutdown", e);
  }
  return absl::OkStatus();
}

ProcessGroup::~ProcessGroup() {
  if (impl_ == nullptr || impl_->pg == nullptr || impl_->shut_down) return;
  // Not shut down: abort (ProcessGroupNCCL's destructor would too, with a warning).
  try {
    EndNccl(impl_->pg.get(), /*clean=*/false);
  } catch (...) {  // the job has failed already; the exit must not throw
  }
}

struct Rendezvous::Impl {
  c10::intrusive_ptr<c10d::Store> store;
};

Rendezvous::Rendezvous(std::unique_ptr<Impl> impl, DistEnv env)
    : impl_(std::move(impl)), env_(std::move(env)) {}
Rendezvous::~Rendezvous() = default;

absl::StatusOr<std::unique_ptr<Rendezvous>> Rendezvous::Connect(const DistEnv& env,
                                                                std::chrono::milliseconds timeout) {
  auto impl = std::make_unique<Impl>();
  const std::string where = absl::StrCat(env.master_addr, ":", env.master_port);
  if (env.rank != 0) {
    // Connecting before rank 0 listens costs a second of TCPStore's back-off: each warm trial
    // would pay it. Any failure here is left to the store's own, better known, error.
    (void)WaitForTcpListener(env.master_addr, env.master_port, absl::Milliseconds(timeout.count()));
  }
  try {
    c10d::TCPStoreOptions options;
    options.port = static_cast<uint16_t>(env.master_port);
    options.isServer = env.rank == 0;
    options.numWorkers = static_cast<size_t>(env.world_size);
    options.waitWorkers = true;
    options.timeout = timeout;
    impl->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, options);
  } catch (const std::exception& e) {
    const std::string what = FirstLine(e.what());
    if (absl::StrContains(what, "in use") || absl::StrContains(what, "EADDRINUSE")) {
      return absl::UnavailableError(
          absl::StrCat("rendezvous: MASTER_PORT ", env.master_port, " is already in use on ",
                       env.master_addr, " (rank 0 serves the store there): pick another port"));
    }
    return absl::UnavailableError(absl::StrCat("rendezvous at ", where, " failed for rank ",
                                               env.rank, " of ", env.world_size, " within ",
                                               timeout.count() / 1000.0, " s: ", what));
  }
  return std::unique_ptr<Rendezvous>(new Rendezvous(std::move(impl), env));
}

absl::StatusOr<std::vector<std::string>> Rendezvous::Exchange(const std::string& key,
                                                              const std::string& mine) {
  std::vector<std::string> all;
  try {
    impl_->store->set(absl::StrCat(key, "/", env_.rank),
                      std::vector<uint8_t>(mine.begin(), mine.end()));
    for (int r = 0; r < env_.world_size; ++r) {
      const std::vector<uint8_t> v = impl_->store->get(absl::StrCat(key, "/", r));
      all.emplace_back(v.begin(), v.end());
    }
  } catch (const std::exception& e) {
    return CollectiveError(absl::StrCat("rendezvous exchange '", key, "'"), e.what());
  }
  return all;
}

absl::StatusOr<std::unique_ptr<ProcessGroup>> ProcessGroup::Connect(
    const DistEnv& env, Backend backend, std::chrono::milliseconds timeout) {
  absl::StatusOr<std::unique_ptr<Rendezvous>> rendezvous = Rendezvous::Connect(env, timeout);
  if (!rendezvous.ok()) return rendezvous.status();
  return Join(**rendezvous, backend, timeout);
}

absl::StatusOr<std::unique_ptr<ProcessGroup>> ProcessGroup::Join(
    const Rendezvous& rendezvous, Backend backend, std::chrono::milliseconds timeout) {
  const DistEnv& env = rendezvous.env();
  const std::string where = absl::StrCat(env.master_addr, ":", env.master_port);
  auto impl = std::make_unique<Impl>();
  impl->store = rendezvous.impl_->store;
  try {
    if (backend == Backend::kNccl) {
#ifdef USE_C10D_NCCL
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = timeout;
      impl->pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(impl->store, env.rank, env.world_size,
                                                             options);
#else
      return absl::UnimplementedError("this LibTorch has no NCCL: use CPU ranks (Gloo)");
#endif
    } else {
#if !TUNEFLEET_HAS_GLOO
      return absl::UnimplementedError(
          "this LibTorch has no Gloo headers: CPU ranks need a LibTorch with Gloo (Debian's); "
          "GPU ranks use NCCL");
#else
      auto options = c10d::ProcessGroupGloo::Options::create();
      options->timeout = timeout;
      if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname != nullptr && *ifname) {
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
      } else {
        auto local = LocalAddressToward(env.master_addr, std::to_string(env.master_port),
                                        "MASTER_ADDR " + env.master_addr);
        if (!local.ok()) return local.status();
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(*local));
      }
      impl->pg = c10::make_intrusive<c10d::ProcessGroupGloo>(impl->store, env.rank, env.world_size,
                                                             options);
#endif
    }
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("process group (", BackendName(backend),
                                               ") for rank ", env.rank, " of ", env.world_size,
                                               " at ", where, ": ", FirstLine(e.what())));
  }
  return std::unique_ptr<ProcessGroup>(
      new ProcessGroup(std::move(impl), env.rank, env.world_size, backend));
}

ProcessGroup::Pending ProcessGroup::AllReduceMeanAsync(torch::Tensor tensor) {
#ifdef USE_C10D_NCCL
  if (backend_ == Backend::kNccl) return AllReduceAsync(std::move(tensor), /*mean=*/true);
#endif
  {
    torch::NoGradGuard no_grad;
    tensor.div_(static_cast<double>(size_));
  }
  return AllReduceAsync(std::move(tensor), /*mean=*/false);
}

ProcessGroup::Pending ProcessGroup::AllReduceSumAsync(torch::Tensor tensor) {
  return AllReduceAsync(std::move(tensor), /*mean=*/false);
}

ProcessGroup::Pending ProcessGroup::AllReduceAsync(torch::Tensor tensor, bool mean) {
  Pending p;
  p.work_ = std::make_unique<Pending::Work>();
  p.work_->what = "all-reduce";
  std::vector<torch::Tensor> tensors = {std::move(tensor)};
  c10d::AllreduceOptions options;
  if (mean) options.reduceOp = c10d::ReduceOp::AVG;
  try {
    p.work_->work = impl_->pg->allreduce(tensors, options);
  } catch (const c10::Error& e) {
    // Reported by Wait(): a work that already failed.
    p.work_->what = absl::StrCat("all-reduce (", FirstLine(e.what_without_backtrace()), ")");
    p.work_->work = c10::intrusive_ptr<c10d::Work>();
  }
  return p;
}

ProcessGroup::Pending ProcessGroup::ReduceScatterMeanAsync(torch::Tensor buffer) {
  torch::Tensor part = Part(buffer, size_, rank_);
  if (backend_ != Backend::kNccl) return AllReduceMeanAsync(std::move(buffer));
  Pending p;
  p.work_ = std::make_unique<Pending::Work>();
  p.work_->what = "reduce-scatter";
  c10d::ReduceScatterOptions options;
  options.reduceOp = c10d::ReduceOp::AVG;
  try {
    p.work_->work = impl_->pg->_reduce_scatter_base(part, buffer, options);
  } catch (const c10::Error& e) {
    p.work_->what = absl::StrCat("reduce-scatter (", FirstLine(e.what_without_backtrace()), ")");
    p.work_->work = c10::intrusive_ptr<c10d::Work>();
  }
  return p;
}

ProcessGroup::Pending ProcessGroup::AllGatherInPlaceAsync(torch::Tensor buffer) {
  Pending p;
  p.work_ = std::make_unique<Pending::Work>();
  p.work_->what = "all-gather";
  torch::Tensor own = Part(buffer, size_, rank_);
  try {
    if (backend_ == Backend::kNccl) {
      p.work_->work = impl_->pg->_allgather_base(buffer, own, c10d::AllgatherOptions());
    } else {
      std::vector<torch::Tensor> in = {own};
      std::vector<std::vector<torch::Tensor>> out(1);
      for (int r = 0; r < size_; ++r) out[0].push_back(Part(buffer, size_, r));
      p.work_->work = impl_->pg->allgather(out, in, c10d::AllgatherOptions());
    }
  } catch (const c10::Error& e) {
    p.work_->what = absl::StrCat("all-gather (", FirstLine(e.what_without_backtrace()), ")");
    p.work_->work = c10::intrusive_ptr<c10d::Work>();
  }
  return p;
}

absl::Status ProcessGroup::AllReduceSum(torch::Tensor tensor) {
  Pending p = AllReduceSumAsync(std::move(tensor));
  if (!p.work_->work) return absl::UnavailableError(absl::StrCat(p.work_->what, " failed"));
  return p.Wait();
}

absl::Status ProcessGroup::Broadcast(torch::Tensor tensor, int root) {
  std::vector<torch::Tensor> tensors = {std::move(tensor)};
  c10d::BroadcastOptions options;
  options.rootRank = root;
  try {
    impl_->pg->broadcast(tensors, options)->wait();
  } catch (const c10::Error& e) {
    return FromTorch("broadcast", e);
  }
  return absl::OkStatus();
}

absl::StatusOr<torch::Tensor> ProcessGroup::AllGather(const torch::Tensor& input) {
  std::vector<torch::Tensor> in = {input.contiguous()};
  std::vector<std::vector<torch::Tensor>> out(1);
  for (int r = 0; r < size_; ++r) out[0].push_back(torch::empty_like(in[0]));
  try {
    impl_->pg->allgather(out, in, c10d::AllgatherOptions())->wait();
  } catch (const c10::Error& e) {
    return FromTorch("all-gather", e);
  }
  return torch::cat(out[0], 0);
}

absl::Status ProcessGroup::Barrier() {
  try {
    impl_->pg->barrier(c10d::BarrierOptions())->wait();
  } catch (const c10::Error& e) {
    return FromTorch("barrier", e);
  }
  return absl::OkStatus();
}

}  // namespace comm
}  // namespace tunefleet
