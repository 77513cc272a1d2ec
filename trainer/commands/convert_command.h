// `trainer convert --model DIR --output DIR [--pooling mean|cls|max]`: reads any Hugging Face
// BERT model folder the loader accepts (single or sharded safetensors, "bert." prefix or not,
// float16 / bfloat16 / float32, extra heads) and writes it in tunefleet's layout: config.json,
// one float32 model.safetensors with BertModel names, the tokenizer files, and, with --pooling,
// the sentence-transformers files. transformers' BertModel.from_pretrained and
// sentence-transformers load the result (tests/gpu/hf_checkpoint_check.py checks it).
#ifndef TUNEFLEET_TRAINER_COMMANDS_CONVERT_COMMAND_H_
#define TUNEFLEET_TRAINER_COMMANDS_CONVERT_COMMAND_H_

#include <string>
#include <vector>

namespace tunefleet {
namespace trainer {

int RunConvert(const std::vector<std::string>& args);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_COMMANDS_CONVERT_COMMAND_H_
