#include "trainer/commands/tokenize_command.h"

#include <iostream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/cli.h"
#include "trainer/data/tokenizer_folder.h"
#include "trainer/data/utf8_check.h"
#include "trainer/data/wordpiece_tokenizer.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kProgram[] = "trainer tokenize";

void PrintErrorTo(std::ostream& err, const absl::Status& status) {
  std::string message(status.message());
  for (char& c : message) {
    if (c == '\n') c = ' ';
  }
  err << kProgram << ": error: " << message << "\n";
}

void AppendIds(const char* key, const std::vector<int32_t>& ids, std::string* line) {
  absl::StrAppend(line, "\"", key, "\": [", absl::StrJoin(ids, ", "), "]");
}

// --vocab's WordPiece (uncased unless `cased`), or --model's folder tokenizer.
absl::StatusOr<std::shared_ptr<const Tokenizer>> LoadTokenizer(const std::string& vocab_path,
                                                               const std::string& model_dir,
                                                               bool cased) {
  if (!model_dir.empty()) return LoadFolderTokenizer(model_dir);
  WordPieceTokenizer::Options options;
  options.lowercase = !cased;
  absl::StatusOr<WordPieceTokenizer> t = WordPieceTokenizer::FromVocabFile(vocab_path, options);
  if (!t.ok()) return t.status();
  return std::shared_ptr<const Tokenizer>(std::make_shared<WordPieceTokenizer>(*std::move(t)));
}

// The command line, as given.
struct TokenizeOptions {
  std::string vocab_path, model_dir;
  int64_t max_len = Tokenizer::kDefaultMaxLen;
  bool pair = false;
  bool cased = false;
};

// Reads and checks the flags: -1 to go on, else the exit code (--help, written to `out`; a bad
// command line, to `err`).
int ParseTokenizeFlags(const std::vector<std::string>& args, TokenizeOptions* o, std::ostream& out,
                       std::ostream& err) {
  CommandLine cli(
      kProgram, "",
      "Reads text lines on stdin; writes one JSON object {\"ids\": [...]} a line, with\n"
      "the special tokens, truncated to --max_len. With --model, exactly as\n"
      "AutoTokenizer.from_pretrained(DIR)(line, truncation=True, max_length=N): the\n"
      "folder's WordPiece (vocab.txt or tokenizer.json) or SentencePiece unigram\n"
      "(sentencepiece.bpe.model or tokenizer.json) with its special tokens. With --vocab,\n"
      "BERT WordPiece, uncased as Hugging Face's BertWordPieceTokenizer; with --cased as\n"
      "BertTokenizerFast(do_lower_case=False). With --pair each line is two tab-separated\n"
      "sentences (longest-first truncation), and \"token_type_ids\" are written too.");
  cli.AddString("vocab", &o->vocab_path, "WordPiece vocab.txt (this or --model)", "FILE");
  cli.AddString("model", &o->model_dir,
                "model folder: its tokenizer, as transformers' AutoTokenizer reads it "
                "(this or --vocab; not with --cased)",
                "DIR");
  cli.AddBool("cased", &o->cased,
              "keep case and accents (cased and multilingual BERT vocabularies)");
  cli.AddInt("max_len", &o->max_len, "maximum tokens including [CLS] and [SEP]");
  cli.AddBool("pair", &o->pair, "lines are tab-separated sentence pairs");
  cli.AddHelpEpilog(
      "Example: echo 'Hello, world!' | trainer tokenize --vocab vocab.txt\n"
      "  {\"ids\": [101, 7592, 1010, 2088, 999, 102]}\n");
  absl::Status status = cli.Parse(args);
  if (cli.help_requested()) {
    out << cli.Help();
    return kExitOk;
  }
  if (status.ok() && o->vocab_path.empty() == o->model_dir.empty()) {
    status = absl::InvalidArgumentError("give one of --vocab and --model");
  }
  if (status.ok() && !o->model_dir.empty() && o->cased) {
    status = absl::InvalidArgumentError("--cased goes with --vocab (a model folder says its case)");
  }
  const int64_t min_len = o->pair ? 3 : 2;
  if (status.ok() && o->max_len < min_len) {
    status = absl::InvalidArgumentError(absl::StrCat("--max_len must be at least ", min_len,
                                                     o->pair ? " with --pair" : "", ", got ",
                                                     o->max_len));
  }
  if (!status.ok()) {
    PrintErrorTo(err, status);
    return kExitUsage;
  }
  return -1;
}

// Tokenizes each line of `in` into one JSON line on `out`: an exit code.
int TokenizeLines(const Tokenizer& tokenizer, const TokenizeOptions& o, std::istream& in,
                  std::ostream& out, std::ostream& err) {
  std::string text, line;
  Utf8LineChecker utf8("stdin");
  for (int64_t number = 1; std::getline(in, text); ++number) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    utf8.Check(number, &text);
    Encoding e;
    if (o.pair) {
      std::vector<absl::string_view> parts = absl::StrSplit(text, '\t');
      if (parts.size() != 2) {
        utf8.Report(&err);  // the lines read so far
        PrintErrorTo(err,
                     absl::InvalidArgumentError(absl::StrCat(
                         "stdin:", number, ": --pair expects two tab-separated sentences, got ",
                         parts.size(), " field(s)")));
        return kExitUsage;
      }
      e = tokenizer.EncodePair(parts[0], parts[1], o.max_len);
    } else {
      e = tokenizer.Encode(text, o.max_len);
    }
    line.assign("{");
    AppendIds("ids", e.ids, &line);
    if (o.pair) {
      line.append(", ");
      AppendIds("token_type_ids", e.token_type_ids, &line);
    }
    line.append("}\n");
    out << line;
  }
  out.flush();
  utf8.Report(&err);
  if (!out) {
    PrintErrorTo(err, absl::DataLossError("cannot write to stdout"));
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

int RunTokenize(const std::vector<std::string>& args) {
  std::ios::sync_with_stdio(false);
  return RunTokenizeOn(args, std::cin, std::cout, std::cerr);
}

int RunTokenizeOn(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                  std::ostream& err) {
  TokenizeOptions options;
  if (int rc = ParseTokenizeFlags(args, &options, out, err); rc >= 0) return rc;
  absl::StatusOr<std::shared_ptr<const Tokenizer>> tokenizer =
      LoadTokenizer(options.vocab_path, options.model_dir, options.cased);
  if (!tokenizer.ok()) {
    PrintErrorTo(err, tokenizer.status());
    return kExitUsage;
  }
  return TokenizeLines(**tokenizer, options, in, out, err);
}

}  // namespace trainer
}  // namespace tunefleet
