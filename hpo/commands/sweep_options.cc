#include "hpo/commands/sweep_options.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/cli.h"
#include "hpo/config/sweep_flags.h"

namespace tunefleet {
namespace hpo {

std::string ShellWord(const std::string& word) {
  const bool safe =
      !word.empty() &&
      word.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,@+%") ==
          std::string::npos;
  if (safe) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string SweepOptions::ResumeCommand(const std::string& hpo) const {
  std::string command = absl::StrCat(hpo, " sweep ", ShellWord(sweep_file));
  if (multirun) absl::StrAppend(&command, " --multirun");
  for (const std::string& o : overrides) absl::StrAppend(&command, " ", ShellWord(o));
  absl::StrAppend(&command, " --resume");
  if (!journal.empty()) absl::StrAppend(&command, " --journal ", ShellWord(journal));
  if (!head.empty()) absl::StrAppend(&command, " --head ", ShellWord(head));
  if (!keys.empty()) absl::StrAppend(&command, " --keys ", ShellWord(keys));
  return command;
}

int SweepOptions::FromFlags(const std::vector<std::string>& args, SweepOptions* o) {
  CommandLine cli(
      "hpo sweep", "SWEEP.yaml [key=value ...]",
      "Runs the sweep described by SWEEP.yaml. Without --head it runs in single-node\n"
      "dev mode: it starts a head and a local agent, uses every local GPU (or CPU\n"
      "slots), and stops them when the sweep ends. key=value arguments override the\n"
      "sweep file (search.random.trials=4), as Hydra's do: +key=value adds a key the\n"
      "file lacks, ++key=value adds or sets, ~key removes one (~key=value: only if it\n"
      "holds value). Setting early_terminate.type drops the file's keys of its old type.");
  cli.AddString("head", &o->head, "address of a running head; omit for single-node dev mode",
                "tcp://HOST:PORT");
  cli.AddString("journal", &o->journal, "journal file (default: the sweep's `journal`)", "PATH");
  cli.AddString("keys", &o->keys, "with --head: CURVE key folder (server.pub, client.key)", "DIR");
  cli.AddBool("resume", &o->resume, "continue the sweep recorded in the journal");
  cli.AddBool("dry_run", &o->dry_run, "validate the sweep and print its plan; run nothing");
  cli.AddInt("slots", &o->slots,
             "dev mode: ranks the local agent runs at once (CPU slots without GPUs; default "
             "max_concurrent_trials x gpus_per_trial)");
  cli.AddString("report_json", &o->report_json, "write hpo's final view of the study here", "PATH");
  cli.AddInt("head_grace_s", &o->head_grace_s,
             "with --head: after losing the head, wait this long for it to come back (its "
             "trials go on on the agents); 0: fail at once");
  cli.AddDouble("max_failed_share", &o->max_failed_share,
                "exit 3 when more than this share of the sweep's points failed after their "
                "retries (0 to 1)",
                "X");
  cli.AddBool("multirun", &o->multirun,
              "Hydra's multirun: a grid over exactly the values listed, KEY=a,b,c for each "
              "parameter KEY (lr, batch_size, a trainer key); see below");
  cli.AllowOverrides();
  cli.ExpectPositional(1, 1);
  cli.AddHelpEpilog(
      "--multirun: an override whose key is not a section of the sweep file names a parameter,\n"
      "and KEY=a,b,c becomes parameters.KEY: {values: [a, b, c]} (KEY=a: one value), replacing\n"
      "the file's; the search method becomes grid, so the sweep runs every combination of the\n"
      "values listed and nothing else. A parameter of the file that the command line does not\n"
      "name must take one value, else it is an error (sweep it too, or give it one value):\n"
      "  hpo sweep configs/lr.yaml --multirun lr=1e-5,3e-5,1e-4 batch_size=16,32   (6 trials)\n"
      "\n"
      "Exit codes:\n"
      "  0    the sweep ran to its end (with --dry_run: the plan was printed)\n"
      "  1    hpo failed: the head was lost or refused the sweep, the journal could not be\n"
      "       written, dev mode's head or agent died\n"
      "  2    bad input: flags, sweep file, trainer config, a missing trainer file (model\n"
      "       folder, task.train, task.eval, model.head), the journal path, a journal --resume\n"
      "       cannot continue, a plan over 10^6 trials, more ranks than the host (dev mode) or\n"
      "       the cluster has: all before anything started, but the last\n"
      "  3    the sweep ran but failed: no trial completed, or more than --max_failed_share of\n"
      "       its points failed after their retries; the summary's last line says which\n"
      "  130  interrupted (Ctrl-C, SIGTERM); continue with --resume");
  if (int rc = ParseOrExit(cli, args, "hpo sweep"); rc >= 0) return rc;
  o->sweep_file = cli.positional()[0];
  o->overrides = cli.overrides();
  SweepFlags flags;
  flags.head = o->head;
  flags.keys = o->keys;
  flags.slots = o->slots;
  flags.head_grace_s = o->head_grace_s;
  flags.max_failed_share = o->max_failed_share;
  if (absl::Status bad = CheckSweepFlags(flags); !bad.ok()) {
    PrintError("hpo sweep", bad);
    return kExitUsage;
  }
  return -1;
}

}  // namespace hpo
}  // namespace tunefleet
