// The argv and envp a child process is exec'ed with, built before fork(2), since the child of a
// multi-threaded process may not allocate: the binary and its arguments, and this process's
// environment with some variables set on top.
//
//   const ExecArgs exec(binary, args, {{"RANK", "0"}});
//   if (::fork() == 0) { ...; ::execve(exec.argv()[0], exec.argv(), exec.envp()); _exit(127); }
//
// Thread-safety: reads `environ` once, in the constructor; then immutable. Neither copyable nor
// movable: argv() and envp() point into its own strings.
#ifndef TUNEFLEET_COMMON_EXEC_ARGS_H_
#define TUNEFLEET_COMMON_EXEC_ARGS_H_

#include <map>
#include <string>
#include <vector>

namespace tunefleet {

class ExecArgs {
 public:
  ExecArgs(const std::string& binary, const std::vector<std::string>& args,
           const std::map<std::string, std::string>& env);
  ExecArgs(const ExecArgs&) = delete;
  ExecArgs& operator=(const ExecArgs&) = delete;

  char* const* argv() const { return argv_.data(); }  // binary first, null-terminated
  char* const* envp() const { return envp_.data(); }  // NAME=VALUE, null-terminated

 private:
  std::vector<std::string> arg_strings_;
  std::vector<std::string> env_strings_;
  std::vector<char*> argv_;
  std::vector<char*> envp_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_EXEC_ARGS_H_
