// search.method tpe (hpo/samplers/tpe_sampler.h, parzen_estimator.h) against Optuna 3.1's
// TPESampler, number for number on its deterministic parts: Optuna's own internals
// (_get_observation_pairs, _split_observation_pairs, default_gamma, default_weights,
// _ParzenEstimator, _truncnorm) on one study, through tests/hpo/tpe_golden.py. The sampler's
// behaviour is tests/hpo/tpe_sampler_test.cc's.
#include "hpo/samplers/tpe_sampler.h"

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hpo/samplers/parzen_estimator.h"

namespace tunefleet {
namespace hpo {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct GoldenNumerical {
  double low, high;
  std::vector<double> mus, sigmas;
};
struct Golden {
  std::vector<double> weights;
  std::map<std::string, GoldenNumerical> numerical;
  std::map<std::string, std::vector<std::vector<double>>> categorical;
  std::vector<double> log_pdf;  // at kPoints
};

// The golden numbers: the output of `/usr/bin/python3 tests/hpo/tpe_golden.py` (Optuna 3.1.0,
// Debian's python3-optuna), pasted. The study is Study() below, trial for trial.
const std::vector<std::pair<double, double>> kGoldenScores = {
    {-kInf, -0.8}, {-kInf, -0.75}, {-200.0, -0.6}, {-kInf, -0.82}, {-100.0, -0.7}, {-kInf, -0.78},
    {1.0, 0.0},    {-kInf, -0.82}, {-200.0, kInf}, {-kInf, -0.7},  {-kInf, -0.81}};
// _split_observation_pairs(scores, n_below): indices into the scores.
const std::vector<size_t> kGoldenBelow2 = {3, 7}, kGoldenAbove2 = {0, 1, 2, 4, 5, 6, 8, 9, 10};
const std::vector<size_t> kGoldenBelow5 = {0, 3, 5, 7, 10}, kGoldenAbove5 = {1, 2, 4, 6, 8, 9};
const Golden kBelowBatch = {
    {0.16666666666666666, 0.16666666666666666, 0.16666666666666666, 0.16666666666666666,
     0.16666666666666666, 0.16666666666666666},
    {},
    {{"batch_size",
      {{0.09999999999999998, 0.7, 0.09999999999999998, 0.09999999999999998},
       {0.09999999999999998, 0.7, 0.09999999999999998, 0.09999999999999998},
       {0.7, 0.09999999999999998, 0.09999999999999998, 0.09999999999999998},
       {0.09999999999999999, 0.09999999999999999, 0.7000000000000001, 0.09999999999999999},
       {0.09999999999999998, 0.7, 0.09999999999999998, 0.09999999999999998},
       {0.25, 0.25, 0.25, 0.25}}}},
    {-1.4916548767777171, -0.8556661100577202, -1.491654876777717, -2.079441541679836}};
const Golden kBelowLr = {
    {0.16666666666666666, 0.16666666666666666, 0.16666666666666666, 0.16666666666666666,
     0.16666666666666666, 0.16666666666666666},
    {{"lr",
      {-11.512925464970229,
       -4.605170185988091,
       {-8.111728083308073, -7.600902459542082, -8.517193191416236, -7.264430222920869,
        -7.824046010856292, -8.05904782547916},
       {0.9868221827117339, 0.9868221827117339, 0.9868221827117339, 0.9868221827117339,
        0.9868221827117339, 6.907755278982138}}}},
    {},
    {-1.8697138409215213, -0.7561222902649531, -1.8570106441261964, -1.7268789395111475}};
const Golden kBelowEpochs = {
    {0.16666666666666666, 0.16666666666666666, 0.16666666666666666, 0.16666666666666666,
     0.16666666666666666, 0.16666666666666666},
    {{"train.epochs",
      {0.5,
       3.5,
       {2.0, 3.0, 2.0, 3.0, 1.0, 2.0},
       {1.0, 1.0, 0.42857142857142855, 0.42857142857142855, 1.0, 3.0}}}},
    {},
    {-1.473179985699356, -0.9211163148862875, -0.986900722611401, -0.986900722611401}};
const Golden kBelowWd = {
    {0.16666666666666666, 0.16666666666666666, 0.16666666666666666, 0.16666666666666666,
     0.16666666666666666, 0.16666666666666666},
    {{"train.weight_decay",
      {0.0,
       0.1,
       {0.01, 0.02, 0.0, 0.015, 0.025, 0.05},
       {0.014285714285714287, 0.014285714285714287, 0.014285714285714287, 0.014285714285714287,
        0.025, 0.1}}}},
    {},
    {-0.7445747282555313, -1.445918191677582, -1.8700594831981083, -0.6776941185170307}};
const Golden kBelowMultivariate = {
    {0.16666666666666666, 0.16666666666666666, 0.16666666666666666, 0.16666666666666666,
     0.16666666666666666, 0.16666666666666666},
    {{"lr",
      {-11.512925464970229,
       -4.605170185988091,
       {-8.111728083308073, -7.600902459542082, -8.517193191416236, -7.264430222920869,
        -7.824046010856292, -8.05904782547916},
       {1.1297846986784195, 1.1297846986784195, 1.1297846986784195, 1.1297846986784195,
        1.1297846986784195, 6.907755278982138}}},
     {"train.epochs",
      {0.5,
       3.5,
       {2.0, 3.0, 2.0, 3.0, 1.0, 2.0},
       {0.4906592603747656, 0.4906592603747656, 0.4906592603747656, 0.4906592603747656,
        0.4906592603747656, 3.0}}},
     {"train.weight_decay",
      {0.0,
       0.1,
       {0.01, 0.02, 0.0, 0.015, 0.025, 0.05},
       {0.016355308679158853, 0.016355308679158853, 0.016355308679158853, 0.016355308679158853,
        0.016355308679158853, 0.1}}}},
    {{"batch_size",
      {{0.09999999999999998, 0.7, 0.09999999999999998, 0.09999999999999998},
       {0.09999999999999998, 0.7, 0.09999999999999998, 0.09999999999999998},
       {0.7, 0.09999999999999998, 0.09999999999999998, 0.09999999999999998},
       {0.09999999999999999, 0.09999999999999999, 0.7000000000000001, 0.09999999999999999},
       {0.09999999999999998, 0.7, 0.09999999999999998, 0.09999999999999998},
       {0.25, 0.25, 0.25, 0.25}}}},
    {-4.448024239170153, -3.999892430779574, -4.463396709477766, -4.27195806987977}};
const Golden kAboveBatch = {
    {0.14285714285714285, 0.14285714285714285, 0.14285714285714285, 0.14285714285714285,
     0.14285714285714285, 0.14285714285714285, 0.14285714285714285},
    {},
    {{"batch_size",
      {{0.09090909090909093, 0.09090909090909093, 0.7272727272727274, 0.09090909090909093},
       {0.7272727272727274, 0.09090909090909093, 0.09090909090909093, 0.09090909090909093},
       {0.09090909090909091, 0.09090909090909091, 0.09090909090909091, 0.7272727272727273},
       {0.09090909090909093, 0.09090909090909093, 0.7272727272727274, 0.09090909090909093},
       {0.7272727272727274, 0.09090909090909093, 0.09090909090909093, 0.09090909090909093},
       {0.09090909090909091, 0.09090909090909091, 0.09090909090909091, 0.7272727272727273},
       {0.25, 0.25, 0.25, 0.25}}}},
    {-1.2192402764567243, -2.174751721484161, -1.2192402764567243, -1.2192402764567245}};
const Golden kAboveLr = {
    {0.14285714285714285, 0.14285714285714285, 0.14285714285714285, 0.14285714285714285,
     0.14285714285714285, 0.14285714285714285, 0.14285714285714285},
    {{"lr",
      {-11.512925464970229,
       -4.605170185988091,
       {-6.907755278982137, -10.819778284410283, -4.828313737302301, -9.903487552536127,
        -11.512925464970229, -5.809142990314027, -8.05904782547916},
       {1.1512925464970234, 0.916290731874156, 0.9808292530117262, 1.844439727056967,
        0.8634694098727672, 1.09861228866811, 6.907755278982138}}}},
    {},
    {-1.053100583734278, -1.446703905406094, -1.3066861048919578, -1.1781311921863036}};
const Golden kAboveEpochs = {
    {0.14285714285714285, 0.14285714285714285, 0.14285714285714285, 0.14285714285714285,
     0.14285714285714285, 0.14285714285714285, 0.14285714285714285},
    {{"train.epochs",
      {0.5, 3.5, {1.0, 3.0, 2.0, 1.0, 1.0, 2.0, 2.0}, {0.375, 1.0, 1.0, 0.375, 1.0, 0.375, 3.0}}}},
    {},
    {-0.8004570248156275, -1.0250428203307673, -1.6497639804707103, -1.6497639804707103}};
const Golden kAboveWd = {
    {0.14285714285714285, 0.14285714285714285, 0.14285714285714285, 0.14285714285714285,
     0.14285714285714285, 0.14285714285714285, 0.14285714285714285},
    {{"train.weight_decay",
      {0.0,
       0.1,
       {0.05, 0.09, 0.07, 0.1, 0.06, 0.08, 0.05},
       {0.0125, 0.0125, 0.0125, 0.0125, 0.0125, 0.0125, 0.1}}}},
    {},
    {-2.0297824098583934, -1.320233454354406, -1.145116625963603, -1.925218932527517}};
const Golden kAboveMultivariate = {
    {0.14285714285714285, 0.14285714285714285, 0.14285714285714285, 0.14285714285714285,
     0.14285714285714285, 0.14285714285714285, 0.14285714285714285},
    {{"lr",
      {-11.512925464970229,
       -4.605170185988091,
       {-6.907755278982137, -10.819778284410283, -4.828313737302301, -9.903487552536127,
        -11.512925464970229, -5.809142990314027, -8.05904782547916},
       {1.1043278704073105, 1.1043278704073105, 1.1043278704073105, 1.1043278704073105,
        1.1043278704073105, 1.1043278704073105, 6.907755278982138}}},
     {"train.epochs",
      {0.5,
       3.5,
       {1.0, 3.0, 2.0, 1.0, 1.0, 2.0, 2.0},
       {0.47960350032986426, 0.47960350032986426, 0.47960350032986426, 0.47960350032986426,
        0.47960350032986426, 0.47960350032986426, 3.0}}},
     {"train.weight_decay",
      {0.0,
       0.1,
       {0.05, 0.09, 0.07, 0.1, 0.06, 0.08, 0.05},
       {0.01598678334432881, 0.01598678334432881, 0.01598678334432881, 0.01598678334432881,
        0.01598678334432881, 0.01598678334432881, 0.1}}}},
    {{"batch_size",
      {{0.09090909090909093, 0.09090909090909093, 0.7272727272727274, 0.09090909090909093},
       {0.7272727272727274, 0.09090909090909093, 0.09090909090909093, 0.09090909090909093},
       {0.09090909090909091, 0.09090909090909091, 0.09090909090909091, 0.7272727272727273},
       {0.09090909090909093, 0.09090909090909093, 0.7272727272727274, 0.09090909090909093},
       {0.7272727272727274, 0.09090909090909093, 0.09090909090909093, 0.09090909090909093},
       {0.09090909090909091, 0.09090909090909091, 0.09090909090909091, 0.7272727272727273},
       {0.25, 0.25, 0.25, 0.25}}}},
    {-4.615120449887173, -4.293219829968677, -4.59832716122194, -4.489513181019129}};
const Golden kBelowLrEndpoints = {
    {0.16666666666666666, 0.16666666666666666, 0.16666666666666666, 0.16666666666666666,
     0.16666666666666666, 0.16666666666666666},
    {{"lr",
      {-11.512925464970229,
       -4.605170185988091,
       {-8.111728083308073, -7.600902459542082, -8.517193191416236, -7.264430222920869,
        -7.824046010856292, -8.05904782547916},
       {0.9868221827117339, 0.9868221827117339, 2.995732273553992, 2.6592600369327783,
        0.9868221827117339, 6.907755278982138}}}},
    {},
    {-1.4645098653586328, -0.6331936098581752, -1.4120097738858541, -1.2631763078456688}};
const Golden kBelowWdNoPrior = {
    {0.2, 0.2, 0.2, 0.2, 0.2},
    {{"train.weight_decay",
      {0.0,
       0.1,
       {0.01, 0.02, 0.0, 0.015, 0.025},
       {0.016666666666666666, 0.016666666666666666, 0.016666666666666666, 0.016666666666666666,
        0.016666666666666666}}}},
    {},
    {-0.9460451979671167, -2.7437822234611895, -12.290663715475201, -0.8326613277614672}};
const Golden kBelowWdNoMagicClip = {
    {0.16666666666666666, 0.16666666666666666, 0.16666666666666666, 0.16666666666666666,
     0.16666666666666666, 0.16666666666666666},
    {{"train.weight_decay",
      {0.0,
       0.1,
       {0.01, 0.02, 0.0, 0.015, 0.025, 0.05},
       {0.01, 0.005000000000000001, 0.01, 0.005000000000000001, 0.025, 0.1}}}},
    {},
    {-0.9599251829626861, -1.5065405451840164, -1.8700595677067022, -0.8761288062804946}};
const Golden kBelowWdPriorWeight2 = {
    {0.14285714285714285, 0.14285714285714285, 0.14285714285714285, 0.14285714285714285,
     0.14285714285714285, 0.2857142857142857},
    {{"train.weight_decay",
      {0.0,
       0.1,
       {0.01, 0.02, 0.0, 0.015, 0.025, 0.05},
       {0.014285714285714287, 0.014285714285714287, 0.014285714285714287, 0.014285714285714287,
        0.025, 0.1}}}},
    {},
    {-0.6190929396659366, -1.0477804256575614, -1.3339199823145862, -0.5489960987903693}};
const Golden kBelowBatchNoPrior = {
    {0.2, 0.2, 0.2, 0.2, 0.2},
    {},
    {{"batch_size",
      {{0.11111111111111113, 0.6666666666666667, 0.11111111111111113, 0.11111111111111113},
       {0.11111111111111113, 0.6666666666666667, 0.11111111111111113, 0.11111111111111113},
       {0.6666666666666667, 0.11111111111111113, 0.11111111111111113, 0.11111111111111113},
       {0.11111111111111112, 0.11111111111111112, 0.6666666666666666, 0.11111111111111112},
       {0.11111111111111113, 0.6666666666666667, 0.11111111111111113, 0.11111111111111113}}}},
    {-1.5040773967762737, -0.8109302162163285, -1.504077396776274, -2.197224577336219}};
const Golden kThirtyWd = {
    {0.0011661807580174927, 0.009620991253644314, 0.018075801749271137, 0.026530612244897955,
     0.034985422740524776,  0.034985422740524776, 0.034985422740524776, 0.034985422740524776,
     0.034985422740524776,  0.034985422740524776, 0.034985422740524776, 0.034985422740524776,
     0.034985422740524776,  0.034985422740524776, 0.034985422740524776, 0.034985422740524776,
     0.034985422740524776,  0.034985422740524776, 0.034985422740524776, 0.034985422740524776,
     0.034985422740524776,  0.034985422740524776, 0.034985422740524776, 0.034985422740524776,
     0.034985422740524776,  0.034985422740524776, 0.034985422740524776, 0.034985422740524776,
     0.034985422740524776,  0.034985422740524776, 0.034985422740524776},
    {{"train.weight_decay", {0.0, 0.1, {}, {}}}},
    {},
    {-3.095527741262816, -2.6979620061243326, -3.1163046236085616, -2.753675109098658}};
// ppf(0.3, -1.0, 2.0) = -0.24240381788922666
// ppf(0.9, 0.5, 3.0) = 1.8512240709778358
// ppf(0.01, -30.0, -25.0) = -25.183244039412372
// ppf(0.5, 7.0, 9.0) = 7.096472643454135
// log_gauss_mass(-1.0, 2.0) = -0.20016629432446262
// log_gauss_mass(0.5, 3.0) = -1.1802965106326773
// log_gauss_mass(-30.0, -25.0) = -316.6394080080202
// log_gauss_mass(-3.0, -2.5) = -5.326764724079062

// The points log_pdf is evaluated at (external form; batch by choice index, as Optuna's
// internal form); a one-parameter estimator reads its own column.
const Observations kPoints = {{"batch_size", {0, 1, 2, 3}},
                              {"lr", {1e-5, 3e-4, 1e-2, 5e-3}},
                              {"train.epochs", {1, 2, 3, 3}},
                              {"train.weight_decay", {0.0, 0.05, 0.1, 0.02}}};

SearchSpace Space() {
  SearchSpace s;
  Distribution& batch = s["batch_size"];
  batch.kind = Distribution::Kind::kCategorical;
  batch.choices = {16, 32, 64, 128};
  batch.integer_choices = true;
  Distribution& lr = s["lr"];
  lr.low = 1e-5;
  lr.high = 1e-2;
  lr.log = true;
  Distribution& epochs = s["train.epochs"];
  epochs.kind = Distribution::Kind::kInt;
  epochs.low = 1;
  epochs.high = 3;
  Distribution& wd = s["train.weight_decay"];
  wd.low = 0.0;
  wd.high = 0.1;
  return s;
}

// tpe_golden.py's TRIALS: state, value, intermediate values, lr, batch, epochs, weight decay.
Study GoldenStudy() {
  using S = TrialState;
  struct Row {
    S state;
    std::optional<double> value;
    std::map<int64_t, double> iv;
    double lr, batch, epochs, wd;
  };
  const std::vector<Row> rows = {
      {S::kComplete, 0.80, {}, 3e-4, 32, 2, 0.01},
      {S::kComplete, 0.75, {}, 1e-3, 64, 1, 0.05},
      {S::kPruned, std::nullopt, {{100, 0.5}, {200, 0.6}}, 2e-5, 16, 3, 0.09},
      {S::kComplete, 0.82, {}, 5e-4, 32, 3, 0.02},
      {S::kFail, std::nullopt, {}, 1e-4, 128, 1, 0.03},
      {S::kPruned, std::nullopt, {{100, 0.7}}, 8e-3, 128, 2, 0.07},
      {S::kComplete, 0.78, {}, 2e-4, 16, 2, 0.0},
      {S::kPruned, std::nullopt, {}, 5e-5, 64, 1, 0.1},
      {S::kRunning, std::nullopt, {}, 6e-4, 32, 2, 0.04},
      {S::kComplete, 0.82, {}, 7e-4, 64, 3, 0.015},
      {S::kPruned, std::nullopt, {{100, 0.4}, {200, kNaN}}, 1e-5, 16, 1, 0.06},
      {S::kComplete, 0.70, {}, 3e-3, 128, 2, 0.08},
      {S::kComplete, 0.81, {}, 4e-4, 32, 1, 0.025},
  };
  Study study;
  study.maximize = true;
  for (const Row& r : rows) {
    Trial t;
    t.number = static_cast<int64_t>(study.trials.size());
    t.point = t.number;
    t.state = r.state;
    t.value = r.value;
    t.intermediate_values = r.iv;
    t.params = {{"lr", r.lr},
                {"batch_size", r.batch},
                {"train.epochs", r.epochs},
                {"train.weight_decay", r.wd}};
    study.trials.push_back(t);
  }
  return study;
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want,
                const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-9 * std::max(1.0, std::fabs(want[i])))
        << what << "[" << i << "]";
  }
}

