#include "launcher/agent/trial_guard.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/trial_env.h"

namespace tunefleet {
namespace launcher {
namespace {

std::string Clip(const std::string& s) {
  return s.size() <= 200 ? s : absl::StrCat(s.substr(0, 200), "... (", s.size(), " characters)");
}

// realpath of the longest existing prefix of `path`, with the rest appended; the deepest
// existing component's owner in *owner.
std::string ResolveExisting(const std::string& path, uid_t* owner) {
  std::string existing = path;
  std::string rest;
  while (true) {
    char resolved[PATH_MAX];
    if (::realpath(existing.c_str(), resolved) != nullptr) {
      struct stat st;
      *owner = ::stat(resolved, &st) == 0 ? st.st_uid : static_cast<uid_t>(-1);
      std::string out = resolved;
      if (!rest.empty()) out = out == "/" ? "/" + rest : out + "/" + rest;
      return out;
    }
    const size_t slash = existing.rfind('/');
    if (slash == std::string::npos || existing.empty()) {
      *owner = static_cast<uid_t>(-1);
      return path;
    }
    const std::string last = existing.substr(slash + 1);
    rest = rest.empty() ? last : last + "/" + rest;
    existing = slash == 0 ? "/" : existing.substr(0, slash);
  }
}

bool Inside(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path == root || absl::StartsWith(path, root + "/");
}

}  // namespace

std::map<std::string, std::string> FilterTrialEnv(const std::map<std::string, std::string>& env,
                                                  const std::set<std::string>& allowed_names,
                                                  std::vector<std::string>* dropped) {
  std::map<std::string, std::string> kept;
  for (const auto& [name, value] : env) {
    const bool ok = TrialEnvForbidden(name).empty() &&
                    (TrialEnvByDefault(name) || allowed_names.count(name) > 0);
    if (ok) {
      kept[name] = value;
    } else {
      dropped->push_back(Clip(name));
    }
  }
  return kept;
}

absl::Status CheckTrialPath(const std::string& what, const std::string& path,
                            const std::vector<std::string>& roots) {
  if (path.empty() || path[0] != '/') {
    return absl::PermissionDeniedError(
        absl::StrCat(what, " '", Clip(path), "' is not an absolute path"));
  }
  uid_t owner = 0;
  const std::string resolved = ResolveExisting(path, &owner);
  bool inside = false;
  std::vector<std::string> resolved_roots;
  for (const std::string& root : roots) {
    uid_t ignored = 0;
    resolved_roots.push_back(ResolveExisting(root, &ignored));
    inside = inside || Inside(resolved, resolved_roots.back());
  }
  if (!inside) {
    return absl::PermissionDeniedError(
        absl::StrCat(what, " ", Clip(path), " lies outside the folders this agent serves (",
                     absl::StrJoin(resolved_roots, ", "), "; agent --allow_dir adds one)"));
  }
  if (owner != ::geteuid()) {
    return absl::PermissionDeniedError(
        absl::StrCat(what, " ", Clip(path), ": its folder belongs to uid ", static_cast<int>(owner),
                     ", not to this agent's uid ", ::geteuid()));
  }
  return absl::OkStatus();
}

}  // namespace launcher
}  // namespace tunefleet
