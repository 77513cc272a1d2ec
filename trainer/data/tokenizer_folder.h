// The tokenizer of a Hugging Face model folder, as transformers' AutoTokenizer.from_pretrained
// builds it; the folder's files decide, not its model family (a RoBERTa encoder may come with a
// BertTokenizer, as klue/roberta-base does).
//
// The model:
//   - tokenizer.json when present (what transformers 5 saves, often alone): its "model" is
//     WordPiece (vocab.txt when the folder has one, else model.vocab; normalizer settings as
//     trainer/data/wordpiece_tokenizer.h reads them) or Unigram (SentencePiece, with its
//     Precompiled normalizer: trainer/data/unigram_tokenizer.h). Byte-level BPE (RobertaTokenizer,
//     roberta-base) is refused with one line.
//   - else tokenizer_config.json's tokenizer_class: BertTokenizer, MPNetTokenizer,
//     DistilBertTokenizer, ... read vocab.txt; XLMRobertaTokenizer and CamembertTokenizer read
//     sentencepiece.bpe.model with fairseq's ids;
//   - else whichever of vocab.txt and sentencepiece.bpe.model the folder has.
// The special tokens:
//   - added tokens: tokenizer.json's "added_tokens" (content, id, lstrip, rstrip), else the
//     tokenizer's special tokens;
//   - the template: tokenizer.json's "post_processor" (TemplateProcessing, BertProcessing,
//     RobertaProcessing, or one of those inside a Sequence), else the tokenizer class's: RoBERTa's
//     (<s> A </s> </s> B </s>) for MPNetTokenizer, XLMRobertaTokenizer, RobertaTokenizer and
//     CamembertTokenizer, BERT's otherwise;
//   - the padding token: tokenizer_config.json's pad_token.
// Errors are one line naming the file and the key.
// Thread-safety: stateless (the file system is shared).
#ifndef TUNEFLEET_TRAINER_DATA_TOKENIZER_FOLDER_H_
#define TUNEFLEET_TRAINER_DATA_TOKENIZER_FOLDER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer/data/tokenizer.h"

namespace tunefleet {
namespace trainer {

absl::StatusOr<std::shared_ptr<const Tokenizer>> LoadFolderTokenizer(const std::string& dir);

// The tokenizer files a model folder may have (a saved model copies those its source has).
const std::vector<std::string>& TokenizerFileNames();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DATA_TOKENIZER_FOLDER_H_
