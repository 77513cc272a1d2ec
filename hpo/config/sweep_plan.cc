#include "hpo/config/sweep_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/shell_quote.h"
#include "hpo/journal/journal_file.h"
#include "hpo/lr_scaling.h"
#include "hpo/program_command.h"
#include "hpo/samplers/sampler.h"
#include "hpo/samplers/sampler_registry.h"
#include "hpo/search_space.h"

namespace tunefleet {
namespace hpo {

int64_t MaxPlannedTrials(const SweepConfig& c) { return SamplerKindOf(c).max_planned_trials(c); }

std::string DescribePruner(const SweepConfig& c) { return c.pruner->Describe(c.maximize); }

namespace {

// The program's lines of the plan: its templates, and the first trial's command filled in.
std::string DescribeProgram(const SweepConfig& c) {
  const ProgramSpec& p = c.trainer.program_spec;
  std::vector<std::string> words;
  for (const std::string& arg : p.argv) words.push_back(ShellQuote(arg));
  std::string out = absl::StrCat(
      "  trainer       program: ", absl::StrJoin(words, " "), "\n", "                in ",
      p.workdir, ", SIGKILL ", p.kill_grace_s, " s after SIGTERM",
      p.gpu_memory_mib > 0 ? absl::StrCat(", ", p.gpu_memory_mib, " MiB of GPU memory")
                           : std::string(),
      "\n");
  // The first trial, as the sweep will start it.
  const SearchSpace space = BuildSearchSpace(c);
  std::unique_ptr<Sampler> sampler = MakeSampler(c);
  Study study;
  study.maximize = c.maximize;
  Trial first;
  if (sampler->NextAvailability(study) != Availability::kReady) return out;
  SampleTrial(*sampler, study, &first, space);
  first.lr_effective = EffectiveLr(c, first.params);
  const ProgramCommand command =
      RenderProgram(p, ProgramValues(space, first, absl::StrCat(RunDir(c.journal), "/trial-0")));
  words.clear();
  for (const auto& [name, value] : command.env) words.push_back(name + "=" + ShellQuote(value));
  for (const std::string& arg : command.argv) words.push_back(ShellQuote(arg));
  absl::StrAppend(&out, "  first trial   ", absl::StrJoin(words, " "), "\n");
  return out;
}

// The trainer's lines: what runs a trial, and what the journal's steps count.
std::string DescribeTrainer(const SweepConfig& c) {
  std::string out;
  if (c.trainer.synthetic) {
    const SyntheticSpec& s = c.trainer.synthetic_spec;
    absl::StrAppend(
        &out,
        absl::StrFormat("  trainer       synthetic: %d steps, %.3g s/step, noise %.3g, seed %d\n",
                        s.steps, s.seconds_per_step, s.noise, s.seed));
  } else if (c.trainer.program) {
    absl::StrAppend(&out, DescribeProgram(c));
  } else {
    absl::StrAppend(&out, "  trainer       ", c.trainer.config);
    for (const std::string& o : c.trainer.overrides) absl::StrAppend(&out, " ", o);
    absl::StrAppend(&out, "\n");
  }
  if (c.trainer.program) {
    absl::StrAppend(&out,
                    "  resource      the program's reports: their samples, else their step "
                    "(the journal's steps)");
  } else {
    absl::StrAppend(&out, "  resource      samples seen across the ranks (the journal's steps)");
  }
  if (c.trainer.native()) {
    absl::StrAppend(&out, "; ", c.trainer.evals_per_epoch, " evaluations an epoch");
  }
  if (c.trainer.samples_per_epoch > 0) {
    absl::StrAppend(&out, "; ", c.trainer.samples_per_epoch, " samples an epoch");
  }
  absl::StrAppend(&out, "\n");
  return out;
}

// How a trial holds its slots, and the processes its ranks run in.
std::string DescribeResources(const SweepConfig& c) {
  std::string out;
  if (c.trials_per_gpu > 1) {
    absl::StrAppend(&out, "  resources     1 rank per trial, up to ", c.trials_per_gpu,
                    " trials a GPU while their memory estimates fit, 1 a CPU slot; ");
  } else {
    absl::StrAppend(&out, "  resources     ", c.gpus_per_trial,
                    " rank(s) per trial (a GPU each, or a CPU slot); ");
  }
  if (!c.reuse_workers) {
    absl::StrAppend(&out, "a fresh trainer process per rank (reuse_workers: false)\n");
  } else if (c.trainer.program) {
    absl::StrAppend(&out, c.trainer.program_spec.launch_once
                              ? "one program process a node, all its GPUs visible (launch: once)\n"
                              : "one program process a rank (launch: per_rank)\n");
  } else if (c.trainer.synthetic) {
    // Agents run only `trainer train` trials in warm workers: say why not these.
    absl::StrAppend(&out,
                    "a fresh trainer process per rank (warm workers take `trainer train` "
                    "trials only)\n");
  } else {
    absl::StrAppend(
        &out, "warm trainer workers, each recycled after ", c.worker_max_trials, " trial(s)",
        c.gpus_per_trial > 1 ? "; a trial on the same slots as the last reuses its process group"
                             : "",
        "\n");
  }
  return out;
}

// The search space, the lr scaling, the sampler and pruner, the concurrency and the journal.
std::string DescribeSearch(const SweepConfig& c, const SearchSpace& space) {
  std::string out;
  absl::StrAppend(&out, "  search space\n");
  absl::StrAppend(&out, "    lr          ", space.at(kLrParam).Describe(), "  (base lr)\n");
  absl::StrAppend(&out, "    batch_size  ", space.at(kBatchParam).Describe(), "  (per rank)\n");
  for (const ParamSpec& p : c.params) {
    absl::StrAppend(&out, "    ", p.name, "  ", space.at(p.name).Describe(), "\n");
  }
  if (c.lr_scaling.rule == "linear") {
    absl::StrAppend(
        &out, absl::StrFormat("  lr scaling    linear: lr_effective = lr * batch_size * %d rank(s) "
                              "* %d grad_accum / %d\n",
                              c.gpus_per_trial, c.trainer.grad_accum, c.lr_scaling.base_batch));
  } else {
    absl::StrAppend(&out, "  lr scaling    none: lr_effective = lr\n");
  }
  absl::StrAppend(&out, "  search        ", c.method, "\n");
  absl::StrAppend(&out, SamplerKindOf(c).describe(c));
  absl::StrAppend(&out, "    planned     at most ", MaxPlannedTrials(c), " trials\n");
  absl::StrAppend(&out, "  pruner        ", DescribePruner(c), "\n");
  absl::StrAppend(
      &out,
      absl::StrFormat(
          "  running       %d trial(s) at a time; a failed trial is retried up to %d time(s)\n",
          c.max_concurrent_trials, c.max_failures_per_trial));
  absl::StrAppend(&out, "  journal       ", c.journal, "\n");
  return out;
}

// The first kPlanRandomPoints random points, with their lr_effective ("" without any).
std::string DescribeRandomPoints(const SweepConfig& c, const SearchSpace& space) {
  std::string out;
  const int64_t random_points = SamplerKindOf(c).random_points(c);
  if (random_points > 0) {
    const std::vector<Params> points = LeadingRandomPoints(c, space, kPlanRandomPoints);
    absl::StrAppend(&out, "\n  random points\n");
    absl::StrAppend(&out, "    trial  lr          batch_size  lr_effective");
    for (const ParamSpec& q : c.params) absl::StrAppend(&out, "  ", q.name);
    absl::StrAppend(&out, "\n");
    const int64_t shown = std::min<int64_t>(random_points, kPlanRandomPoints);
    for (int64_t i = 0; i < shown; ++i) {
      Params p = points[i];
      const double lr = p[kLrParam];
      const int64_t batch = static_cast<int64_t>(p[kBatchParam]);
      absl::StrAppend(
          &out, absl::StrFormat("    %5d  %.4e  %10d  %.4e", i, lr, batch, EffectiveLr(c, p)));
      for (const ParamSpec& q : c.params) {
        absl::StrAppend(&out, absl::StrFormat("  %*s", static_cast<int>(q.name.size()),
                                              ParamValueText(q, p[q.name])));
      }
      absl::StrAppend(&out, "\n");
    }
    if (random_points > shown) {
      absl::StrAppend(&out, "    ... ", random_points - shown, " more random points\n");
    }
  }
  return out;
}

}  // namespace

std::string DescribeSweepPlan(const SweepConfig& c) {
  std::string out;
  absl::StrAppend(&out, "sweep ", c.name, "  (", c.source, ")\n");
  absl::StrAppend(&out, "  metric        ", c.metric_name, " (",
                  c.maximize ? "maximize" : "minimize", ")\n");
  absl::StrAppend(&out, DescribeTrainer(c), DescribeResources(c));
  const SearchSpace space = BuildSearchSpace(c);
  absl::StrAppend(&out, DescribeSearch(c, space), DescribeRandomPoints(c, space));
  return out;
}

}  // namespace hpo
}  // namespace tunefleet
