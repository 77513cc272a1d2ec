#include "trainer/distributed/grad_sync.h"

#include <algorithm>
#include <utility>

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace tunefleet {
namespace trainer {

// Built by the constructor, then shared with the autograd hooks. The bucket layout (buffers,
// parameter lists) is fixed after construction; the per-backward bookkeeping is under `mu`
// (a bucket's `waiting`, `launched` and `pending` too, which the annotations cannot name).
struct GradSync::State {
  absl::Mutex mu;
  comm::ProcessGroup* group = nullptr;
  bool scatter = false;  // GradReduce::kReduceScatter
  std::vector<torch::Tensor> params;
  struct Bucket {
    torch::Tensor buffer;        // flat, the parameters' gradients are views into it
    torch::Tensor wire;          // the buffer cast to the communication dtype, when it differs
    std::vector<size_t> params;  // indices into `params`
    int64_t waiting = 0;         // parameters not yet ready in this backward
    bool launched = false;
    comm::ProcessGroup::Pending pending;
  };
  std::vector<Bucket> buckets;
  std::vector<int64_t> bucket_of;               // parameter index -> bucket
  std::vector<bool> ready ABSL_GUARDED_BY(mu);  // parameter index -> ready in this backward
  int64_t next_launch ABSL_GUARDED_BY(mu) = 0;
  bool sync ABSL_GUARDED_BY(mu) = true;
  bool overlap ABSL_GUARDED_BY(mu) = true;
  bool detached ABSL_GUARDED_BY(mu) = false;

  void Launch(Bucket& b) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    torch::Tensor& sent = b.wire.defined() ? b.wire : b.buffer;
    if (b.wire.defined()) {
      torch::NoGradGuard no_grad;
      b.wire.copy_(b.buffer);
    }
    b.pending = scatter ? group->ReduceScatterMeanAsync(sent) : group->AllReduceMeanAsync(sent);
    b.launched = true;
  }

  // Launches the ready buckets in order.
  void LaunchReady() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    while (next_launch < static_cast<int64_t>(buckets.size()) &&
           buckets[next_launch].waiting == 0) {
      Launch(buckets[next_launch++]);
    }
  }

  void MarkReady(size_t index) ABSL_LOCKS_EXCLUDED(mu) {
    absl::MutexLock lock(&mu);
    if (detached || !sync || ready[index]) return;
    ready[index] = true;
    --buckets[bucket_of[index]].waiting;
    if (overlap) LaunchReady();
  }

  void Reset() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    for (Bucket& b : buckets) {
      b.waiting = static_cast<int64_t>(b.params.size());
      b.launched = false;
    }
    std::fill(ready.begin(), ready.end(), false);
    next_launch = 0;
  }
};

namespace {

class ReadyHook : public torch::autograd::FunctionPostHook {
 public:
  ReadyHook(std::shared_ptr<GradSync::State> state, size_t index)
      : state_(std::move(state)), index_(index) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list&) override {
    state_->MarkReady(index_);
    return outputs;
  }

 private:
  std::shared_ptr<GradSync::State> state_;
  size_t index_;
};

}  // namespace

