#include "common/cli.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/clip.h"
#include "common/logging.h"

namespace tunefleet {
namespace {

// The flag value parsers of each kind; a double must be finite.
bool ParseValue(const std::string& text, int64_t* v) { return absl::SimpleAtoi(text, v); }
bool ParseValue(const std::string& text, double* v) {
  return absl::SimpleAtod(text, v) && std::isfinite(*v);
}
bool ParseValue(const std::string& text, bool* v) { return absl::SimpleAtob(text, v); }

// Stores `text`, parsed as a T, in `*out`; else an error naming the flag, what it expects and
// what it got, and `*out` keeps its value.
template <typename T>
absl::Status ParseInto(const std::string& flag, const std::string& text, const char* expects,
                       void* out) {
  T v;
  if (!ParseValue(text, &v)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, " expects ", expects, ", got '", ClipValue(text), "'"));
  }
  *static_cast<T*>(out) = v;
  return absl::OkStatus();
}

// A flag name with dashes read as underscores: dry-run and dry_run are the same flag.
std::string Canonical(std::string name) {
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

}  // namespace

CommandLine::CommandLine(std::string program, std::string usage_args, std::string description)
    : program_(std::move(program)),
      usage_args_(std::move(usage_args)),
      description_(std::move(description)) {}

void CommandLine::AddString(const std::string& name, std::string* value, const std::string& help,
                            const std::string& value_name) {
  flags_.push_back(
      {name, Kind::kString, value, help, value_name, value->empty() ? "" : "\"" + *value + "\""});
}
void CommandLine::AddInt(const std::string& name, int64_t* value, const std::string& help,
                         const std::string& value_name) {
  flags_.push_back({name, Kind::kInt, value, help, value_name, std::to_string(*value)});
}
void CommandLine::AddDouble(const std::string& name, double* value, const std::string& help,
                            const std::string& value_name) {
  std::ostringstream text;
  text << *value;
  flags_.push_back({name, Kind::kDouble, value, help, value_name, text.str()});
}
void CommandLine::AddBool(const std::string& name, bool* value, const std::string& help) {
  flags_.push_back({name, Kind::kBool, value, help, "", *value ? "true" : ""});
}

CommandLine::Flag* CommandLine::Find(const std::string& name) {
  const std::string canonical = Canonical(name);
  for (Flag& f : flags_) {
    if (Canonical(f.name) == canonical) return &f;
  }
  return nullptr;
}

CommandLine::Flag* CommandLine::FindNegated(const std::string& name) {
  // --noflag, and with a separator: --no_flag, --no-flag.
  if (!absl::StartsWith(name, "no") || name.size() < 3) return nullptr;
  Flag* flag = Find(name.substr(2));
  if (flag == nullptr && (name[2] == '-' || name[2] == '_')) flag = Find(name.substr(3));
  return flag != nullptr && flag->kind == Kind::kBool ? flag : nullptr;
}

bool CommandLine::WasSet(const std::string& name) const {
  const std::string canonical = Canonical(name);
  for (const Flag& f : flags_) {
    if (Canonical(f.name) == canonical) return f.set;
  }
  return false;
}

absl::Status CommandLine::Assign(Flag& flag, const std::string& text) {
  flag.set = true;
  switch (flag.kind) {
    case Kind::kString:
      *static_cast<std::string*>(flag.value) = text;
      return absl::OkStatus();
    case Kind::kInt:
      return ParseInto<int64_t>(flag.name, text, "an integer", flag.value);
    case Kind::kDouble:
      return ParseInto<double>(flag.name, text, "a number", flag.value);
    case Kind::kBool:
      return ParseInto<bool>(flag.name, text, "true or false", flag.value);
  }
  return absl::InternalError("unreachable");
}

absl::Status CommandLine::Parse(const std::vector<std::string>& args) {
  bool flags_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!flags_done && arg == "--") {
      flags_done = true;
      continue;
    }
    double numeric;  // "-1" is a value, not a flag
    if (!flags_done && arg.size() > 1 && arg[0] == '-' && !absl::SimpleAtod(arg, &numeric)) {
      std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
      if (body == "help" || body == "h") {
        help_requested_ = true;
        continue;
      }
      std::string name = body, value;
      bool has_value = false;
      size_t eq = body.find('=');
      if (eq != std::string::npos) {
        name = body.substr(0, eq);
        value = body.substr(eq + 1);
        has_value = true;
      }
      Flag* flag = Find(name);
      if (flag == nullptr && !has_value) {
        if (Flag* negated = FindNegated(name); negated != nullptr) {
          *static_cast<bool*>(negated->value) = false;
          negated->set = true;
          continue;
        }
      }
      if (flag == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown flag --", ClipValue(name), " (see ", program_, " --help)"));
      }
      if (!has_value) {
        if (flag->kind == Kind::kBool) {
          value = "true";
        } else if (i + 1 < args.size()) {
          value = args[++i];
        } else {
          return absl::InvalidArgumentError(absl::StrCat("--", ClipValue(name), " needs a value"));
        }
      }
      absl::Status s = Assign(*flag, value);
      if (!s.ok()) return s;
      continue;
    }
    // key=value, and Hydra's ~key (remove a key), which has no '=' (a path such as ~/x.yaml or
    // ~user/x.yaml stays positional).
    const bool removal = arg.size() > 1 && arg[0] == '~' && arg.find('/') == std::string::npos;
    if (allow_overrides_ && (arg.find('=') != std::string::npos || removal)) {
      overrides_.push_back(arg);
    } else {
      positional_.push_back(arg);
    }
  }
  if (help_requested_) return absl::OkStatus();
  const int n = static_cast<int>(positional_.size());
  if (n < min_positional_) {
    return absl::InvalidArgumentError(
        absl::StrCat("missing argument: usage: ", program_, " ", usage_args_));
  }
  if (max_positional_ >= 0 && n > max_positional_) {
    return absl::InvalidArgumentError(absl::StrCat("unexpected argument '",
                                                   ClipValue(positional_[max_positional_]),
                                                   "': usage: ", program_, " ", usage_args_));
  }
  return absl::OkStatus();
}