// The observations of `indices` (of the golden study's observations), for `names`.
Observations Columns(const std::vector<size_t>& indices, const std::vector<std::string>& names) {
  const ObservationPairs pairs = GetObservationPairs(GoldenStudy(), Space());
  Observations out;
  for (const std::string& name : names) {
    std::vector<double>& column = out[name];
    for (size_t i : indices) column.push_back(pairs.values.at(name)[i]);
  }
  return out;
}

void ExpectMatches(const ParzenEstimator& pe, const Golden& golden, const std::string& what) {
  SCOPED_TRACE(what);
  ExpectNear(pe.weights(), golden.weights, "weights");
  ASSERT_EQ(pe.numerical().size(), golden.numerical.size());
  for (const auto& [name, want] : golden.numerical) {
    const ParzenEstimator::Numerical& got = pe.numerical().at(name);
    EXPECT_NEAR(got.low, want.low, 1e-12) << name;
    EXPECT_NEAR(got.high, want.high, 1e-12) << name;
    if (want.mus.empty()) continue;  // not pasted (kThirtyWd)
    ExpectNear(got.mus, want.mus, name + " mus");
    ExpectNear(got.sigmas, want.sigmas, name + " sigmas");
  }
  ASSERT_EQ(pe.categorical().size(), golden.categorical.size());
  for (const auto& [name, want] : golden.categorical) {
    const auto& got = pe.categorical().at(name);
    ASSERT_EQ(got.size(), want.size()) << name;
    for (size_t j = 0; j < want.size(); ++j) ExpectNear(got[j], want[j], name + " row");
  }
  Observations points;
  for (const auto& [name, column] : kPoints) {
    if (golden.numerical.count(name) + golden.categorical.count(name) > 0) points[name] = column;
  }
  ExpectNear(pe.LogPdf(points), golden.log_pdf, "log_pdf");
}

