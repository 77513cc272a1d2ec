// comm/bulk_server and comm/bulk_fetch over loopback: a BulkServer and FetchToCache in one
// process (each with its own UCX worker). A multi-chunk random file and a folder tree arrive
// intact and are reused on the second fetch, even with the server gone; an unknown hash, a
// refused connection, a bad hash, a server that never answers and content that changed after
// publishing are clear errors that leave nothing behind; a corrupted cache entry is fetched
// again; leftovers of dead fetches are removed (not those another live fetch holds); several
// clients fetch at once. Issue 32: a fetch without the server's token, or with a wrong one, is
// refused (PermissionDenied, nothing written, not even whether the hash exists is told), and the
// server listens only on its address: no socket of UCX's own on another interface.
#include "comm/bulk_fetch.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "comm/bulk_cache.h"
#include "comm/bulk_server.h"
#include "comm/bulk_token.h"
#include "comm/bulk_wire.h"
#include "comm/content_hash.h"
#include "comm/endpoint.h"
#include "comm/ucp_worker.h"
#include "common/file_util.h"
#include "gtest/gtest.h"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace comm {
namespace {

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(n, '\0');
  for (size_t i = 0; i + 8 <= n; i += 8) {
    const uint64_t v = rng();
    std::memcpy(&out[i], &v, 8);
  }
  for (size_t i = n / 8 * 8; i < n; ++i) out[i] = static_cast<char>(rng());
  return out;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  ASSERT_TRUE(out.good()) << path;
}

// The names in `dir`, sorted; none when it is missing.
std::vector<std::string> List(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (std::filesystem::directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class UcxTransferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    QuietUcxWarnings();
    absl::StatusOr<std::string> token = NewBulkToken();
    ASSERT_TRUE(token.ok()) << token.status();
    token_ = *token;
    auto server = BulkServer::Start("127.0.0.1", 0, token_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    ASSERT_TRUE(absl::StartsWith(server_->address(), "127.0.0.1:")) << server_->address();
  }

  // A published file of `size` random bytes: DIR/data.bin, DIR being a fresh folder `name`.
  struct Sample {
    std::string dir, source, bytes, hash;
    std::string cache;  // DIR/cache, not created
  };
  Sample PublishRandomFile(const std::string& name, size_t size, uint32_t seed) {
    Sample sample;
    sample.dir = FreshTestDir(name);
    sample.source = JoinPath(sample.dir, "data.bin");
    sample.bytes = RandomBytes(size, seed);
    WriteFile(sample.source, sample.bytes);
    absl::StatusOr<std::string> hash = server_->Publish(sample.source);
    EXPECT_TRUE(hash.ok()) << hash.status();
    sample.hash = hash.value_or("");
    sample.cache = JoinPath(sample.dir, "cache");
    return sample;
  }

  // What a client the server's owner told may fetch with.
  FetchOptions Authorized() const {
    FetchOptions options;
    options.token = token_;
    return options;
  }

  std::string token_;
  std::unique_ptr<BulkServer> server_;
};

// The round trips again with UCX choosing (""), with every message a rendezvous ("0": the
// client receives each chunk and the manifest into its own buffers) and with every message
// eager ("inf": UCX hands over its own buffers). UCX reads UCX_RNDV_THRESH when a worker starts.
class UcxProtocolTest : public UcxTransferTest, public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override {
    if (*GetParam() != '\0') ::setenv("UCX_RNDV_THRESH", GetParam(), 1);
    UcxTransferTest::SetUp();
  }
  void TearDown() override { ::unsetenv("UCX_RNDV_THRESH"); }
};

INSTANTIATE_TEST_SUITE_P(RndvThresh, UcxProtocolTest, ::testing::Values("", "0", "inf"),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           const std::string v = p.param;
                           return v.empty()  ? "UcxDefault"
                                  : v == "0" ? "AllRendezvous"
                                             : "AllEager";
                         });