std::string CommandLine::Help() const {
  std::ostringstream out;
  out << "Usage: " << program_ << (flags_.empty() ? "" : " [flags]")
      << (usage_args_.empty() ? "" : " " + usage_args_) << "\n\n"
      << description_ << "\n";
  if (!flags_.empty()) {
    out << "\nFlags:\n";
    for (const Flag& f : flags_) {
      std::string left = "  --" + f.name + (f.kind == Kind::kBool ? "" : "=" + f.value_name);
      out << left;
      if (left.size() < 28) {
        out << std::string(28 - left.size(), ' ');
      } else {
        out << "\n" << std::string(28, ' ');
      }
      out << f.help;
      if (!f.default_text.empty()) out << " (default " << f.default_text << ")";
      out << "\n";
    }
  }
  out << "  --help                    show this help\n";
  for (const Flag& f : flags_) {
    if (f.name.find('_') == std::string::npos) continue;
    std::string dashed = f.name;
    for (char& c : dashed) {
      if (c == '_') c = '-';
    }
    out << "\nFlags take dashes for underscores too: --" << dashed << " = --" << f.name << ".\n";
    break;
  }
  if (!epilog_.empty()) out << "\n" << epilog_ << (absl::EndsWith(epilog_, "\n") ? "" : "\n");
  return out.str();
}

int RunSubcommands(const std::string& program, const std::string& description,
                   const std::vector<Subcommand>& subcommands, int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto overview = [&]() {
    std::ostringstream out;
    out << "Usage: " << program << " COMMAND [flags] [args]\n\n"
        << description << "\n\nCommands:\n";
    for (const Subcommand& s : subcommands) {
      out << "  " << s.name << std::string(s.name.size() < 10 ? 10 - s.name.size() : 1, ' ')
          << s.summary << "\n";
    }
    out << "\nRun '" << program << " COMMAND --help' for a command's flags.\n";
    return out.str();
  };
  if (args.empty()) {
    std::cerr << overview();
    return kExitUsage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << overview();
    return kExitOk;
  }
  for (const Subcommand& s : subcommands) {
    if (s.name == args[0]) {
      return s.run(std::vector<std::string>(args.begin() + 1, args.end()));
    }
  }
  std::string names;
  for (const Subcommand& s : subcommands) names += (names.empty() ? "" : ", ") + s.name;
  std::cerr << program << ": error: unknown command '" << ClipValue(args[0])
            << "' (commands: " << names << "; see " << program << " --help)\n";
  return kExitUsage;
}

void ChdirToUserWorkingDirectory() {
  const char* dir = std::getenv("BUILD_WORKING_DIRECTORY");
  if (dir != nullptr && *dir != '\0' && ::chdir(dir) != 0) {
    std::cerr << "warning: cannot enter " << dir << ": " << std::strerror(errno) << "\n";
  }
}

void InitBinary(const std::string& role, bool rank_from_env) {
  ChdirToUserWorkingDirectory();
  SetLogRole(role);
  if (rank_from_env) SetLogRank(EnvInt("RANK", -1));
}

int RunMain(const std::string& role, int (*run)(int argc, char** argv), int argc, char** argv) {
  InitBinary(role);
  return run(argc, argv);
}

void PrintError(const std::string& program, const absl::Status& status) {
  std::string message(status.message());
  // Keep it to one line.
  for (char& c : message) {
    if (c == '\n') c = ' ';
  }
  std::cerr << program << ": error: " << message << "\n";
}

int ParseOrExit(CommandLine& cli, const std::vector<std::string>& args, const char* program) {
  absl::Status status = cli.Parse(args);
  if (cli.help_requested()) {
    std::cout << cli.Help();
    return kExitOk;
  }
  if (!status.ok()) {
    PrintError(program, status);
    return kExitUsage;
  }
  return -1;
}

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  int out;
  return v != nullptr && absl::SimpleAtoi(v, &out) ? out : fallback;
}

}  // namespace tunefleet
