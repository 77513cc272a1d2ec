#include "trainer/tasks/hard_negatives.h"

#include <algorithm>
#include <limits>
#include <random>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

torch::Tensor Normalized(const torch::Tensor& x) {
  return x.to(torch::kFloat) / x.to(torch::kFloat).norm(2, 1, true).clamp_min(1e-12);
}

MinedValue Text(std::string s) {
  MinedValue v;
  v.text = std::move(s);
  return v;
}

MinedValue Label(int label) {
  MinedValue v;
  v.kind = MinedValue::Kind::kLabel;
  v.label = label;
  return v;
}

// The smallest positive score of each query, as the function computes it: its running offset
// steps by the previous query's count (the last query's for the first).
absl::StatusOr<torch::Tensor> SmallestPositiveScores(const torch::Tensor& positive_scores,
                                                     const std::vector<int64_t>& n_positives) {
  const int64_t q = static_cast<int64_t>(n_positives.size()), total = positive_scores.size(0);
  torch::Tensor out = torch::empty({q}, positive_scores.options());
  int64_t start = 0;
  for (int64_t i = 0; i < q; ++i) {
    const int64_t begin = std::min(start, total), end = std::min(start + n_positives[i], total);
    if (end <= begin) {
      return absl::InvalidArgumentError(
          "the margins need each query's positive scores, and the anchors' uneven counts of "
          "positives leave one without (as in mine_hard_negatives)");
    }
    out[i] = positive_scores.slice(0, begin, end).min();
    start += n_positives[(i - 1 + q) % q];
  }
  return out;
}

// Each query's k best corpus entries by cosine (best first), the [Q, C] scores computed in
// blocks of queries of about 32 M entries, so that only [Q, k] is ever kept whole.
void TopCandidates(const torch::Tensor& queries, const torch::Tensor& corpus, int64_t k,
                   torch::Tensor* scores, torch::Tensor* indices) {
  const int64_t block =
      std::max<int64_t>(1, (int64_t{1} << 25) / std::max<int64_t>(corpus.size(0), 1));
  std::vector<torch::Tensor> s, i;
  for (int64_t begin = 0; begin < queries.size(0); begin += block) {
    auto [top, at] = torch::mm(queries.slice(0, begin, begin + block), corpus.t()).topk(k, 1);
    s.push_back(top);
    i.push_back(at);
  }
  *scores = torch::cat(s);
  *indices = torch::cat(i);
}

// Drops (sets to -inf) the candidates the options rule out.
absl::Status Filter(const MiningOptions& o, const torch::Tensor& positive_scores,
                    const std::vector<int64_t>& n_positives, torch::Tensor& scores) {
  if (o.absolute_margin || o.relative_margin) {
    absl::StatusOr<torch::Tensor> smallest = SmallestPositiveScores(positive_scores, n_positives);
    if (!smallest.ok()) return smallest.status();
    const torch::Tensor bound = smallest->unsqueeze(1).to(scores.dtype());
    if (o.absolute_margin) scores.masked_fill_(scores + *o.absolute_margin > bound, -kInf);
    if (o.relative_margin) scores.masked_fill_(scores > bound * (1 - *o.relative_margin), -kInf);
  }
  if (o.max_score) scores.masked_fill_(scores > *o.max_score, -kInf);
  if (o.min_score) scores.masked_fill_(scores < *o.min_score, -kInf);
  return absl::OkStatus();
}

// `num_negatives` of each row's usable candidates, drawn at random, best first.
void SampleRandom(const MiningOptions& o, torch::Tensor& indices, torch::Tensor& scores) {
  std::mt19937_64 rng(o.seed);
  const int64_t rows = indices.size(0), cols = indices.size(1);
  std::vector<int64_t> picked;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t options =
        std::max<int64_t>(cols - scores[r].isinf().sum().item<int64_t>(), o.num_negatives);
    std::vector<int64_t> pool(options);
    for (int64_t i = 0; i < options; ++i) pool[i] = i;
    std::shuffle(pool.begin(), pool.end(), rng);
    for (int64_t i = 0; i < o.num_negatives; ++i) picked.push_back(std::min(pool[i], cols - 1));
  }
  const torch::Tensor at = torch::tensor(picked, torch::kLong).view({rows, o.num_negatives});
  indices = indices.gather(1, at);
  scores = scores.gather(1, at);
  auto [sorted, order] = scores.sort(/*dim=*/1, /*descending=*/true);
  scores = sorted;
  indices = indices.gather(1, order);
}

