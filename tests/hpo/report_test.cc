// hpo/report/report.h: the HTML report of a journal with every trial state, several batch sizes,
// other parameters and telemetry on some trials. Checks that every trial has its row, the best
// trial is named, pruned / failed / running trials are marked on the charts, journal text is
// escaped, and the page references nothing outside itself (a strict scan of its tags and styles,
// which is itself tested on bad pages).
#include "hpo/report/report.h"

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "gtest/gtest.h"
#include "hpo/journal/journal_replay.h"
#include "hpo/journal/journal_writer.h"
#include "tests/hpo/hpo_test_util.h"
#include "tests/hpo/journal_fixture.h"

namespace tunefleet {
namespace hpo {
namespace {

constexpr char kHostile[] = "<script>alert(1)</script> see https://evil.example/x.js";
constexpr char kHostileTail[] =
    "Traceback\n<img src=x onerror=alert(2)><script src=//evil.example/a.js></script>\n"
    "<link rel=stylesheet href=http://evil.example/s.css> url(http://evil.example/f.woff)";

// Every way a page could reach outside itself, one line each; empty when there is none.
// Scans the raw text (no "://", "http:", "https:"), each tag (no script, link, img, iframe,
// object, embed, base, no src/srcset/xlink:href, href only "#..."), and the CSS (inline <style>
// and style attributes: no @import, url( only "url(#").
std::vector<std::string> ExternalReferences(const std::string& html) {
  std::vector<std::string> found;
  const std::string lower = absl::AsciiStrToLower(html);
  for (const char* bad : {"://", "http:", "https:", "@import"}) {
    if (absl::StrContains(lower, bad)) found.push_back(absl::StrCat("contains ", bad));
  }
  auto check_css = [&found](const std::string& css) {
    for (size_t at = css.find("url("); at != std::string::npos; at = css.find("url(", at + 1)) {
      size_t v = at + 4;
      while (v < css.size() && (css[v] == ' ' || css[v] == '"' || css[v] == '\'')) ++v;
      if (v >= css.size() || css[v] != '#') found.push_back("css url( to " + css.substr(at, 40));
    }
  };
  for (size_t open = lower.find('<'); open != std::string::npos; open = lower.find('<', open + 1)) {
    const size_t close = lower.find('>', open);
    if (close == std::string::npos) {
      found.push_back("unclosed tag at " + std::to_string(open));
      break;
    }
    const std::string tag = lower.substr(open + 1, close - open - 1);
    size_t name_end = 0;
    while (name_end < tag.size() && (std::isalnum(static_cast<unsigned char>(tag[name_end])) ||
                                     tag[name_end] == '/' || tag[name_end] == '!')) {
      ++name_end;
    }
    const std::string name = tag.substr(0, name_end);
    for (const char* banned : {"script", "link", "img", "iframe", "object", "embed", "base",
                               "image", "use", "audio", "video", "source", "frame"}) {
      if (name == banned || name == std::string("/") + banned) found.push_back("tag <" + tag + ">");
    }
    for (const char* attr :
         {" src=", " srcset=", "xlink:href", " action=", " formaction=", " data="}) {
      if (absl::StrContains(tag, attr)) found.push_back("attribute in <" + tag + ">");
    }
    for (size_t at = tag.find("href="); at != std::string::npos; at = tag.find("href=", at + 1)) {
      const size_t v =
          at + 5 + (at + 5 < tag.size() && (tag[at + 5] == '"' || tag[at + 5] == '\'') ? 1 : 0);
      if (v >= tag.size() || tag[v] != '#') found.push_back("href to outside in <" + tag + ">");
    }
    if (const size_t style = tag.find("style="); style != std::string::npos) {
      check_css(tag.substr(style));
    }
    if (name == "style") {
      const size_t end = lower.find("</style", close);
      check_css(lower.substr(close, end == std::string::npos ? std::string::npos : end - close));
    }
  }
  return found;
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) absl::StrAppend(&out, l, "\n");
  return out;
}

// The text of the first `<g class="pt"><title>TITLE...</g>` group whose title starts with
// `title` ("" when none): the marker drawn for a trial.
std::string MarkerOf(const std::string& html, const std::string& title) {
  const size_t at = html.find("<g class=\"pt\"><title>" + title);
  if (at == std::string::npos) return "";
  return html.substr(at, html.find("</g>", at) - at);
}

Trial Made(int64_t number, double lr, double batch, const std::string& start) {
  Trial t;
  t.number = number;
  t.params = {{kLrParam, lr},
              {kBatchParam, batch},
              {"train.weight_decay", 0.01 * static_cast<double>(number)},
              {"model.pooling", static_cast<double>(number % 3)}};
  t.lr_effective = lr * batch / 32;
  t.phase = number < 3 ? "random" : "grid";
  t.point = number;
  t.datetime_start = start;
  return t;
}

// A study of six trials: COMPLETE (telemetry), PRUNED, FAIL (hostile reason, on 2 GPUs),
// COMPLETE and best (on 4 GPUs, telemetry), RUNNING without placement, a retry that failed.
std::string WriteTestJournal(const std::string& name) {
  const std::string path = NewJournalPath(name);
  auto w = JournalWriter::Open(path);
  EXPECT_TRUE(w.ok()) << w.status();
  if (!w.ok()) return path;
  JournalWriter& j = **w;
  const SearchSpace space = MixedSpace();
  EXPECT_TRUE(j.CreateStudy("report-demo", /*maximize=*/true).ok());
  EXPECT_TRUE(j.SetStudyUserAttr("metric", "\"eval/spearman\"").ok());
  EXPECT_TRUE(j.SetStudyUserAttr("resource", "\"samples\"").ok());
  EXPECT_TRUE(j.SetStudyUserAttr("note", "\"<b>bold</b> & 'quoted'\"").ok());
  EXPECT_TRUE(j.SetStudyUserAttr("best_at_bound", R"({"batch_size": "upper"})").ok());
  auto add = [&](Trial t, const std::string& placement, const std::map<int64_t, double>& values) {
    EXPECT_TRUE(j.CreateTrial(t, space).ok());
    for (const auto& [step, v] : values) {
      EXPECT_TRUE(j.SetIntermediateValue(t.number, step, v).ok());
    }
    if (!placement.empty()) {
      EXPECT_TRUE(j.SetUserAttr(t.number, "placement", "\"" + placement + "\"").ok());
    }
    if (t.gpu_util_mean) {
      EXPECT_TRUE(j.SetUserAttr(t.number, "gpu_util_mean", absl::StrCat(*t.gpu_util_mean)).ok());
      EXPECT_TRUE(
          j.SetUserAttr(t.number, "gpu_mem_peak_mib", absl::StrCat(*t.gpu_mem_peak_mib)).ok());
      EXPECT_TRUE(j.SetUserAttr(t.number, "gpu_energy_j", absl::StrCat(*t.gpu_energy_j)).ok());
    }
    if (t.state != TrialState::kRunning) {
      EXPECT_TRUE(j.Finish(t).ok());
    }
  };
  Trial t0 = Made(0, 1e-4, 16, "2024-05-01T13:00:00.000000");
  t0.state = TrialState::kComplete;
  t0.value = 0.71;
  t0.datetime_complete = "2024-05-01T13:02:00.000000";
  t0.gpu_util_mean = 87.5;
  t0.gpu_mem_peak_mib = 12345;
  t0.gpu_energy_j = 24000;
  add(t0, "local:0", {{64, 0.5}, {128, 0.65}, {192, 0.7}});
  Trial t1 = Made(1, 3e-5, 32, "2024-05-01T13:00:01.000000");
  t1.state = TrialState::kPruned;
  t1.datetime_complete = "2024-05-01T13:01:00.000000";
  add(t1, "nodeA:2", {{64, 0.4}, {128, 0.42}});
  Trial t2 = Made(2, 1e-3, 64, "2024-05-01T13:00:02.000000");
  t2.state = TrialState::kFail;
  t2.fail_reason = kHostile;
  t2.stderr_tail = kHostileTail;
  t2.datetime_complete = "2024-05-01T13:00:30.000000";
  add(t2, "local:1-2", {});
  Trial t3 = Made(3, 5e-4, 128, "2024-05-01T13:02:05.000000");
  t3.state = TrialState::kComplete;
  t3.value = 0.8;
  t3.datetime_complete = "2024-05-01T13:05:00.000000";
  t3.gpu_util_mean = 95;
  t3.gpu_mem_peak_mib = 20000;
  t3.gpu_energy_j = 90000;
  add(t3, "local:0-3", {{64, 0.6}, {128, 0.75}, {192, 0.8}});
  Trial t4 = Made(4, 2e-4, 32, "2024-05-01T13:05:10.000000");
  add(t4, "", {{64, 0.55}, {128, kNaN}});  // RUNNING, not placed yet
  Trial t5 = Made(5, 1e-3, 64, "2024-05-01T13:05:20.000000");
  t5.failed_trial = 2;
  t5.retry_history = {2};
  t5.state = TrialState::kFail;
  t5.fail_reason = "exit code 1";
  t5.datetime_complete = "2024-05-01T13:06:00.000000";
  add(t5, "local:1-2", {{64, 0.3}});
  return path;
}

std::string Render(const std::string& journal) {
  auto contents = ReadJournal(journal);
  EXPECT_TRUE(contents.ok()) << contents.status();
  if (!contents.ok()) return "";
  auto html = RenderHtmlReport(*contents, journal);
  EXPECT_TRUE(html.ok()) << html.status();
  return html.ok() ? *html : "";
}

TEST(ExternalReferencesTest, FlagsEveryKindOfOutsideReference) {
  // The checker must be able to fail, or the tests below prove nothing.
  for (const char* bad :
       {"<p>see http://x</p>", "<a href=\"//host/x\">x</a>", "<a href=x.html>x</a>",
        "<link rel=stylesheet href=\"#a\">", "<script src=\"a.js\"></script>", "<script>1</script>",
        "<img src=\"a.png\">", "<style>@import 'a.css';</style>",
        "<style>p{background:url(a.png)}</style>", "<p style=\"background:url('b.png')\">x</p>",
        "<svg><image xlink:href=\"a.png\"/></svg>", "<iframe></iframe>", "<p>ftp://x</p>"}) {
    EXPECT_FALSE(ExternalReferences(bad).empty()) << bad;
  }
  EXPECT_TRUE(
      ExternalReferences("<a href=\"#trial-1\">1</a><style>p{fill:url(#g)}</style>").empty());
}

TEST(ReportTest, EveryTrialHasItsRowAndTheBestIsNamed) {
  const std::string html = Render(WriteTestJournal("rows"));
  for (int n = 0; n < 6; ++n) {
    EXPECT_TRUE(absl::StrContains(html, absl::StrCat("<tr id=\"trial-", n, "\""))) << n;
  }
  EXPECT_TRUE(absl::StrContains(html, "<dt>best trial</dt><dd><a href=\"#trial-3\">#3</a>"));
  EXPECT_TRUE(absl::StrContains(html, "<tr id=\"trial-3\" class=\"best\">"));
  EXPECT_FALSE(absl::StrContains(html, "<tr id=\"trial-0\" class=\"best\">"));
  EXPECT_TRUE(absl::StrContains(html, "eval/spearman (maximize)"));
  EXPECT_TRUE(absl::StrContains(html, "0.8000"));
  EXPECT_TRUE(absl::StrContains(html, "best batch_size at the upper bound"));
  EXPECT_TRUE(absl::StrContains(html, "retry of <a href=\"#trial-2\">#2</a>"));
  // Wall time: 13:00:00 to 13:06:00 (the running trial started at 13:05:10).
  EXPECT_TRUE(absl::StrContains(html, "<dt>wall time</dt><dd>6m 00s")) << html.substr(0, 4000);
}

TEST(ReportTest, MarksPrunedFailedAndRunningTrials) {
  const std::string html = Render(WriteTestJournal("markers"));
  // Pruned: a hollow circle at its last report; failed: a cross; running: a hollow square.
  const std::string pruned = MarkerOf(html, "trial 1 (PRUNED)");
  EXPECT_TRUE(absl::StrContains(pruned, "<circle") && absl::StrContains(pruned, "fill=\"#fff\""))
      << pruned;
  const std::string failed = MarkerOf(html, "trial 2 (FAIL)");
  EXPECT_TRUE(absl::StrContains(failed, "<path d=\"M")) << failed;
  const std::string running = MarkerOf(html, "trial 4 (RUNNING)");
  EXPECT_TRUE(absl::StrContains(running, "<rect") && absl::StrContains(running, "fill=\"#fff\""))
      << running;
  const std::string complete = MarkerOf(html, "trial 0 (COMPLETE)");
  EXPECT_TRUE(absl::StrContains(complete, "<circle") &&
              !absl::StrContains(complete, "fill=\"#fff\""))
      << complete;
  // Each batch size is a series with a legend entry.
  for (const char* b : {"batch_size 16", "batch_size 32", "batch_size 64", "batch_size 128"}) {
    EXPECT_TRUE(absl::StrContains(html, absl::StrCat("</svg>", b, "</span>"))) << b;
  }
  // A NaN report is left out of the curves, never written as a coordinate.
  for (size_t at = html.find("points=\""); at != std::string::npos;
       at = html.find("points=\"", at + 1)) {
    const std::string pts = html.substr(at + 8, html.find('"', at + 8) - at - 8);
    EXPECT_EQ(pts.find_first_not_of("0123456789., -"), std::string::npos) << pts;
  }
}

TEST(ReportTest, TimelineHasALanePerSlotAndUnplacedTrials) {
  const std::string html = Render(WriteTestJournal("timeline"));
  // The lanes are the timeline's y labels.
  for (const char* lane : {"local:0", "local:1", "local:2", "local:3", "nodeA:2", "unplaced"}) {
    EXPECT_TRUE(absl::StrContains(html, absl::StrCat("text-anchor=\"end\">", lane, "</text>")))
        << lane;
  }
  // Trial 3 ran on four GPUs: a bar in each lane; trial 2 on two.
  auto bars = [&html](int n) {
    int count = 0;
    const std::string title = absl::StrCat("<g class=\"bar\"><title>trial ", n, ":");
    for (size_t at = html.find(title); at != std::string::npos; at = html.find(title, at + 1)) {
      ++count;
    }
    return count;
  };
  EXPECT_EQ(bars(3), 4);
  EXPECT_EQ(bars(2), 2);
  EXPECT_EQ(bars(4), 1);
  EXPECT_TRUE(absl::StrContains(html, "trial 4: RUNNING (still running)"));
}

TEST(ReportTest, EscapesJournalTextAndReferencesNothingOutside) {
  const std::string html = Render(WriteTestJournal("escape"));
  EXPECT_FALSE(absl::StrContains(html, "<script"));
  EXPECT_FALSE(absl::StrContains(html, "<img"));
  EXPECT_FALSE(absl::StrContains(html, "<b>bold</b>"));
  EXPECT_TRUE(absl::StrContains(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_TRUE(absl::StrContains(html, "&lt;b&gt;bold&lt;/b&gt; &amp; &#39;quoted&#39;"));
  EXPECT_TRUE(absl::StrContains(html, "https&#58;//evil.example/x.js"));
  const std::vector<std::string> refs = ExternalReferences(html);
  EXPECT_TRUE(refs.empty()) << Joined(refs);
}

TEST(ReportTest, ShowsTelemetryAndOtherParameters) {
  const std::string html = Render(WriteTestJournal("telemetry"));
  EXPECT_FALSE(absl::StrContains(absl::AsciiStrToLower(html), "no gpu telemetry was recorded"));
  EXPECT_TRUE(absl::StrContains(html, "12345"));
  EXPECT_TRUE(absl::StrContains(html, "90000"));
  EXPECT_TRUE(absl::StrContains(html, "114.0 kJ"));  // 24000 J + 90000 J
  EXPECT_TRUE(absl::StrContains(html, "<section id=\"params\">"));
  EXPECT_TRUE(absl::StrContains(html, "<b>train.weight_decay</b>"));
  EXPECT_TRUE(absl::StrContains(html, "<b>model.pooling</b>"));
  EXPECT_TRUE(absl::StrContains(html, ">cls<"));  // a string choice as its label
}

TEST(ReportTest, WithoutTelemetryOrOtherParametersSaysSo) {
  const std::string path = NewJournalPath("plain");
  {
    auto w = JournalWriter::Open(path);
    ASSERT_TRUE(w.ok()) << w.status();
    ASSERT_TRUE((*w)->CreateStudy("plain", /*maximize=*/false).ok());
    Trial t = MakeTrial(0, 1e-4, 32, "random", 0);
    t.state = TrialState::kComplete;
    t.value = 0.25;
    t.datetime_complete = "2024-05-01T14:00:00.000000";
    ASSERT_TRUE((*w)->CreateTrial(t, Space()).ok());
    ASSERT_TRUE((*w)->Finish(t).ok());
  }
  const std::string html = Render(path);
  EXPECT_TRUE(absl::StrContains(absl::AsciiStrToLower(html), "no gpu telemetry was recorded"));
  EXPECT_FALSE(absl::StrContains(html, "<section id=\"params\">"));
  EXPECT_TRUE(absl::StrContains(html, "value (minimize)"));
  EXPECT_TRUE(absl::StrContains(html, "<tr id=\"trial-0\" class=\"best\">"));
  EXPECT_TRUE(ExternalReferences(html).empty()) << Joined(ExternalReferences(html));
}

TEST(ReportTest, SameJournalSameBytes) {
  const std::string path = WriteTestJournal("deterministic");
  EXPECT_EQ(Render(path), Render(path));
}

TEST(ReportTest, AJournalWithoutAStudyIsAnError) {
  JournalContents empty;
  EXPECT_TRUE(absl::IsFailedPrecondition(RenderHtmlReport(empty, "x.log").status()));
}

TEST(WriteHtmlReportTest, WritesThePageAtomically) {
  const std::string journal = WriteTestJournal("write");
  const std::string html = ReportPathFor(journal);
  int64_t trials = 0;
  ASSERT_TRUE(WriteHtmlReport(journal, html, &trials).ok());
  EXPECT_EQ(trials, 6);
  EXPECT_EQ(FileText(html), Render(journal));
  // Rewritten in place, with no temporary file left beside it.
  ASSERT_TRUE(WriteHtmlReport(journal, html).ok());
  std::vector<std::string> names;
  if (DIR* dir = ::opendir(journal.substr(0, journal.rfind('/')).c_str())) {
    while (const dirent* e = ::readdir(dir)) {
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    }
    ::closedir(dir);
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"journal.html", "journal.log"}));
}

TEST(WriteHtmlReportTest, AMissingJournalIsNotFound) {
  const std::string dir = TestDir("missing");
  absl::Status s = WriteHtmlReport(dir + "/journal.log", dir + "/out.html");
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  EXPECT_FALSE(PathExists(dir + "/out.html"));
}

TEST(WriteHtmlReportTest, RefusesToOverwriteTheJournal) {
  const std::string journal = WriteTestJournal("clobber");
  const std::string before = FileText(journal);
  EXPECT_TRUE(absl::IsInvalidArgument(WriteHtmlReport(journal, journal)));
  const std::string dir = journal.substr(0, journal.rfind('/'));
  EXPECT_TRUE(absl::IsInvalidArgument(WriteHtmlReport(journal, dir + "/./journal.log")));
  EXPECT_EQ(FileText(journal), before);
}

TEST(ReportPathForTest, ReplacesTheExtension) {
  EXPECT_EQ(ReportPathFor("runs/x/journal.log"), "runs/x/journal.html");
  EXPECT_EQ(ReportPathFor("/abs/j.jsonl"), "/abs/j.html");
  EXPECT_EQ(ReportPathFor("journal"), "journal.html");
  EXPECT_EQ(ReportPathFor("runs.d/journal"), "runs.d/journal.html");
  EXPECT_EQ(ReportPathFor("runs/.journal"), "runs/.journal.html");
  EXPECT_EQ(ReportPathFor("a.b.log"), "a.b.html");
  EXPECT_EQ(ReportPathFor("x.html"), "x.html.html");  // never the journal itself
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
