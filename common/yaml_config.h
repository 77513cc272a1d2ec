// YAML configuration files with command-line overrides, read through typed accessors whose
// errors always name the file, the line and the dotted key:
//
//   configs/lr.yaml:14: search.random.trials: expected an integer, got 'eight'
//   configs/lr.yaml: override 'train.lr=abc': train.lr: expected a number, got 'abc'
//
//   ASSIGN_OR_RETURN(ConfigFile file, ConfigFile::Load(path));
//   RETURN_IF_ERROR(file.ApplyOverrides({"train.lr=3e-5"}));
//   ASSIGN_OR_RETURN(ConfigMap root, file.Root());
//   RETURN_IF_ERROR(root.AllowOnly({"model", "train"}));   // unknown and duplicate keys
//   ASSIGN_OR_RETURN(ConfigMap train, root.GetMap("train"));
//   double lr = 2e-5;
//   RETURN_IF_ERROR(train.GetOptional("lr", &lr));
//   if (lr <= 0) return train.Error("lr", "must be > 0");
//
// Overrides follow Hydra / Lightning: `a.b.c=VALUE`, VALUE parsed as YAML (3e-5, true, [16, 32],
// {x: 1}); intermediate mappings are created when missing, so a misspelt key is then reported as
// unknown by AllowOnly, naming the override. A key that the file writes with dots in it
// (`parameters: {train.weight_decay: {max: 0.1}}`) is matched whole, so
// `parameters.train.weight_decay.max=0.2` sets that entry's max. Hydra's other forms:
//   +a.b=VALUE   adds a key the file lacks; an error when it is set ("use a.b=VALUE to change it")
//   ++a.b=VALUE  adds or sets (what a.b=VALUE does)
//   ~a.b         removes the key (and what is under it); an error when it is not set
//   ~a.b=VALUE   removes it only if it holds VALUE (1e-5 = 1.0e-05), else an error saying what
//                it holds; nothing is removed
// Errors about a value an override set name the override, as the user typed it.
// Thread-safety: a ConfigFile and its ConfigMaps are immutable after ApplyOverrides and may be
// read from several threads; ApplyOverride must not run concurrently with reads.
#ifndef TUNEFLEET_COMMON_YAML_CONFIG_H_
#define TUNEFLEET_COMMON_YAML_CONFIG_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "yaml-cpp/yaml.h"

namespace tunefleet {

class ConfigMap;

class ConfigFile {
 public:
  // Reads and parses `path`. Missing or unreadable files, a folder, YAML syntax errors and
  // empty files are errors naming the file (and line, for syntax errors). Values echoed in
  // errors are clipped (common/clip.h).
  static absl::StatusOr<ConfigFile> Load(const std::string& path);
  // Parses `text` as if it were the file `name` (tests, embedded configs).
  static absl::StatusOr<ConfigFile> Parse(const std::string& text, const std::string& name);

  absl::Status ApplyOverride(const std::string& assignment);
  // The same, errors naming the override as `shown_as` (what the user typed, when a tool
  // rewrote it: `lr=1e-5,1e-4` under hpo sweep --multirun).
  absl::Status ApplyOverride(const std::string& assignment, const std::string& shown_as);
  absl::Status ApplyOverrides(const std::vector<std::string>& assignments);

  // The top-level mapping; an error when the document is not a mapping.
  absl::StatusOr<ConfigMap> Root() const;
  const std::string& name() const;

 private:
  struct Source;
  explicit ConfigFile(std::shared_ptr<Source> source);
  std::shared_ptr<Source> source_;
  friend class ConfigMap;
};

// One mapping of a config file, at a dotted path ("" for the top level).
class ConfigMap {
 public:
  const std::string& path() const { return path_; }
  // "search.random" + "trials" -> "search.random.trials".
  std::string KeyPath(const std::string& key) const;

