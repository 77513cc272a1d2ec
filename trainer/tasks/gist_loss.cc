#include "trainer/tasks/gist_loss.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <c10/core/DispatchKeySet.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/nn/functional/distance.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/module.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "trainer/data/tokenizer_folder.h"
#include "trainer/model/bert_config.h"
#include "trainer/model/bert_model.h"
#include "trainer/model/hf_model_folder.h"
#include "trainer/model/pooling.h"
#include "trainer/tasks/cached_mnrl_loss.h"
#include "trainer/tasks/embedding_task.h"
#include "trainer/tasks/loss_settings.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {
namespace {

namespace F = torch::nn::functional;

constexpr double kCosineEps = 1e-8;               // torch.nn.CosineSimilarity's
constexpr int64_t kGuideChunkElements = 1 << 26;  // products one chunk of GuideCosines holds

// Text the model's and the guide's tokenizers must read into the same ids.
constexpr char kProbe[] =
    "The quick brown fox jumps over the lazy dog; 1234567890 naïve café déjà-vu? Hello, WORLD! "
    "tokenization of sentence-embeddings (GISTEmbed) 東京 ünïcödé #@%&";

// The cosine of each row of `a` with each row of `b`, [A, B]: the rows over their norms
// (clamped to 1e-8, as torch.nn.CosineSimilarity), multiplied. Differentiable.
torch::Tensor Cosines(const torch::Tensor& a, const torch::Tensor& b) {
  const auto unit = [](const torch::Tensor& x) {
    return x / x.norm(2, {1}, /*keepdim=*/true).clamp_min(kCosineEps);
  };
  return torch::mm(unit(a), unit(b).transpose(0, 1));
}

// The guide's cosines as sentence-transformers computes them (torch.nn.CosineSimilarity over
// broadcast rows: each pair's products summed alike), so that equal embeddings tie exactly as
// they do there; a few rows at a time.
torch::Tensor GuideCosines(const torch::Tensor& a, const torch::Tensor& b) {
  const int64_t rows = std::max<int64_t>(1, kGuideChunkElements / std::max<int64_t>(1, b.numel()));
  const auto options = F::CosineSimilarityFuncOptions().dim(-1).eps(kCosineEps);
  std::vector<torch::Tensor> parts;
  for (int64_t i = 0; i < a.size(0); i += rows) {
    const torch::Tensor chunk = a.narrow(0, i, std::min(rows, a.size(0) - i));
    parts.push_back(F::cosine_similarity(chunk.unsqueeze(1), b.unsqueeze(0), options));
  }
  return torch::cat(parts);
}

// `t` cut to `max_len` tokens: a longer row keeps its first max_len - suffix tokens and its
// last `suffix` real ones (the closing special tokens), as tokenizing with truncation would.
TextBatch CutTo(const TextBatch& t, int64_t max_len, int64_t suffix) {
  if (t.input_ids.size(1) <= max_len) return t;
  const torch::Tensor lengths = t.attention_mask.sum(1).to(torch::kLong);
  const torch::Tensor cut = (lengths > max_len).unsqueeze(1);
  TextBatch out;
  out.input_ids = t.input_ids.narrow(1, 0, max_len).clone();
  if (t.token_type_ids.defined()) out.token_type_ids = t.token_type_ids.narrow(1, 0, max_len);
  out.attention_mask = t.attention_mask.narrow(1, 0, max_len);
  for (int64_t k = 0; k < suffix && k < max_len; ++k) {
    const torch::Tensor from = (lengths - suffix + k).clamp_min(0).unsqueeze(1);
    torch::Tensor to = out.input_ids.narrow(1, max_len - suffix + k, 1);
    to.copy_(torch::where(cut, t.input_ids.gather(1, from), to));
  }
  out.padded = true;  // not looked at (no sync: the step may be a CUDA graph)
  return out;
}

// The guide: a frozen encoder and its folder's pooling (the model's loss module).
class GuideImpl : public torch::nn::Module {
 public:
  GuideImpl(BertModel bert, Pooling pooling, int64_t max_len, int64_t suffix)
      : bert_(register_module("bert", std::move(bert))),
        pooling_(pooling),
        max_len_(max_len),
        suffix_(suffix) {}

  // Pooled embeddings [B, H'] of `batch`, without gradients.
  torch::Tensor Embed(const TextBatch& batch) {
    torch::NoGradGuard no_grad;
    const TextBatch t = CutTo(batch, max_len_, suffix_);
    const BertOutput out = bert_->forward(t.input_ids, t.token_type_ids,
                                          t.padded ? t.attention_mask : torch::Tensor());
    return Pool(out.last_hidden_state, t.attention_mask, pooling_);
  }

