#include "trainer/tasks/retrieval_evaluator.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "trainer/tasks/retrieval_metrics.h"

namespace tunefleet {
namespace trainer {
namespace {

// The encodings at `indices` as a padded batch on the CPU.
TextBatch Pad(const std::vector<Encoding>& texts, const std::vector<int64_t>& indices,
              int32_t pad_id, int64_t multiple) {
  std::vector<Encoding> rows;
  rows.reserve(indices.size());
  for (int64_t i : indices) rows.push_back(texts[i]);
  return PadTexts(rows, pad_id, multiple);
}

// The fp32 embeddings [N, width] of `texts` on `device`: this rank's share (every world-th text
// by length), zeros in the other rows; with a group, summed over the ranks.
absl::StatusOr<torch::Tensor> EmbedTexts(TaskModel& model, const std::vector<Encoding>& texts,
                                         int32_t pad_id, int64_t width, const torch::Device& device,
                                         int64_t batch_size, Precision precision,
                                         comm::ProcessGroup* group) {
  const int64_t n = static_cast<int64_t>(texts.size());
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return texts[a].ids.size() > texts[b].ids.size(); });
  const bool distributed = group != nullptr && group->size() > 1;
  if (distributed) {
    std::vector<int64_t> mine;
    for (size_t i = group->rank(); i < order.size(); i += group->size()) mine.push_back(order[i]);
    order = std::move(mine);
  }
  torch::Tensor out = torch::zeros({n, width}, torch::TensorOptions(device).dtype(torch::kFloat));
  const int64_t local = static_cast<int64_t>(order.size());
  for (int64_t begin = 0; begin < local; begin += batch_size) {
    std::vector<int64_t> indices(order.begin() + begin,
                                 order.begin() + std::min(local, begin + batch_size));
    const TextBatch batch = Pad(texts, indices, pad_id, device.is_cuda() ? 8 : 1).To(device);
    torch::Tensor embeddings;
    {
      AutocastScope autocast(device.type(), precision);
      embeddings = model->Embed(batch);
    }
    out.index_copy_(0, torch::tensor(indices, torch::kLong).to(device),
                    embeddings.to(torch::kFloat));
  }
  if (distributed) {
    // Each row was embedded by exactly one rank (zeros elsewhere): the sum is the whole set.
    const bool on_device = group->backend() == comm::ProcessGroup::Backend::kNccl;
    torch::Tensor t = on_device ? out : out.to(torch::kCPU);
    RETURN_IF_ERROR(group->AllReduceSum(t));
    out = t.to(device);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::map<std::string, double>> EvaluateRetrieval(
    TaskModel& model, const RetrievalData& data, const torch::Device& device, int64_t batch_size,
    Precision precision, comm::ProcessGroup* group, const std::vector<int64_t>& dims) {
  const int64_t width = model->bert()->config().hidden_size;
  for (int64_t d : dims) {
    if (d < 1 || d > width) {
      return absl::InvalidArgumentError(
          absl::StrCat("retrieval evaluation on ", data.source, ": matryoshka dim ", d,
                       " is outside [1, the embedding width ", width, "]"));
    }
  }
  const bool was_training = model->is_training();
  model->eval();
  std::map<std::string, double> out;
  absl::Status status;
  try {
    torch::NoGradGuard no_grad;
    absl::StatusOr<torch::Tensor> queries =
        EmbedTexts(model, data.queries, data.pad_id, width, device, batch_size, precision, group);
    absl::StatusOr<torch::Tensor> corpus = queries.ok()
                                               ? EmbedTexts(model, data.corpus, data.pad_id, width,
                                                            device, batch_size, precision, group)
                                               : queries.status();
    if (!corpus.ok()) {
      status = absl::Status(corpus.status().code(),
                            absl::StrCat("retrieval evaluation: ", corpus.status().message()));
    } else {
      out = RetrievalMetrics(*queries, *corpus, data.set.relevant);
      for (int64_t d : dims) {
        const std::map<std::string, double> at =
            RetrievalMetrics(queries->narrow(1, 0, d), corpus->narrow(1, 0, d), data.set.relevant,
                             absl::StrCat("@", d));
        out.insert(at.begin(), at.end());
      }
    }
  } catch (const c10::OutOfMemoryError& e) {
    const std::string what = e.what_without_backtrace();
    status = absl::ResourceExhaustedError(
        absl::StrCat("retrieval evaluation on ", data.source, " ran out of memory at batch size ",
                     batch_size, ": ", what.substr(0, what.find('\n'))));
  } catch (const c10::Error& e) {
    status = absl::InternalError(absl::StrCat("retrieval evaluation on ", data.source,
                                              " failed: ", e.what_without_backtrace()));
  }
  if (was_training) model->train();
  if (!status.ok()) return status;
  return out;
}

}  // namespace trainer
}  // namespace tunefleet
