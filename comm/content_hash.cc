#include "comm/content_hash.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "absl/strings/str_cat.h"
#include "common/file_util.h"

namespace tunefleet {
namespace comm {
namespace {

constexpr uint32_t kRoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

constexpr std::array<uint32_t, 8> kInitialState = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

inline uint32_t Rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void CompressPortable(uint32_t* state, const uint8_t* data, size_t blocks) {
  for (; blocks > 0; --blocks, data += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i) {
      w[i] = (uint32_t{data[4 * i]} << 24) | (uint32_t{data[4 * i + 1]} << 16) |
             (uint32_t{data[4 * i + 2]} << 8) | uint32_t{data[4 * i + 3]};
    }
    for (int i = 16; i < 64; ++i) {
      const uint32_t s0 = Rotr(w[i - 15], 7) ^ Rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = Rotr(w[i - 2], 17) ^ Rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int i = 0; i < 64; ++i) {
      const uint32_t t1 = h + (Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                          kRoundConstants[i] + w[i];
      const uint32_t t2 = (Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
}

#if defined(__x86_64__)
// The SHA-NI form of the same compression (Intel's "SHA extensions" white paper): the state
// lives as ABEF / CDGH halves, each sha256rnds2 does two rounds, and the message schedule is
// kept in four registers of four words, rotating (msg1/msg2 compute words 16..63).
__attribute__((target("sha,sse4.1,ssse3"))) void CompressShaNi(uint32_t* state, const uint8_t* data,
                                                               size_t blocks) {
  const __m128i kByteSwap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i tmp = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[0]));
  __m128i state1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[4]));
  tmp = _mm_shuffle_epi32(tmp, 0xB1);                // CDAB
  state1 = _mm_shuffle_epi32(state1, 0x1B);          // EFGH
  __m128i state0 = _mm_alignr_epi8(tmp, state1, 8);  // ABEF
  state1 = _mm_blend_epi16(state1, tmp, 0xF0);       // CDGH

  for (; blocks > 0; --blocks, data += 64) {
    const __m128i abef_save = state0;
    const __m128i cdgh_save = state1;
    __m128i m[4];
    for (int i = 0; i < 16; ++i) {  // rounds 4i .. 4i+3
      if (i < 4) {
        m[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * i)),
                                kByteSwap);
      }
      __m128i msg = _mm_add_epi32(
          m[i % 4], _mm_loadu_si128(reinterpret_cast<const __m128i*>(&kRoundConstants[4 * i])));
      state1 = _mm_sha256rnds2_epu32(state1, state0, msg);
      if (i >= 3 && i <= 14) {  // words of quad i+1
        const __m128i carry = _mm_alignr_epi8(m[i % 4], m[(i + 3) % 4], 4);
        m[(i + 1) % 4] = _mm_sha256msg2_epu32(_mm_add_epi32(m[(i + 1) % 4], carry), m[i % 4]);
      }
      msg = _mm_shuffle_epi32(msg, 0x0E);
      state0 = _mm_sha256rnds2_epu32(state0, state1, msg);
      if (i >= 1 && i <= 12) {  // first half of quad i+3
        m[(i + 3) % 4] = _mm_sha256msg1_epu32(m[(i + 3) % 4], m[i % 4]);
      }
    }
    state0 = _mm_add_epi32(state0, abef_save);
    state1 = _mm_add_epi32(state1, cdgh_save);
  }

  tmp = _mm_shuffle_epi32(state0, 0x1B);        // FEBA
  state1 = _mm_shuffle_epi32(state1, 0xB1);     // DCHG
  state0 = _mm_blend_epi16(tmp, state1, 0xF0);  // DCBA
  state1 = _mm_alignr_epi8(state1, tmp, 8);     // ABEF
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[0]), state0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[4]), state1);
}

bool DetectShaNi() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const bool ssse3 = ecx & (1u << 9), sse41 = ecx & (1u << 19);
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool sha = ebx & (1u << 29);
  return ssse3 && sse41 && sha;
}
#endif

