#include "trainer/io/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <utility>

#include <torch/version.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace trainer {
namespace {

using Json = nlohmann::json;

// The spec's dtypes, in the order of the Rust crate's `Dtype` enum (the writer sorts by it).
struct DtypeInfo {
  const char* name;
  uint64_t size;
};
constexpr DtypeInfo kDtypes[] = {
    {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
    {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
    {"U32", 4},  {"F32", 4}, {"F64", 8}, {"I64", 8},     {"U64", 8},
};

int DtypeRank(absl::string_view name) {
  for (int i = 0; i < static_cast<int>(std::size(kDtypes)); ++i) {
    if (name == kDtypes[i].name) return i;
  }
  return -1;
}

absl::Status Error(absl::string_view file, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(file, ": ", message));
}

// Thrown from the JSON parser's callback to stop parsing at once.
struct HeaderRejected {
  std::string message;
};

// Parses the header JSON, refusing duplicate keys at any level and nesting deeper than a
// valid header has (object > tensor object > shape array).
Json ParseHeaderJson(absl::string_view text) {
  std::vector<std::set<std::string>> keys;  // one set per open object
  auto callback = [&keys](int depth, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (depth >= 3) throw HeaderRejected{"JSON header nests deeper than a safetensors header"};
        if (event == Json::parse_event_t::object_start) keys.emplace_back();
        break;
      case Json::parse_event_t::object_end:
        keys.pop_back();
        break;
      case Json::parse_event_t::key:
        if (!keys.back().insert(parsed.get<std::string>()).second) {
          throw HeaderRejected{
              absl::StrCat("duplicate key \"", parsed.get<std::string>(), "\" in the JSON header")};
        }
        break;
      default:
        break;
    }
    return true;
  };
  return Json::parse(text.begin(), text.end(), callback);
}

// A non-negative JSON integer, or false.
bool AsUnsigned(const Json& j, uint64_t* out) {
  if (j.is_number_unsigned()) {
    *out = j.get<uint64_t>();
    return true;
  }
  if (j.is_number_integer() && j.get<int64_t>() >= 0) {
    *out = static_cast<uint64_t>(j.get<int64_t>());
    return true;
  }
  return false;
}

absl::StatusOr<SafetensorsEntry> ParseEntry(absl::string_view file, const std::string& name,
                                            const Json& j) {
  const std::string where = absl::StrCat("tensor \"", name, "\": ");
  if (!j.is_object()) return Error(file, absl::StrCat(where, "expected an object"));
  for (const auto& [key, unused] : j.items()) {
    if (key != "dtype" && key != "shape" && key != "data_offsets") {
      return Error(file, absl::StrCat(where, "unknown field \"", key, "\""));
    }
  }
  SafetensorsEntry e;
  e.name = name;
  auto dtype = j.find("dtype");
  if (dtype == j.end() || !dtype->is_string()) {
    return Error(file, absl::StrCat(where, "\"dtype\" must be a string"));
  }
  e.dtype = dtype->get<std::string>();
  const int rank = DtypeRank(e.dtype);
  if (rank < 0) return Error(file, absl::StrCat(where, "unknown dtype \"", e.dtype, "\""));
  auto shape = j.find("shape");
  if (shape == j.end() || !shape->is_array()) {
    return Error(file, absl::StrCat(where, "\"shape\" must be an array"));
  }
  uint64_t bytes = kDtypes[rank].size;
  for (const Json& d : *shape) {
    uint64_t dim;
    if (!AsUnsigned(d, &dim) || dim > static_cast<uint64_t>(INT64_MAX)) {
      return Error(file, absl::StrCat(where, "shape entries must be non-negative integers"));
    }
    if (__builtin_mul_overflow(bytes, dim, &bytes) || bytes > static_cast<uint64_t>(INT64_MAX)) {
      return Error(file, absl::StrCat(where, "shape ", shape->dump(), " overflows"));
    }
    e.shape.push_back(static_cast<int64_t>(dim));
  }
  auto offsets = j.find("data_offsets");
  if (offsets == j.end() || !offsets->is_array() || offsets->size() != 2 ||
      !AsUnsigned((*offsets)[0], &e.begin) || !AsUnsigned((*offsets)[1], &e.end)) {
    return Error(file, absl::StrCat(where, "\"data_offsets\" must be [BEGIN, END] integers"));
  }
  if (e.end < e.begin) {
    return Error(file, absl::StrCat(where, "data_offsets [", e.begin, ", ", e.end,
                                    "] end before they begin"));
  }
  if (e.end - e.begin != bytes) {
    return Error(file, absl::StrCat(where, "data_offsets [", e.begin, ", ", e.end, "] span ",
                                    e.end - e.begin, " bytes but ", e.dtype, " ", shape->dump(),
                                    " needs ", bytes));
  }
  return e;
}

// The header bytes (length prefix included) and the tensors in file order, on CPU, contiguous.
struct Prepared {
  std::string head;
  std::vector<torch::Tensor> tensors;
};

absl::StatusOr<Prepared> Prepare(const std::map<std::string, torch::Tensor>& tensors,
                                 const std::map<std::string, std::string>& metadata) {
  struct Item {
    int rank;
    const std::string* name;
    torch::Tensor tensor;
    std::string dtype;
  };
  std::vector<Item> items;
  try {
    for (const auto& [name, tensor] : tensors) {
      if (name == "__metadata__") {
        return absl::InvalidArgumentError("safetensors: \"__metadata__\" is not a tensor name");
      }
      if (!tensor.defined()) {
        return absl::InvalidArgumentError(
            absl::StrCat("safetensors: tensor \"", name, "\" is undefined"));
      }
      auto dtype = TorchDtypeToSafetensors(tensor.scalar_type());
      if (!dtype.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("safetensors: tensor \"", name, "\": ", dtype.status().message()));
      }
      items.push_back({DtypeRank(*dtype), &name, tensor.to(torch::kCPU).contiguous(), *dtype});
    }
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("safetensors: cannot copy a tensor to CPU: ", e.what()));
  }
  // The Rust writer's order: widest dtype first, then name.
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& a, const Item& b) { return a.rank > b.rank; });
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    header["__metadata__"] = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) header["__metadata__"][k] = v;
  }
  Prepared out;
  uint64_t offset = 0;
  for (Item& item : items) {
    const uint64_t bytes = item.tensor.numel() * item.tensor.element_size();
    header[*item.name] = {{"dtype", item.dtype},
                          {"shape", item.tensor.sizes().vec()},
                          {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    out.tensors.push_back(std::move(item.tensor));
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  const uint64_t n = json.size();
  out.head.resize(8);
  for (int i = 0; i < 8; ++i) out.head[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  out.head += json;
  return out;
}

}  // namespace

absl::StatusOr<torch::Dtype> SafetensorsDtypeToTorch(absl::string_view dtype) {
  if (dtype == "BOOL") return torch::kBool;
  if (dtype == "U8") return torch::kUInt8;
  if (dtype == "I8") return torch::kInt8;
  if (dtype == "I16") return torch::kInt16;
  if (dtype == "I32") return torch::kInt32;
  if (dtype == "I64") return torch::kInt64;
  if (dtype == "F16") return torch::kFloat16;
  if (dtype == "BF16") return torch::kBFloat16;
  if (dtype == "F32") return torch::kFloat32;
  if (dtype == "F64") return torch::kFloat64;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  if (dtype == "F8_E5M2") return torch::kFloat8_e5m2;
  if (dtype == "F8_E4M3") return torch::kFloat8_e4m3fn;
#endif
  if (DtypeRank(dtype) >= 0) {
    return absl::UnimplementedError(
        absl::StrCat("dtype ", dtype, " is not supported by this LibTorch"));
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown dtype \"", dtype, "\""));
}

absl::StatusOr<std::string> TorchDtypeToSafetensors(torch::Dtype dtype) {
  switch (dtype) {
    case torch::kBool:
      return std::string("BOOL");
    case torch::kUInt8:
      return std::string("U8");
    case torch::kInt8:
      return std::string("I8");
    case torch::kInt16:
      return std::string("I16");
    case torch::kInt32:
      return std::string("I32");
    case torch::kInt64:
      return std::string("I64");
    case torch::kFloat16:
      return std::string("F16");
    case torch::kBFloat16:
      return std::string("BF16");
    case torch::kFloat32:
      return std::string("F32");
    case torch::kFloat64:
      return std::string("F64");
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
    case torch::kFloat8_e5m2:
      return std::string("F8_E5M2");
    case torch::kFloat8_e4m3fn:
      return std::string("F8_E4M3");
#endif
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("dtype ", c10::toString(dtype), " has no safetensors equivalent"));
  }
}

