#!/usr/bin/env python3
"""Golden data for cased WordPiece (issue 21): a cased vocab that holds Hangul, and Hugging Face's
ids for held-out lines. Run on a host with `tokenizers` and `transformers`:

  python3 data/golden/make_cased_vocab.py SEEDS_DIR OUT_DIR

SEEDS_DIR: the Korean seed documents (../shared/seeds; the repaired 001 instead of its original).
Writes OUT_DIR/cased-vocab/{vocab.txt,tokenizer_config.json} and OUT_DIR/tokens_cased.jsonl.
"""
import glob
import json
import os
import sys

import tokenizers
import transformers
from tokenizers.implementations import BertWordPieceTokenizer

seeds, out = sys.argv[1], sys.argv[2]
lines = []
for path in sorted(glob.glob(os.path.join(seeds, "*.txt"))):
    with open(path, encoding="utf-8") as f:
        lines += [l.rstrip("\n") for l in f if l.strip()]
with open("data/stsbenchmark/sts-train.csv", encoding="utf-8") as f:
    for row in f:
        parts = row.rstrip("\n").split("\t")
        lines += parts[5:7]
trainer_tok = BertWordPieceTokenizer(clean_text=True, handle_chinese_chars=True,
                                     strip_accents=False, lowercase=False)
trainer_tok.train_from_iterator(lines, vocab_size=8000, min_frequency=2, limit_alphabet=4000,
                                special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
                                wordpieces_prefix="##")
vocab_dir = os.path.join(out, "cased-vocab")
os.makedirs(vocab_dir, exist_ok=True)
trainer_tok.save_model(vocab_dir)
with open(os.path.join(vocab_dir, "tokenizer_config.json"), "w") as f:
    json.dump({"do_lower_case": False, "tokenizer_class": "BertTokenizer"}, f, indent=2)
    f.write("\n")

# Held out: none of these lines is in the training text.
held_out = [
    "The Quick Brown Fox jumps over the Lazy Dog.",
    "Apple and apple, US and us, NASA's rover.",
    "GPU memory usage: 16.4 GiB on an NVIDIA H100!",
    "오늘은 모델 학습을 시작합니다.",
    "데이터를 GPU 메모리에 올리고 배치 크기를 늘려 보자.",
    "한국어 BERT 모델(klue/bert-base)로 문장 임베딩을 만든다.",
    "서울특별시 강남구 테헤란로 123, 전화 02-123-4567",
    "Café, naïve, façade, résumé, Ångström, São Paulo, Zürich, Øresund.",
    "Crème brûlée à la française coûte 7,50 €.",
    "e\u0301cole (decomposed) versus \u00e9cole (composed)",
    "ΟΔΟΣ Σίσυφος ΣΟΦΊΑ, İstanbul, ǅemal, ﬁnance",
    "中文字符和日本語のテキスト、한국어도 섞어서。",
    "漢字かな交じり文：東京都渋谷区",
    "Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ１２３！ and ｶﾀｶﾅ",
    "tab\there, newline\nthere, nul\x00gone, bell\x07gone, zero\u200bwidth, bom\ufeffx",
    "control \x01\x02\x1f chars and \x7f delete and \u0085 NEL",
    "Supercalifragilisticexpialidocious" * 4,
    "a" * 101 + " short " + "가" * 120,
    "[CLS] literal [SEP] tokens [MASK] and [cls] lowercase",
    "Emoji 🤗🚀 and symbols ™ © ® ∑ √ ≠",
    "",
    "   ",
    "Mixed 한글English中文123",
]
pairs = [
    ("A man is playing a guitar.", "남자가 기타를 치고 있다."),
    ("Café au lait", "ＣＡＦＥ　ＡＵ　ＬＡＩＴ"),
    ("This first sentence is rather long and will need to be cut " * 6,
     "두 번째 문장은 짧다."),
]
variants = {
    "cased": transformers.BertTokenizerFast(os.path.join(vocab_dir, "vocab.txt"),
                                            do_lower_case=False),
    "cased_strip_accents": transformers.BertTokenizerFast(os.path.join(vocab_dir, "vocab.txt"),
                                                          do_lower_case=False, strip_accents=True),
}
with open(os.path.join(out, "tokens_cased.jsonl"), "w", encoding="utf-8") as f:
    for name, tok in variants.items():
        for text in held_out:
            ids = tok(text, truncation=True, max_length=128)["input_ids"]
            f.write(json.dumps({"variant": name, "text": text, "ids": ids}, ensure_ascii=False) + "\n")
        for a, b in pairs:
            enc = tok(a, b, truncation="longest_first", max_length=48)
            f.write(json.dumps({"variant": name, "text": a, "pair": b, "max_len": 48,
                                "ids": enc["input_ids"], "token_type_ids": enc["token_type_ids"]},
                               ensure_ascii=False) + "\n")
print(f"transformers {transformers.__version__}, tokenizers {tokenizers.__version__}: "
      f"{len(open(os.path.join(vocab_dir, 'vocab.txt')).read().splitlines())} tokens, "
      f"{2 * (len(held_out) + len(pairs))} golden lines")
