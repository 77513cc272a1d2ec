#include "trainer/model/bert_model.h"

#include <cmath>
#include <limits>
#include <utility>

#include <torch/autograd.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/normalization.h>
#include <torch/version.h>

#include <mutex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "trainer/model/autocast.h"
#include "trainer/model/bert_embeddings.h"
#include "trainer/model/fused_linear.h"
#include "trainer/model/fused_norm.h"
#include "trainer/model/positions.h"

// LibTorch 2.0 brought the fused attention kernels (flash / memory-efficient / math).
#if TORCH_VERSION_MAJOR >= 2
#define TUNEFLEET_HAS_SDPA 1
#else
#define TUNEFLEET_HAS_SDPA 0
#endif

namespace tunefleet {
namespace trainer {
namespace {

constexpr double kInitializerRange = 0.02;  // transformers' BertConfig default

torch::Tensor Activate(const torch::Tensor& x, const std::string& act) {
  if (act == "gelu") return torch::gelu(x);  // exact (erf)
  if (act == "gelu_new" || act == "gelu_pytorch_tanh") return torch::gelu(x, "tanh");
  if (act == "relu") return torch::relu(x);
  return torch::silu(x);  // silu, swish (ParseBertConfig admits nothing else)
}

}  // namespace

// torch::nn::Linear's parameters and forward, without its constructor's kaiming init: the
// weights are left uninitialized here and set by BertModelImpl (transformers' init) or by
// LoadBertWeights, so loading a checkpoint draws no random numbers (1 s for BERT-base).
class BertDenseImpl : public torch::nn::Module {
 public:
  BertDenseImpl(int64_t in, int64_t out) {
    weight = register_parameter("weight", torch::empty({out, in}));
    bias = register_parameter("bias", torch::empty({out}));
  }
  torch::Tensor forward(const torch::Tensor& x) { return Linear(x, weight, bias); }
  torch::Tensor weight, bias;
};

namespace {

using Dense = std::shared_ptr<BertDenseImpl>;
Dense MakeDense(int64_t in, int64_t out) { return std::make_shared<BertDenseImpl>(in, out); }

class SelfAttentionImpl : public torch::nn::Module {
 public:
  explicit SelfAttentionImpl(const BertConfig& c)
      : heads_(c.num_attention_heads),
        head_dim_(c.hidden_size / c.num_attention_heads),
        dropout_(c.attention_probs_dropout_prob) {
    query_ = register_module("query", MakeDense(c.hidden_size, c.hidden_size));
    key_ = register_module("key", MakeDense(c.hidden_size, c.hidden_size));
    value_ = register_module("value", MakeDense(c.hidden_size, c.hidden_size));
  }

  void set_fused_qkv(bool on) { fused_qkv_ = on; }

  // x [B, T, H], mask [B, T], position_bias [1, heads, T, T] or undefined -> context [B, T, H]
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask,
                        const torch::Tensor& position_bias) {
    const int64_t b = x.size(0), t = x.size(1);
    auto heads = [&](const torch::Tensor& y) {
      return y.view({b, t, heads_, head_dim_}).transpose(1, 2);  // [B, heads, T, d]
    };
    torch::Tensor q, k, v;
    if (fused_qkv_) {
      // One GEMM for the three projections (their weights concatenated on the fly; the
      // parameters stay query/key/value, as checkpoints name them).
      const torch::Tensor qkv =
          Linear(x, torch::cat({query_->weight, key_->weight, value_->weight}),
                 torch::cat({query_->bias, key_->bias, value_->bias}));
      const auto parts = qkv.view({b, t, 3, heads_, head_dim_}).unbind(2);
      q = parts[0].transpose(1, 2);
      k = parts[1].transpose(1, 2);
      v = parts[2].transpose(1, 2);
    } else {
      q = heads(query_->forward(x));
      k = heads(key_->forward(x));
      v = heads(value_->forward(x));
    }
    // No mask: nothing is padded (transformers drops an all-ones mask too), so SDPA may pick
    // the flash kernel.
    const torch::Tensor bias = AttentionBias(mask, position_bias, q.scalar_type());
    const double p = is_training() ? dropout_ : 0.0;
#if TUNEFLEET_HAS_SDPA
    const torch::Tensor context =
        bias.defined() ? at::scaled_dot_product_attention(q, k, v, bias, p, false)
                       : at::scaled_dot_product_attention(q, k, v, c10::nullopt, p, false);
#else
    torch::Tensor scores =
        torch::matmul(q, k.transpose(-1, -2)) / std::sqrt(static_cast<double>(head_dim_));
    if (bias.defined()) scores = scores + bias;
    const torch::Tensor probs = torch::dropout(torch::softmax(scores, -1), p, is_training());
    const torch::Tensor context = torch::matmul(probs, v);
#endif
    return context.transpose(1, 2).reshape({b, t, heads_ * head_dim_});
  }