GradSync::GradSync(comm::ProcessGroup* group, std::vector<torch::Tensor> params,
                   int64_t bucket_bytes, c10::optional<torch::ScalarType> comm_dtype,
                   GradReduce reduce)
    : state_(std::make_shared<State>()) {
  State& s = *state_;
  s.group = group;
  s.scatter = reduce == GradReduce::kReduceScatter;
  s.params = std::move(params);
  s.bucket_of.assign(s.params.size(), -1);
  // Buckets in reverse parameter order.
  int64_t bytes = 0;
  for (size_t k = s.params.size(); k-- > 0;) {
    const torch::Tensor& p = s.params[k];
    const int64_t size = p.numel() * static_cast<int64_t>(p.element_size());
    const int64_t cap =
        s.buckets.size() == 1 ? std::min(kFirstBucketBytes, bucket_bytes) : bucket_bytes;
    if (s.buckets.empty() || (bytes > 0 && bytes + size > cap)) {
      s.buckets.emplace_back();
      bytes = 0;
    }
    s.buckets.back().params.push_back(k);
    s.bucket_of[k] = static_cast<int64_t>(s.buckets.size()) - 1;
    bytes += size;
  }
  torch::NoGradGuard no_grad;
  for (State::Bucket& b : s.buckets) {
    int64_t numel = 0;
    for (size_t k : b.params) numel += s.params[k].numel();
    if (s.scatter) {
      const int64_t parts = group->size();
      numel = (numel + parts - 1) / parts * parts;
    }
    b.buffer = torch::zeros({numel}, s.params[b.params.front()].options());
    // (Gloo has no bf16 all-reduce: there the buckets go as they are.)
    if (comm_dtype.has_value() && *comm_dtype != b.buffer.scalar_type() &&
        group->backend() == comm::ProcessGroup::Backend::kNccl) {
      b.wire = torch::zeros({numel}, b.buffer.options().dtype(*comm_dtype));
    }
    int64_t offset = 0;
    for (size_t k : b.params) {
      torch::Tensor& p = s.params[k];
      p.mutable_grad() = b.buffer.narrow(0, offset, p.numel()).view(p.sizes());
      offset += p.numel();
    }
  }
  {
    absl::MutexLock lock(&s.mu);  // no hook exists yet; the lock is for the annotations
    s.ready.assign(s.params.size(), false);
    s.Reset();
  }
  for (size_t k = 0; k < s.params.size(); ++k) {
    std::shared_ptr<torch::autograd::Node> acc =
        torch::autograd::impl::grad_accumulator(s.params[k]);
    acc->add_post_hook(std::make_unique<ReadyHook>(state_, k));
    accumulators_.push_back(std::move(acc));
  }
}

GradSync::~GradSync() {
  State& s = *state_;
  absl::MutexLock lock(&s.mu);
  s.detached = true;
}

int64_t GradSync::num_buckets() const { return static_cast<int64_t>(state_->buckets.size()); }

const std::vector<size_t>& GradSync::bucket_params(int64_t b) const {
  return state_->buckets[static_cast<size_t>(b)].params;
}

const torch::Tensor& GradSync::bucket_buffer(int64_t b) const {
  return state_->buckets[static_cast<size_t>(b)].buffer;
}

absl::Status GradSync::BroadcastParameters() {
  torch::NoGradGuard no_grad;
  State& s = *state_;
  for (const State::Bucket& b : s.buckets) {
    std::vector<torch::Tensor> flat;
    for (size_t k : b.params) flat.push_back(s.params[k].detach().reshape({-1}));
    torch::Tensor buffer = torch::cat(flat);
    if (absl::Status st = s.group->Broadcast(buffer, 0); !st.ok()) return st;
    int64_t offset = 0;
    for (size_t k : b.params) {
      torch::Tensor& p = s.params[k];
      p.detach().copy_(buffer.narrow(0, offset, p.numel()).view(p.sizes()));
      offset += p.numel();
    }
  }
  return absl::OkStatus();
}

void GradSync::ZeroGrads() {
  torch::NoGradGuard no_grad;
  for (State::Bucket& b : state_->buckets) b.buffer.zero_();
}

void GradSync::set_sync(bool on) {
  State& s = *state_;
  absl::MutexLock lock(&s.mu);
  s.sync = on;
}

void GradSync::set_overlap(bool on) {
  State& s = *state_;
  absl::MutexLock lock(&s.mu);
  s.overlap = on;
}

absl::Status GradSync::Finish(const std::function<void(int64_t)>& after_bucket) {
  State& s = *state_;
  {
    absl::MutexLock lock(&s.mu);
    for (int64_t b = s.next_launch; b < static_cast<int64_t>(s.buckets.size()); ++b) {
      s.Launch(s.buckets[b]);
    }
    s.next_launch = static_cast<int64_t>(s.buckets.size());
  }
  absl::Status status;
  for (size_t b = 0; b < s.buckets.size(); ++b) {
    absl::Status w = s.buckets[b].pending.Wait();
    if (status.ok() && !w.ok()) {
      status = absl::Status(w.code(), absl::StrCat("gradient bucket ", b, ": ", w.message()));
    }
    if (w.ok() && s.buckets[b].wire.defined()) {
      torch::NoGradGuard no_grad;
      s.buckets[b].buffer.copy_(s.buckets[b].wire);
    }
    if (status.ok() && after_bucket) after_bucket(static_cast<int64_t>(b));
  }
  absl::MutexLock lock(&s.mu);
  s.Reset();
  return status;
}

}  // namespace trainer
}  // namespace tunefleet
