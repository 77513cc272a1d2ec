// Endpoints checked before ZeroMQ sees them, and the ipc:// rules: a stale socket is taken
// over, a live one is not; another user's socket is named as such; ZMQ_IPC_FILTER_UID keeps
// other uids out (checked by filtering for a uid that is not ours). This host's identity:
// endpoint hosts, its name, the local address toward a peer, a free port.
#include "comm/endpoint.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace comm {
namespace {

using ::testing::HasSubstr;

TEST(EndpointTest, ParsesAndNormalises) {
  auto e = ParseEndpoint("tcp://localhost:5555", false);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->text, "tcp://127.0.0.1:5555");
  EXPECT_TRUE(ParseEndpoint("tcp://127.0.0.1:*", true).ok());
  EXPECT_TRUE(ParseEndpoint("tcp://0.0.0.0:0", true).ok());
  EXPECT_TRUE(ParseEndpoint("ipc:///tmp/x.sock", false)->ipc);
  EXPECT_THAT(std::string(ParseEndpoint("tcp://127.0.0.1:99999", true).status().message()),
              HasSubstr("port 99999 is out of range (1-65535, or 0 / * for any)"));
  EXPECT_THAT(std::string(ParseEndpoint("tcp://127.0.0.1:0", false).status().message()),
              HasSubstr("port 0 is out of range (1-65535)"));
  EXPECT_THAT(std::string(ParseEndpoint("tcp://h:*", false).status().message()),
              HasSubstr("needs the port number"));
  EXPECT_THAT(std::string(ParseEndpoint("garbage", false).status().message()),
              HasSubstr("expected tcp://HOST:PORT or ipc://PATH"));
  EXPECT_THAT(std::string(ParseEndpoint("tcp://h:80x", false).status().message()),
              HasSubstr("is not a number"));
  EXPECT_THAT(std::string(ParseEndpoint("ipc://" + std::string(200, 'a'), true).status().message()),
              HasSubstr("at most 107 bytes"));
  // A huge value is clipped in the message.
  const std::string huge = "tcp://" + std::string(1 << 20, 'h') + ":1";
  EXPECT_LT(ParseEndpoint(huge, false).status().message().size(), 400u);
}

TEST(EndpointTest, LocalEndpoints) {
  EXPECT_TRUE(IsLocalEndpoint("tcp://127.0.0.1:5555"));
  EXPECT_TRUE(IsLocalEndpoint("ipc:///run/x"));
  EXPECT_FALSE(IsLocalEndpoint("tcp://0.0.0.0:5555"));
  EXPECT_FALSE(IsLocalEndpoint("tcp://10.0.0.1:5555"));
}

TEST(EndpointTest, StaleSocketsAreTakenOverLiveOnesAreNot) {
  const ShortTempDir tmp("endpoint");  // TEST_TMPDIR may be too long for a socket's path
  const std::string path = tmp.path() + "/stale.sock";
  ::unlink(path.c_str());
  EXPECT_TRUE(PrepareIpcBind(path).ok());  // nothing there
  {
    zmq::context_t context(1);
    zmq::socket_t live(context, zmq::socket_type::router);
    live.set(zmq::sockopt::linger, 0);
    live.bind("ipc://" + path);
    EXPECT_THAT(std::string(PrepareIpcBind(path).message()), HasSubstr("another process listens"));
  }
  // Left behind when the socket closed (or its process was killed): nobody listens on it.
  ::unlink(path.c_str());
  ASSERT_EQ(std::system(("python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); "
                         "s.bind('" +
                         path + "')\"")
                            .c_str()),
            0);
  struct stat st;
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(PrepareIpcBind(path).ok());
  EXPECT_NE(::lstat(path.c_str(), &st), 0);  // removed
  const std::string file = tmp.path() + "/not-a-socket";
  ASSERT_EQ(std::system(("touch " + file).c_str()), 0);
  EXPECT_THAT(std::string(PrepareIpcBind(file).message()), HasSubstr("is no socket"));
}

TEST(EndpointTest, OtherUsersSocketsAreNamed) {
  const ShortTempDir tmp("endpoint");
  const std::string dir = tmp.path() + "/private";
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  EXPECT_THAT(std::string(CheckIpcReachable(dir + "/head.sock").message()),
              HasSubstr("nothing listens"));
  if (::geteuid() == 0) {
    // Root reaches every folder: a socket owned by another uid is still named.
    const std::string sock = dir + "/theirs.sock";
    ASSERT_EQ(std::system(("python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); "
                           "s.bind('" +
                           sock + "')\"")
                              .c_str()),
              0);
    ASSERT_EQ(::chown(sock.c_str(), 65534, 65534), 0);
    absl::Status s = CheckIpcReachable(sock);
    EXPECT_TRUE(absl::IsPermissionDenied(s)) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("belongs to another user (uid 65534)"));
  }
}