 private:
  int64_t heads_;
  int64_t head_dim_;
  double dropout_;
  bool fused_qkv_ = true;
  Dense query_, key_, value_;
};

// dense -> dropout -> + residual -> LayerNorm (BertSelfOutput and BertOutput); the last three
// as one kernel each way where trainer/model/fused_norm.h has them.
class ResidualNormImpl : public torch::nn::Module {
 public:
  ResidualNormImpl(int64_t in, int64_t out, double eps, double dropout)
      : eps_(eps), dropout_(dropout) {
    dense_ = register_module("dense", MakeDense(in, out));
    norm_ = register_module("LayerNorm",
                            torch::nn::LayerNorm(torch::nn::LayerNormOptions({out}).eps(eps)));
  }

  NormOutput forward(const torch::Tensor& x, const torch::Tensor& residual) {
    return DropoutAddLayerNorm(dense_->forward(x), residual, norm_->weight, norm_->bias, eps_,
                               dropout_, is_training());
  }

 private:
  double eps_;
  double dropout_;
  Dense dense_;
  torch::nn::LayerNorm norm_{nullptr};
};

}  // namespace

class BertLayerImpl : public torch::nn::Module {
 public:
  explicit BertLayerImpl(const BertConfig& c) : act_(c.hidden_act) {
    const int64_t h = c.hidden_size, inner = c.intermediate_size;
    auto attention = register_module("attention", std::make_shared<torch::nn::Module>());
    self_ = attention->register_module("self", std::make_shared<SelfAttentionImpl>(c));
    attention_output_ = attention->register_module(
        "output",
        std::make_shared<ResidualNormImpl>(h, h, c.layer_norm_eps, c.hidden_dropout_prob));
    auto intermediate = register_module("intermediate", std::make_shared<torch::nn::Module>());
    intermediate_ = intermediate->register_module("dense", MakeDense(h, inner));
    output_ = register_module("output", std::make_shared<ResidualNormImpl>(
                                            inner, h, c.layer_norm_eps, c.hidden_dropout_prob));
  }

  void set_fused_qkv(bool on) { self_->set_fused_qkv(on); }

  // x.full is the residual stream; x.for_matmul() what the projections read
  // (trainer/model/fused_norm.h).
  NormOutput forward(const NormOutput& x, const torch::Tensor& mask,
                     const torch::Tensor& position_bias) {
    const NormOutput a =
        attention_output_->forward(self_->forward(x.for_matmul(), mask, position_bias), x.full);
    return output_->forward(Activate(intermediate_->forward(a.for_matmul()), act_), a.full);
  }