SearchSpace Only(const std::vector<std::string>& names) {
  SearchSpace all = Space(), out;
  for (const std::string& name : names) out[name] = all.at(name);
  return out;
}

TEST(TpeGoldenTest, ObservationsAreScoredAndSplitAsOptunaDoes) {
  const ObservationPairs pairs = GetObservationPairs(GoldenStudy(), Space());
  EXPECT_EQ(pairs.scores, kGoldenScores);  // the FAIL and RUNNING trials are left out
  ASSERT_EQ(pairs.values.at("batch_size").size(), 11u);
  EXPECT_EQ(pairs.values.at("batch_size")[3], 1);  // trial 3's batch 32: choice 1
  EXPECT_EQ(TpeBelowCount(0.1, 11), 2);            // default_gamma(11)
  EXPECT_EQ(TpeBelowCount(0.1, 30), 3);
  EXPECT_EQ(TpeBelowCount(0.1, 1000), 25);
  std::vector<size_t> below, above;
  SplitObservationPairs(pairs.scores, 2, &below, &above);
  EXPECT_EQ(below, kGoldenBelow2);
  EXPECT_EQ(above, kGoldenAbove2);
  SplitObservationPairs(pairs.scores, 5, &below, &above);
  EXPECT_EQ(below, kGoldenBelow5);
  EXPECT_EQ(above, kGoldenAbove5);
}

