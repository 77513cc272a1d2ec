#!/usr/bin/env python3
"""Golden data for the model families beyond BERT (issue 34): three small random-init encoders in
Sentence-Transformers layout, laid out as the Hub's folders are, with Hugging Face's ids,
embeddings and training steps for them. Run on a host with torch, transformers, tokenizers,
sentencepiece and sentence-transformers (the GPU host; it runs on the CPU, fp32):

  python3 data/golden/make_family_goldens.py SEEDS_DIR OUT_DIR

SEEDS_DIR: the Korean seed documents (../shared/seeds). Writes, under OUT_DIR:
  roberta-klue/  RobertaModel under a cased WordPiece BertTokenizer ([CLS]=0 [PAD]=1 [SEP]=2
                 [UNK]=3, as klue/roberta-base), vocab.txt + tokenizer.json
  xlm-r/         XLMRobertaModel under XLMRobertaTokenizer: a SentencePiece unigram model
                 (sentencepiece.bpe.model, fairseq ids) + tokenizer.json
  mpnet/         MPNetModel under MPNetTokenizer (lowercase WordPiece, <s> </s>), vocab.txt +
                 tokenizer.json
  distilbert/    DistilBertModel under DistilBertTokenizer (lowercase WordPiece), vocab.txt +
                 tokenizer.json (made last, so the folders above are as they were without it)
  family_goldens.json: per folder, "ids" (held-out texts and pairs, as
                 AutoTokenizer.from_pretrained(folder)(text, truncation=True, max_length=N) gives
                 them), "ids_without_tokenizer_json" (the same from the folder without
                 tokenizer.json: vocab.txt or sentencepiece.bpe.model alone; must be equal),
                 "mean_pooled" (sentence-transformers' encode of the held-out texts),
                 "cosine" (3 training steps, as data/golden/train_trajectories.json's).
"""
import glob
import json
import os
import shutil
import sys
import tempfile

import sentencepiece as spm
import sentence_transformers
import tokenizers
import torch
import transformers
from sentence_transformers import SentenceTransformer, models
from tokenizers.implementations import BertWordPieceTokenizer

seeds, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
torch.manual_seed(34)

lines = []
for path in sorted(glob.glob(os.path.join(seeds, "*.txt"))):
    if path.endswith("001_5ddc0826e5046dc5.txt"):
        continue  # the repaired copy stands in for it
    with open(path, encoding="utf-8") as f:
        lines += [l.rstrip("\n") for l in f if l.strip()]
sts = []
with open("data/stsbenchmark/sts-train.csv", encoding="utf-8") as f:
    for row in f:
        parts = row.rstrip("\n").split("\t")
        sts.append((parts[5], parts[6], float(parts[4])))
lines += [t for a, b, _ in sts for t in (a, b)]
dev = []
with open("data/stsbenchmark/sts-dev.csv", encoding="utf-8") as f:
    for row in f:
        dev.append(row.rstrip("\n").split("\t")[5])

# Held out: none of these lines is in the training text.
held_out = [
    "The Quick Brown Fox jumps over the Lazy Dog.",
    "Apple and apple, US and us, NASA's rover.",
    "GPU memory usage: 16.4 GiB on an NVIDIA H100!",
    "오늘은 모델 학습을 시작합니다.",
    "데이터를 GPU 메모리에 올리고 배치 크기를 늘려 보자.",
    "한국어 RoBERTa 모델(klue/roberta-base)로 문장 임베딩을 만든다.",
    "서울특별시 강남구 테헤란로 123, 전화 02-123-4567",
    "Café, naïve, façade, résumé, Ångström, São Paulo, Zürich, Øresund.",
    "e\u0301cole (decomposed) versus \u00e9cole (composed)",
    "ΟΔΟΣ Σίσυφος ΣΟΦΊΑ, İstanbul, ǅemal, ﬁnance",
    "中文字符和日本語のテキスト、한국어도 섞어서。",
    "Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ１２３！ and ｶﾀｶﾅ",
    "tab\there, newline\nthere, zero\u200bwidth, bom\ufeffx",
    "  leading and   repeated   spaces  ",
    "Supercalifragilisticexpialidocious" * 4,
    "a" * 101 + " short " + "가" * 120,
    "<s> literal </s> tokens <mask> and [CLS] [SEP] [MASK] <unk>",
    "Emoji 🤗🚀 and symbols ™ © ® ∑ √ ≠",
    "",
    "Mixed 한글English中文123",
]
pairs = [
    ("A man is playing a guitar.", "남자가 기타를 치고 있다."),
    ("Café au lait", "ＣＡＦＥ　ＡＵ　ＬＡＩＴ"),
    ("This first sentence is rather long and will need to be cut " * 6, "두 번째 문장은 짧다."),
]
SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
             max_position_embeddings=130)


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")