MinedRows Rows(const MiningPlan& plan, const MiningOptions& o, const torch::Tensor& indices,
               const torch::Tensor& scores, const std::string& anchor_column,
               const std::string& positive_column) {
  // Expanded rows: one per (query, positive), grouped by query.
  std::vector<int64_t> row_query, row_positive;
  for (size_t q = 0; q < plan.queries.size(); ++q) {
    for (int64_t p : plan.positives[q]) {
      row_query.push_back(static_cast<int64_t>(q));
      row_positive.push_back(p);
    }
  }
  const int64_t n = indices.size(1);
  // Read once through accessors (indices int64, scores float32, both [Q, n] on the CPU).
  const torch::Tensor ids = indices.to(torch::kCPU, torch::kLong).contiguous();
  const torch::Tensor values = scores.to(torch::kCPU, torch::kFloat).contiguous();
  const auto id_at = ids.accessor<int64_t, 2>();
  const auto value_at = values.accessor<float, 2>();
  auto idx = [&](int64_t r, int64_t j) { return id_at[row_query[r]][j]; };
  auto usable = [&](int64_t r, int64_t j) { return !std::isinf(value_at[row_query[r]][j]); };
  MinedRows out;
  const std::string& fmt = o.output_format;
  if (fmt == "triplet") {
    out.columns = {anchor_column, positive_column, "negative"};
    for (size_t r = 0; r < row_query.size(); ++r) {
      for (int64_t j = 0; j < n; ++j) {
        if (!usable(r, j)) continue;
        out.rows.push_back({Text(plan.queries[row_query[r]]), Text(plan.corpus[row_positive[r]]),
                            Text(plan.corpus[idx(r, j)])});
      }
    }
  } else if (fmt == "labeled-pair") {
    out.columns = {anchor_column, positive_column, "label"};
    for (size_t q = 0; q < plan.queries.size(); ++q) {
      for (int64_t p : plan.positives[q]) {
        out.rows.push_back({Text(plan.queries[q]), Text(plan.corpus[p]), Label(1)});
      }
      // The function reads the negatives of expanded row q (not of query q's first row).
      if (q >= row_query.size()) continue;
      for (int64_t j = 0; j < n; ++j) {
        if (!usable(q, j)) continue;
        out.rows.push_back({Text(plan.queries[q]), Text(plan.corpus[idx(q, j)]), Label(0)});
      }
    }
  } else if (fmt == "n-tuple") {
    out.columns = {anchor_column, positive_column};
    for (int64_t j = 1; j <= n; ++j) out.columns.push_back(absl::StrCat("negative_", j));
    for (size_t r = 0; r < row_query.size(); ++r) {
      bool all = true;
      for (int64_t j = 0; j < n; ++j) all = all && usable(r, j);
      if (!all) continue;
      std::vector<MinedValue> row = {Text(plan.queries[row_query[r]]),
                                     Text(plan.corpus[row_positive[r]])};
      for (int64_t j = 0; j < n; ++j) row.push_back(Text(plan.corpus[idx(r, j)]));
      out.rows.push_back(std::move(row));
    }
  } else {  // labeled-list
    out.columns = {anchor_column, positive_column, "labels"};
    for (size_t r = 0; r < row_query.size(); ++r) {
      MinedValue texts, labels;
      texts.kind = MinedValue::Kind::kTexts;
      labels.kind = MinedValue::Kind::kLabels;
      texts.texts.push_back(plan.corpus[row_positive[r]]);
      labels.labels.push_back(1);
      for (int64_t j = 0; j < n; ++j) {
        if (!usable(r, j)) continue;
        texts.texts.push_back(plan.corpus[idx(r, j)]);
        labels.labels.push_back(0);
      }
      if (labels.labels.size() == 1) continue;
      out.rows.push_back({Text(plan.queries[row_query[r]]), std::move(texts), std::move(labels)});
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<MiningPlan> PlanMining(const std::vector<std::string>& anchors,
                                      const std::vector<std::string>& positives,
                                      const std::vector<std::string>& corpus,
                                      const MiningOptions& o) {
  if (anchors.empty() || anchors.size() != positives.size()) {
    return absl::InvalidArgumentError("no (anchor, positive) rows to mine for");
  }
  MiningPlan plan;
  std::unordered_map<std::string, int64_t> query_index, corpus_index, rows_of;
  for (const std::string& a : anchors) {
    plan.max_positives = std::max(plan.max_positives, ++rows_of[a]);
    if (query_index.emplace(a, plan.queries.size()).second) plan.queries.push_back(a);
  }
  auto add = [&](const std::string& text) {
    if (corpus_index.emplace(text, plan.corpus.size()).second) plan.corpus.push_back(text);
  };
  for (const std::string& t : corpus.empty() ? positives : corpus) add(t);
  for (const std::string& t : positives) add(t);
  plan.positives.resize(plan.queries.size());
  for (size_t i = 0; i < anchors.size(); ++i) {
    plan.positives[query_index[anchors[i]]].push_back(corpus_index[positives[i]]);
  }
  const bool filtered = o.absolute_margin || o.relative_margin || o.max_score;
  plan.range_max = o.range_max >= 0
                       ? o.range_max
                       : o.range_min + o.num_negatives * (filtered ? 10 : 1) + plan.max_positives;
  const int64_t k = plan.range_max + plan.max_positives;
  if (k > static_cast<int64_t>(plan.corpus.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the corpus has ", plan.corpus.size(), " distinct texts, fewer than the ", k,
        " candidates a query takes (range_max ", plan.range_max, " + ", plan.max_positives,
        " positives): lower --range_max or --num_negatives, or give a --corpus"));
  }
  return plan;
}

absl::StatusOr<MinedRows> MineHardNegatives(const MiningPlan& plan, const MiningOptions& o,
                                            const torch::Tensor& query_embeddings,
                                            const torch::Tensor& corpus_embeddings,
                                            const PairScorer& rescore,
                                            const std::string& anchor_column,
                                            const std::string& positive_column) {
  const torch::Tensor queries = Normalized(query_embeddings),
                      corpus = Normalized(corpus_embeddings);
  torch::Tensor scores, indices;
  TopCandidates(queries, corpus, plan.range_max + plan.max_positives, &scores, &indices);
  std::vector<int64_t> n_positives, row_query, row_positive;
  for (size_t q = 0; q < plan.queries.size(); ++q) {
    n_positives.push_back(static_cast<int64_t>(plan.positives[q].size()));
    for (int64_t p : plan.positives[q]) {
      row_query.push_back(static_cast<int64_t>(q));
      row_positive.push_back(p);
    }
  }
  torch::Tensor positive_scores =
      (queries.index_select(0, torch::tensor(row_query, torch::kLong)) *
       corpus.index_select(0, torch::tensor(row_positive, torch::kLong)))
          .sum(1);
  if (rescore && (o.absolute_margin || o.relative_margin || o.max_score)) {
    if (plan.max_positives != 1) {
      return absl::InvalidArgumentError(
          "rescoring with a cross-encoder takes one positive an anchor (as mine_hard_negatives)");
    }
    for (int64_t q = 0; q < scores.size(0); ++q) {
      std::vector<std::pair<std::string, std::string>> pairs;
      for (int64_t j = 0; j <= plan.range_max; ++j) {
        pairs.emplace_back(plan.queries[q], plan.corpus[indices[q][j].item<int64_t>()]);
      }
      absl::StatusOr<torch::Tensor> s = rescore(pairs);
      if (!s.ok()) return s.status();
      scores[q].copy_(*s);
    }
    std::vector<std::pair<std::string, std::string>> pairs;
    for (size_t r = 0; r < row_query.size(); ++r) {
      pairs.emplace_back(plan.queries[row_query[r]], plan.corpus[row_positive[r]]);
    }
    absl::StatusOr<torch::Tensor> s = rescore(pairs);
    if (!s.ok()) return s.status();
    positive_scores = s->to(torch::kFloat);
  }
  for (int64_t q = 0; q < scores.size(0); ++q) {  // a query's positives are not its negatives
    const torch::Tensor own = torch::tensor(plan.positives[q], torch::kLong);
    scores[q].masked_fill_(torch::isin(indices[q], own), -kInf);
  }
  if (absl::Status s = Filter(o, positive_scores, n_positives, scores); !s.ok()) return s;
  auto [negative_scores, local] = scores.topk(plan.range_max, /*dim=*/1);
  torch::Tensor negatives = indices.gather(1, local);
  if (o.range_min > 0) {
    negatives = negatives.slice(1, o.range_min);
    negative_scores = negative_scores.slice(1, o.range_min);
  }
  if (o.sampling_strategy == "random") {
    SampleRandom(o, negatives, negative_scores);
  } else {
    negatives = negatives.slice(1, 0, o.num_negatives);
    negative_scores = negative_scores.slice(1, 0, o.num_negatives);
  }
  return Rows(plan, o, negatives.contiguous(), negative_scores.contiguous(), anchor_column,
              positive_column);
}

}  // namespace trainer
}  // namespace tunefleet
