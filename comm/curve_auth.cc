#include "comm/curve_auth.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include <zmq.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "common/logging.h"

namespace tunefleet {
namespace comm {
namespace {

constexpr char kServerKey[] = "server.key";
constexpr char kServerPub[] = "server.pub";
constexpr char kClientKey[] = "client.key";
constexpr char kAuthorized[] = "authorized_keys";

absl::StatusOr<CurveKeyPair> NewPair() {
  char pub[41], sec[41];
  if (zmq_curve_keypair(pub, sec) != 0) {
    return absl::UnimplementedError("this ZeroMQ has no CURVE (built without libsodium)");
  }
  return CurveKeyPair{pub, sec};
}

bool ValidKey(absl::string_view key) {
  if (key.size() != 40) return false;
  uint8_t raw[32];
  return zmq_z85_decode(raw, std::string(key).c_str()) != nullptr;
}

// Reads "public KEY" / "secret KEY" lines.
absl::StatusOr<CurveKeyPair> ReadPair(const std::string& path, bool need_secret) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  CurveKeyPair pair;
  int n = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    ++n;
    absl::string_view l = absl::StripAsciiWhitespace(line);
    if (l.empty() || l[0] == '#') continue;
    std::vector<std::string> words = absl::StrSplit(l, ' ', absl::SkipEmpty());
    if (words.size() != 2 || (words[0] != "public" && words[0] != "secret") ||
        !ValidKey(words[1])) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", n, ": expected 'public KEY' or 'secret KEY' (40 Z85 characters)"));
    }
    (words[0] == "public" ? pair.public_key : pair.secret_key) = words[1];
  }
  if (pair.public_key.empty())
    return absl::InvalidArgumentError(absl::StrCat(path, ": no public key"));
  if (need_secret && pair.secret_key.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no secret key"));
  }
  return pair;
}

// What a checked path must not allow: for a folder or a trust file, writing by group or others;
// for a secret key, any access by group or others.
enum class Guard { kFolder, kTrustFile, kSecretFile };

// OpenSSH's StrictModes for one path (followed through links): owned by this user or root, and
// no group or other permission that `guard` forbids. One line naming path, mode and the fix.
absl::Status CheckStrictMode(const std::string& path, Guard guard) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return ErrnoStatus(errno, absl::StrCat(path, ": cannot stat"));
  const bool folder = guard == Guard::kFolder;
  if (folder != S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, folder ? ": not a folder" : ": not a file"));
  }
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat(path, " belongs to uid ", st.st_uid, ", not to this user (uid ", ::geteuid(),
                     ") or root: keys are refused unless their owner is the one using them"));
  }
  const mode_t mode = st.st_mode & 07777;
  const mode_t forbidden = guard == Guard::kSecretFile ? 077 : 022;
  if ((mode & forbidden) == 0) return absl::OkStatus();
  const std::string octal = absl::StrFormat("%04o", mode);
  if (guard == Guard::kSecretFile) {
    return absl::PermissionDeniedError(
        absl::StrCat("secret key ", path, " is accessible by group or others (mode ", octal,
                     "): it must be private; run chmod 600 ", path));
  }
  if (folder) {
    return absl::PermissionDeniedError(
        absl::StrCat("key folder ", path, " is writable by group or others (mode ", octal,
                     "): anyone could replace the keys; run chmod 700 ", path));
  }
  return absl::PermissionDeniedError(
      absl::StrCat(path, " is writable by group or others (mode ", octal,
                   "): anyone could change whom it trusts; run chmod go-w ", path));
}

// The folder, then its secret key file and the file that says whom to trust.
absl::Status CheckKeyFolder(const std::string& dir, const char* secret, const char* trust) {
  if (absl::Status s = CheckStrictMode(dir, Guard::kFolder); !s.ok()) return s;
  if (absl::Status s = CheckStrictMode(JoinPath(dir, secret), Guard::kSecretFile); !s.ok())
    return s;
  return CheckStrictMode(JoinPath(dir, trust), Guard::kTrustFile);
}

// Exactly `mode`, whatever the umask (which could otherwise leave a public file writable by
// others, and the folder refused by the loaders).
absl::Status WriteKeyFile(const std::string& path, absl::string_view text, mode_t mode) {
  if (absl::Status s = WriteFileAtomically(path, text, mode); !s.ok()) return s;
  if (::chmod(path.c_str(), mode) != 0) return ErrnoStatus(errno, absl::StrCat(path, ": chmod"));
  return absl::OkStatus();
}

std::string PairText(const CurveKeyPair& p, const char* what) {
  return absl::StrCat("# tunefleet ", what,
                      " CURVE key pair (ZeroMQ Z85). Keep it secret.\npublic ", p.public_key,
                      "\nsecret ", p.secret_key, "\n");
}

}  // namespace