  bool Has(const std::string& key) const;
  // Keys in file order.
  std::vector<std::string> Keys() const;

  // Fails on a key not in `allowed` (naming the allowed ones) and on a key given twice.
  absl::Status AllowOnly(std::initializer_list<const char*> allowed) const;
  absl::Status AllowOnly(const std::vector<std::string>& allowed) const;

  // True when a command-line override set `key` or a mapping above it (not for a key the file
  // gives inside a mapping that an override only added to).
  bool FromOverride(const std::string& key) const;

  // For a mapping whose `selector` key (a `type`) picks which of its keys apply, `keys_for`
  // listing the keys of each choice: AllowOnly(the keys of `choice`), except when a command-line
  // override set the selector, then keys the file gives for another choice are dropped (the
  // parser does not read them) and the note to print says so, e.g.
  //   early_terminate.type=none (override): dropped n_startup_trials, n_warmup_steps from x.yaml
  // ("" when nothing was dropped). A key an override gave that `choice` does not take stays
  // an error, naming the choices that take it and the fix.
  absl::StatusOr<std::string> AllowOnlyForChoice(
      const std::string& selector, const std::string& choice,
      const std::vector<std::pair<std::string, std::vector<std::string>>>& keys_for) const;

  // Required values: an error when the key is missing or has the wrong type.
  absl::Status Get(const std::string& key, std::string* out) const;
  absl::Status Get(const std::string& key, int64_t* out) const;
  absl::Status Get(const std::string& key, int* out) const;
  absl::Status Get(const std::string& key, double* out) const;
  absl::Status Get(const std::string& key, bool* out) const;
  absl::Status Get(const std::string& key, std::vector<int64_t>* out) const;
  absl::Status Get(const std::string& key, std::vector<double>* out) const;
  absl::Status Get(const std::string& key, std::vector<std::string>* out) const;
  // Optional values: *out keeps its value when the key is missing (or explicitly null).
  template <typename T>
  absl::Status GetOptional(const std::string& key, T* out) const {
    if (!HasValue(key)) return absl::OkStatus();
    return Get(key, out);
  }
  // A string that must be one of `choices`.
  absl::Status GetEnum(const std::string& key, const std::vector<std::string>& choices,
                       std::string* out, bool required = false) const;

  // Any value (scalar, list or mapping) as flow-style YAML text, e.g. "[16, 32]", so that it can
  // be handed on as an override "key=TEXT".
  absl::Status GetYamlText(const std::string& key, std::string* out) const;

  absl::StatusOr<ConfigMap> GetMap(const std::string& key) const;
  // Missing key -> an empty mapping at that path (so defaults apply).
  absl::StatusOr<ConfigMap> GetOptionalMap(const std::string& key) const;
  bool IsMap(const std::string& key) const;

  // An InvalidArgument error located at `key` (its line when present in the file, else this
  // mapping's line), or at this mapping when `key` is empty.
  absl::Status Error(const std::string& key, const std::string& message) const;
  // The 1-based line of `key` (or of this mapping when empty); 0 when unknown.
  int Line(const std::string& key) const;

 private:
  ConfigMap(std::shared_ptr<ConfigFile::Source> source, YAML::Node node, std::string path);
  YAML::Node Value(const std::string& key) const;
  bool HasValue(const std::string& key) const;
  absl::Status ErrorAt(const std::string& key_path, const YAML::Mark& mark,
                       const std::string& message) const;
  absl::Status Require(const std::string& key, YAML::Node* node) const;
  template <typename T>
  absl::Status DecodeScalar(const std::string& key_path, const YAML::Node& node,
                            const char* expected, T* out) const;
  template <typename T>
  absl::Status GetList(const std::string& key, const char* expected, std::vector<T>* out) const;

  std::shared_ptr<ConfigFile::Source> source_;
  YAML::Node node_;
  std::string path_;
  friend class ConfigFile;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_YAML_CONFIG_H_