// Lists everything below `dir` (relative paths under `prefix`) into `out`, unsorted.
absl::Status Walk(const std::string& dir, const std::string& prefix, int depth,
                  std::vector<TreeEntry>* out) {
  if (depth > kMaxTreeDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir, ": more than ", kMaxTreeDepth, " folders deep (a symbolic link loop?)"));
  }
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return ErrnoStatus(errno, absl::StrCat(dir, ": cannot open folder"));
  std::unique_ptr<DIR, int (*)(DIR*)> closer(d, ::closedir);
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  if (errno != 0) return ErrnoStatus(errno, absl::StrCat(dir, ": cannot read folder"));
  for (const std::string& name : names) {
    const std::string path = dir + "/" + name;
    const std::string rel = prefix.empty() ? name : prefix + "/" + name;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      return ErrnoStatus(errno, absl::StrCat(path, ": cannot stat"));
    }
    TreeEntry entry;
    entry.path = rel;
    if (S_ISDIR(st.st_mode)) {
      entry.directory = true;
      out->push_back(entry);
      absl::Status s = Walk(path, rel, depth + 1, out);
      if (!s.ok()) return s;
    } else if (S_ISREG(st.st_mode)) {
      entry.size = static_cast<uint64_t>(st.st_size);
      out->push_back(entry);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": not a regular file or folder (cannot be hashed)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

Sha256::Sha256(bool use_hardware)
    : state_(kInitialState), hardware_(use_hardware && HardwareAvailable()) {}

bool Sha256::HardwareAvailable() {
#if defined(__x86_64__)
  static const bool available = DetectShaNi();
  return available;
#else
  return false;
#endif
}

void Sha256::Compress(const uint8_t* blocks, size_t count) {
#if defined(__x86_64__)
  if (hardware_) return CompressShaNi(state_.data(), blocks, count);
#endif
  CompressPortable(state_.data(), blocks, count);
}

void Sha256::Update(const void* data, size_t size) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  total_bytes_ += size;
  if (buffered_ > 0) {
    const size_t take = std::min(size, sizeof(buffer_) - buffered_);
    std::memcpy(buffer_ + buffered_, p, take);
    buffered_ += take;
    p += take;
    size -= take;
    if (buffered_ < sizeof(buffer_)) return;
    Compress(buffer_, 1);
    buffered_ = 0;
  }
  if (size >= 64) {
    Compress(p, size / 64);
    p += size / 64 * 64;
    size %= 64;
  }
  std::memcpy(buffer_, p, size);
  buffered_ = size;
}

Sha256::Digest Sha256::Final() {
  const uint64_t bits = total_bytes_ * 8;
  uint8_t pad[72] = {0x80};
  const size_t pad_len = (buffered_ < 56 ? 56 : 120) - buffered_;
  for (int i = 0; i < 8; ++i) pad[pad_len + i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
  Update(pad, pad_len + 8);
  Digest out;
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<uint8_t>(state_[i] >> (24 - 8 * j));
  }
  return out;
}

std::string Sha256::FinalHex() { return DigestHex(Final()); }

std::string DigestHex(const Sha256::Digest& digest) {
  static const char kHex[] = "0123456789abcdef";
  std::string out(64, '0');
  for (size_t i = 0; i < digest.size(); ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 15];
  }
  return out;
}

std::string Sha256Hex(absl::string_view bytes) {
  Sha256 sha;
  sha.Update(bytes);
  return sha.FinalHex();
}

bool IsContentHash(absl::string_view text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

absl::StatusOr<std::string> HashFile(const std::string& path, uint64_t* size) {
  uint64_t ignored = 0;
  if (size == nullptr) size = &ignored;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat(path, ": cannot open"));
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  constexpr size_t kBufferBytes = 1 << 20;
  std::unique_ptr<uint8_t[]> buffer(new uint8_t[kBufferBytes]);
  Sha256 sha;
  *size = 0;
  while (true) {
    const ssize_t n = ::read(fd, buffer.get(), kBufferBytes);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status s = ErrnoStatus(errno, absl::StrCat(path, ": cannot read"));
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    sha.Update(buffer.get(), static_cast<size_t>(n));
    *size += static_cast<uint64_t>(n);
  }
  ::close(fd);
  return sha.FinalHex();
}

absl::StatusOr<std::string> HashDirectory(const std::string& dir, std::vector<TreeEntry>* entries) {
  std::vector<TreeEntry> tree;
  absl::Status s = Walk(dir, "", 0, &tree);
  if (!s.ok()) return s;
  std::sort(tree.begin(), tree.end(),
            [](const TreeEntry& a, const TreeEntry& b) { return a.path < b.path; });
  Sha256 sha;
  sha.Update(absl::string_view("tunefleet-dir-v1\0", 17));
  for (TreeEntry& e : tree) {
    if (e.directory) {
      sha.Update(absl::string_view("d\0", 2));
      sha.Update(e.path);
      sha.Update(absl::string_view("\0", 1));
      continue;
    }
    // The size hashed is the size read, should the file change after the listing.
    absl::StatusOr<std::string> h = HashFile(dir + "/" + e.path, &e.size);
    if (!h.ok()) return h.status();
    e.hash = *h;
    sha.Update(absl::string_view("f\0", 2));
    sha.Update(e.path);
    sha.Update(absl::StrCat(absl::string_view("\0", 1), e.size, absl::string_view("\0", 1)));
    sha.Update(e.hash);
    sha.Update(absl::string_view("\0", 1));
  }
  if (entries != nullptr) *entries = std::move(tree);
  return sha.FinalHex();
}

absl::StatusOr<std::string> HashPath(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return ErrnoStatus(errno, absl::StrCat(path, ": cannot stat"));
  }
  if (S_ISDIR(st.st_mode)) return HashDirectory(path);
  if (S_ISREG(st.st_mode)) return HashFile(path);
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": not a regular file or folder (cannot be hashed)"));
}

}  // namespace comm
}  // namespace tunefleet
