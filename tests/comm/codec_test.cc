// The control-plane codec: every message type round-trips; oversized, malformed, body-less,
// version-less and other-version frames give the documented error codes; and a seeded mutation
// fuzz of valid frames of every type (1,000,000 inputs) never crashes and never returns an
// envelope without a body or of another version.
#include "comm/codec.h"

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace comm {
namespace {

// One envelope of every body type, with every kind of field filled.
std::vector<Envelope> Samples() {
  std::vector<Envelope> out;
  Envelope e;
  Register* reg = e.mutable_register_();
  reg->set_role(AGENT);
  reg->set_name("node-1");
  reg->set_hostname("node-1.example");
  reg->set_address("10.0.0.1");
  reg->set_slots(8);
  reg->add_gpus("NVIDIA H100 80GB HBM3");
  reg->set_pid(4242);
  out.push_back(e);
  // An agent registering again with a restarted head: the runs it holds.
  reg->set_previous_session("0123456789abcdef");
  comm::HeldRun* held = reg->add_runs();
  held->mutable_trial()->set_run_id(179542289000001);
  held->mutable_trial()->set_trial(3);
  held->mutable_trial()->add_argv("train");
  held->add_ranks(0);
  held->set_master_addr("10.0.0.1");
  held->set_master_port(29501);
  held->set_ended(true);
  held->mutable_exit()->set_outcome(Exit::COMPLETED);
  held->add_pending_reports()->set_step(20);
  out.push_back(e);
  e.Clear();
  e.mutable_welcome()->set_session("abc");
  e.mutable_welcome()->set_heartbeat_interval_ms(1000);
  out.push_back(e);
  e.Clear();
  e.mutable_heartbeat();
  out.push_back(e);
  e.Clear();
  TrialSpec* spec = e.mutable_submit()->mutable_trial();
  spec->set_trial(7);
  spec->set_sweep("sbert-stsb-lr");
  spec->set_world_size(2);
  spec->add_argv("train");
  spec->add_argv("--config=configs/sbert_stsb.yaml");
  (*spec->mutable_env())["TUNEFLEET_TRIAL"] = "7";
  comm::StagedPath* staged = spec->add_stage();
  staged->set_path("/data/sts-train.csv");
  staged->set_hash(std::string(64, 'a'));
  staged->set_bytes(50000000);
  spec->set_stage_port(40000);
  e.mutable_submit()->set_resubmit(true);
  out.push_back(e);
  e.Clear();
  *e.mutable_assign()->mutable_trial() = *spec;
  e.mutable_assign()->add_ranks(0);
  e.mutable_assign()->add_ranks(1);
  e.mutable_assign()->set_master_addr("10.0.0.1");
  e.mutable_assign()->set_master_port(29500);
  out.push_back(e);
  e.Clear();
  e.mutable_started()->set_run_id(3);
  e.mutable_started()->add_pids(100);
  out.push_back(e);
  e.Clear();
  Report* r = e.mutable_report();
  r->set_run_id(3);
  r->set_trial(7);
  r->set_step(10);
  (*r->mutable_metrics())["eval/spearman"] = 0.81;
  (*r->mutable_metrics())["train/loss"] = 0.05;
  out.push_back(e);
  e.Clear();
  e.mutable_decision()->set_trial(7);
  e.mutable_decision()->set_step(10);
  e.mutable_decision()->set_action(Decision::STOP);
  out.push_back(e);
  e.Clear();
  e.mutable_exit()->set_run_id(3);
  e.mutable_exit()->set_outcome(Exit::FAILED);
  e.mutable_exit()->set_signal(9);
  e.mutable_exit()->set_stderr_tail("Traceback...\n");
  out.push_back(e);
  e.Clear();
  e.mutable_cancel()->set_run_id(3);
  e.mutable_cancel()->set_reason("pruned");
  out.push_back(e);
  e.Clear();
  e.mutable_status_request();
  out.push_back(e);
  e.Clear();
  e.mutable_status()->add_agents()->set_name("node-1");
  e.mutable_status()->add_runs()->set_trial(7);
  out.push_back(e);
  e.Clear();
  e.mutable_refused()->set_reason("register first");
  e.mutable_refused()->set_supported_version(1);
  out.push_back(e);
  e.Clear();
  e.mutable_shutdown();
  out.push_back(e);
  return out;
}

TEST(CodecTest, EveryMessageTypeRoundTrips) {
  std::vector<Envelope> samples = Samples();
  ASSERT_EQ(samples.size(), 15u);  // one per body type of the oneof, and a Register with held runs
  for (const Envelope& e : samples) {
    absl::StatusOr<std::string> frame = EncodeEnvelope(e);
    ASSERT_TRUE(frame.ok()) << frame.status();
    absl::StatusOr<Envelope> back = DecodeEnvelope(*frame);
    ASSERT_TRUE(back.ok()) << BodyName(e) << ": " << back.status();
    EXPECT_EQ(back->version(), kProtocolVersion);
    EXPECT_EQ(back->body_case(), e.body_case());
    Envelope want = e;
    want.set_version(kProtocolVersion);
    EXPECT_EQ(back->DebugString(), want.DebugString()) << BodyName(e);  // maps print sorted
  }
}

TEST(CodecTest, RejectsWhatIsNotAValidFrame) {
  EXPECT_EQ(EncodeEnvelope(Envelope()).status().code(), absl::StatusCode::kInvalidArgument);
  // Empty frame: parses as an Envelope with nothing in it.
  EXPECT_EQ(DecodeEnvelope("").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeEnvelope("\xff\xff\xff").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeEnvelope(std::string(kMaxFrameBytes + 1, 'x')).status().code(),
            absl::StatusCode::kResourceExhausted);
  Envelope no_body;
  no_body.set_version(kProtocolVersion);
  EXPECT_EQ(DecodeEnvelope(no_body.SerializeAsString()).status().code(),
            absl::StatusCode::kDataLoss);
  Envelope other = Samples()[0];
  other.set_version(kProtocolVersion + 1);
  absl::Status s = DecodeEnvelope(other.SerializeAsString()).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find(absl::StrCat("protocol version ", kProtocolVersion + 1)),
            std::string::npos)
      << s;
  Envelope huge;
  huge.mutable_exit()->set_stderr_tail(std::string(kMaxFrameBytes, 'e'));
  EXPECT_EQ(EncodeEnvelope(huge).status().code(), absl::StatusCode::kResourceExhausted);
}

// Mutates `frame` in place: bit flips, byte overwrites, insertions, deletions, truncation,
// duplication of a slice, or varint-looking bytes.
void Mutate(std::string& frame, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng() % n); };
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < edits; ++i) {
    switch (rng() % 7) {
      case 0:
        if (!frame.empty()) frame[pick(frame.size())] ^= static_cast<char>(1 << (rng() % 8));
        break;
      case 1:
        if (!frame.empty()) frame[pick(frame.size())] = static_cast<char>(rng());
        break;
      case 2:
        frame.insert(pick(frame.size() + 1), 1, static_cast<char>(rng()));
        break;
      case 3:
        if (!frame.empty()) frame.erase(pick(frame.size()), 1 + pick(4));
        break;
      case 4:
        frame.resize(pick(frame.size() + 1));
        break;
      case 5: {
        if (frame.empty()) break;
        const size_t at = pick(frame.size());
        frame.insert(pick(frame.size() + 1), frame.substr(at, 1 + pick(16)));
        break;
      }
      case 6: {
        static const char kVarints[][5] = {"\x80\x80\x80\x80", "\xff\xff\xff\x7f", "\x08\x01",
                                           "\x12\x7f", "\x1a\xff"};
        frame.insert(pick(frame.size() + 1), kVarints[rng() % 5]);
        break;
      }
    }
  }
}