 private:
  BertModel bert_;
  Pooling pooling_;
  int64_t max_len_, suffix_;
};

// Whether `a` and `b` read text into the same ids: the same kind of model, vocabulary size,
// padding and special tokens, and the same ids for a probe text.
bool SameVocabulary(const Tokenizer& a, const Tokenizer& b) {
  const SpecialTemplate &ta = a.special_template(), &tb = b.special_template();
  return std::string(a.kind()) == b.kind() && a.vocab_size() == b.vocab_size() &&
         a.pad_id() == b.pad_id() && ta.single_prefix == tb.single_prefix &&
         ta.single_suffix == tb.single_suffix && a.Tokenize(kProbe) == b.Tokenize(kProbe);
}

absl::Status GuideError(const std::string& dir, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("task.guide_model: ", dir, ": ", message));
}

// The guide of folder `dir` for a model that reads text with `tokenizer` into at most `max_len`
// tokens, in eval mode on the CPU.
absl::StatusOr<std::shared_ptr<GuideImpl>> LoadGuide(const std::string& dir,
                                                     const Tokenizer& tokenizer, int64_t max_len) {
  if (!IsDir(dir)) return GuideError(dir, "no such model folder");
  BertCheckpoint info;
  absl::StatusOr<BertModel> bert = LoadBertModel(dir, &info);
  if (!bert.ok()) return GuideError(dir, bert.status().message());
  absl::StatusOr<std::shared_ptr<const Tokenizer>> own = LoadFolderTokenizer(dir);
  if (!own.ok()) return GuideError(dir, own.status().message());
  if (!SameVocabulary(tokenizer, **own)) {
    return GuideError(dir,
                      absl::StrCat("its tokenizer (", (*own)->kind(), ", ", (*own)->vocab_size(),
                                   " ids) does not read text as "
                                   "model.path's (",
                                   tokenizer.kind(), ", ", tokenizer.vocab_size(),
                                   " ids): the guide must share the model's vocabulary"));
  }
  absl::StatusOr<Pooling> pooling = ParsePooling(info.pooling.empty() ? "mean" : info.pooling);
  if (!pooling.ok()) return GuideError(dir, pooling.status().message());
  int64_t limit = MaxSequenceLength(info.config);
  if (info.max_seq_length > 0) limit = std::min(limit, info.max_seq_length);
  const auto suffix = static_cast<int64_t>(tokenizer.special_template().single_suffix.size());
  auto guide =
      std::make_shared<GuideImpl>(*std::move(bert), *pooling, std::min(limit, max_len), suffix);
  guide->eval();
  return guide;
}

GuideImpl& GuideOf(TaskModelImpl& model) {
  auto* guide = dynamic_cast<GuideImpl*>(model.loss_module());
  TORCH_CHECK(guide != nullptr, "task.loss gist: the model has no guide (set-up loads it)");
  return *guide;
}

// The guide's embeddings of each of `texts` (n rows each), `mini_batch` rows at a time (0: all).
std::vector<torch::Tensor> GuideEmbeddings(TaskModelImpl& model,
                                           const std::vector<TextBatch>& texts, int64_t n,
                                           int64_t mini_batch) {
  GuideImpl& guide = GuideOf(model);
  std::vector<torch::Tensor> out;
  for (const TextBatch& t : texts) {
    if (mini_batch <= 0 || mini_batch >= n) {
      out.push_back(guide.Embed(t));
      continue;
    }
    std::vector<torch::Tensor> parts;
    for (int64_t b = 0; b < n; b += mini_batch) {
      parts.push_back(guide.Embed(MiniBatchRows(t, b, std::min(mini_batch, n - b))));
    }
    out.push_back(torch::cat(parts));
  }
  return out;
}

class GistSettings : public TaskSettings {
 public:
  // mini_batch 0: gist (no task.cached_mini_batch).
  GistSettings(std::string guide_model, GistOptions options, int64_t mini_batch)
      : guide_model_(std::move(guide_model)), options_(options), mini_batch_(mini_batch) {}
  const std::string& guide_model() const { return guide_model_; }
  const GistOptions& options() const { return options_; }
  int64_t mini_batch() const { return mini_batch_; }
  std::vector<std::pair<std::string, std::string>> Values() const override {
    const auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
    std::vector<std::pair<std::string, std::string>> values = {
        {"guide_model", guide_model_},
        {"temperature", ShortestNumber(options_.temperature)},
        {"margin_strategy", options_.relative ? "relative" : "absolute"},
        {"margin", ShortestNumber(options_.margin)},
        {"contrast_anchors", flag(options_.contrast_anchors)},
        {"contrast_positives", flag(options_.contrast_positives)}};
    if (mini_batch_ > 0) values.emplace_back("cached_mini_batch", absl::StrCat(mini_batch_));
    return values;
  }