TEST(TpeGoldenTest, DefaultWeightsRampFromTheTwentySixthOldest) {
  // default_weights(30): np.linspace(1 / 30, 1, 5), then 25 ones.
  std::vector<double> thirty = {0.03333333333333333, 0.275, 0.5166666666666667, 0.7583333333333333};
  thirty.resize(30, 1.0);
  ExpectNear(DefaultWeights(30), thirty, "default_weights(30)");
  EXPECT_EQ(DefaultWeights(24), std::vector<double>(24, 1.0));
  EXPECT_EQ(DefaultWeights(25), std::vector<double>(25, 1.0));
  EXPECT_TRUE(DefaultWeights(0).empty());
}

TEST(TpeGoldenTest, IndependentEstimatorsMatchOptuna) {
  const ParzenSettings defaults;
  const std::vector<std::pair<std::string, std::pair<const Golden*, const Golden*>>> cases = {
      {"batch_size", {&kBelowBatch, &kAboveBatch}},
      {"lr", {&kBelowLr, &kAboveLr}},
      {"train.epochs", {&kBelowEpochs, &kAboveEpochs}},
      {"train.weight_decay", {&kBelowWd, &kAboveWd}}};
  for (const auto& [name, golden] : cases) {
    ExpectMatches(ParzenEstimator(Columns(kGoldenBelow5, {name}), Only({name}), defaults),
                  *golden.first, "below " + name);
    ExpectMatches(ParzenEstimator(Columns(kGoldenAbove5, {name}), Only({name}), defaults),
                  *golden.second, "above " + name);
  }
}

