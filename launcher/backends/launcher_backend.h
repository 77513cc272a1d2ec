// A launcher backend: how the head starts the agents of its hosts (head --start_agents NAME),
// and, for a backend that has hosts of its own (Slurm: its allocation's nodes), which hosts
// those are. The head finds a backend by name in the registry (backend_registry.h over the one
// list in all_backends.cc) and compares no backend names itself.
//
// A backend is stateless. It plans launch commands: shell command lines, each starting the
// agents of one or more hosts (ssh: one per host; Slurm: one srun job step for all; pdsh: one
// pdsh per set of hosts that share their agent arguments). AgentLauncher (agent_launcher.h)
// runs them through /bin/sh -c, follows them, and stops them (SIGTERM to each command still
// running); the backend says what a command's end, before a host's agent registered, means for
// that host. A backend that starts nothing (none) plans no command: its agents are started by
// hand or by a scheduler.
//
// A backend declares its own head flags (flags(): ssh's --remote_shell) with their defaults,
// help and checks; the head adds every registered backend's flags to its command line, checks
// them, and hands their values to the backends as LaunchSettings::backend_flags, which only
// the declaring backend reads. The head names no backend's flag itself.
//
// Thread-safety: backends are immutable (the registry's are statics); every method is const
// and may be called from any thread.
#ifndef TUNEFLEET_LAUNCHER_BACKENDS_LAUNCHER_BACKEND_H_
#define TUNEFLEET_LAUNCHER_BACKENDS_LAUNCHER_BACKEND_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "launcher/hosts_file.h"

namespace tunefleet {
namespace launcher {

// What every backend starts on each host: the agent and the head it registers with.
struct LaunchSettings {
  std::string agent_binary;   // absolute path, the same on every host
  std::string head_endpoint;  // what agents connect to
  std::string log_dir;        // where the launch commands' and the hosts' output goes
  std::string keys_dir;       // passed on as --keys (the same path on every host); may be empty
  // The backends' own flags (BackendFlag) by name, as the head checked them; a backend reads
  // only its own, through its module (a flag absent here reads as its default).
  std::map<std::string, std::string> backend_flags;
};

// A head flag that a backend declares (head --NAME VALUE_NAME, a string): added to the head's
// command line whatever the --start_agents, checked by the head before it starts anything.
struct BackendFlag {
  std::string name;           // without dashes: "remote_shell"
  std::string default_value;  // its value when not given
  std::string help;
  std::string value_name;  // in --help: "TEMPLATE"
  // A usage error of one line naming the flag ("--remote_shell must contain {host}"); null:
  // every value is good.
  absl::Status (*check)(const std::string& value) = nullptr;
};

// Flag `name`'s value in `settings`, or `default_value` when absent (for the declaring backend).
std::string BackendFlagValue(const LaunchSettings& settings, const std::string& name,
                             const std::string& default_value);

// One command that starts the agents of some hosts.
struct LaunchCommand {
  std::string shell_command;  // run through /bin/sh -c
  std::string log_path;       // its output (stdout and stderr)
  std::vector<size_t> hosts;  // indices into the planned hosts, each in exactly one command
  // Host hosts[k]'s own output, named when it stays silent (parallel to `hosts`).
  std::vector<std::string> host_logs;
  std::string start_line;  // logged when it starts, followed by ": " and shell_command
  std::string program;     // when it cannot run: "cannot run PROGRAM: why"
  std::string noun;        // when a host stays silent: "its NOUN still runs"
};

// How a launch command ended (for LauncherBackend::EndedBeforeRegistering).
struct CommandEnd {
  bool succeeded = false;   // exit code 0
  std::string exit_text;    // "exit code 1", "killed by signal 9 (Killed)"
  std::string output_tail;  // the last lines of its stderr
};

// The head's flags a backend may refuse or use to find its hosts.
struct BackendFlags {
  std::string nodes;  // --nodes (a hosts file), empty when not given
  std::string bind;   // the head's endpoint (ipc://... or tcp://...)
};

// The hosts a backend has of its own, and what to call them in messages.
struct BackendHosts {
  std::vector<HostEntry> hosts;
  std::string source;  // e.g. "the Slurm allocation" (the filters' messages name it)
};

class LauncherBackend {
 public:
  virtual ~LauncherBackend() = default;

  // The --start_agents value that picks this backend ("ssh").
  virtual std::string name() const = 0;
  // Its part of --start_agents' help, after "NAME: ".
  virtual std::string help() const = 0;
  // False for a backend that starts no agent (then the head needs no agent binary).
  virtual bool starts_agents() const { return true; }
  // True when Hosts() gives the hosts without --nodes.
  virtual bool has_hosts() const { return false; }
  // The head flags it declares (none by default), in --help order.
  virtual std::vector<BackendFlag> flags() const { return {}; }
  // What --slots means with this backend when the hosts file gives no slots (its part of
  // --slots' help: "with --start_agents NAME NOTE"); empty for none.
  virtual std::string slots_note() const { return ""; }
  // A usage error when the head's flags do not go with this backend (one line, naming them).
  virtual absl::Status CheckFlags(const BackendFlags& flags) const;
  // The backend's own hosts (called only when has_hosts() and --nodes is not given); usage
  // errors are InvalidArgument.
  virtual absl::StatusOr<BackendHosts> Hosts(const BackendFlags& flags) const;
  // The commands that start the agents of `hosts` (none for a backend that starts none).
  virtual std::vector<LaunchCommand> Plan(const LaunchSettings& settings,
                                          const std::vector<HostEntry>& hosts) const = 0;
  // `command` ended as `end` before the agent of its host `host` (a name, without user@; its
  // own output in `host_log`) registered: the host's failure as the head logs it, or nullopt
  // when that is no failure (e.g. a remote shell that exits 0: the host's agent was running
  // already and registers by itself).
  virtual std::optional<std::string> EndedBeforeRegistering(const LaunchCommand& command,
                                                            const std::string& host,
                                                            const std::string& host_log,
                                                            const CommandEnd& end) const = 0;
};

// The agent's arguments that differ per host: " --slots N", " --gpu_ids ...",
// " --exclude_gpu_ids ..." (each with its leading space; empty when none).
std::string AgentHostArgs(const HostEntry& host);
// " --keys DIR" when settings.keys_dir is set, else "".
std::string AgentKeysArg(const LaunchSettings& settings);
// The last line of `text` (trailing newlines dropped).
std::string LastLine(std::string text);
// "WHAT ended (EXIT) before an agent registered[: WHY]".
std::string EndedDetail(const std::string& what, const CommandEnd& end, const std::string& why);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_BACKENDS_LAUNCHER_BACKEND_H_