 private:
  std::string act_;
  std::shared_ptr<SelfAttentionImpl> self_;
  std::shared_ptr<ResidualNormImpl> attention_output_;
  Dense intermediate_;
  std::shared_ptr<ResidualNormImpl> output_;
};

namespace {

// Activation checkpointing of one layer, as torch.utils.checkpoint (reentrant) does it: the
// forward runs without recording, keeping only its input; the backward runs the layer again
// with recording on, under the forward's autocast state and random-number state (so dropout
// draws the same mask), and back-propagates through that. An absent mask or position bias travels
// as an empty tensor (LibTorch 1.13's custom functions take no undefined ones).
torch::Tensor OrEmpty(const torch::Tensor& t, const torch::Tensor& like) {
  return t.defined() ? t : torch::empty({0}, like.options());
}
torch::Tensor OrNone(const torch::Tensor& t) { return t.numel() == 0 ? torch::Tensor() : t; }

struct CheckpointedLayer : public torch::autograd::Function<CheckpointedLayer> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x,
                               torch::Tensor mask, torch::Tensor position_bias, int64_t layer) {
    ctx->save_for_backward({x, mask, position_bias});
    ctx->saved_data["layer"] = layer;
    ctx->saved_data["precision"] = static_cast<int64_t>(CurrentAutocast(x.device().type()));
    at::Generator gen = at::globalContext().defaultGenerator(x.device());
    {
      std::lock_guard<std::mutex> lock(gen.mutex());
      ctx->saved_data["rng"] = gen.get_state();
    }
    return reinterpret_cast<BertLayerImpl*>(layer)
        ->forward(NormOutput{x, {}}, OrNone(mask), OrNone(position_bias))
        .full;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    torch::Tensor x = saved[0].detach().requires_grad_(true);
    torch::Tensor bias = OrNone(saved[2]);  // MPNet's relative position bias: its gradient too
    if (bias.defined() && bias.requires_grad()) bias = bias.detach().requires_grad_(true);
    auto* layer = reinterpret_cast<BertLayerImpl*>(ctx->saved_data["layer"].toInt());
    const auto precision = static_cast<Precision>(ctx->saved_data["precision"].toInt());
    at::Generator gen = at::globalContext().defaultGenerator(x.device());
    torch::Tensor outer_rng;
    {
      std::lock_guard<std::mutex> lock(gen.mutex());
      outer_rng = gen.get_state();
      gen.set_state(ctx->saved_data["rng"].toTensor());
    }
    torch::Tensor y;
    {
      torch::AutoGradMode enable(true);
      AutocastScope autocast(x.device().type(), precision);
      y = layer->forward(NormOutput{x, {}}, OrNone(saved[1]), bias).full;
    }
    {
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(outer_rng);
    }
    torch::autograd::backward({y}, {grads[0]});
    return {x.grad(), torch::Tensor(), bias.defined() ? bias.grad() : torch::Tensor(),
            torch::Tensor()};
  }
};

}  // namespace

BertModelImpl::BertModelImpl(const BertConfig& config, bool add_pooling_layer, bool init_weights)
    : config_(config) {
  embeddings_ = register_module("embeddings", std::make_shared<BertEmbeddingsImpl>(config));
  auto encoder = register_module("encoder", std::make_shared<torch::nn::Module>());
  auto layers = encoder->register_module("layer", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    layers_.push_back(std::make_shared<BertLayerImpl>(config));
    layers->push_back(layers_.back());
  }
  if (config.relative_attention_num_buckets > 0) {
    relative_attention_bias_ = encoder->register_module(
        "relative_attention_bias",
        torch::nn::Embedding(config.relative_attention_num_buckets, config.num_attention_heads));
  }
  if (add_pooling_layer) {
    auto pooler = register_module("pooler", std::make_shared<torch::nn::Module>());
    pooler_dense_ = pooler->register_module(
        "dense", std::make_shared<BertDenseImpl>(config.hidden_size, config.hidden_size));
  }
  if (!init_weights) return;
  // transformers' _init_weights.
  torch::NoGradGuard no_grad;
  for (const auto& m : modules(/*include_self=*/false)) {
    if (auto* linear = m->as<BertDenseImpl>()) {
      linear->weight.normal_(0.0, kInitializerRange);
      linear->bias.zero_();
    } else if (auto* embedding = m->as<torch::nn::Embedding>()) {
      embedding->weight.normal_(0.0, kInitializerRange);
      if (auto pad = embedding->options.padding_idx()) embedding->weight[*pad].zero_();
    } else if (auto* norm = m->as<torch::nn::LayerNorm>()) {
      norm->weight.fill_(1.0);
      norm->bias.zero_();
    }
  }
}

