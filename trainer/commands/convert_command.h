// `trainer convert --model DIR --output DIR [--pooling mean|cls|max]`: reads any Hugging Face
// encoder folder the loader accepts (a registered model family: bert, roberta, xlm-roberta,
// mpnet, distilbert; single or sharded safetensors, a task model's prefix or not, float16 /
// bfloat16 / float32, extra heads) and writes it in tunefleet's layout: config.json, one float32
// model.safetensors with the family's transformers names, every tokenizer file the source has,
// and, with --pooling, the sentence-transformers files. transformers' AutoModel.from_pretrained
// and sentence-transformers load the result (tests/gpu/hf_checkpoint_check.py, family_check.py).
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