absl::Status GenerateKeyFolder(const std::string& dir) {
  for (const char* name : {kServerKey, kServerPub, kClientKey, kAuthorized}) {
    if (PathExists(JoinPath(dir, name))) {
      return absl::AlreadyExistsError(
          absl::StrCat(JoinPath(dir, name), " exists: not overwriting keys"));
    }
  }
  if (PathExists(dir) && !IsDir(dir)) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir, " is not a folder: give the key folder to create (or an empty one)"));
  }
  if (absl::Status s = MakeDirs(dir); !s.ok()) return s;
  if (::chmod(dir.c_str(), 0700) != 0) {
    return ErrnoStatus(errno, absl::StrCat(dir, ": cannot make it private (chmod 700)"));
  }
  auto server = NewPair();
  if (!server.ok()) return server.status();
  auto client = NewPair();
  if (!client.ok()) return client.status();
  absl::Status s = WriteKeyFile(JoinPath(dir, kServerKey), PairText(*server, "head"), 0600);
  if (s.ok()) {
    s = WriteKeyFile(
        JoinPath(dir, kServerPub),
        absl::StrCat("# the tunefleet head's public key\npublic ", server->public_key, "\n"), 0644);
  }
  if (s.ok()) s = WriteKeyFile(JoinPath(dir, kClientKey), PairText(*client, "client"), 0600);
  if (s.ok()) {
    s = WriteKeyFile(JoinPath(dir, kAuthorized),
                     absl::StrCat("# client public keys the head accepts, one a line\n",
                                  client->public_key, "\n"),
                     0644);
  }
  return s;
}

absl::StatusOr<ServerKeys> LoadServerKeys(const std::string& dir) {
  if (absl::Status s = CheckKeyFolder(dir, kServerKey, kAuthorized); !s.ok()) return s;
  ServerKeys keys;
  auto pair = ReadPair(JoinPath(dir, kServerKey), /*need_secret=*/true);
  if (!pair.ok()) return pair.status();
  keys.server = *pair;
  const std::string path = JoinPath(dir, kAuthorized);
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  int n = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    ++n;
    absl::string_view l = absl::StripAsciiWhitespace(line);
    if (l.empty() || l[0] == '#') continue;
    if (!ValidKey(l)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", n, ": not a CURVE public key (40 Z85 characters)"));
    }
    keys.authorized.insert(std::string(l));
  }
  if (keys.authorized.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": lists no client key: nobody could connect"));
  }
  return keys;
}

absl::StatusOr<ClientKeys> LoadClientKeys(const std::string& dir) {
  if (absl::Status s = CheckKeyFolder(dir, kClientKey, kServerPub); !s.ok()) return s;
  ClientKeys keys;
  auto client = ReadPair(JoinPath(dir, kClientKey), /*need_secret=*/true);
  if (!client.ok()) return client.status();
  auto server = ReadPair(JoinPath(dir, kServerPub), /*need_secret=*/false);
  if (!server.ok()) return server.status();
  keys.client = *client;
  keys.server_public_key = server->public_key;
  return keys;
}

void MakeCurveServer(zmq::socket_t& socket, const ServerKeys& keys) {
  socket.set(zmq::sockopt::curve_server, 1);
  socket.set(zmq::sockopt::curve_secretkey, keys.server.secret_key);
  socket.set(zmq::sockopt::zap_domain, "tunefleet");
}

void MakeCurveClient(zmq::socket_t& socket, const ClientKeys& keys) {
  socket.set(zmq::sockopt::curve_serverkey, keys.server_public_key);
  socket.set(zmq::sockopt::curve_publickey, keys.client.public_key);
  socket.set(zmq::sockopt::curve_secretkey, keys.client.secret_key);
}

ZapHandler::ZapHandler(zmq::context_t& context, absl::flat_hash_set<std::string> authorized)
    : socket_(context, zmq::socket_type::rep), authorized_(std::move(authorized)) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.bind("inproc://zeromq.zap.01");
}

void ZapHandler::HandleRequest() {
  // Request: version, request id, domain, address, identity, mechanism, credentials...
  std::vector<zmq::message_t> frames;
  while (true) {
    zmq::message_t frame;
    if (!socket_.recv(frame, zmq::recv_flags::dontwait)) break;
    const bool more = frame.more();
    frames.push_back(std::move(frame));
    if (!more) break;
  }
  if (frames.size() < 6) return;
  const std::string request_id = frames[1].to_string();
  const std::string address = frames[3].to_string();
  const std::string mechanism = frames[5].to_string();
  bool ok = false;
  std::string key_text;
  if (mechanism == "CURVE" && frames.size() >= 7 && frames[6].size() == 32) {
    char z85[41];
    if (zmq_z85_encode(z85, static_cast<const uint8_t*>(frames[6].data()), 32) != nullptr) {
      key_text = z85;
      ok = authorized_.contains(key_text);
    }
  }
  if (!ok) {
    ++refused_;
    if (logged_.insert(key_text).second) {
      TF_LOG(WARNING) << "refused a connection from " << address << ": client key "
                      << (key_text.empty() ? "(none)" : key_text) << " is not in authorized_keys";
    }
  }
  const std::vector<std::string> reply = {"1.0",
                                          request_id,
                                          ok ? "200" : "400",
                                          ok ? "OK" : "client key not authorized",
                                          ok ? key_text : "",
                                          ""};
  for (size_t i = 0; i < reply.size(); ++i) {
    socket_.send(zmq::buffer(reply[i]),
                 i + 1 < reply.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
}

}  // namespace comm
}  // namespace tunefleet