void BertModelImpl::set_fused_qkv(bool on) {
  for (const auto& layer : layers_) layer->set_fused_qkv(on);
}

BertOutput BertModelImpl::forward(const torch::Tensor& input_ids,
                                  const torch::Tensor& token_type_ids,
                                  const torch::Tensor& attention_mask) {
  // One token type or none: the ids given are ignored (a RoBERTa under a BertTokenizer gets 1s).
  const torch::Tensor types = config_.type_vocab_size > 1 ? token_type_ids : torch::Tensor();
  const torch::Tensor& mask = attention_mask;  // undefined: nothing is padded
  NormOutput h{embeddings_->forward(input_ids, types), {}};
  torch::Tensor position_bias;  // MPNet's [1, heads, T, T], shared by all layers
  if (relative_attention_bias_) {
    position_bias = RelativePositionBias(relative_attention_bias_, input_ids.size(1));
  }
  const bool checkpoint = gradient_checkpointing_ && is_training() && torch::GradMode::is_enabled();
  for (const auto& layer : layers_) {
    if (checkpoint && h.full.requires_grad()) {
      h = NormOutput{
          CheckpointedLayer::apply(h.full, OrEmpty(mask, h.full), OrEmpty(position_bias, h.full),
                                   reinterpret_cast<int64_t>(layer.get())),
          {}};
    } else {
      h = layer->forward(h, mask, position_bias);
    }
  }
  BertOutput out;
  out.last_hidden_state = h.full;
  if (pooler_dense_ != nullptr) {
    out.pooler_output = torch::tanh(pooler_dense_->forward(h.full.select(1, 0)));
  }
  return out;
}

absl::StatusOr<BertOutput> BertForward(BertModel& model, const torch::Tensor& input_ids,
                                       const torch::Tensor& token_type_ids,
                                       const torch::Tensor& attention_mask) {
  const BertConfig& c = model->config();
  auto check = [&](const torch::Tensor& t, const char* name, int64_t limit) -> absl::Status {
    if (!t.defined()) return absl::OkStatus();
    if (t.scalar_type() != torch::kLong || t.dim() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(name, " must be int64 [batch, length]"));
    }
    if (t.sizes() != input_ids.sizes()) {
      return absl::InvalidArgumentError(absl::StrCat(name, " and input_ids differ in shape"));
    }
    if (t.numel() > 0 && (t.min().item<int64_t>() < 0 || t.max().item<int64_t>() >= limit)) {
      return absl::InvalidArgumentError(absl::StrCat(name, " must lie in [0, ", limit, ")"));
    }
    return absl::OkStatus();
  };
  try {
    if (!input_ids.defined()) return absl::InvalidArgumentError("input_ids is undefined");
    RETURN_IF_ERROR(check(input_ids, "input_ids", c.vocab_size));
    // One token type or none: any ids are taken as zeros.
    RETURN_IF_ERROR(
        check(token_type_ids, "token_type_ids",
              c.type_vocab_size > 1 ? c.type_vocab_size : std::numeric_limits<int64_t>::max()));
    RETURN_IF_ERROR(check(attention_mask, "attention_mask", 2));
    if (input_ids.size(0) == 0 || input_ids.size(1) == 0) {
      return absl::InvalidArgumentError("input_ids is empty");
    }
    if (input_ids.size(1) > MaxSequenceLength(c)) {
      return absl::InvalidArgumentError(
          absl::StrCat("sequence length ", input_ids.size(1), " exceeds max_position_embeddings ",
                       c.max_position_embeddings,
                       c.padded_position_ids
                           ? absl::StrCat(" less pad_token_id + 1 (", MaxSequenceLength(c), ")")
                           : ""));
    }
    const torch::Device device = model->parameters().front().device();
    auto on = [&](const torch::Tensor& t) { return t.defined() ? t.to(device) : t; };
    return model->forward(on(input_ids), on(token_type_ids), on(attention_mask));
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat("BERT forward failed: ", e.what_without_backtrace()));
  }
}