def wordpiece_vocab(dir_, specials, lowercase, texts):
    tok = BertWordPieceTokenizer(clean_text=True, handle_chinese_chars=True,
                                 strip_accents=lowercase, lowercase=lowercase)
    tok.train_from_iterator(texts, vocab_size=6000, min_frequency=2, limit_alphabet=3000,
                            special_tokens=specials, wordpieces_prefix="##")
    tok.save_model(dir_)


def make_klue(bare):
    wordpiece_vocab(bare, ["[CLS]", "[PAD]", "[SEP]", "[UNK]", "[MASK]"], False, lines)
    write_json(os.path.join(bare, "tokenizer_config.json"),
               {"tokenizer_class": "BertTokenizer", "do_lower_case": False,
                "model_max_length": 128})
    n = len(open(os.path.join(bare, "vocab.txt"), encoding="utf-8").read().splitlines())
    return transformers.RobertaConfig(vocab_size=n, type_vocab_size=1, pad_token_id=1,
                                      bos_token_id=0, eos_token_id=2, layer_norm_eps=1e-5, **SMALL)


def make_xlmr(bare):
    text = os.path.join(bare, "train.txt")
    with open(text, "w", encoding="utf-8") as f:
        f.write("\n".join(l.replace("\n", " ") for l in lines) + "\n")
    spm.SentencePieceTrainer.train(input=text, model_prefix=os.path.join(bare, "spm"),
                                   vocab_size=4000, model_type="unigram",
                                   character_coverage=0.9995, seed_sentencepiece_size=200000)
    os.rename(os.path.join(bare, "spm.model"), os.path.join(bare, "sentencepiece.bpe.model"))
    for name in ("spm.vocab", "train.txt"):
        os.remove(os.path.join(bare, name))
    write_json(os.path.join(bare, "tokenizer_config.json"),
               {"tokenizer_class": "XLMRobertaTokenizer", "model_max_length": 128})
    sp = spm.SentencePieceProcessor(model_file=os.path.join(bare, "sentencepiece.bpe.model"))
    return transformers.XLMRobertaConfig(vocab_size=sp.get_piece_size() + 2, type_vocab_size=1,
                                         pad_token_id=1, bos_token_id=0, eos_token_id=2,
                                         layer_norm_eps=1e-5, **SMALL)


def make_mpnet(bare):
    english = [t for a, b, _ in sts for t in (a, b)]
    wordpiece_vocab(bare, ["<s>", "<pad>", "</s>", "<unk>", "[UNK]", "<mask>"], True, english)
    write_json(os.path.join(bare, "tokenizer_config.json"),
               {"tokenizer_class": "MPNetTokenizer", "do_lower_case": True,
                "model_max_length": 128})
    n = len(open(os.path.join(bare, "vocab.txt"), encoding="utf-8").read().splitlines())
    return transformers.MPNetConfig(vocab_size=n, relative_attention_num_buckets=32,
                                    pad_token_id=1, bos_token_id=0, eos_token_id=2,
                                    layer_norm_eps=1e-5, **SMALL)


def make_distilbert(bare):
    english = [t for a, b, _ in sts for t in (a, b)]
    wordpiece_vocab(bare, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], True, english)
    write_json(os.path.join(bare, "tokenizer_config.json"),
               {"tokenizer_class": "DistilBertTokenizer", "do_lower_case": True,
                "model_max_length": 128})
    n = len(open(os.path.join(bare, "vocab.txt"), encoding="utf-8").read().splitlines())
    return transformers.DistilBertConfig(vocab_size=n, dim=32, n_layers=2, n_heads=4,
                                         hidden_dim=64, max_position_embeddings=130,
                                         pad_token_id=0)


