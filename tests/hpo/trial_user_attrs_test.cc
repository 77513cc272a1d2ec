// The table of trial user attrs (hpo/journal/trial_user_attrs.h): every row reads back what it
// writes, in the journal's JSON (Optuna's); a value of another type is refused naming the attr;
// the names and the bytes are those the journal has always held (journal_optuna_test checks
// Optuna reads them).
#include "hpo/journal/trial_user_attrs.h"

#include <set>
#include <string>

#include "common/py_json.h"
#include "gtest/gtest.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {
namespace {

// A trial that holds every user attr, each with a value of its own.
Trial Full() {
  Trial t;
  t.lr_effective = 3e-5;
  t.phase = "grid";
  t.point = 7;
  t.fail_reason = "exit code 1";
  t.stderr_tail = "Traceback\n  \"x\"";
  t.placement = "local:0-3";
  t.worker = "local/slot-0/w-42#3";
  t.ranks_started = "2026-12-07T12:00:00.000001";
  t.requeued_alone = true;
  t.gpu_util_mean = 87.5;
  t.gpu_mem_peak_mib = 12345.0;
  t.gpu_energy_j = 4500.25;
  return t;
}

TEST(TrialUserAttrsTest, EveryRowReadsBackWhatItWrites) {
  const Trial full = Full();
  Trial read;
  std::set<std::string> names;
  for (const TrialUserAttr& attr : TrialUserAttrs()) {
    EXPECT_TRUE(names.insert(attr.name).second) << attr.name << " twice";
    ASSERT_TRUE(HasUserAttr(attr, full)) << attr.name;
    absl::StatusOr<PyJson> json = ParsePyJson(UserAttrValue(attr, full));
    ASSERT_TRUE(json.ok()) << attr.name << ": " << json.status();
    ASSERT_TRUE(ReadUserAttr(attr, *json, &read).ok()) << attr.name;
    EXPECT_EQ(UserAttrValue(attr, read), UserAttrValue(attr, full)) << attr.name;
    EXPECT_EQ(FindTrialUserAttr(attr.name), &attr);
    EXPECT_EQ(&UserAttrOf(attr.member), &attr);
  }
  EXPECT_EQ(FindTrialUserAttr("something_else"), nullptr);
}

TEST(TrialUserAttrsTest, TheJournalsBytes) {
  const Trial t = Full();
  const auto value = [&](UserAttrMember m) { return UserAttrValue(UserAttrOf(m), t); };
  EXPECT_EQ(UserAttrOf(&Trial::lr_effective).name, std::string("lr_effective"));
  EXPECT_EQ(value(&Trial::lr_effective), "3e-05");  // Python's repr
  EXPECT_EQ(value(&Trial::point), "7");
  EXPECT_EQ(value(&Trial::phase), "\"grid\"");
  EXPECT_EQ(value(&Trial::stderr_tail), "\"Traceback\\n  \\\"x\\\"\"");
  EXPECT_EQ(value(&Trial::requeued_alone), "true");
  EXPECT_EQ(value(&Trial::gpu_util_mean), "87.5");
  EXPECT_EQ(value(&Trial::gpu_mem_peak_mib), "12345.0");
}

TEST(TrialUserAttrsTest, WhatATrialHoldsByDefault) {
  const Trial t;  // a new trial: the attrs written at creation, nothing else
  std::set<std::string> held;
  for (const TrialUserAttr& attr : TrialUserAttrs()) {
    if (HasUserAttr(attr, t)) held.insert(attr.name);
    EXPECT_EQ(HasUserAttr(attr, t), attr.written == UserAttrWritten::kAtCreation) << attr.name;
  }
  EXPECT_EQ(held, (std::set<std::string>{"lr_effective", "phase", "point"}));
}

TEST(TrialUserAttrsTest, AValueOfAnotherTypeIsRefusedNamingTheAttr) {
  Trial t;
  const auto read = [&](const char* name, const char* json) {
    return std::string(ReadUserAttr(*FindTrialUserAttr(name), *ParsePyJson(json), &t).message());
  };
  EXPECT_EQ(read("point", "\"3\""), "user attr \"point\": expected an integer, got \"3\"");
  EXPECT_EQ(read("point", "3.5"), "user attr \"point\": expected an integer, got 3.5");
  EXPECT_EQ(read("lr_effective", "\"x\""),
            "user attr \"lr_effective\": expected a number, got \"x\"");
  EXPECT_EQ(read("placement", "3"), "user attr \"placement\": expected a string, got 3");
  EXPECT_EQ(read("requeued_alone", "1"),
            "user attr \"requeued_alone\": expected true or false, got 1");
  EXPECT_EQ(read("gpu_energy_j", "null"),
            "user attr \"gpu_energy_j\": expected a number, got null");
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