namespace {

absl::Status LoadWeights(BertModel& model, const std::map<std::string, torch::Tensor>& tensors,
                         bool adopt) {
  std::vector<std::string> missing, unexpected;
  try {
    torch::NoGradGuard no_grad;
    const auto params = model->named_parameters(/*recurse=*/true);
    for (const auto& item : params) {
      auto it = tensors.find(item.key());
      if (it == tensors.end()) {
        missing.push_back(item.key());
        continue;
      }
      if (it->second.sizes() != item.value().sizes()) {
        return absl::InvalidArgumentError(
            absl::StrCat("size mismatch for ", item.key(), ": the weights have shape [",
                         absl::StrJoin(it->second.sizes(), ", "), "], the model needs [",
                         absl::StrJoin(item.value().sizes(), ", "), "]"));
      }
      const torch::Tensor& t = it->second;
      torch::Tensor p = item.value();  // a handle: set_data changes the parameter itself
      if (adopt && t.is_contiguous() && t.device() == p.device() && t.dtype() == p.dtype()) {
        p.set_data(t);
      } else {
        p.copy_(t);
      }
    }
    for (const auto& [name, tensor] : tensors) {
      if (params.find(name) == nullptr) unexpected.push_back(name);
    }
  } catch (const c10::Error& e) {
    return absl::InternalError(
        absl::StrCat("loading BERT weights failed: ", e.what_without_backtrace()));
  }
  if (!missing.empty() || !unexpected.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("the weights do not match the model: missing [",
                                                   absl::StrJoin(missing, ", "), "], unexpected [",
                                                   absl::StrJoin(unexpected, ", "), "]"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status LoadBertWeights(BertModel& model,
                             const std::map<std::string, torch::Tensor>& tensors) {
  return LoadWeights(model, tensors, /*adopt=*/false);
}

absl::Status LoadBertWeights(BertModel& model, std::map<std::string, torch::Tensor>&& tensors) {
  std::map<std::string, torch::Tensor> owned = std::move(tensors);
  return LoadWeights(model, owned, /*adopt=*/true);
}

std::map<std::string, torch::Tensor> BertStateDict(const BertModel& model) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& item : model->named_parameters(/*recurse=*/true)) out[item.key()] = item.value();
  return out;
}

absl::StatusOr<BertModel> LoadBertModel(const std::string& dir, BertCheckpoint* info) {
  ASSIGN_OR_RETURN(BertCheckpoint checkpoint, LoadBertCheckpoint(dir));
  try {
    BertModel model(checkpoint.config, checkpoint.has_pooler, /*init_weights=*/false);
    if (!checkpoint.has_pooler) {
      if (!checkpoint.missing_keys.empty()) {  // else the family has no pooler (DistilBERT)
        TF_LOG(WARNING) << dir << " has no pooler weights: the model has no pooler";
      }
      for (auto it = checkpoint.tensors.begin(); it != checkpoint.tensors.end();) {
        it = absl::StartsWith(it->first, "pooler.") ? checkpoint.tensors.erase(it) : std::next(it);
      }
    }
    absl::Status s = LoadBertWeights(model, std::move(checkpoint.tensors));
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat(dir, ": ", s.message()));
    model->eval();
    if (info != nullptr) {
      checkpoint.tensors.clear();
      *info = std::move(checkpoint);
    }
    return model;
  } catch (const c10::Error& e) {
    return absl::InternalError(
        absl::StrCat(dir, ": building the model failed: ", e.what_without_backtrace()));
  }
}

absl::Status SaveBertModel(const BertModel& model, const std::string& dir,
                           const CheckpointSaveOptions& options) {
  try {
    return SaveBertCheckpoint(dir, model->config(), BertStateDict(model), options);
  } catch (const c10::Error& e) {
    return absl::InternalError(
        absl::StrCat(dir, ": saving the model failed: ", e.what_without_backtrace()));
  }
}

}  // namespace trainer
}  // namespace tunefleet
