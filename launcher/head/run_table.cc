#include "launcher/head/run_table.h"

#include <algorithm>

namespace tunefleet {
namespace launcher {
namespace {

int PartUnits(const comm::TrialSpec& spec, const RunPart& part) {
  return part.units > 0 ? part.units : RunUnits(spec, static_cast<int>(part.ranks.size()));
}

}  // namespace

bool RunRecord::AllEnded() const {
  return std::all_of(parts.begin(), parts.end(), [](const RunPart& p) { return p.ended; });
}

RunPart* RunRecord::LivePart(const std::string& agent) {
  for (RunPart& p : parts) {
    if (!p.ended && p.agent == agent) return &p;
  }
  return nullptr;
}

comm::Exit RunRecord::Aggregate() const {
  comm::Exit exit;
  if (first_failure.has_value()) {
    exit = *first_failure;
  } else if (any_cancelled) {
    exit.set_outcome(comm::Exit::CANCELLED);
  } else if (any_stopped) {
    exit.set_outcome(comm::Exit::STOPPED);
  } else {
    exit.set_outcome(comm::Exit::COMPLETED);
  }
  exit.set_run_id(run_id);
  exit.set_trial(spec.trial());
  exit.clear_fetch_token();  // an agent's bulk secret is the head's alone, never the client's
  return exit;
}

RunRecord& RunTable::Submit(comm::TrialSpec spec, const std::string& client) {
  const uint64_t run_id = next_run_id_++;
  spec.set_run_id(run_id);
  RunRecord& run = runs_[run_id];
  run.run_id = run_id;
  run.client = client;
  by_trial_[client][spec.trial()] = run_id;
  run.spec = std::move(spec);
  queue_.push_back(run_id);
  return run;
}

RunRecord* RunTable::Find(uint64_t run_id) {
  auto it = runs_.find(run_id);
  return it == runs_.end() ? nullptr : &it->second;
}

RunRecord* RunTable::FindForClient(const std::string& client, uint64_t run_id, int64_t trial) {
  if (run_id != 0) {
    RunRecord* run = Find(run_id);
    if (run != nullptr && run->client == client) return run;
  }
  auto c = by_trial_.find(client);
  if (c == by_trial_.end()) return nullptr;
  auto t = c->second.find(trial);
  return t == c->second.end() ? nullptr : Find(t->second);
}

void RunTable::Place(RunRecord& run, std::vector<RunPart> parts, std::string master_addr,
                     int master_port) {
  if (!queue_.empty() && queue_.front() == run.run_id) {
    queue_.pop_front();  // the usual case (strict FIFO), without a pass over the queue
  } else {
    queue_.erase(std::remove(queue_.begin(), queue_.end(), run.run_id), queue_.end());
  }
  run.queued = false;
  run.parts = std::move(parts);
  run.master_addr = std::move(master_addr);
  run.master_port = master_port;
  for (const RunPart& p : run.parts) busy_[p.agent] += PartUnits(run.spec, p);
}

bool RunTable::RecordExit(RunRecord& run, const std::string& agent, const comm::Exit& exit) {
  RunPart* part = run.LivePart(agent);
  if (part == nullptr) return false;
  part->ended = true;
  auto busy = busy_.find(agent);
  if (busy != busy_.end()) {
    busy->second -= PartUnits(run.spec, *part);
    if (busy->second <= 0) busy_.erase(busy);
  }
  switch (exit.outcome()) {
    case comm::Exit::FAILED:
      if (!run.first_failure.has_value()) {
        run.first_failure = exit;
        if (run.first_failure->agent().empty()) run.first_failure->set_agent(part->agent_name);
      }
      break;
    case comm::Exit::CANCELLED:
      run.any_cancelled = true;
      break;
    case comm::Exit::STOPPED:
      run.any_stopped = true;
      break;
    default:
      break;
  }
  return true;
}

void RunTable::Erase(uint64_t run_id) {
  auto it = runs_.find(run_id);
  if (it == runs_.end()) return;
  if (it->second.adopted && it->second.client.empty()) ForgetOrphan(it->second);
  if (it->second.queued) {
    queue_.erase(std::remove(queue_.begin(), queue_.end(), run_id), queue_.end());
  }
  DetachClient(it->second);
  runs_.erase(it);
}

void RunTable::DetachClient(RunRecord& run) {
  auto c = by_trial_.find(run.client);
  if (c != by_trial_.end()) {
    auto t = c->second.find(run.spec.trial());
    if (t != c->second.end() && t->second == run.run_id) c->second.erase(t);
    if (c->second.empty()) by_trial_.erase(c);
  }
  run.client.clear();
}

RunRecord* RunTable::Adopt(const comm::HeldRun& held, const std::string& agent,
                           const std::string& agent_name, absl::Time until, bool gpus) {
  const uint64_t run_id = held.trial().run_id();
  if (run_id >= next_run_id_) next_run_id_ = run_id + 1;
  auto [it, inserted] = runs_.try_emplace(run_id);
  RunRecord& run = it->second;
  if (inserted) {
    run.run_id = run_id;
    run.spec = held.trial();
    run.queued = false;
    run.adopted = true;
    run.orphan_until = until;
    run.master_addr = held.master_addr();
    run.master_port = held.master_port();
    orphans_[run.spec.client()][run.spec.trial()] = run_id;
  } else {
    for (const RunPart& p : run.parts) {
      if (p.agent_name == agent_name) return nullptr;
    }
  }
  RunPart part;
  part.agent = agent;
  part.agent_name = agent_name;
  part.ranks.assign(held.ranks().begin(), held.ranks().end());
  std::sort(part.ranks.begin(), part.ranks.end());
  part.units = RunUnits(run.spec, static_cast<int>(part.ranks.size()), gpus);
  busy_[agent] += PartUnits(run.spec, part);
  const int first = part.ranks.empty() ? 0 : part.ranks.front();
  auto at = std::find_if(run.parts.begin(), run.parts.end(), [first](const RunPart& p) {
    return !p.ranks.empty() && p.ranks.front() > first;
  });
  run.parts.insert(at, std::move(part));
  return &run;
}

RunRecord* RunTable::FindOrphan(const std::string& client_name, int64_t trial) {
  auto c = orphans_.find(client_name);
  if (c == orphans_.end()) return nullptr;
  auto t = c->second.find(trial);
  return t == c->second.end() ? nullptr : Find(t->second);
}

void RunTable::ForgetOrphan(RunRecord& run) {
  auto c = orphans_.find(run.spec.client());
  if (c == orphans_.end()) return;
  auto t = c->second.find(run.spec.trial());
  if (t != c->second.end() && t->second == run.run_id) c->second.erase(t);
  if (c->second.empty()) orphans_.erase(c);
}

void RunTable::AttachClient(RunRecord& run, const std::string& client) {
  ForgetOrphan(run);
  run.client = client;
  by_trial_[client][run.spec.trial()] = run.run_id;
}

void RunTable::Orphan(RunRecord& run, absl::Time until) {
  DetachClient(run);
  run.adopted = true;
  run.client_lost = true;
  run.orphan_until = until;
  orphans_[run.spec.client()][run.spec.trial()] = run.run_id;
}

std::vector<uint64_t> RunTable::OrphansExpired(absl::Time now) const {
  std::vector<uint64_t> out;
  for (const auto& [name, trials] : orphans_) {
    for (const auto& [trial, id] : trials) {
      auto it = runs_.find(id);
      if (it != runs_.end() && it->second.orphan_until <= now) out.push_back(id);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

int RunTable::BusyUnits(const std::string& agent) const {
  auto it = busy_.find(agent);
  return it == busy_.end() ? 0 : it->second;
}

int RunTable::BusySlots(const std::string& agent) const {
  return (BusyUnits(agent) + kSlotUnits - 1) / kSlotUnits;
}

int RunUnits(const comm::TrialSpec& spec, int ranks, bool gpus) {
  if (gpus && ranks == 1 && spec.world_size() == 1 && spec.trials_per_gpu() > 1) {
    return std::max(1, kSlotUnits / spec.trials_per_gpu());
  }
  return ranks * kSlotUnits;
}

std::vector<uint64_t> RunTable::RunsOnAgent(const std::string& agent) const {
  std::vector<uint64_t> out;
  for (const auto& [id, run] : runs_) {
    for (const RunPart& p : run.parts) {
      if (!p.ended && p.agent == agent) {
        out.push_back(id);
        break;
      }
    }
  }
  return out;
}

std::vector<uint64_t> RunTable::RunsOfClient(const std::string& client) const {
  std::vector<uint64_t> out;
  for (const auto& [id, run] : runs_) {
    if (!client.empty() && run.client == client) out.push_back(id);
  }
  return out;
}

}  // namespace launcher
}  // namespace tunefleet