 private:
  std::string guide_model_;
  GistOptions options_;
  int64_t mini_batch_;
};

absl::StatusOr<std::shared_ptr<const TaskSettings>> ParseSettings(const ConfigMap& task,
                                                                  bool cached) {
  std::string guide;
  if (!task.Has("guide_model")) {
    return task.Error("guide_model",
                      absl::StrCat("is required for task.loss ", cached ? "cached_gist" : "gist",
                                   ": the guide's model folder"));
  }
  RETURN_IF_ERROR(task.Get("guide_model", &guide));
  if (!IsDir(guide)) return task.Error("guide_model", absl::StrCat(guide, ": no such folder"));
  GistOptions o;
  RETURN_IF_ERROR(task.GetOptional("temperature", &o.temperature));
  if (!std::isfinite(o.temperature) || o.temperature <= 0) {
    return task.Error("temperature", absl::StrCat("must be a number > 0, got ", o.temperature));
  }
  std::string strategy = "absolute";
  RETURN_IF_ERROR(task.GetEnum("margin_strategy", {"absolute", "relative"}, &strategy));
  o.relative = strategy == "relative";
  RETURN_IF_ERROR(task.GetOptional("margin", &o.margin));
  if (!std::isfinite(o.margin)) {
    return task.Error("margin", absl::StrCat("must be a finite number, got ", o.margin));
  }
  RETURN_IF_ERROR(task.GetOptional("contrast_anchors", &o.contrast_anchors));
  RETURN_IF_ERROR(task.GetOptional("contrast_positives", &o.contrast_positives));
  int64_t mini_batch = 0;
  if (cached) {
    mini_batch = kDefaultCachedMiniBatch;
    RETURN_IF_ERROR(task.GetOptional("cached_mini_batch", &mini_batch));
    if (mini_batch < 1) {
      return task.Error("cached_mini_batch", absl::StrCat("must be >= 1, got ", mini_batch));
    }
  }
  return std::make_shared<const GistSettings>(guide, o, mini_batch);
}

absl::StatusOr<std::shared_ptr<const TaskSettings>> ParseGist(const ConfigMap& task) {
  return ParseSettings(task, false);
}

absl::StatusOr<std::shared_ptr<const TaskSettings>> ParseCachedGist(const ConfigMap& task) {
  return ParseSettings(task, true);
}

// cached_gist's task.cached_mini_batch.
int64_t GistMiniBatch(const GistSettings* settings) {
  return settings != nullptr && settings->mini_batch() > 0 ? settings->mini_batch()
                                                           : kDefaultCachedMiniBatch;
}

// gist; with a mini-batch, cached_gist.
class GistTask : public EmbeddingTask {
 public:
  GistTask(const TaskConfig& config, const GistSettings* settings, bool cached)
      : EmbeddingTask(config),
        guide_model_(settings != nullptr ? settings->guide_model() : ""),
        options_(settings != nullptr ? settings->options() : GistOptions()),
        mini_batch_(cached ? GistMiniBatch(settings) : 0) {}

  bool in_batch_negatives() const override { return true; }
  bool multi_pass_backward() const override { return mini_batch_ > 0; }
  int64_t activation_texts() const override { return mini_batch_; }

  absl::Status PrepareModel(TaskModelImpl& model, const Tokenizer& tokenizer,
                            int64_t max_len) const override {
    if (guide_model_.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("task.guide_model: is required for task.loss ", loss()));
    }
    ASSIGN_OR_RETURN(std::shared_ptr<GuideImpl> guide, LoadGuide(guide_model_, tokenizer, max_len));
    model.SetLossModule(std::move(guide));
    return absl::OkStatus();
  }

  torch::Tensor LossOn(TaskModelImpl& model, const std::vector<torch::Tensor>& e,
                       const TaskBatch& batch) const override {
    return GistLoss(e, GuideEmbeddings(model, Texts(batch), batch.size, mini_batch_), options_);
  }

  torch::Tensor Loss(TaskModelImpl& model, const TaskBatch& batch) const override {
    if (mini_batch_ == 0) return EmbeddingTask::Loss(model, batch);
    const std::vector<TextBatch> texts = Texts(batch);
    const std::vector<torch::Tensor> guide = GuideEmbeddings(model, texts, batch.size, mini_batch_);
    return GradCacheLoss(
        model, texts, batch.size, mini_batch_,
        [&](const std::vector<torch::Tensor>& reps) { return GistLoss(reps, guide, options_); });
  }

 protected:
  std::string DescribeLoss() const override {
    const GistOptions& o = options_;
    std::string contrast = o.contrast_anchors && o.contrast_positives ? "anchors and positives"
                           : o.contrast_anchors                       ? "anchors"
                           : o.contrast_positives                     ? "positives"
                                                                      : "none";
    return absl::StrCat(mini_batch_ > 0 ? "CachedGISTEmbedLoss" : "GISTEmbedLoss", " (guide ",
                        guide_model_, ", temperature ", ShortestNumber(o.temperature), ", margin ",
                        o.relative ? "relative " : "absolute ", ShortestNumber(o.margin),
                        ", in-batch ", contrast, " contrasted",
                        mini_batch_ > 0 ? absl::StrCat(", mini-batch ", mini_batch_) : "", ")");
  }

 private:
  std::string guide_model_;
  GistOptions options_;
  int64_t mini_batch_;
};