absl::StatusOr<SafetensorsHeader> ParseSafetensorsHeader(absl::string_view bytes,
                                                         absl::string_view name) {
  if (bytes.size() < 8) {
    return Error(name, absl::StrCat("file is ", bytes.size(),
                                    " bytes, shorter than the 8-byte header length"));
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  if (n > kMaxSafetensorsHeaderBytes) {
    return Error(name, absl::StrCat("header length ", n, " exceeds the limit of ",
                                    kMaxSafetensorsHeaderBytes, " bytes"));
  }
  if (n > bytes.size() - 8) {
    return Error(name, absl::StrCat("header length ", n, " runs past the end of the file (",
                                    bytes.size(), " bytes; truncated?)"));
  }
  const absl::string_view text = bytes.substr(8, n);
  if (text.empty() || text[0] != '{') return Error(name, "header does not start with '{'");
  Json root;
  try {
    root = ParseHeaderJson(text);
  } catch (const HeaderRejected& e) {
    return Error(name, e.message);
  } catch (const Json::exception& e) {
    std::string what = e.what();
    if (size_t close = what.find("] ");
        what.rfind("[json.exception.", 0) == 0 && close != std::string::npos) {
      what = what.substr(close + 2);
    }
    std::replace(what.begin(), what.end(), '\n', ' ');
    return Error(name, absl::StrCat("invalid JSON header: ", what));
  }
  SafetensorsHeader header;
  header.data_start = 8 + n;
  for (const auto& [key, value] : root.items()) {
    if (key == "__metadata__") {
      if (value.is_null()) continue;
      if (!value.is_object()) return Error(name, "\"__metadata__\" must be an object");
      for (const auto& [mk, mv] : value.items()) {
        if (!mv.is_string()) {
          return Error(name,
                       absl::StrCat("\"__metadata__\" value of \"", mk, "\" must be a string"));
        }
        header.metadata[mk] = mv.get<std::string>();
      }
      continue;
    }
    ASSIGN_OR_RETURN(SafetensorsEntry entry, ParseEntry(name, key, value));
    header.entries.push_back(std::move(entry));
  }
  // The data must be tiled exactly: spans in order of offsets, each starting where the last ended.
  std::vector<const SafetensorsEntry*> by_offset;
  for (const SafetensorsEntry& e : header.entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const SafetensorsEntry* a, const SafetensorsEntry* b) {
              return std::tie(a->begin, a->end) < std::tie(b->begin, b->end);
            });
  uint64_t expected = 0;
  for (const SafetensorsEntry* e : by_offset) {
    if (e->begin != expected) {
      return Error(name, absl::StrCat("tensor \"", e->name, "\": data_offsets [", e->begin, ", ",
                                      e->end, "] ", e->begin < expected ? "overlap" : "leave a gap",
                                      " (expected to begin at ", expected, ")"));
    }
    expected = e->end;
  }
  const uint64_t data_size = bytes.size() - header.data_start;
  if (expected != data_size) {
    return Error(name, absl::StrCat("tensors cover ", expected, " bytes of data but the file has ",
                                    data_size, expected > data_size ? " (truncated?)" : ""));
  }
  return header;  // entries are in key order already: nlohmann::json objects are sorted maps
}

