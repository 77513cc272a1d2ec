"""Anchor for the model families beyond BERT (issue 34): shared/bench/pytorch_anchor.py's workload
and output line, with Hugging Face's RobertaForSequenceClassification,
XLMRobertaForSequenceClassification or MPNetForSequenceClassification at the Hub's base shapes
(random init) in place of BertForSequenceClassification (SDPA attention; MPNet's eager attention,
as transformers has no other for it). Same batch of ids in [1000, 30000), all-ones
mask, fused AdamW lr 2e-5, bf16 autocast, 5 warm-up and --steps timed steps, --compile for
torch.compile. Run on a GPU host: python3 bench/gpu/family_anchor.py --model xlm-r-base [--compile]
"""
import argparse
import json
import time

import torch
import transformers

BASE = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
            max_position_embeddings=514, layer_norm_eps=1e-5, pad_token_id=1, bos_token_id=0,
            eos_token_id=2)
CONFIGS = {
    "roberta-base": (transformers.RobertaConfig, dict(vocab_size=50265, type_vocab_size=1)),
    "xlm-r-base": (transformers.XLMRobertaConfig, dict(vocab_size=250002, type_vocab_size=1)),
    "mpnet-base": (transformers.MPNetConfig, dict(vocab_size=30527,
                                                  relative_attention_num_buckets=32)),
}


def flops_per_seq(cfg, seq):  # pytorch_anchor.py's formula
    h, L, i = cfg.hidden_size, cfg.num_hidden_layers, cfg.intermediate_size
    per_layer = 2 * seq * (4 * h * h + 2 * h * i) + 2 * 2 * seq * seq * h
    return 3 * L * per_layer


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="xlm-r-base", choices=sorted(CONFIGS))
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--compile", action="store_true")
    a = p.parse_args()
    torch.manual_seed(0)
    cls, extra = CONFIGS[a.model]
    # transformers' MPNet has no SDPA attention (it raises): its eager attention is what a
    # PyTorch user trains MPNet with.
    attn = "eager" if a.model == "mpnet-base" else "sdpa"
    cfg = cls(**BASE, **extra, num_labels=2, attn_implementation=attn)
    model = transformers.AutoModelForSequenceClassification.from_config(cfg).cuda()
    if a.compile:
        model = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5, fused=True)
    ids = torch.randint(1000, 30000, (a.batch, a.seq), device="cuda")
    mask = torch.ones_like(ids)
    labels = torch.randint(0, 2, (a.batch,), device="cuda")
    torch.cuda.reset_peak_memory_stats()

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        step()
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    # The optimizer alone: one fused AdamW step over every parameter, gradients present.
    for prm in model.parameters():
        prm.grad = torch.zeros_like(prm)
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    for _ in range(10):
        opt.step()
    torch.cuda.synchronize()
    adamw_ms = (time.perf_counter() - t1) * 100
    sps = a.batch * a.steps / dt
    print(json.dumps(dict(model=a.model, precision="bf16", world=1, batch_per_gpu=a.batch,
                          seq=a.seq, compile=a.compile, samples_per_s=round(sps, 1),
                          model_tflops=round(sps * flops_per_seq(cfg, a.seq) / 1e12, 1),
                          step_ms=round(1000 * dt / a.steps, 2), adamw_ms=round(adamw_ms, 2),
                          parameters=sum(p.numel() for p in model.parameters()),
                          peak_mem_gib=round(torch.cuda.max_memory_allocated() / 2**30, 2))),
          flush=True)


if __name__ == "__main__":
    main()