TEST(TpeGoldenTest, MultivariateEstimatorsMatchOptuna) {
  ParzenSettings s;
  s.multivariate = true;
  const std::vector<std::string> all = {"batch_size", "lr", "train.epochs", "train.weight_decay"};
  ExpectMatches(ParzenEstimator(Columns(kGoldenBelow5, all), Space(), s), kBelowMultivariate,
                "below");
  ExpectMatches(ParzenEstimator(Columns(kGoldenAbove5, all), Space(), s), kAboveMultivariate,
                "above");
}

TEST(TpeGoldenTest, SettingsChangeTheEstimatorAsInOptuna) {
  ParzenSettings endpoints, no_prior, no_clip, prior2;
  endpoints.consider_endpoints = true;
  no_prior.consider_prior = false;
  no_clip.consider_magic_clip = false;
  prior2.prior_weight = 2.0;
  ExpectMatches(ParzenEstimator(Columns(kGoldenBelow5, {"lr"}), Only({"lr"}), endpoints),
                kBelowLrEndpoints, "endpoints");
  const std::vector<std::string> wd = {"train.weight_decay"};
  ExpectMatches(ParzenEstimator(Columns(kGoldenBelow5, wd), Only(wd), no_prior), kBelowWdNoPrior,
                "no prior");
  ExpectMatches(ParzenEstimator(Columns(kGoldenBelow5, wd), Only(wd), no_clip), kBelowWdNoMagicClip,
                "no magic clip");
  ExpectMatches(ParzenEstimator(Columns(kGoldenBelow5, wd), Only(wd), prior2), kBelowWdPriorWeight2,
                "prior weight 2");
  ExpectMatches(
      ParzenEstimator(Columns(kGoldenBelow5, {"batch_size"}), Only({"batch_size"}), no_prior),
      kBelowBatchNoPrior, "categorical, no prior");
  Observations thirty;
  for (int i = 0; i < 30; ++i) thirty["train.weight_decay"].push_back(((i * 37) % 30) / 300.0);
  ExpectMatches(ParzenEstimator(thirty, Only(wd), ParzenSettings()), kThirtyWd, "30 observations");
}

TEST(TpeGoldenTest, TruncatedNormalMatchesOptuna) {
  EXPECT_NEAR(TruncnormPpf(0.3, -1.0, 2.0), -0.24240381788922666, 1e-9);
  EXPECT_NEAR(TruncnormPpf(0.9, 0.5, 3.0), 1.8512240709778358, 1e-9);
  EXPECT_NEAR(TruncnormPpf(0.01, -30.0, -25.0), -25.183244039412372, 1e-9);
  EXPECT_NEAR(TruncnormPpf(0.5, 7.0, 9.0), 7.096472643454135, 1e-9);
  EXPECT_NEAR(LogGaussMass(-1.0, 2.0), -0.20016629432446262, 1e-12);
  EXPECT_NEAR(LogGaussMass(0.5, 3.0), -1.1802965106326773, 1e-12);
  EXPECT_NEAR(LogGaussMass(-30.0, -25.0), -316.6394080080202, 1e-9);
  EXPECT_NEAR(LogGaussMass(-3.0, -2.5), -5.326764724079062, 1e-12);
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
