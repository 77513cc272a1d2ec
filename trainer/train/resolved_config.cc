#include "trainer/train/resolved_config.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "yaml-cpp/yaml.h"

namespace tunefleet {
namespace trainer {
namespace {

std::string Absolute(const std::string& path, const std::string& base) {
  if (path.empty() || path.front() == '/') return path;
  return JoinPath(base, path);
}

// The shortest decimal that reads back as `v` (0.000775761811, not 0.00077576181100000003).
std::string Shortest(double v) {
  for (int precision = 1; precision <= 17; ++precision) {
    const std::string text = absl::StrFormat("%.*g", precision, v);
    if (std::strtod(text.c_str(), nullptr) == v) return text;
  }
  return absl::StrFormat("%.17g", v);
}

// A double, emitted as its shortest text (yaml-cpp writes number-like text plain).
struct Number {
  double v;
};
YAML::Emitter& operator<<(YAML::Emitter& out, const Number& n) { return out << Shortest(n.v); }

std::string WorkingDirectory() {
  char buf[PATH_MAX];
  return ::getcwd(buf, sizeof(buf)) != nullptr ? std::string(buf) : std::string(".");
}

}  // namespace

std::string ResolvedConfigYaml(const TrainerConfig& c, const std::string& base_dir,
                               const std::vector<std::string>& overrides) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "path" << YAML::Value << Absolute(c.model.path, base_dir);
  out << YAML::Key << "pooling" << YAML::Value << c.model.pooling;
  out << YAML::Key << "max_seq_len" << YAML::Value << c.model.max_seq_len;
  out << YAML::Key << "dropout" << YAML::Value << Number{c.model.dropout};
  out << YAML::Key << "head" << YAML::Value << Absolute(c.model.head, base_dir);
  out << YAML::EndMap;
  out << YAML::Key << "task" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "type" << YAML::Value << c.task.type;
  if (!c.task.loss.empty()) out << YAML::Key << "loss" << YAML::Value << c.task.loss;
  out << YAML::Key << "train" << YAML::Value << Absolute(c.task.train, base_dir);
  out << YAML::Key << "eval" << YAML::Value << Absolute(c.task.eval, base_dir);
  out << YAML::Key << "format" << YAML::Value << c.task.format;
  // The keys that apply only to some formats, losses or evaluations, and those the type
  // resolves (loss, eval_kind: always set in a parsed config), are written when set.
  if (!c.task.columns.empty()) {
    out << YAML::Key << "columns" << YAML::Value << YAML::Flow << c.task.columns;
  }
  if (!c.task.label_column.empty()) {
    out << YAML::Key << "label_column" << YAML::Value << c.task.label_column;
  }
  if (!c.task.eval_kind.empty()) {
    out << YAML::Key << "eval_kind" << YAML::Value << c.task.eval_kind;
  }
  for (const auto& [key, path] :
       {std::pair<const char*, const std::string*>{"eval_queries", &c.task.eval_queries},
        {"eval_corpus", &c.task.eval_corpus},
        {"eval_qrels", &c.task.eval_qrels}}) {
    if (!path->empty()) out << YAML::Key << key << YAML::Value << Absolute(*path, base_dir);
  }
  if (!c.task.matryoshka_dims.empty()) {
    out << YAML::Key << "matryoshka_dims" << YAML::Value << YAML::Flow << c.task.matryoshka_dims;
  }
  if (!c.task.matryoshka_weights.empty()) {
    out << YAML::Key << "matryoshka_weights" << YAML::Value << YAML::Flow;
    out << YAML::BeginSeq;
    for (double w : c.task.matryoshka_weights) out << Number{w};
    out << YAML::EndSeq;
  }
  out << YAML::Key << "num_labels" << YAML::Value << c.task.num_labels;
  out << YAML::Key << "mnrl_gather" << YAML::Value << c.task.mnrl_gather;
  if (c.task.settings != nullptr) {  // the type's own keys (trainer/tasks/task.h)
    for (const auto& [key, value] : c.task.settings->Values()) {
      out << YAML::Key << key << YAML::Value << value;
    }
  }
  out << YAML::EndMap;
  const TrainConfig& t = c.train;
  out << YAML::Key << "train" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "epochs" << YAML::Value << t.epochs;
  out << YAML::Key << "max_steps" << YAML::Value << t.max_steps;
  out << YAML::Key << "batch_size" << YAML::Value << t.batch_size;
  out << YAML::Key << "lr" << YAML::Value << Number{t.lr};
  out << YAML::Key << "weight_decay" << YAML::Value << Number{t.weight_decay};
  out << YAML::Key << "warmup_ratio" << YAML::Value << Number{t.warmup_ratio};
  out << YAML::Key << "schedule" << YAML::Value << t.schedule;
  out << YAML::Key << "max_grad_norm" << YAML::Value << Number{t.max_grad_norm};
  out << YAML::Key << "grad_accum" << YAML::Value << t.grad_accum;
  out << YAML::Key << "precision" << YAML::Value << t.precision;
  out << YAML::Key << "seed" << YAML::Value << t.seed;
  out << YAML::Key << "shuffle" << YAML::Value << t.shuffle;
  out << YAML::Key << "group_by_length" << YAML::Value << t.group_by_length;
  // Resolved by the caller (train_command: the loss's default); left empty, null, which reads
  // back as unset.
  out << YAML::Key << "batch_sampler" << YAML::Value;
  if (t.batch_sampler.empty()) {
    out << YAML::Null;
  } else {
    out << t.batch_sampler;
  }
  out << YAML::Key << "grad_checkpointing" << YAML::Value << t.grad_checkpointing;
  out << YAML::Key << "cuda_graphs" << YAML::Value << t.cuda_graphs;
  out << YAML::Key << "length_buckets" << YAML::Value << YAML::Flow << t.length_buckets;
  out << YAML::Key << "eval_every_steps" << YAML::Value << t.eval_every_steps;
  out << YAML::Key << "eval_every_samples" << YAML::Value << t.eval_every_samples;
  out << YAML::Key << "eval_every_epochs" << YAML::Value << Number{t.eval_every_epochs};
  out << YAML::Key << "eval_batch_size" << YAML::Value << t.eval_batch_size;
  out << YAML::Key << "log_every_steps" << YAML::Value << t.log_every_steps;
  out << YAML::Key << "ddp_bucket_mb" << YAML::Value << t.ddp_bucket_mb;
  out << YAML::Key << "ddp_timeout_s" << YAML::Value << t.ddp_timeout_s;
  out << YAML::Key << "ddp_comm_dtype" << YAML::Value << t.ddp_comm_dtype;
  out << YAML::Key << "strategy" << YAML::Value << t.strategy;
  out << YAML::Key << "devices" << YAML::Value;
  if (t.gpu_ids.empty()) {
    out << t.devices;
  } else {
    out << YAML::Flow << t.gpu_ids;
  }
  out << YAML::EndMap;
  out << YAML::Key << "output" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "dir" << YAML::Value << Absolute(c.output.dir, base_dir);
  out << YAML::Key << "save" << YAML::Value << c.output.save;
  out << YAML::Key << "checkpoint" << YAML::Value << c.output.checkpoint;
  out << YAML::Key << "checkpoint_every_s" << YAML::Value << Number{c.output.checkpoint_every_s};
  out << YAML::EndMap;
  out << YAML::EndMap;
  std::string header = absl::StrCat(
      "# The resolved config of a `trainer train` run: every key with the value it trained with,\n"
      "# paths absolute. From ",
      Absolute(c.source, base_dir), " in ", base_dir,
      overrides.empty() ? "" : absl::StrCat(", with ", absl::StrJoin(overrides, " ")),
      ".\n# Re-run it: trainer train --config THIS_FILE output.dir=ANOTHER_DIR\n");
  return absl::StrCat(header, out.c_str(), "\n");
}

absl::Status WriteResolvedConfig(const TrainerConfig& config,
                                 const std::vector<std::string>& overrides, int world_size) {
  TrainerConfig c = config;
  if (world_size > 1) {
    c.train.devices = world_size;
    c.train.gpu_ids.clear();
  }
  const std::string base = WorkingDirectory();
  const std::string dir = JoinPath(Absolute(c.output.dir, base), kResolvedConfigDir);
  RETURN_IF_ERROR(MakeDirs(dir));
  RETURN_IF_ERROR(
      WriteFileAtomically(JoinPath(dir, "config.yaml"), ResolvedConfigYaml(c, base, overrides)));
  YAML::Emitter list;
  list << YAML::BeginSeq;
  for (const std::string& o : overrides) list << o;
  list << YAML::EndSeq;
  return WriteFileAtomically(JoinPath(dir, "overrides.yaml"), absl::StrCat(list.c_str(), "\n"));
}

}  // namespace trainer
}  // namespace tunefleet