TEST_P(UcxProtocolTest, FileRoundTripThenReuse) {
  const Sample sample =
      PublishRandomFile("file_round_trip", 2 * kBulkChunkBytes + 12345, 1);  // three chunks
  const std::string &bytes = sample.bytes, &cache = sample.cache;
  const std::string* hash = &sample.hash;
  EXPECT_EQ(*hash, *HashFile(sample.source));
  uint64_t last_progress = 0;
  FetchOptions options = Authorized();
  options.progress = [&](uint64_t done, uint64_t total) {
    EXPECT_EQ(total, bytes.size());
    EXPECT_GE(done, last_progress);
    last_progress = done;
  };
  absl::StatusOr<FetchResult> first = FetchToCache(server_->address(), *hash, cache, options);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->reused);
  EXPECT_FALSE(first->directory);
  EXPECT_FALSE(first->replaced_corrupt);
  EXPECT_EQ(first->bytes, bytes.size());
  EXPECT_EQ(last_progress, bytes.size());
  EXPECT_EQ(first->path, JoinPath(cache, *hash));
  EXPECT_TRUE(ReadFile(first->path).value_or("") == bytes);
  EXPECT_EQ(List(cache), std::vector<std::string>{*hash});  // no temporaries left

  absl::StatusOr<FetchResult> second = FetchToCache(server_->address(), *hash, cache, Authorized());
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->reused);
  EXPECT_EQ(second->bytes, 0u);
  EXPECT_EQ(second->path, first->path);

  const BulkServer::Stats stats = server_->stats();
  EXPECT_EQ(stats.transfers_completed, 1u);
  EXPECT_EQ(stats.bytes_sent, bytes.size());

  // Reuse needs no server at all.
  server_.reset();
  absl::StatusOr<FetchResult> third = FetchToCache("127.0.0.1:9", *hash, cache);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_TRUE(third->reused);
}

TEST_P(UcxProtocolTest, FolderRoundTrip) {
  const std::string dir = FreshTestDir("folder_round_trip");
  const std::string source = JoinPath(dir, "dataset");
  ASSERT_TRUE(MakeDirs(JoinPath(source, "train/shards")).ok());
  ASSERT_TRUE(MakeDirs(JoinPath(source, "empty_dir")).ok());
  WriteFile(JoinPath(source, "README"), "a small dataset\n");
  WriteFile(JoinPath(source, "train/empty.txt"), "");
  WriteFile(JoinPath(source, "train/shards/00.bin"), RandomBytes(kBulkChunkBytes + 5, 2));
  WriteFile(JoinPath(source, "train/shards/01.bin"), RandomBytes(1000, 3));
  ASSERT_TRUE(MakeDirs(JoinPath(source, "many")).ok());
  uint64_t many_bytes = 0;
  for (int i = 0; i < 300; ++i) {  // one chunk each; a manifest of some kilobytes
    WriteFile(JoinPath(source, absl::StrCat("many/file_", i, ".txt")), std::string(i, 'x'));
    many_bytes += i;
  }
  absl::StatusOr<std::string> hash = server_->Publish(source);
  ASSERT_TRUE(hash.ok()) << hash.status();

  const std::string cache = JoinPath(dir, "cache");
  absl::StatusOr<FetchResult> r = FetchToCache(server_->address(), *hash, cache, Authorized());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->directory);
  EXPECT_EQ(r->bytes, kBulkChunkBytes + 5 + 1000 + 16 + many_bytes);
  EXPECT_EQ(*HashDirectory(r->path), *hash);
  EXPECT_TRUE(IsDir(JoinPath(r->path, "empty_dir")));
  EXPECT_TRUE(IsFile(JoinPath(r->path, "train/empty.txt")));
  EXPECT_EQ(ReadFile(JoinPath(r->path, "README")).value_or(""), "a small dataset\n");

  absl::StatusOr<FetchResult> again = FetchToCache(server_->address(), *hash, cache, Authorized());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->reused);
  EXPECT_TRUE(again->directory);
}

TEST_F(UcxTransferTest, UnknownHashIsAnErrorAndLeavesNothing) {
  const std::string cache = FreshTestDir("unknown_hash");
  const std::string hash = Sha256Hex("never published");
  absl::StatusOr<FetchResult> r = FetchToCache(server_->address(), hash, cache, Authorized());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), absl::StrCat("bulk server ", server_->address(),
                                               " has no content ", hash, ": unknown hash"));
  EXPECT_TRUE(List(cache).empty());
}

TEST_F(UcxTransferTest, CorruptedCacheEntryIsFetchedAgain) {
  const Sample sample = PublishRandomFile("corrupt_entry", 3 << 20, 4);
  const std::string &bytes = sample.bytes, &hash = sample.hash, &cache = sample.cache;
  ASSERT_TRUE(FetchToCache(server_->address(), hash, cache, Authorized()).ok());

  std::string damaged = bytes;
  damaged[12345] ^= 1;
  WriteFile(JoinPath(cache, hash), damaged);
  absl::StatusOr<FetchResult> r = FetchToCache(server_->address(), hash, cache, Authorized());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->reused);
  EXPECT_TRUE(r->replaced_corrupt);
  EXPECT_TRUE(ReadFile(r->path).value_or("") == bytes);
  EXPECT_EQ(List(cache), std::vector<std::string>{hash});
}

