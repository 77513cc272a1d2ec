// The head's bookkeeping of runs (one attempt of a trial, head-assigned run_id counting up from a
// per-head-instance base, so that a restarted head never reuses the ids of runs agents still hold):
// the FIFO queue of runs waiting for slots, the runs placed on agents with each agent's part
// (its ranks, and whether that agent reported its Exit), the slots each agent has busy, and the
// aggregation of the parts' Exits into the one Exit the client gets. No sockets, no clocks: the
// head (head.h) does the talking and calls these as messages arrive.
//
// Invariants:
//   - A run is either queued (no parts) or placed (one part per agent it runs on, ranks
//     consecutive, parts[0] hosts rank 0).
//   - An agent's busy slots are the ranks of its parts that have not ended (a run sharing a
//     GPU holds a share of one, BusyUnits); a part ends with
//     the agent's Exit for the run, or when the agent is lost (RecordExit with a synthetic
//     FAILED Exit), so slots stay busy until the agent's ranks are really gone.
//   - A run leaves the table when it is dropped from the queue or when its last part ended. It
//     may outlive its report to the client (`reported`): after an agent loss the client learns
//     at once, while the other agents' cancelled ranks still hold their slots.
//   - Adoption (head restart): agents registering again tell the head which runs they hold;
//     Adopt() rebuilds those runs as placed, with no client yet (an orphan), keyed by the
//     submitting client's name and trial until that client submits the trial again
//     (FindOrphan + AttachClient). An orphan keeps what it should tell its client (held) and
//     stays in the table, even when all its parts ended, until it is reported or dropped.
//   - A client the head lost (silent) leaves its placed runs as orphans the same way
//     (Orphan()), so that it can register again and claim them.
// Thread-safety: not thread-safe; owned by the head's poll loop.
#ifndef TUNEFLEET_LAUNCHER_HEAD_RUN_TABLE_H_
#define TUNEFLEET_LAUNCHER_HEAD_RUN_TABLE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"
#include "launcher/head/placement.h"

namespace tunefleet {
namespace launcher {

struct RunPart {
  std::string agent;       // the agent's ROUTER identity
  std::string agent_name;  // its registered name, for messages and logs
  std::vector<int> ranks;  // global ranks it runs, ascending
  // The slot units (placement.h) it holds, set where it is placed or adopted (RunUnits on its
  // agent); 0: RunUnits of its ranks on GPUs.
  int units = 0;
  bool ended = false;  // its Exit arrived, or the agent was lost
};

struct RunRecord {
  uint64_t run_id = 0;
  comm::TrialSpec spec;  // run_id filled in
  std::string client;    // the submitting client's identity; "" once that client is gone
  bool queued = true;
  bool cancel_sent = false;  // a Cancel went to every part still running
  bool reported = false;     // the client got this run's Exit (or has gone)
  std::vector<RunPart> parts;
  std::string master_addr;
  int master_port = 0;
  // Aggregation of the parts' Exits, in arrival order.
  std::optional<comm::Exit> first_failure;
  bool any_cancelled = false;
  bool any_stopped = false;
  // An orphan: adopted from agents by a restarted head, or left by a client the head lost
  // (client_lost); until a client claims it, messages for the client wait in `held` (in
  // arrival order). Unclaimed at orphan_until, it is cancelled.
  bool adopted = false;
  bool client_lost = false;
  absl::Time orphan_until = absl::InfiniteFuture();
  std::vector<comm::Envelope> held;

  bool AllEnded() const;
  // The part of `agent` that has not ended, or null.
  RunPart* LivePart(const std::string& agent);
  // The run's outcome for the client: FAILED with the first failing part's details if any part
  // failed, else CANCELLED if any was cancelled, else STOPPED if any stopped, else COMPLETED.
  comm::Exit Aggregate() const;
};

// The units of a slot (placement.h) a run's part of `ranks` ranks holds on an agent with GPUs
// (`gpus`): a one-rank run sharing a GPU holds kSlotUnits / trials_per_gpu; on an agent of CPU
// slots it holds a whole slot, as every other rank does (a CPU slot's cores are not shared).
int RunUnits(const comm::TrialSpec& spec, int ranks, bool gpus = true);

class RunTable {
 public:
  explicit RunTable(uint64_t first_run_id = 1) : next_run_id_(first_run_id) {}

