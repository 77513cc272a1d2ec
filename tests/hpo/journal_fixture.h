// What the journal tests share (tests/hpo/journal_*_test.cc): a fresh folder per test, raw
// file access, a small search space, and a study with every trial state written through
// JournalWriter.
#ifndef TUNEFLEET_TESTS_HPO_JOURNAL_FIXTURE_H_
#define TUNEFLEET_TESTS_HPO_JOURNAL_FIXTURE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hpo/journal/journal_writer.h"
#include "hpo/search_space.h"
#include "hpo/trial.h"
#include "tests/hpo/hpo_test_util.h"  // kNaN, kInf

namespace tunefleet {
namespace hpo {

// $TEST_TMPDIR/journal_test_NAME (or /tmp/...), removed if it exists; not created.
std::string TestDir(const std::string& name);
// TestDir(name), created, + "/journal.log" (no file yet).
std::string NewJournalPath(const std::string& name);
// The file's bytes ("" when it cannot be read).
std::string FileText(const std::string& path);
// Appends `text` as it is (torn lines, foreign operations).
void AppendRaw(const std::string& path, const std::string& text);
std::vector<std::string> Lines(const std::string& text);

// lr: log float [1e-5, 1e-3]; batch_size: integer choices 16, 32, 64.
SearchSpace Space();
// A RUNNING trial with those params, lr_effective = lr * batch / 32, and a fixed
// datetime_start per number.
Trial MakeTrial(int64_t number, double lr, double batch, const std::string& phase, int64_t point);
// Every field ReadJournal gives back, NaN equal to NaN.
void ExpectSameTrial(const Trial& want, const Trial& got);

// A study with every state, retries, non-finite intermediate values; returns the trials as
// written (finished ones with their final state).
std::vector<Trial> WriteStudy(JournalWriter* w, const SearchSpace& space);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_TESTS_HPO_JOURNAL_FIXTURE_H_