TEST_F(UcxTransferTest, ContentChangedAfterPublishingIsRejected) {
  const Sample sample = PublishRandomFile("changed_content", 1 << 20, 5);
  const std::string &hash = sample.hash, &cache = sample.cache;
  WriteFile(sample.source, RandomBytes(1 << 20, 6));  // same size, other bytes
  absl::StatusOr<FetchResult> r = FetchToCache(server_->address(), hash, cache, Authorized());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "does not match hash " + hash)) << r.status();
  EXPECT_TRUE(List(cache).empty());  // the temporary is gone, nothing under the final name
}

TEST(UcxFetchTest, RefusedConnectionAndBadInput) {
  QuietUcxWarnings();
  // A port nothing listens on.
  absl::StatusOr<int> port = FreeTcpPort("127.0.0.1");
  ASSERT_TRUE(port.ok()) << port.status();
  const std::string server = absl::StrCat("127.0.0.1:", *port);

  const std::string cache = FreshTestDir("refused");
  const std::string hash = Sha256Hex("x");
  absl::StatusOr<FetchResult> r = FetchToCache(server, hash, cache);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(),
            absl::StrCat("cannot reach bulk server ", server, ": Connection refused"));
  EXPECT_TRUE(List(cache).empty());

  r = FetchToCache(server, "not-a-hash", cache);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  r = FetchToCache("no-port-here", hash, cache);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "no-port-here")) << r.status();

  auto busy = BulkServer::Start("127.0.0.1", 0, std::string(kBulkTokenBytes, 't'));
  ASSERT_TRUE(busy.ok());
  EXPECT_FALSE((*busy)->Publish(JoinPath(cache, "missing")).ok());
}

TEST(UcxFetchTest, SilentServerTimesOut) {
  QuietUcxWarnings();
  // A TCP listener that never answers: the kernel completes the handshake, nobody speaks UCX.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string server = absl::StrCat("127.0.0.1:", ntohs(addr.sin_port));
  const std::string cache = FreshTestDir("silent");
  FetchOptions options;
  options.idle_timeout = absl::Seconds(1);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<FetchResult> r = FetchToCache(server, Sha256Hex("x"), cache, options);
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::close(fd);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  EXPECT_EQ(r.status().message(),
            absl::StrCat("no answer from bulk server ", server, " within 1s"));
  EXPECT_LT(secs, 5.0);
  EXPECT_TRUE(List(cache).empty());
}

TEST_F(UcxTransferTest, RemovesTemporariesOfDeadFetches) {
  const Sample sample = PublishRandomFile("stale_temps", 100000, 7);
  const std::string &hash = sample.hash, &cache = sample.cache;
  ASSERT_TRUE(MakeDirs(cache).ok());
  // The pid of a process that has exited.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);
  const std::string stale = absl::StrCat(".", hash, ".tmp.", child, ".0");
  WriteFile(JoinPath(cache, stale), "half a file");
  const std::string live = absl::StrCat(".", hash, ".tmp.", ::getppid(), ".0");  // runs
  WriteFile(JoinPath(cache, live), "someone else's fetch");
  // A fetch in another PID namespace: its pid means nothing here, but it holds the lock.
  const std::string locked = absl::StrCat(".", hash, ".tmp.", child, ".1");
  WriteFile(JoinPath(cache, locked), "a fetch elsewhere");
  absl::StatusOr<int> lock = LockTemp(JoinPath(cache, locked));
  ASSERT_TRUE(lock.ok()) << lock.status();
  ASSERT_TRUE(FetchToCache(server_->address(), hash, cache, Authorized()).ok());
  ::close(*lock);
  std::vector<std::string> expected = {live, locked, hash};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(List(cache), expected);
}

TEST_F(UcxTransferTest, ServesSeveralClientsAtOnce) {
  const Sample sample = PublishRandomFile("concurrent", 6 << 20, 8);
  const std::string &dir = sample.dir, &bytes = sample.bytes, &hash = sample.hash;
  constexpr int kClients = 3;
  std::vector<absl::Status> results(kClients);
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      results[i] = FetchToCache(server_->address(), hash, JoinPath(dir, absl::StrCat("cache", i)),
                                Authorized())
                       .status();
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kClients; ++i) {
    EXPECT_TRUE(results[i].ok()) << i << ": " << results[i];
    const std::string copy = JoinPath(dir, absl::StrCat("cache", i, "/", hash));
    EXPECT_TRUE(ReadFile(copy).value_or("") == bytes);
  }
  EXPECT_EQ(server_->stats().transfers_completed, static_cast<uint64_t>(kClients));
}