// The uid filter: a ROUTER that accepts only another uid (65534, or 65533 when that is ours)
// hears nothing from this process.
TEST(EndpointTest, TheUidFilterKeepsOtherUidsOut) {
  const ShortTempDir tmp("endpoint");
  const std::string path = tmp.path() + "/filtered.sock";
  zmq::context_t context(1);
  zmq::socket_t server(context, zmq::socket_type::router), own(context, zmq::socket_type::router);
  const int other = ::geteuid() == 65534 ? 65533 : 65534;
  zmq_setsockopt(static_cast<void*>(server), ZMQ_IPC_FILTER_UID, &other, sizeof(other));
  server.bind("ipc://" + path);
  const std::string own_path = path + ".own";
  ::unlink(own_path.c_str());
  AcceptOnlyOwnUid(own);
  own.bind("ipc://" + own_path);
  zmq::socket_t a(context, zmq::socket_type::dealer), b(context, zmq::socket_type::dealer);
  for (zmq::socket_t* s : {&server, &own, &a, &b}) s->set(zmq::sockopt::linger, 0);
  a.connect("ipc://" + path);
  b.connect("ipc://" + own_path);
  a.send(zmq::str_buffer("hello"), zmq::send_flags::dontwait);
  b.send(zmq::str_buffer("hello"), zmq::send_flags::dontwait);
  zmq::pollitem_t items[] = {{static_cast<void*>(own), 0, ZMQ_POLLIN, 0}};
  zmq::poll(items, 1, std::chrono::milliseconds(2000));
  EXPECT_TRUE(items[0].revents & ZMQ_POLLIN) << "our own uid was not let in";
  zmq::pollitem_t filtered[] = {{static_cast<void*>(server), 0, ZMQ_POLLIN, 0}};
  zmq::poll(filtered, 1, std::chrono::milliseconds(500));
  EXPECT_FALSE(filtered[0].revents & ZMQ_POLLIN) << "another uid's peer got in";
}

TEST(EndpointTest, EndpointHost) {
  EXPECT_EQ(EndpointHost("tcp://10.0.0.1:5555"), "10.0.0.1");
  EXPECT_EQ(EndpointHost("tcp://head.example:5555"), "head.example");
  EXPECT_EQ(EndpointHost("tcp://*:5555"), "*");
  EXPECT_EQ(EndpointHost("ipc:///tmp/head.sock"), "127.0.0.1");
}

TEST(EndpointTest, HostNameIsGethostname) {
  char name[256] = {0};
  ASSERT_EQ(::gethostname(name, sizeof(name) - 1), 0);
  absl::StatusOr<std::string> got = HostName();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, name);
}

TEST(EndpointTest, LocalAddressTowardAPeer) {
  absl::StatusOr<std::string> loopback = LocalAddressToward("127.0.0.1", "9");
  ASSERT_TRUE(loopback.ok()) << loopback.status();
  EXPECT_EQ(*loopback, "127.0.0.1");
  absl::StatusOr<std::string> bad = LocalAddressToward("", "9", "MASTER_ADDR ''");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("MASTER_ADDR '' does not resolve: "));

  EXPECT_EQ(LocalAddressForEndpoint("tcp://127.0.0.1:5555"), "127.0.0.1");
  EXPECT_EQ(LocalAddressForEndpoint("tcp://127.0.0.1"), "127.0.0.1");  // port 5555 assumed
  EXPECT_EQ(LocalAddressForEndpoint("ipc:///tmp/head.sock"), "127.0.0.1");
  EXPECT_EQ(LocalAddressForEndpoint("tcp://:5555"), "127.0.0.1");  // does not resolve
}

TEST(EndpointTest, FreeTcpPortCanBeBound) {
  absl::StatusOr<int> port = FreeTcpPort("127.0.0.1");
  ASSERT_TRUE(port.ok()) << port.status();
  EXPECT_GT(*port, 0);
  EXPECT_LE(*port, 65535);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(*port));
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ::close(fd);
  EXPECT_TRUE(FreeTcpPort("not an address").ok());  // any interface
}

TEST(EndpointTest, WaitForTcpListenerReturnsOnceSomethingListens) {
  absl::StatusOr<int> port = FreeTcpPort("127.0.0.1");
  ASSERT_TRUE(port.ok()) << port.status();
  // Nothing there yet: the deadline, after about the timeout.
  const auto start = std::chrono::steady_clock::now();
  absl::Status none = WaitForTcpListener("127.0.0.1", *port, absl::Milliseconds(150));
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(none.code(), absl::StatusCode::kDeadlineExceeded) << none;
  EXPECT_GE(waited, 0.14);
  EXPECT_LT(waited, 2.0);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(*port));
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  EXPECT_TRUE(WaitForTcpListener("localhost", *port, absl::Seconds(5)).ok());
  ::close(fd);
}

}  // namespace
}  // namespace comm
}  // namespace tunefleet
