// `trainer encode --model DIR --input FILE --output FILE [--batch_size N] [--max_len N]
//  [--pooling mean|cls|max] [--device auto|cpu|cuda]`: sentence embeddings (the CLI contract:
// docs/CLI.md, "trainer encode"). Each input line (a final '\r' dropped; an empty line is the
// empty sentence) gives one embedding, in input order: one JSON object {"embedding": [...]} a line,
// or a float32 .npy of shape (lines, hidden_size) when the output name ends in .npy. Invalid UTF-8
// is read as Python's errors="replace" reads it (each bad byte sequence is U+FFFD, which the
// tokenizer drops; trainer/data/utf8_check.h) and gives one warning line on stderr naming the file,
// its first such line and how many lines had one (from rank 0 only under a launcher). The model
// folder is a Hugging Face / sentence-transformers one (trainer/model/hf_model_folder.h) of any
// model family, with its own tokenizer (trainer/data/tokenizer_folder.h). Pooling is --pooling,
// else the folder's sentence-transformers Pooling module, else mean (sentence-transformers'
// default); a Normalize module L2-normalizes the embeddings, as SentenceTransformer.encode does.
// Truncation is --max_len, else sentence_bert_config.json's max_seq_length, else 128 (at most
// max_position_embeddings). Sentences are batched by length (order restored); eval mode, fp32. The
// output is written to a temporary file beside it and renamed into place when complete. Exit codes
// (common/cli.h): 0; 2 for a bad command line, model folder or input file (one-line error naming
// it); 1 when encoding or writing the output fails.
#ifndef TUNEFLEET_TRAINER_COMMANDS_ENCODE_COMMAND_H_
#define TUNEFLEET_TRAINER_COMMANDS_ENCODE_COMMAND_H_

#include <string>
#include <vector>

namespace tunefleet {
namespace trainer {

// args: everything after `trainer encode`.
int RunEncode(const std::vector<std::string>& args);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_COMMANDS_ENCODE_COMMAND_H_
