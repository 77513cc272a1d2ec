#include "trainer/train/step_graphs.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"

#ifdef TUNEFLEET_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace tunefleet {
namespace trainer {
namespace {

torch::Tensor PadColumns(const torch::Tensor& t, int64_t length) {
  if (!t.defined() || t.size(1) == length) return t;
  return torch::constant_pad_nd(t, {0, length - t.size(1)}, 0);
}

#ifdef TUNEFLEET_CUDA
void Describe(const TextBatch& t, std::string* key) {
  if (!t.input_ids.defined()) {
    absl::StrAppend(key, "-|");
    return;
  }
  absl::StrAppend(key, t.input_ids.size(0), "x", t.input_ids.size(1), t.padded ? "p" : "",
                  t.token_type_ids.defined() ? "t" : "", "|");
}

std::string Key(const TaskBatch& b, int64_t micro, bool first, bool sync) {
  std::string key;
  Describe(b.first, &key);
  Describe(b.second, &key);
  absl::StrAppend(&key, b.scores.defined() ? "s" : "", b.labels.defined() ? "l" : "", "|", micro,
                  first ? "f" : "", sync ? "s" : "");
  return key;
}

torch::Tensor DeviceLike(const torch::Tensor& t, const torch::Device& device) {
  return t.defined() ? torch::empty_like(t, t.options().device(device)) : t;
}

TextBatch DeviceLike(const TextBatch& t, const torch::Device& device) {
  TextBatch out;
  out.input_ids = DeviceLike(t.input_ids, device);
  out.token_type_ids = DeviceLike(t.token_type_ids, device);
  out.attention_mask = DeviceLike(t.attention_mask, device);
  out.padded = t.padded;
  out.prompt_length = t.prompt_length;  // the same for every batch of a text column
  return out;
}

// Host to device without waiting: pinned source, copy queued on the current stream (the
// pinned block is not reused before the copy is done).
void CopyIn(const torch::Tensor& host, torch::Tensor& dev) {
  if (host.defined()) dev.copy_(host.pin_memory(), /*non_blocking=*/true);
}

void CopyIn(const TextBatch& host, TextBatch& dev) {
  CopyIn(host.input_ids, dev.input_ids);
  CopyIn(host.token_type_ids, dev.token_type_ids);
  CopyIn(host.attention_mask, dev.attention_mask);
}
#endif

}  // namespace

#ifdef TUNEFLEET_CUDA
struct SideStreamScope::Guard {
  explicit Guard(const torch::Device& device)
      : guard(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index())) {}
  c10::cuda::CUDAStreamGuard guard;
};
#else
struct SideStreamScope::Guard {};
#endif

SideStreamScope::SideStreamScope(const torch::Device& device) {
#ifdef TUNEFLEET_CUDA
  if (device.is_cuda()) guard_ = std::make_unique<Guard>(device);
#else
  (void)device;
#endif
}

SideStreamScope::~SideStreamScope() = default;

#ifdef TUNEFLEET_CUDA
struct StepGraphs::Pool {
  decltype(at::cuda::graph_pool_handle()) id = at::cuda::graph_pool_handle();
};

struct StepGraphs::Graph {
  at::cuda::CUDAGraph graph;  // first: destroyed after the tensors of its pool
  TaskBatch inputs;
  torch::Tensor output;
};
#else
struct StepGraphs::Pool {};
struct StepGraphs::Graph {};
#endif

TaskBatch StepGraphs::PadPairToCommonLength(const TaskBatch& batch) {
  if (!batch.first.input_ids.defined() || !batch.second.input_ids.defined()) return batch;
  const int64_t la = batch.first.input_ids.size(1), lb = batch.second.input_ids.size(1);
  if (la == lb) return batch;
  const int64_t l = std::max(la, lb);
  TaskBatch out = batch;
  for (TextBatch* t : {&out.first, &out.second}) {
    if (t->input_ids.size(1) == l) continue;
    t->input_ids = PadColumns(t->input_ids, l);
    t->token_type_ids = PadColumns(t->token_type_ids, l);
    t->attention_mask = PadColumns(t->attention_mask, l);
    t->padded = true;
  }
  return out;
}

bool StepGraphs::Available() {
#ifdef TUNEFLEET_CUDA
  return true;
#else
  return false;
#endif
}

StepGraphs::StepGraphs(torch::Device device, MicroStepFn micro_step, UpdateFn update)
    : device_(device), micro_step_(std::move(micro_step)), update_(std::move(update)) {
  TORCH_CHECK(Available() && device.is_cuda(), "CUDA graphs need a CUDA device and build");
  lr_ = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat).device(device));
  pool_ = std::make_unique<Pool>();
}

StepGraphs::~StepGraphs() = default;

