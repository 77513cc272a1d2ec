// `trainer predict --model DIR [--batch_size N] [--max_len N] [--device auto|cpu|cuda]`: a
// cross-encoder's scores of text pairs, as sentence-transformers' CrossEncoder.predict gives
// them. stdin: one pair a line, the two texts separated by one tab (a final '\r' dropped,
// invalid UTF-8 replaced with one warning). stdout: one JSON line per input line, in order:
// {"score": x} for a one-output head (sigmoid of its logit, CrossEncoder's default
// activation), {"scores": [x, ...]} otherwise (the logits). Scores print with 9 significant
// digits (a float32 reads back exactly). Batches of --batch_size pairs (default 32, as
// CrossEncoder.predict) in input order, each padded to its longest, in float32.
// Exit codes: 0; 2 for bad input (one line naming the line); 1 when scoring fails.
#ifndef TUNEFLEET_TRAINER_COMMANDS_PREDICT_COMMAND_H_
#define TUNEFLEET_TRAINER_COMMANDS_PREDICT_COMMAND_H_

#include <string>
#include <vector>

namespace tunefleet {
namespace trainer {

int RunPredict(const std::vector<std::string>& args);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_COMMANDS_PREDICT_COMMAND_H_
