// Sentence-pair datasets read into one Example type, and the per-epoch example order.
//
// Formats (the trainer YAML's task.format), all UTF-8; a UTF-8 BOM, a final '\r' on each line
// and blank lines are ignored. The four fixed layouts are tab-separated with no quoting (a '"'
// is text, as sentence-transformers reads STS-B with csv.QUOTE_NONE). What each fills in:
//   stsb   STS Benchmark sts-*.csv: genre, file, year, id, score, sentence1, sentence2, and on
//          some rows extra trailing columns (ignored). No header. score in [0, 5]; label unset.
//   sick   SICK.txt: a header naming the columns, of which sentence_A, sentence_B,
//          entailment_label (or entailment_judgment) and relatedness_score are used (others
//          ignored). score = relatedness (1-5); label ENTAILMENT 0, NEUTRAL 1, CONTRADICTION 2.
//          ReadSick can keep one SemEval_set (TRAIN, TRIAL, TEST).
//   paws   PAWS-Wiki dev/test.tsv: id, sentence1, sentence2, label (0/1); the official header
//          line "id sentence1 sentence2 label" is skipped when present. score unset.
//   mrpc   MSR Paraphrase msr_paraphrase_*.txt: Quality (0/1), #1 ID, #2 ID, #1 String,
//          #2 String; the official header (first field "Quality") is skipped when present.
//          label = Quality; score unset.
//   jsonl, csv, tsv  named columns in sentence-transformers' layout (anchor, positive,
//          negatives..., a score or label column): trainer/data/column_reader.h, which picks
//          the columns by ColumnOptions (task.columns, task.label_column). csv and tsv have a
//          header line; an old {"sentence1", "sentence2", "label", "score"} JSONL file or a tsv
//          whose header is sentence1<TAB>sentence2<TAB>label reads as before.
// Unset fields: score is NaN (HasScore), label is kNoLabel (HasLabel).
// Invalid UTF-8 does not stop a reader: it is read as U+FFFD, with one warning line a file
// (trainer/data/line_reader.h). Example text is always valid UTF-8, and tokenizes as the raw
// bytes did (the tokenizer drops U+FFFD).
// Errors are one line naming the file, and the line where one is at fault: a missing file, no
// examples, a row with too few (or, where the format is fixed, too many) columns, an unparsable
// score or label.
// Thread-safety: free functions without shared state.
#ifndef TUNEFLEET_TRAINER_DATA_DATASETS_H_
#define TUNEFLEET_TRAINER_DATA_DATASETS_H_

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer/data/column_reader.h"
#include "trainer/data/example.h"

namespace tunefleet {
namespace trainer {

// `format` is one of stsb, sick, paws, mrpc, jsonl, csv, tsv; `columns` applies to the last
// three (for the others it must be empty). `warnings`: where the invalid-UTF-8 warning goes
// (null: nowhere).
absl::StatusOr<std::vector<Example>> ReadDataset(const std::string& path, const std::string& format,
                                                 const ColumnOptions& columns,
                                                 std::ostream* warnings = &std::cerr);
// The same with the default columns.
absl::StatusOr<std::vector<Example>> ReadDataset(const std::string& path, const std::string& format,
                                                 std::ostream* warnings = &std::cerr);

absl::StatusOr<std::vector<Example>> ReadStsb(const std::string& path,
                                              std::ostream* warnings = &std::cerr);
// split: "" for every row, else the SemEval_set to keep (TRAIN, TRIAL or TEST).
absl::StatusOr<std::vector<Example>> ReadSick(const std::string& path,
                                              const std::string& split = "",
                                              std::ostream* warnings = &std::cerr);
absl::StatusOr<std::vector<Example>> ReadPaws(const std::string& path,
                                              std::ostream* warnings = &std::cerr);
absl::StatusOr<std::vector<Example>> ReadMrpc(const std::string& path,
                                              std::ostream* warnings = &std::cerr);

// The order to visit n examples in during `epoch`: 0..n-1 when !shuffle, else a permutation
// that depends only on (n, seed, epoch), the same on every platform and rank:
//   state = seed XOR (0x9E3779B97F4A7C15 * (epoch + 1))   (64-bit wrap-around)
//   next() = SplitMix64 on state (Steele, Lea & Flood 2014; as in java.util.SplittableRandom)
//   Fisher-Yates from the back: for i = n-1 .. 1, swap(order[i], order[j]) with j uniform in
//   [0, i], drawn as next() % (i + 1) after rejecting draws below 2^64 mod (i + 1).
// It matches no other library's shuffle. n <= 0 gives an empty order.
std::vector<int64_t> EpochOrder(int64_t n, uint64_t seed, int64_t epoch, bool shuffle);

// One rank's share of an epoch's order, as torch's DistributedSampler (drop_last=False) takes it:
// the order padded with its own first elements to a multiple of `world`, then every world-th
// element from position `rank`. Every rank gets ceil(n / world) examples; world 1 keeps `order`.
std::vector<int64_t> RankShard(const std::vector<int64_t>& order, int rank, int world);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DATA_DATASETS_H_
