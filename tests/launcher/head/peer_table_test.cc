// PeerTable (launcher/head/peer_table.h) on its own: who may register, what an agent's entry
// holds (slots capped by the hosts file), placement order, liveness and missing hosts.
#include "launcher/head/peer_table.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"
#include "gtest/gtest.h"
#include "launcher/hosts_file.h"

namespace tunefleet {
namespace launcher {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1000);

comm::Register Agent(const std::string& name, int slots, int gpus = 0) {
  comm::Register reg;
  reg.set_role(comm::AGENT);
  reg.set_name(name);
  reg.set_slots(slots);
  reg.set_hostname(name + ".local");
  reg.set_pid(42);
  for (int g = 0; g < gpus; ++g) reg.add_gpus("GPU " + std::to_string(g));
  return reg;
}

comm::Register Client(const std::string& name) {
  comm::Register reg;
  reg.set_role(comm::CLIENT);
  reg.set_name(name);
  return reg;
}

HostEntry Host(const std::string& host, int slots = 0) {
  HostEntry entry;
  entry.host = host;
  entry.slots = slots;
  return entry;
}

TEST(PeerTableTest, CheckAgentWantsANameSlotsAndAHostsFileEntry) {
  PeerTable open({}, "", absl::Seconds(1));
  EXPECT_TRUE(open.CheckAgent(Agent("anyone", 1)).ok());
  EXPECT_EQ(open.CheckAgent(Agent("", 1)).code(), absl::StatusCode::kInvalidArgument);
  const absl::Status no_slots = open.CheckAgent(Agent("n1", 0));
  EXPECT_EQ(no_slots.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(no_slots.message(), "agent n1 offers no slots");

  PeerTable listed({Host("n1"), Host("me@n2")}, "/etc/hosts.txt", absl::Seconds(1));
  EXPECT_TRUE(listed.has_hosts());
  EXPECT_FALSE(open.has_hosts());
  EXPECT_TRUE(listed.CheckAgent(Agent("n1", 1)).ok());
  EXPECT_TRUE(listed.CheckAgent(Agent("n2", 1)).ok());  // user@host stands for host
  const absl::Status stranger = listed.CheckAgent(Agent("n3", 1));
  EXPECT_EQ(stranger.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(stranger.message(), "agent n3 is not in /etc/hosts.txt");
}

TEST(PeerTableTest, UpsertAddsOnceAndCapsSlotsByTheHostsFile) {
  PeerTable table({Host("n0"), Host("n1", 2)}, "hosts", absl::Seconds(1));
  comm::Register reg = Agent("n1", 8, 8);
  reg.set_address("10.0.0.5");
  auto [peer, added] = table.Upsert("id1", reg, kT0);
  ASSERT_NE(peer, nullptr);
  EXPECT_TRUE(added);
  EXPECT_EQ(peer->role, comm::AGENT);
  EXPECT_EQ(peer->name, "n1");
  EXPECT_EQ(peer->address, "10.0.0.5");
  EXPECT_EQ(peer->hostname, "n1.local");
  EXPECT_EQ(peer->offered_slots, 8);
  EXPECT_EQ(peer->slots, 2);  // hosts file: slots=2
  EXPECT_EQ(peer->gpus, 8);
  EXPECT_EQ(peer->pid, 42);
  EXPECT_EQ(peer->host_index, 2);
  EXPECT_EQ(peer->seq, 1u);

  auto [again, added_again] = table.Upsert("id1", Agent("n1", 1), kT0);
  EXPECT_FALSE(added_again);
  EXPECT_EQ(again, peer);
  EXPECT_EQ(again->slots, 1);              // below the cap: what it offers
  EXPECT_EQ(again->address, "127.0.0.1");  // no address: loopback
  EXPECT_EQ(again->seq, 1u);               // keeps its registration number
  EXPECT_EQ(table.Find("id1"), peer);
  EXPECT_EQ(table.Find("id2"), nullptr);
  table.Erase("id1");
  EXPECT_EQ(table.Find("id1"), nullptr);
  EXPECT_TRUE(table.peers().empty());
}

TEST(PeerTableTest, AgentsInHostsFileOrderElseRegistrationOrder) {
  PeerTable listed({Host("c"), Host("a"), Host("b")}, "hosts", absl::Seconds(1));
  listed.Upsert("id-a", Agent("a", 1), kT0);
  listed.Upsert("id-client", Client("hpo"), kT0);
  listed.Upsert("id-b", Agent("b", 1), kT0);
  listed.Upsert("id-c", Agent("c", 1), kT0);
  EXPECT_EQ(listed.AgentsInOrder(), (std::vector<std::string>{"id-c", "id-a", "id-b"}));

  PeerTable open({}, "", absl::Seconds(1));
  open.Upsert("id-z", Agent("z", 1), kT0);
  open.Upsert("id-y", Agent("y", 1), kT0);
  open.Upsert("id-client", Client("hpo"), kT0);
  open.Upsert("id-x", Agent("x", 1), kT0);
  EXPECT_EQ(open.AgentsInOrder(), (std::vector<std::string>{"id-z", "id-y", "id-x"}));
}

TEST(PeerTableTest, AgentNamedFindsAnotherAgentOfThatName) {
  PeerTable table({}, "", absl::Seconds(1));
  table.Upsert("id1", Agent("n1", 1), kT0);
  table.Upsert("id-client", Client("n2"), kT0);
  EXPECT_EQ(table.AgentNamed("n1", "id9"), "id1");
  EXPECT_EQ(table.AgentNamed("n1", "id1"), "");  // itself
  EXPECT_EQ(table.AgentNamed("n2", "id9"), "");  // a client is no agent
  EXPECT_EQ(table.AgentNamed("n3", "id9"), "");
}

TEST(PeerTableTest, SilentAfterThreeIntervalsAndHeartbeatsDueAfterOne) {
  PeerTable table({}, "", absl::Seconds(1));
  table.Upsert("early", Agent("n1", 1), kT0);
  table.Upsert("late", Client("hpo"), kT0 + absl::Seconds(2));
  EXPECT_TRUE(table.Silent(kT0 + absl::Milliseconds(2999)).empty());
  EXPECT_EQ(table.Silent(kT0 + absl::Seconds(3)), (std::vector<std::string>{"early"}));
  EXPECT_TRUE(table.HeartbeatDue(kT0 + absl::Milliseconds(999)).empty());
  EXPECT_EQ(table.HeartbeatDue(kT0 + absl::Seconds(1)), (std::vector<std::string>{"early"}));
  // Heard again (a new message) keeps it alive.
  table.Find("early")->liveness.Heard(kT0 + absl::Seconds(2));
  EXPECT_TRUE(table.Silent(kT0 + absl::Seconds(3)).empty());
}

TEST(PeerTableTest, TotalSlotsAndMissingHostsCountAgentsOnly) {
  PeerTable table({Host("n1", 2), Host("u@n2"), Host("n3")}, "hosts", absl::Seconds(1));
  EXPECT_EQ(table.TotalSlots(), 0);
  EXPECT_EQ(table.MissingHosts().size(), 3u);
  table.Upsert("id1", Agent("n1", 4), kT0);
  table.Upsert("id2", Agent("n2", 3), kT0);
  table.Upsert("id-client", Client("n3"), kT0);  // a client named like a host stands for none
  EXPECT_EQ(table.TotalSlots(), 5);
  const std::vector<HostEntry> missing = table.MissingHosts();
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].host, "n3");
  EXPECT_EQ(table.hosts_file(), "hosts");
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
