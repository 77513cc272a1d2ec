// Command-line parsing shared by the four binaries: flags with help text, positional
// arguments, and `key=value` config overrides (Hydra / Lightning style: train.lr=3e-5).
//
//   CommandLine cli("hpo sweep", "SWEEP.yaml [key=value ...]", "Runs a sweep.");
//   std::string head; bool resume = false;
//   cli.AddString("head", &head, "tcp://HOST:PORT of a running head", "ADDR");
//   cli.AddBool("resume", &resume, "continue the sweep in --journal");
//   absl::Status s = cli.Parse(args);     // args: everything after the subcommand
//   if (cli.help_requested()) { std::cout << cli.Help(); return 0; }
//
// Accepted forms: --name=value, --name value, --flag, --noflag (also --no_flag, --no-flag),
// --flag=true|false, `--` ends flags. Dashes and underscores in a flag's name are the same
// (--dry-run = --dry_run); --help lists the names as they were added (underscores) and says so
// once. An argument that is not a flag and contains '=', or starts with '~' and holds no '/'
// (Hydra's ~key, common/yaml_config.h), is an override when overrides are allowed, else a
// positional argument.
// Errors are one line naming the flag as the user typed it.
// Thread-safety: not thread-safe; used once at start-up.
#ifndef TUNEFLEET_COMMON_CLI_H_
#define TUNEFLEET_COMMON_CLI_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tunefleet {

class CommandLine {
 public:
  CommandLine(std::string program, std::string usage_args, std::string description);

  void AddString(const std::string& name, std::string* value, const std::string& help,
                 const std::string& value_name = "VALUE");
  void AddInt(const std::string& name, int64_t* value, const std::string& help,
              const std::string& value_name = "N");
  void AddDouble(const std::string& name, double* value, const std::string& help,
                 const std::string& value_name = "X");
  void AddBool(const std::string& name, bool* value, const std::string& help);

  // key=value arguments are collected by overrides() instead of positional().
  void AllowOverrides() { allow_overrides_ = true; }
  // Positional arguments expected: between min and max (max < 0: unlimited).
  void ExpectPositional(int min, int max) {
    min_positional_ = min;
    max_positional_ = max;
  }
  // Free text appended to --help (examples, notes).
  void AddHelpEpilog(const std::string& text) { epilog_ = text; }

  absl::Status Parse(const std::vector<std::string>& args);

  bool help_requested() const { return help_requested_; }
  const std::vector<std::string>& positional() const { return positional_; }
  const std::vector<std::string>& overrides() const { return overrides_; }
  // True when the flag was given on the command line.
  bool WasSet(const std::string& name) const;
  std::string Help() const;

 private:
  enum class Kind { kString, kInt, kDouble, kBool };
  struct Flag {
    std::string name;
    Kind kind;
    void* value;
    std::string help;
    std::string value_name;
    std::string default_text;
    bool set = false;
  };
  // The flag `name` names, dashes read as underscores; null if none.
  Flag* Find(const std::string& name);
  // The bool flag that `name` negates (noflag, no_flag, no-flag); null if none.
  Flag* FindNegated(const std::string& name);
  absl::Status Assign(Flag& flag, const std::string& text);

  std::string program_;
  std::string usage_args_;
  std::string description_;
  std::string epilog_;
  std::vector<Flag> flags_;
  bool allow_overrides_ = false;
  int min_positional_ = 0;
  int max_positional_ = 0;
  bool help_requested_ = false;
  std::vector<std::string> positional_;
  std::vector<std::string> overrides_;
};

// A binary made of subcommands (`hpo sweep ...`, `trainer train ...`). RunSubcommands prints
// the overview for `PROGRAM`, `PROGRAM --help` or `PROGRAM help`, and an error naming the
// known subcommands for an unknown one (exit 2); otherwise it returns the subcommand's result.
struct Subcommand {
  std::string name;
  std::string summary;
  std::function<int(const std::vector<std::string>& args)> run;
};
int RunSubcommands(const std::string& program, const std::string& description,
                   const std::vector<Subcommand>& subcommands, int argc, char** argv);

// Exit codes shared by the binaries.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      // the work failed
inline constexpr int kExitUsage = 2;        // bad command line or bad input
inline constexpr int kExitOutOfMemory = 3;  // the trainer ran out of (GPU) memory

// Under `bazel run` the binary starts in its runfiles tree; this moves to the directory the
// user ran bazel from (BUILD_WORKING_DIRECTORY) so relative paths mean what the user meant.
void ChdirToUserWorkingDirectory();

// What every binary's main() does first: ChdirToUserWorkingDirectory, and SetLogRole(role) so
// its log lines say which process wrote them (an empty role names none). A trainer rank's lines
// carry its rank too: with `rank_from_env`, SetLogRank from RANK (torchrun's variable; none
// when unset).
void InitBinary(const std::string& role, bool rank_from_env = false);

// main() of a binary with one command (head, agent): InitBinary(role), then `run`'s exit code.
int RunMain(const std::string& role, int (*run)(int argc, char** argv), int argc, char** argv);

// Prints "PROGRAM: error: MESSAGE" on stderr (one line; the status message, no code name).
void PrintError(const std::string& program, const absl::Status& status);

// Parses `cli` over `args` for a subcommand. Returns -1 when parsed and the command should go
// on; otherwise the exit code to return: kExitOk after printing --help on stdout, kExitUsage
// after printing the bad flag's line (PrintError with `program`) on stderr.
int ParseOrExit(CommandLine& cli, const std::vector<std::string>& args, const char* program);

// The integer in environment variable `name` (RANK, LOCAL_RANK, ...); `fallback` when unset or
// not an integer.
int EnvInt(const char* name, int fallback);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_CLI_H_
