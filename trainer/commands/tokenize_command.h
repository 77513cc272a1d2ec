// `trainer tokenize`: BERT WordPiece tokenization of stdin to JSON lines on stdout (the CLI
// contract: docs/CLI.md, "trainer tokenize"), with a bare vocab.txt (--vocab) or a model
// folder's tokenizer (--model DIR: as its config.json's model family reads it,
// trainer/model/model_family_registry.h). Each input line (a final '\r' dropped) is one text and
// gives one line {"ids": [...]} with [CLS]/[SEP], truncated to --max_len; with --pair each line is
// a tab-separated sentence pair and gives {"ids": [...], "token_type_ids": [...]}. Output lines are
// in input order, one per input line (an empty line gives [CLS] [SEP]). Invalid UTF-8 is read as
// Python's errors="replace" reads it: each bad byte sequence is U+FFFD, which the tokenizer drops
// (trainer/data/utf8_check.h), so the ids are those of the text without it. At the end of the input
// (or before an error) one warning line on stderr names the first stdin line that held invalid
// UTF-8 and how many did. Exit codes (common/cli.h): 0, 2 for a bad command line, vocab, model
// folder or input line (one-line error naming the file or stdin line), 1 when stdout cannot be
// written.
#ifndef TUNEFLEET_TRAINER_COMMANDS_TOKENIZE_COMMAND_H_
#define TUNEFLEET_TRAINER_COMMANDS_TOKENIZE_COMMAND_H_

#include <iosfwd>
#include <string>
#include <vector>

namespace tunefleet {
namespace trainer {

// args: everything after `trainer tokenize`. Reads std::cin, writes std::cout / std::cerr.
int RunTokenize(const std::vector<std::string>& args);
// The same over given streams (for tests).
int RunTokenizeOn(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                  std::ostream& err);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_COMMANDS_TOKENIZE_COMMAND_H_