int64_t StepGraphs::captured() const {
  return static_cast<int64_t>(micro_.size()) + (update_graph_ != nullptr ? 1 : 0);
}

#ifdef TUNEFLEET_CUDA
namespace {

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Memory segments (cudaMalloc calls) the caching allocator has made on `device` so far.
int64_t SegmentsAllocated(const torch::Device& device) {
  return c10::cuda::CUDACachingAllocator::getDeviceStats(device.index()).segment[0].allocated;
}

}  // namespace

torch::Tensor StepGraphs::Capture(Graph& g, const std::function<torch::Tensor()>& fn) {
  const int64_t segments = SegmentsAllocated(device_);
  // Relaxed: under DDP, NCCL's threads make CUDA calls while this one captures.
  g.graph.capture_begin(pool_->id, cudaStreamCaptureModeRelaxed);
  torch::Tensor out;
  try {
    const auto record = std::chrono::steady_clock::now();
    out = fn();
    record_seconds_ += Since(record);
  } catch (...) {
    try {
      g.graph.capture_end();
    } catch (...) {  // the capture was invalid anyway: the first error is the one to report
    }
    throw;
  }
  const auto end = std::chrono::steady_clock::now();
  g.graph.capture_end();
  instantiate_seconds_ += Since(end);
  capture_segments_ += SegmentsAllocated(device_) - segments;
  return out;
}

torch::Tensor StepGraphs::MicroStep(const TaskBatch& host_batch, int64_t micro, bool first,
                                    bool sync) {
  TaskBatch batch = PadPairToCommonLength(host_batch);
  // Always masked: a batch whose rows happen to fill its length is no new shape (the mask of
  // ones gives the same result).
  batch.first.padded = true;
  batch.second.padded = batch.second.input_ids.defined();
  const std::string key = Key(batch, micro, first, sync);
  auto it = micro_.find(key);
  const bool fresh = it == micro_.end();
  if (fresh) {
    auto g = std::make_unique<Graph>();
    g->inputs.size = batch.size;
    g->inputs.first = DeviceLike(batch.first, device_);
    g->inputs.second = DeviceLike(batch.second, device_);
    g->inputs.scores = DeviceLike(batch.scores, device_);
    g->inputs.labels = DeviceLike(batch.labels, device_);
    it = micro_.emplace(key, std::move(g)).first;
  }
  Graph& g = *it->second;
  CopyIn(batch.first, g.inputs.first);
  CopyIn(batch.second, g.inputs.second);
  CopyIn(batch.scores, g.inputs.scores);
  CopyIn(batch.labels, g.inputs.labels);
  if (fresh) {
    const auto start = std::chrono::steady_clock::now();
    TORCH_CHECK(c10::cuda::getCurrentCUDAStream() != c10::cuda::getDefaultCUDAStream(),
                "CUDA graphs: the step must run on a side stream");
    // The eager step's cached blocks are not needed again: the graphs have their own pool.
    if (micro_.size() == 1) c10::cuda::CUDACachingAllocator::emptyCache();
    try {
      g.output = Capture(g, [&] { return micro_step_(g.inputs, micro, first, sync); });
    } catch (...) {
      micro_.erase(it);
      throw;
    }
    // The first replay uploads the new graph to the device: part of what a new shape costs.
    const auto upload = std::chrono::steady_clock::now();
    g.graph.replay();
    upload_seconds_ += Since(upload);
    capture_seconds_ += Since(start);
    return g.output;
  }
  g.graph.replay();
  return g.output;
}

torch::Tensor StepGraphs::Update(double lr) {
  lr_.fill_(lr);
  if (update_graph_ == nullptr) {
    const auto start = std::chrono::steady_clock::now();
    auto g = std::make_unique<Graph>();
    g->output = Capture(*g, [this] { return update_(lr_); });
    update_graph_ = std::move(g);
    const auto upload = std::chrono::steady_clock::now();
    update_graph_->graph.replay();
    upload_seconds_ += Since(upload);
    capture_seconds_ += Since(start);
    return update_graph_->output;
  }
  update_graph_->graph.replay();
  return update_graph_->output;
}
#else
torch::Tensor StepGraphs::Capture(Graph&, const std::function<torch::Tensor()>&) {
  TORCH_CHECK(false, "CUDA graphs need a CUDA build of LibTorch");
}

torch::Tensor StepGraphs::MicroStep(const TaskBatch&, int64_t, bool, bool) {
  TORCH_CHECK(false, "CUDA graphs need a CUDA build of LibTorch");
}

torch::Tensor StepGraphs::Update(double) {
  TORCH_CHECK(false, "CUDA graphs need a CUDA build of LibTorch");
}
#endif

}  // namespace trainer
}  // namespace tunefleet
