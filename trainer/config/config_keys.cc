#include "trainer/config/config_keys.h"

namespace tunefleet {
namespace trainer {

const std::vector<std::string>& TrainerConfigKeys() {
  // tests/trainer/train_config_test checks this against what the parser accepts.
  static const std::vector<std::string>* const kKeys =
      new std::vector<std::string>{"model.path",
                                   "model.pooling",
                                   "model.max_seq_len",
                                   "model.dropout",
                                   "model.head",
                                   "task.type",
                                   "task.loss",
                                   "task.train",
                                   "task.eval",
                                   "task.format",
                                   "task.columns",
                                   "task.label_column",
                                   "task.eval_kind",
                                   "task.eval_queries",
                                   "task.eval_corpus",
                                   "task.eval_qrels",
                                   "task.num_labels",
                                   "task.mnrl_gather",
                                   "task.matryoshka_dims",
                                   "task.matryoshka_weights",
                                   "train.epochs",
                                   "train.max_steps",
                                   "train.batch_size",
                                   "train.lr",
                                   "train.weight_decay",
                                   "train.warmup_ratio",
                                   "train.schedule",
                                   "train.max_grad_norm",
                                   "train.grad_accum",
                                   "train.precision",
                                   "train.seed",
                                   "train.shuffle",
                                   "train.group_by_length",
                                   "train.batch_sampler",
                                   "train.grad_checkpointing",
                                   "train.cuda_graphs",
                                   "train.length_buckets",
                                   "train.eval_every_steps",
                                   "train.eval_every_samples",
                                   "train.eval_every_epochs",
                                   "train.eval_batch_size",
                                   "train.log_every_steps",
                                   "train.ddp_bucket_mb",
                                   "train.ddp_timeout_s",
                                   "train.ddp_comm_dtype",
                                   "train.strategy",
                                   "train.devices",
                                   "output.dir",
                                   "output.save",
                                   "output.checkpoint",
                                   "output.checkpoint_every_s"};
  return *kKeys;
}

}  // namespace trainer
}  // namespace tunefleet