  // Gives the run the next run_id and appends it to the queue.
  RunRecord& Submit(comm::TrialSpec spec, const std::string& client);

  RunRecord* Find(uint64_t run_id);
  // A client's run: by run_id when it is non-zero and the client's, else its latest run of
  // `trial` (clients address runs by trial number).
  RunRecord* FindForClient(const std::string& client, uint64_t run_id, int64_t trial);

  // Queued run_ids, ascending (FIFO: run_ids increase with each Submit).
  const std::deque<uint64_t>& queue() const { return queue_; }
  const std::map<uint64_t, RunRecord>& runs() const { return runs_; }

  // Moves a queued run onto agents; their slots become busy.
  void Place(RunRecord& run, std::vector<RunPart> parts, std::string master_addr, int master_port);
  // Ends `agent`'s part of the run with `exit` (frees its slots, adds it to the aggregate).
  // Returns false when the agent has no running part of this run.
  bool RecordExit(RunRecord& run, const std::string& agent, const comm::Exit& exit);
  // Removes the run (from the queue, the client's index, the table). Its parts must have ended.
  void Erase(uint64_t run_id);
  // The run no longer has a client to report to.
  void DetachClient(RunRecord& run);

  // Adds `agent`'s part of a run it held across a head restart; creates the run (placed, no
  // client) when this is its first part. Returns null when that agent's part is known already
  // (a repeated Register). Parts stay ordered by their first rank (rank 0's part first).
  // An orphan made here is cancelled if unclaimed at `until`. `gpus`: whether the agent has
  // GPUs (RunUnits).
  RunRecord* Adopt(const comm::HeldRun& held, const std::string& agent,
                   const std::string& agent_name, absl::Time until, bool gpus);
  // A placed run whose client is gone becomes an orphan of that client's name, until `until`.
  void Orphan(RunRecord& run, absl::Time until);
  // The orphan run of the client named `client_name` for `trial`, or null.
  RunRecord* FindOrphan(const std::string& client_name, int64_t trial);
  // Gives an orphan its client (identity): Decisions and Cancels find it from now on.
  void AttachClient(RunRecord& run, const std::string& client);
  // The run is no orphan any more (dropped unclaimed); its client stays empty.
  void ForgetOrphan(RunRecord& run);
  // Orphans unclaimed at `now` whose time is up, ascending.
  std::vector<uint64_t> OrphansExpired(absl::Time now) const;

  // The agent's slots in use, in units of kSlotUnits (placement.h): a run sharing a GPU holds
  // kSlotUnits / trials_per_gpu; BusySlots rounds them up to slots.
  int BusyUnits(const std::string& agent) const;
  int BusySlots(const std::string& agent) const;
  // Runs with a running part on `agent`, ascending.
  std::vector<uint64_t> RunsOnAgent(const std::string& agent) const;
  // Runs submitted by `client`, ascending.
  std::vector<uint64_t> RunsOfClient(const std::string& client) const;

 private:
  uint64_t next_run_id_ = 1;
  std::map<uint64_t, RunRecord> runs_;
  std::deque<uint64_t> queue_;
  // client identity -> trial -> latest run_id.
  absl::flat_hash_map<std::string, absl::flat_hash_map<int64_t, uint64_t>> by_trial_;
  absl::flat_hash_map<std::string, int> busy_;
  // Orphans: client name -> trial -> run_id.
  absl::flat_hash_map<std::string, absl::flat_hash_map<int64_t, uint64_t>> orphans_;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_HEAD_RUN_TABLE_H_
