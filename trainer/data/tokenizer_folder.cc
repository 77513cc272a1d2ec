#include "trainer/data/tokenizer_folder.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "trainer/data/unigram_tokenizer.h"
#include "trainer/data/wordpiece_tokenizer.h"
#include "trainer/io/hf_folder_util.h"

namespace tunefleet {
namespace trainer {
namespace {

enum class Model { kWordPiece, kUnigramJson, kSentencePiece };

// What a folder's files say about its tokenizer.
struct Files {
  std::string dir;
  std::string json_path;        // tokenizer.json
  std::string config_path;      // tokenizer_config.json
  Json fast;                    // tokenizer.json's object, or null
  Json config;                  // tokenizer_config.json's object, or null
  std::string tokenizer_class;  // without "Fast"
};

absl::StatusOr<Json> ReadIfPresent(const std::string& path) {
  if (!PathExists(path)) return Json();
  return ReadJsonFile(path);
}

bool RobertaStyle(const std::string& tokenizer_class) {
  for (const char* c :
       {"MPNetTokenizer", "XLMRobertaTokenizer", "RobertaTokenizer", "CamembertTokenizer"}) {
    if (tokenizer_class == c) return true;
  }
  return false;
}

absl::StatusOr<Model> PickModel(const Files& f) {
  if (f.fast.is_object()) {
    const Json& model = f.fast.contains("model") ? f.fast["model"] : Json();
    const std::string type = model.is_object() ? model.value("type", "") : "";
    if (type == "WordPiece") return Model::kWordPiece;
    if (type == "Unigram") return Model::kUnigramJson;
    return JsonKeyError(f.json_path, "model.type",
                        absl::StrCat("is ", type.empty() ? "missing" : "\"" + type + "\"",
                                     ", which no tokenizer here reads (known: WordPiece, "
                                     "Unigram; byte-level BPE is not supported)"));
  }
  const std::string& c = f.tokenizer_class;
  if (c == "XLMRobertaTokenizer" || c == "CamembertTokenizer") return Model::kSentencePiece;
  if (c == "RobertaTokenizer" || c == "GPT2Tokenizer") {
    return JsonKeyError(f.config_path, "tokenizer_class",
                        absl::StrCat("is \"", c, "\": byte-level BPE is not supported"));
  }
  if (!c.empty() || PathExists(JoinPath(f.dir, "vocab.txt"))) return Model::kWordPiece;
  if (PathExists(JoinPath(f.dir, "sentencepiece.bpe.model"))) return Model::kSentencePiece;
  return absl::NotFoundError(absl::StrCat(
      f.dir, " has no tokenizer: none of tokenizer.json, vocab.txt, sentencepiece.bpe.model"));
}

// The id of token `name` in `t`, or an error naming where the name came from.
absl::StatusOr<int32_t> IdOf(const Tokenizer& t, const std::string& name, const std::string& path,
                             const char* key) {
  const int32_t id = t.TokenId(name);
  if (id < 0)
    return JsonKeyError(path, key, absl::StrCat("names \"", name, "\", not in the vocabulary"));
  return id;
}

// tokenizer.json's post_processor as a template (BERT's or RoBERTa's shape, or a
// TemplateProcessing); null keeps the tokenizer's own.
absl::Status ReadTemplate(const Json& p, const Tokenizer& t, const std::string& path,
                          SpecialTemplate* out) {
  if (!p.is_object()) return absl::OkStatus();
  const std::string type = p.value("type", "");
  if (type == "Sequence" && p.contains("processors") && p["processors"].is_array()) {
    for (const Json& inner : p["processors"]) RETURN_IF_ERROR(ReadTemplate(inner, t, path, out));
    return absl::OkStatus();
  }
  auto special = [&](const Json& pair, const char* key) -> absl::StatusOr<int32_t> {
    if (!pair.is_array() || pair.size() != 2 || !pair[1].is_number_integer()) {
      return JsonKeyError(path, key, "must be [token, id]");
    }
    return pair[1].get<int32_t>();
  };
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    ASSIGN_OR_RETURN(int32_t cls, special(p.value("cls", Json()), "post_processor.cls"));
    ASSIGN_OR_RETURN(int32_t sep, special(p.value("sep", Json()), "post_processor.sep"));
    *out = type == "BertProcessing" ? SpecialTemplate::Bert(cls, sep)
                                    : SpecialTemplate::Roberta(cls, sep);
    return absl::OkStatus();
  }
  if (type != "TemplateProcessing") return absl::OkStatus();
  // Each piece: {"SpecialToken": {"id": TOKEN, "type_id": N}} or {"Sequence": {"id": "A"}}.
  auto ids_of = [&](const Json& item, std::vector<int32_t>* ids) -> absl::Status {
    const std::string token = item["SpecialToken"].value("id", "");
    const Json& specials = p.value("special_tokens", Json::object());
    if (specials.contains(token) && specials[token].contains("ids") &&
        specials[token]["ids"].is_array()) {
      for (const Json& id : specials[token]["ids"]) ids->push_back(id.get<int32_t>());
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(int32_t id, IdOf(t, token, path, "post_processor.special_tokens"));
    ids->push_back(id);
    return absl::OkStatus();
  };
  SpecialTemplate tpl;
  for (const char* key : {"single", "pair"}) {
    const Json& seq = p.value(key, Json());
    if (!seq.is_array()) return JsonKeyError(path, "post_processor", "has no template");
    int part = 0;  // 0: before A, 1: after A, 2: after B
    for (const Json& item : seq) {
      if (item.contains("Sequence")) {
        if (part == 1) tpl.second_type_id = item["Sequence"].value("type_id", 0);
        ++part;
        continue;
      }
      if (!item.contains("SpecialToken")) {
        return JsonKeyError(path, "post_processor", absl::StrCat("has a piece ", JsonBrief(item)));
      }
      std::vector<int32_t>* ids = std::string(key) == "single"
                                      ? (part == 0 ? &tpl.single_prefix : &tpl.single_suffix)
                                      : (part == 0   ? &tpl.pair_prefix
                                         : part == 1 ? &tpl.pair_middle
                                                     : &tpl.pair_suffix);
      RETURN_IF_ERROR(ids_of(item, ids));
    }
  }
  *out = std::move(tpl);
  return absl::OkStatus();
}

absl::Status ReadAddedTokens(const Json& fast, const std::string& path, Tokenizer* t) {
  if (!fast.is_object() || !fast.contains("added_tokens")) return absl::OkStatus();
  const Json& list = fast["added_tokens"];
  if (!list.is_array()) return JsonKeyError(path, "added_tokens", "must be a list");
  std::vector<AddedToken> added;
  for (const Json& a : list) {
    if (!a.is_object() || !a.contains("content") || !a["content"].is_string() ||
        !a.contains("id") || !a["id"].is_number_integer()) {
      return JsonKeyError(path, "added_tokens", absl::StrCat("has an entry ", JsonBrief(a)));
    }
    added.push_back(AddedToken{a["content"].get<std::string>(), a["id"].get<int32_t>(),
                               a.value("lstrip", false), a.value("rstrip", false)});
  }
  t->set_added_tokens(std::move(added));
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Tokenizer>> LoadModel(const Files& f) {
  ASSIGN_OR_RETURN(Model model, PickModel(f));
  switch (model) {
    case Model::kWordPiece: {
      ASSIGN_OR_RETURN(WordPieceTokenizer w,
                       WordPieceTokenizer::FromModelFiles(f.dir, f.fast, f.config));
      auto t = std::make_shared<WordPieceTokenizer>(std::move(w));
      if (RobertaStyle(f.tokenizer_class)) {
        t->set_special_template(SpecialTemplate::Roberta(t->cls_id(), t->sep_id()));
      }
      return std::shared_ptr<Tokenizer>(std::move(t));
    }
    case Model::kUnigramJson: {
      ASSIGN_OR_RETURN(UnigramTokenizer u,
                       UnigramTokenizer::FromTokenizerJson(
                           f.fast["model"], f.fast.value("normalizer", Json()), f.json_path));
      return std::shared_ptr<Tokenizer>(std::make_shared<UnigramTokenizer>(std::move(u)));
    }
    case Model::kSentencePiece: {
      ASSIGN_OR_RETURN(UnigramTokenizer u, UnigramTokenizer::FromSentencePieceModel(
                                               JoinPath(f.dir, "sentencepiece.bpe.model")));
      return std::shared_ptr<Tokenizer>(std::make_shared<UnigramTokenizer>(std::move(u)));
    }
  }
  return absl::InternalError("unreachable");
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Tokenizer>> LoadFolderTokenizer(const std::string& dir) {
  Files f;
  f.dir = dir;
  f.json_path = JoinPath(dir, "tokenizer.json");
  f.config_path = JoinPath(dir, "tokenizer_config.json");
  ASSIGN_OR_RETURN(f.fast, ReadIfPresent(f.json_path));
  ASSIGN_OR_RETURN(f.config, ReadIfPresent(f.config_path));
  if (f.config.is_object() && f.config.contains("tokenizer_class")) {
    if (!f.config["tokenizer_class"].is_string()) {
      return JsonKeyError(f.config_path, "tokenizer_class", "must be a string");
    }
    absl::string_view c = f.config["tokenizer_class"].get_ref<const std::string&>();
    absl::ConsumeSuffix(&c, "Fast");
    f.tokenizer_class = std::string(c);
  }
  ASSIGN_OR_RETURN(std::shared_ptr<Tokenizer> t, LoadModel(f));
  if (f.fast.is_object()) {
    SpecialTemplate tpl = t->special_template();
    RETURN_IF_ERROR(ReadTemplate(f.fast.value("post_processor", Json()), *t, f.json_path, &tpl));
    t->set_special_template(std::move(tpl));
    RETURN_IF_ERROR(ReadAddedTokens(f.fast, f.json_path, t.get()));
  }
  if (f.config.is_object() && f.config.contains("pad_token") && f.config["pad_token"].is_string()) {
    ASSIGN_OR_RETURN(int32_t pad, IdOf(*t, f.config["pad_token"].get<std::string>(), f.config_path,
                                       "pad_token"));
    t->set_pad_id(pad);
  }
  return std::shared_ptr<const Tokenizer>(std::move(t));
}

const std::vector<std::string>& TokenizerFileNames() {
  static const auto* const kNames = new std::vector<std::string>{"tokenizer.json",
                                                                 "tokenizer_config.json",
                                                                 "special_tokens_map.json",
                                                                 "added_tokens.json",
                                                                 "vocab.txt",
                                                                 "sentencepiece.bpe.model",
                                                                 "vocab.json",
                                                                 "merges.txt"};
  return *kNames;
}

}  // namespace trainer
}  // namespace tunefleet
