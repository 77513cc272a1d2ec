#!/usr/bin/env python3
"""sentence-transformers' reference for bench/gpu/cached_mnrl_memory.sh (issue 35): its
MultipleNegativesRankingLoss at batch 1024 and CachedMultipleNegativesRankingLoss (mini-batch 128)
at batch 4096 on the same BERT-base-sized random encoder and STS-B triplets, bf16 autocast, fused
AdamW, 4 steps each: step times and peak allocated memory. Run on the GPU host from the
repository root: python3 bench/gpu/st_cached_mnrl_reference.py
"""
import json, random, shutil, time, torch
from transformers import BertConfig, BertModel
from sentence_transformers import SentenceTransformer, models, losses
torch.manual_seed(0)
BertModel(BertConfig()).save_pretrained("/tmp/bbr")
shutil.copy("data/bert-uncased-vocab/vocab.txt", "/tmp/bbr/vocab.txt")
rows = [l.rstrip("\n").split("\t") for l in open("data/stsbenchmark/sts-train.csv", encoding="utf-8")]
rng = random.Random(0)
trip = [(r[5], r[6], rng.choice(rows)[6]) for r in rows]
def model():
    w = models.Transformer("/tmp/bbr", max_seq_length=128)
    return SentenceTransformer(modules=[w, models.Pooling(768, pooling_mode="mean")], device="cuda")
def run(name, loss_fn_maker, batch):
    torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()
    m = model(); m.train()
    fn = loss_fn_maker(m)
    opt = torch.optim.AdamW(m.parameters(), lr=2e-5, fused=True)
    times = []
    try:
        for step in range(4):
            rs = [trip[(step * batch + i) % len(trip)] for i in range(batch)]
            feats = [m.tokenize([r[c] for r in rs]) for c in range(3)]
            feats = [{k: (v.cuda() if torch.is_tensor(v) else v) for k, v in f.items()} for f in feats]
            torch.cuda.synchronize(); t = time.time()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = fn(feats, torch.zeros(batch, device="cuda"))
            loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize(); times.append(time.time() - t)
        print(f"{name}: batch {batch}: 4 steps, loss {loss.item():.4f}, step s {[round(x, 2) for x in times]}, "
              f"peak allocated {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
    except torch.OutOfMemoryError as e:
        print(f"{name}: batch {batch}: out of memory at step {len(times) + 1} (peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB)")
    del m, fn, opt
import sentence_transformers; print("sentence-transformers", sentence_transformers.__version__)
run("st mnrl", lambda m: losses.MultipleNegativesRankingLoss(m), 1024)
run("st cached_mnrl mini 128", lambda m: losses.CachedMultipleNegativesRankingLoss(m, mini_batch_size=128), 4096)