absl::StatusOr<SafetensorsContents> ParseSafetensors(absl::string_view bytes,
                                                     absl::string_view name,
                                                     const SafetensorsReadOptions& options) {
  ASSIGN_OR_RETURN(SafetensorsHeader header, ParseSafetensorsHeader(bytes, name));
  SafetensorsContents out;
  out.metadata = std::move(header.metadata);
  for (const SafetensorsEntry& e : header.entries) {
    auto dtype = SafetensorsDtypeToTorch(e.dtype);
    if (!dtype.ok()) {
      return absl::Status(dtype.status().code(), absl::StrCat(name, ": tensor \"", e.name,
                                                              "\": ", dtype.status().message()));
    }
    try {
      torch::Tensor t = torch::empty(e.shape, torch::TensorOptions().dtype(*dtype));
      if (e.end > e.begin) {
        std::memcpy(t.data_ptr(), bytes.data() + header.data_start + e.begin, e.end - e.begin);
      }
      if (options.to_float32 && t.is_floating_point() && t.scalar_type() != torch::kFloat32) {
        t = t.to(torch::kFloat32);
      }
      out.tensors.emplace(e.name, std::move(t));
    } catch (const std::exception& ex) {
      return absl::ResourceExhaustedError(
          absl::StrCat(name, ": tensor \"", e.name, "\": cannot allocate: ", ex.what()));
    }
  }
  return out;
}

absl::StatusOr<SafetensorsContents> ReadSafetensors(const std::string& path,
                                                    const SafetensorsReadOptions& options) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat(path, ": cannot open"));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    absl::Status s = ErrnoStatus(errno, absl::StrCat(path, ": cannot stat"));
    ::close(fd);
    return s;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error(path, "not a regular file");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return ParseSafetensors(absl::string_view(), path, options);
  }
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  absl::Status map_error =
      map == MAP_FAILED ? ErrnoStatus(errno, absl::StrCat(path, ": cannot map")) : absl::OkStatus();
  ::close(fd);
  if (!map_error.ok()) return map_error;
  auto out =
      ParseSafetensors(absl::string_view(static_cast<const char*>(map), size), path, options);
  ::munmap(map, size);
  return out;
}

absl::StatusOr<std::string> SerializeSafetensors(
    const std::map<std::string, torch::Tensor>& tensors,
    const std::map<std::string, std::string>& metadata) {
  ASSIGN_OR_RETURN(Prepared p, Prepare(tensors, metadata));
  std::string out = std::move(p.head);
  for (const torch::Tensor& t : p.tensors) {
    if (t.numel() > 0) {
      out.append(static_cast<const char*>(t.data_ptr()), t.numel() * t.element_size());
    }
  }
  return out;
}

absl::Status WriteSafetensors(const std::string& path,
                              const std::map<std::string, torch::Tensor>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  ASSIGN_OR_RETURN(Prepared p, Prepare(tensors, metadata));
  AtomicFile file(path);
  RETURN_IF_ERROR(file.Open());
  RETURN_IF_ERROR(file.Append(p.head.data(), p.head.size()));
  for (const torch::Tensor& t : p.tensors) {
    if (t.numel() == 0) continue;
    RETURN_IF_ERROR(
        file.Append(static_cast<const char*>(t.data_ptr()), t.numel() * t.element_size()));
  }
  return file.Commit();
}

}  // namespace trainer
}  // namespace tunefleet
