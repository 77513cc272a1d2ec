// A process-wide host-memory cache of one Hugging Face BERT checkpoint
// (trainer/model/hf_model_folder.h), for warm trainer workers (trainer/commands/worker_command.h):
// the trials of a sweep start from the same model folder, and reading and parsing its safetensors
// files is most of a warm trial's setup.
//
// Off by default (`trainer train` reads the folder every time); the worker turns it on. While on,
// LoadBertCheckpointCached keeps the last folder's BertCheckpoint (float32 CPU tensors, exactly
// what LoadBertCheckpoint returned) and hands out copies of it: each call gets tensors of its own
// (cloned, contiguous, same dtype and values), so a trial that trains them in place (set_data
// adopts them as parameters) never changes the cached ones. A hit is bit-identical to a read.
//
// Key: the folder's canonical path (realpath) plus, for config.json, model.safetensors,
// model.safetensors.index.json and every weight file read, whether it exists, its device, inode,
// size and modification time (ns). Any change (a file rewritten, replaced, added or removed) is a
// miss that reads the folder again. At most one entry: a miss replaces it. The
// sentence-transformers files (pooling, normalize, max length) are small and re-read on every hit.
// Holding the entry costs the checkpoint's size in host memory (BERT-base: 0.44 GB).
// Thread-safety: thread-safe (one mutex; a load holds it).
#ifndef TUNEFLEET_TRAINER_MODEL_CHECKPOINT_CACHE_H_
#define TUNEFLEET_TRAINER_MODEL_CHECKPOINT_CACHE_H_

#include <string>

#include "absl/status/statusor.h"
#include "trainer/model/hf_model_folder.h"

namespace tunefleet {
namespace trainer {

// Turns the cache on or off for this process; off also drops the entry.
void EnableCheckpointCache(bool on);
bool CheckpointCacheEnabled();

// Drops the entry (the cache stays on or off).
void ClearCheckpointCache();

// LoadBertCheckpoint(dir), from the cached host copy when the cache is on and holds this folder
// unchanged. `hit` (optional) tells which it was. Errors are LoadBertCheckpoint's (never cached).
absl::StatusOr<BertCheckpoint> LoadBertCheckpointCached(const std::string& dir,
                                                        bool* hit = nullptr);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_CHECKPOINT_CACHE_H_
