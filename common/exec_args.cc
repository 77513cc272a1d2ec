#include "common/exec_args.h"

extern char** environ;

namespace tunefleet {

ExecArgs::ExecArgs(const std::string& binary, const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env) {
  arg_strings_.push_back(binary);
  arg_strings_.insert(arg_strings_.end(), args.begin(), args.end());
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (env.count(entry.substr(0, entry.find('='))) == 0) env_strings_.push_back(entry);
  }
  for (const auto& [name, value] : env) env_strings_.push_back(name + "=" + value);
  for (std::string& s : arg_strings_) argv_.push_back(s.data());
  argv_.push_back(nullptr);
  for (std::string& s : env_strings_) envp_.push_back(s.data());
  envp_.push_back(nullptr);
}

}  // namespace tunefleet