TaskPtr BuildGist(const TaskConfig& config) {
  return std::make_shared<GistTask>(
      config, dynamic_cast<const GistSettings*>(config.settings.get()), false);
}

TaskPtr BuildCachedGist(const TaskConfig& config) {
  return std::make_shared<GistTask>(config,
                                    dynamic_cast<const GistSettings*>(config.settings.get()), true);
}

}  // namespace

torch::Tensor GistLoss(const std::vector<torch::Tensor>& e, const std::vector<torch::Tensor>& g,
                       const GistOptions& o) {
  TORCH_CHECK(e.size() >= 2 && g.size() == e.size(),
              "task.loss gist takes (anchor, positive[, negatives]) rows, got ", e.size(),
              " text columns");
  // float32 whatever the autocast, as sentence-transformers' CosineSimilarity computes.
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  std::vector<torch::Tensor> m, guide;
  for (const torch::Tensor& t : e) m.push_back(t.to(torch::kFloat));
  for (const torch::Tensor& t : g) guide.push_back(t.to(torch::kFloat));
  const int64_t n = m[0].size(0);
  const torch::Tensor guided_ap = GuideCosines(guide[0], guide[1]);
  const torch::Tensor threshold = guided_ap.diagonal().view({-1, 1});
  const torch::Tensor limit = o.relative ? threshold * (1 - o.margin) : threshold - o.margin;
  // `s` with -inf where the guide finds the candidate closer than the positive (less the margin).
  const auto filtered = [&](const torch::Tensor& s, const torch::Tensor& guided,
                            bool keep_positive) {
    torch::Tensor mask = guided > limit;
    if (keep_positive) {
      mask = mask & ~torch::eye(n, guided.size(1), mask.options());
    }
    return s.masked_fill(mask, -std::numeric_limits<float>::infinity());
  };
  std::vector<torch::Tensor> scores = {filtered(Cosines(m[0], m[1]), guided_ap, true)};
  if (o.contrast_anchors) {
    scores.push_back(filtered(Cosines(m[0], m[0]), GuideCosines(guide[0], guide[0]), false));
  }
  if (o.contrast_positives) {
    scores.push_back(filtered(Cosines(m[1], m[1]), GuideCosines(guide[1], guide[1]), false));
  }
  for (size_t k = 2; k < m.size(); ++k) {
    scores.push_back(filtered(Cosines(m[0], m[k]), GuideCosines(guide[0], guide[k]), false));
  }
  const torch::Tensor logits = torch::cat(scores, 1) / o.temperature;
  const torch::Tensor labels =
      torch::arange(n, torch::TensorOptions().dtype(torch::kLong).device(logits.device()));
  return F::cross_entropy(logits, labels);
}

const LossKind& GistLossKind() {
  static const LossKind* const kKind =
      new LossKind{"gist",
                   {"mnrl"},
                   {"guide_model", "temperature", "margin_strategy", "margin", "contrast_anchors",
                    "contrast_positives"},
                   /*embeddings=*/false,
                   &ParseGist,
                   &BuildGist};
  return *kKind;
}

const LossKind& CachedGistLossKind() {
  static const LossKind* const kKind =
      new LossKind{"cached_gist",
                   {"mnrl"},
                   {"guide_model", "temperature", "margin_strategy", "margin", "contrast_anchors",
                    "contrast_positives", "cached_mini_batch"},
                   /*embeddings=*/false,
                   &ParseCachedGist,
                   &BuildCachedGist};
  return *kKind;
}

}  // namespace trainer
}  // namespace tunefleet