def ids_of(tok):
    got = []
    for text in held_out:
        got.append({"text": text, "max_len": 128,
                    "ids": tok(text, truncation=True, max_length=128)["input_ids"]})
    for text in held_out[:6]:
        got.append({"text": text, "max_len": 8,
                    "ids": tok(text, truncation=True, max_length=8)["input_ids"]})
    for a, b in pairs:
        for n in (48, 16):
            got.append({"text": a, "pair": b, "max_len": n,
                        "ids": tok(a, b, truncation=True, max_length=n)["input_ids"]})
    return got


def mean_pool(model, tok, texts):
    enc = tok(texts, padding=True, truncation=True, max_length=128, return_tensors="pt")
    hidden = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"])[0]
    mask = enc["attention_mask"].unsqueeze(-1).float()
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


def cosine_steps(folder, name, steps=3, batch=16, lr=1e-4, wd=0.01, clip=1.0):
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    no_dropout = (dict(dropout=0.0, attention_dropout=0.0) if name == "distilbert" else
                  dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0))
    model = transformers.AutoModel.from_pretrained(folder, **no_dropout)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=wd)
    losses, norms = [], []
    for s in range(steps):
        rows = sts[s * batch:(s + 1) * batch]
        a = mean_pool(model, tok, [r[0] for r in rows])
        b = mean_pool(model, tok, [r[1] for r in rows])
        score = torch.tensor([r[2] / 5.0 for r in rows])
        loss = torch.nn.functional.mse_loss(torch.cosine_similarity(a, b), score)
        opt.zero_grad()
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        losses.append(loss.item())
        norms.append(norm.item())
    model.eval()
    with torch.no_grad():
        final = mean_pool(model, tok, dev[:8])
    return {"steps": steps, "batch": batch, "lr": lr, "weight_decay": wd, "max_grad_norm": clip,
            "dropout": 0.0, "losses": losses, "grad_norms_before_clip": norms,
            "final_mean_pooled_dev8": final.tolist()}


goldens = {"versions": {"transformers": transformers.__version__,
                        "tokenizers": tokenizers.__version__,
                        "sentence_transformers": sentence_transformers.__version__,
                        "sentencepiece": spm.__version__, "torch": torch.__version__}}
FAMILIES = (("roberta-klue", make_klue), ("xlm-r", make_xlmr), ("mpnet", make_mpnet),
            ("distilbert", make_distilbert))  # the last came later: the others are unchanged
for name, make in FAMILIES:
    bare = tempfile.mkdtemp()
    config = make(bare)
    tok_bare = transformers.AutoTokenizer.from_pretrained(bare)
    model = transformers.AutoModel.from_config(config)
    model.eval()
    hf_dir = os.path.join(bare, "hf")
    model.save_pretrained(hf_dir)
    tok_bare.save_pretrained(hf_dir)
    for f in os.listdir(bare):  # keep the bare files as the Hub's folders have them
        if os.path.isfile(os.path.join(bare, f)) and f != "tokenizer_config.json":
            shutil.copy(os.path.join(bare, f), hf_dir)
    st = SentenceTransformer(modules=[models.Transformer(hf_dir, max_seq_length=128),
                                      models.Pooling(config.hidden_size, "mean")], device="cpu")
    folder = os.path.join(out, name)
    shutil.rmtree(folder, ignore_errors=True)
    st.save(folder)
    for f in os.listdir(bare):
        if os.path.isfile(os.path.join(bare, f)) and not os.path.exists(os.path.join(folder, f)):
            shutil.copy(os.path.join(bare, f), folder)
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    ids = ids_of(tok)
    ids_bare = ids_of(tok_bare)
    same = sum(x["ids"] == y["ids"] for x, y in zip(ids, ids_bare))
    st = SentenceTransformer(folder, device="cpu")
    emb = st.encode(held_out, convert_to_tensor=True, batch_size=64).tolist()
    goldens[name] = {"files": sorted(os.listdir(folder)), "ids": ids,
                     "ids_without_tokenizer_json": ids_bare, "mean_pooled": emb,
                     "cosine": cosine_steps(folder, name)}
    print(f"{name}: {config.vocab_size} tokens, {len(ids)} id lines ({same} equal without "
          f"tokenizer.json), files {goldens[name]['files']}")
    shutil.rmtree(bare)
write_json(os.path.join(out, "family_goldens.json"), goldens)
print(json.dumps(goldens["versions"]))
