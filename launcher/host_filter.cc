#include "launcher/host_filter.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace launcher {
namespace {

struct Rule {
  std::string host;
  std::vector<int> ids;  // empty: the whole host
};

absl::StatusOr<std::vector<Rule>> ParseFilter(const std::string& text, const std::string& flag) {
  std::vector<Rule> rules;
  std::set<std::string> named;
  for (const std::string& part : std::vector<std::string>(absl::StrSplit(text, '@'))) {
    const std::vector<std::string> host_ids = absl::StrSplit(part, absl::MaxSplits(':', 1));
    Rule rule;
    rule.host = host_ids[0];
    if (rule.host.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, " '", text, "': expected HOST[:ID,ID...][@HOST...], found an empty host"));
    }
    if (!named.insert(rule.host).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, " '", text, "': host ", rule.host, " is named twice"));
    }
    if (host_ids.size() > 1) {
      ASSIGN_OR_RETURN(rule.ids, ParseGpuIds(host_ids[1], absl::StrCat(flag, " '", text, "'")));
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseGpuIds(const std::string& text, const std::string& what) {
  std::vector<int> ids;
  for (const std::string& item : std::vector<std::string>(absl::StrSplit(text, ','))) {
    int id = -1;
    if (!absl::SimpleAtoi(item, &id) || id < 0 || id > 4095) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": '", item, "' is not a GPU index (0, 1, ...)"));
    }
    if (std::find(ids.begin(), ids.end(), id) != ids.end()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": GPU ", id, " is listed twice"));
    }
    ids.push_back(id);
  }
  return ids;
}

absl::StatusOr<std::vector<GpuInfo>> SelectGpus(const std::vector<GpuInfo>& seen,
                                                const std::vector<int>& ids,
                                                const std::vector<int>& excluded) {
  for (const auto& [flag, list] :
       {std::pair<const char*, const std::vector<int>*>{"--gpu_ids", &ids},
        {"--exclude_gpu_ids", &excluded}}) {
    for (int id : *list) {
      if (id >= static_cast<int>(seen.size())) {
        return absl::InvalidArgumentError(absl::StrCat(
            flag, " ", absl::StrJoin(*list, ","), ": this host shows ", seen.size(), " GPU(s)",
            seen.empty() ? "" : absl::StrCat(" (0-", seen.size() - 1, ")"), ", no GPU ", id));
      }
    }
  }
  std::vector<GpuInfo> out;
  if (!ids.empty()) {
    for (int id : ids) out.push_back(seen[static_cast<size_t>(id)]);
    return out;
  }
  for (size_t i = 0; i < seen.size(); ++i) {
    if (std::find(excluded.begin(), excluded.end(), static_cast<int>(i)) == excluded.end()) {
      out.push_back(seen[i]);
    }
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--exclude_gpu_ids ", absl::StrJoin(excluded, ","), " leaves no GPU"));
  }
  return out;
}

absl::StatusOr<std::vector<HostEntry>> FilterHosts(std::vector<HostEntry> hosts,
                                                   const std::string& include,
                                                   const std::string& exclude,
                                                   const std::string& source) {
  if (!include.empty() && !exclude.empty()) {
    return absl::InvalidArgumentError("--include and --exclude: give one or the other");
  }
  if (include.empty() && exclude.empty()) return hosts;
  const bool including = !include.empty();
  const std::string flag = including ? "--include" : "--exclude";
  ASSIGN_OR_RETURN(std::vector<Rule> rules, ParseFilter(including ? include : exclude, flag));
  std::map<size_t, const Rule*> rule_of;  // host index -> its rule
  for (const Rule& rule : rules) {
    size_t found = hosts.size();
    for (size_t i = 0; i < hosts.size(); ++i) {
      if (hosts[i].host == rule.host || AgentNameOf(hosts[i].host) == rule.host) found = i;
    }
    if (found == hosts.size()) {
      std::vector<std::string> names;
      for (const HostEntry& h : hosts) names.push_back(AgentNameOf(h.host));
      return absl::InvalidArgumentError(absl::StrCat(flag, ": host ", rule.host, " is not in ",
                                                     source, " (", absl::StrJoin(names, ", "),
                                                     ")"));
    }
    const HostEntry& h = hosts[found];
    for (int id : rule.ids) {
      if (h.slots > 0 && id >= h.slots) {
        return absl::InvalidArgumentError(absl::StrCat(flag, ": host ", rule.host,
                                                       " has slots=", h.slots, " (GPUs 0-",
                                                       h.slots - 1, "): no GPU ", id));
      }
    }
    rule_of[found] = &rule;
  }
  std::vector<HostEntry> kept;
  for (size_t i = 0; i < hosts.size(); ++i) {
    HostEntry h = std::move(hosts[i]);
    auto it = rule_of.find(i);
    const Rule* rule = it == rule_of.end() ? nullptr : it->second;
    if (including) {
      if (rule == nullptr) continue;
      if (!rule->ids.empty()) {
        h.gpu_ids = rule->ids;
        h.slots = static_cast<int>(rule->ids.size());
      }
    } else if (rule != nullptr) {
      if (rule->ids.empty()) continue;
      if (h.slots > 0) {
        for (int g = 0; g < h.slots; ++g) {
          if (std::find(rule->ids.begin(), rule->ids.end(), g) == rule->ids.end()) {
            h.gpu_ids.push_back(g);
          }
        }
        if (h.gpu_ids.empty()) continue;  // every GPU excluded: the host goes
        h.slots = static_cast<int>(h.gpu_ids.size());
      } else {
        h.exclude_gpu_ids = rule->ids;
      }
    }
    kept.push_back(std::move(h));
  }
  if (kept.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " leaves no host of ", source));
  }
  return kept;
}

}  // namespace launcher
}  // namespace tunefleet