TEST_F(UcxTransferTest, FetchWithoutTheTokenIsRefused) {
  const Sample sample = PublishRandomFile("token_refused", 100000, 9);
  const std::string &hash = sample.hash, &cache = sample.cache;
  const std::string refusal = absl::StrCat("bulk server ", server_->address(),
                                           " refused the fetch: missing or wrong token");
  std::string wrong = token_;
  wrong.back() ^= 1;
  for (const std::string& presented : {std::string(), wrong, token_.substr(0, 16), token_ + "x"}) {
    FetchOptions options;
    options.token = presented;
    absl::StatusOr<FetchResult> r = FetchToCache(server_->address(), hash, cache, options);
    ASSERT_FALSE(r.ok()) << "served with a token of " << presented.size() << " bytes";
    EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied) << r.status();
    EXPECT_TRUE(absl::StartsWith(r.status().message(), refusal)) << r.status();
  }
  EXPECT_TRUE(List(cache).empty());
  // Not even whether a hash exists is told without the token.
  absl::StatusOr<FetchResult> unknown = FetchToCache(server_->address(), Sha256Hex("none"), cache);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kPermissionDenied) << unknown.status();
  BulkServer::Stats stats = server_->stats();
  EXPECT_EQ(stats.requests_refused, 5u);
  EXPECT_EQ(stats.transfers_completed, 0u);
  EXPECT_EQ(stats.bytes_sent, 0u);

  absl::StatusOr<FetchResult> r = FetchToCache(server_->address(), hash, cache, Authorized());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(ReadFile(r->path).value_or("") == sample.bytes);
  EXPECT_EQ(server_->stats().transfers_completed, 1u);
}

TEST(UcxServerTest, NeedsAToken) {
  QuietUcxWarnings();
  for (const std::string& token : {std::string(), std::string(15, 't')}) {
    auto server = BulkServer::Start("127.0.0.1", 0, token);
    ASSERT_FALSE(server.ok());
    EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument) << server.status();
  }
}

// The local addresses of this process's listening TCP sockets (/proc/net/tcp{,6} entries in
// state LISTEN whose inode is one of /proc/self/fd's sockets), as "IP" text.
std::vector<std::string> OwnListeningAddresses() {
  std::vector<std::string> inodes;
  for (const std::string& fd : List("/proc/self/fd")) {
    char target[256] = {0};
    const ssize_t n = ::readlink(JoinPath("/proc/self/fd", fd).c_str(), target, sizeof(target) - 1);
    if (n > 0 && absl::StartsWith(target, "socket:[")) {
      inodes.push_back(std::string(target + 8, static_cast<size_t>(n) - 9));
    }
  }
  std::vector<std::string> addresses;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      std::istringstream fields(line);
      std::string sl, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> sl >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode;
      if (state != "0A" || std::find(inodes.begin(), inodes.end(), inode) == inodes.end()) continue;
      const std::string hex = local.substr(0, local.find(':'));
      if (hex.size() == 8) {  // IPv4, in host byte order on little-endian
        const uint32_t v = static_cast<uint32_t>(std::stoul(hex, nullptr, 16));
        addresses.push_back(
            absl::StrCat(v & 0xff, ".", (v >> 8) & 0xff, ".", (v >> 16) & 0xff, ".", v >> 24));
      } else {
        addresses.push_back(hex == "00000000000000000000000001000000" ? "::1" : "[" + hex + "]");
      }
    }
  }
  return addresses;
}

// The reported hole: a server bound to 127.0.0.1 had UCX's TCP transport listening on every
// other interface as well. (On a host with only a loopback interface this cannot fail.)
TEST_F(UcxTransferTest, ListensOnlyOnItsAddress) {
  // UCX opens its transports' listeners with the worker; a fetch makes sure all are up.
  const Sample sample = PublishRandomFile("listen_address", 1000, 10);
  ASSERT_TRUE(FetchToCache(server_->address(), sample.hash, sample.cache, Authorized()).ok());
  const std::vector<std::string> addresses = OwnListeningAddresses();
  EXPECT_FALSE(addresses.empty());
  for (const std::string& a : addresses) {
    EXPECT_TRUE(absl::StartsWith(a, "127.") || a == "::1") << "a listening socket on " << a;
  }
}

}  // namespace
}  // namespace comm
}  // namespace tunefleet