TEST(CodecFuzzTest, AMillionMutatedFramesNeverCrashOrPassBadEnvelopes) {
  std::vector<std::string> seeds;
  for (const Envelope& e : Samples()) seeds.push_back(*EncodeEnvelope(e));
  std::mt19937_64 rng(20261122);
  constexpr int kInputs = 1000000;
  int ok = 0, data_loss = 0, version = 0, other = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kInputs; ++i) {
    std::string frame = seeds[static_cast<size_t>(rng() % seeds.size())];
    Mutate(frame, rng);
    absl::StatusOr<Envelope> got = DecodeEnvelope(frame);
    if (got.ok()) {
      ++ok;
      ASSERT_EQ(got->version(), kProtocolVersion);
      ASSERT_NE(got->body_case(), Envelope::BODY_NOT_SET);
      // Whatever decodes can be encoded again (what the head does when it forwards it).
      absl::StatusOr<std::string> again = EncodeEnvelope(*got);
      ASSERT_TRUE(again.ok() || again.status().code() == absl::StatusCode::kResourceExhausted);
    } else if (got.status().code() == absl::StatusCode::kDataLoss) {
      ++data_loss;
    } else if (got.status().code() == absl::StatusCode::kFailedPrecondition) {
      ++version;
    } else {
      ++other;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%d mutated frames in %.2f s: %d decoded, %d malformed, %d other version, %d other\n",
              kInputs, seconds, ok, data_loss, version, other);
  EXPECT_EQ(other, 0);
  EXPECT_GT(ok, 0);         // the fuzz reaches valid envelopes...
  EXPECT_GT(data_loss, 0);  // ...and malformed ones...
  EXPECT_GT(version, 0);    // ...and other versions
}

}  // namespace
}  // namespace comm
}  // namespace tunefleet
