// One example of a sentence-pair (or anchor, positive, negatives...) dataset, as every reader
// (trainer/data/datasets.h, trainer/data/column_reader.h) fills it in.
#ifndef TUNEFLEET_TRAINER_DATA_EXAMPLE_H_
#define TUNEFLEET_TRAINER_DATA_EXAMPLE_H_

#include <cmath>
#include <string>
#include <vector>

namespace tunefleet {
namespace trainer {

inline constexpr int kNoLabel = -1;

struct Example {
  std::string a;  // the first text (sentence1, the anchor)
  std::string b;  // the second (sentence2, the positive)
  double score = std::nan("");
  int label = kNoLabel;
  // The texts after the second, in column order: the hard negatives of an (anchor, positive,
  // negative...) row. Empty for a pair.
  std::vector<std::string> negatives;
  // A JSONL list column (the second text column: a query's documents, as
  // `trainer mine --output_format labeled-list` writes them); then b is empty.
  std::vector<std::string> docs;
  // A JSONL label column holding a list of numbers: a teacher's embedding (MSELoss), each
  // document's relevance (LambdaLoss, ListNetLoss), or margins per negative (MarginMSELoss).
  std::vector<double> values;

  bool HasScore() const { return !std::isnan(score); }
  bool HasLabel() const { return label != kNoLabel; }
  // The number of texts: 2 + the negatives (1 for a row with only a; 1 + docs for a list).
  size_t texts() const {
    if (!docs.empty()) return 1 + docs.size();
    return (b.empty() ? 1 : 2) + negatives.size();
  }
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DATA_EXAMPLE_H_
