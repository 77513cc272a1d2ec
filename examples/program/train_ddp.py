#!/usr/bin/env python3
"""A training program of your own, tuned by tunefleet: sentence similarity on STS-B with plain
PyTorch DDP (Gloo on CPUs, NCCL on GPUs), as `configs/program_ddp.yaml` sweeps it.

The model: hashed word pieces -> EmbeddingBag (mean) -> a linear projection; the score of a pair
is the cosine of its two embeddings, trained with MSE against the gold score / 5 (Sentence-BERT's
CosineSimilarityLoss), evaluated by Spearman's rank correlation on the dev set.

It runs alone too:     python3 examples/program/train_ddp.py --lr 0.05 --batch-size 32
or under torchrun:     torchrun --nproc_per_node=2 examples/program/train_ddp.py ...
Under a sweep, rank 0 reports through tunefleet.report() every --eval-every steps; the trial's
folder (--out, TUNEFLEET_TRIAL_DIR) gets the model and, per rank, pids/rank-R (for tests).
"""
import argparse
import csv
import os
import sys
import time
import zlib

import torch
import torch.distributed as dist
import torch.nn.functional as F

try:
    import tunefleet
except ImportError:  # from a checkout, without `pip install ./python`
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    import tunefleet

BUCKETS = 1 << 15


def read_pairs(path):
    pairs = []
    with open(path, encoding="utf-8") as f:
        for row in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            if len(row) >= 7:
                pairs.append((row[5], row[6], float(row[4]) / 5.0))
    if not pairs:
        sys.exit("train_ddp.py: %s: no STS-B rows (genre, file, year, id, score, s1, s2)" % path)
    return pairs


def pieces(text):
    words = "".join(c.lower() if c.isalnum() else " " for c in text).split()
    ids = [zlib.crc32(w.encode()) % BUCKETS for w in words]
    ids += [zlib.crc32(("%s %s" % (a, b)).encode()) % BUCKETS for a, b in zip(words, words[1:])]
    return ids or [0]


def batch_tensors(pairs):
    def bag(texts):
        ids, offsets = [], []
        for t in texts:
            offsets.append(len(ids))
            ids.extend(pieces(t))
        return torch.tensor(ids), torch.tensor(offsets)
    a = bag([p[0] for p in pairs])
    b = bag([p[1] for p in pairs])
    return a, b, torch.tensor([p[2] for p in pairs])


class Encoder(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.embed = torch.nn.EmbeddingBag(BUCKETS, dim, mode="mean")
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, a, b):
        ea = self.proj(self.embed(*a))
        eb = self.proj(self.embed(*b))
        return F.cosine_similarity(ea, eb)


def spearman(x, y):
    def ranks(v):
        r = torch.empty_like(v)
        r[v.argsort()] = torch.arange(len(v), dtype=v.dtype)
        return r
    rx, ry = ranks(x), ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    return float((rx * ry).sum() / (rx.norm() * ry.norm()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--batch-size", type=int, default=32, help="per rank")
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--eval-every", type=int, default=20, help="steps")
    parser.add_argument("--data", default="data/stsbenchmark")
    parser.add_argument("--out", default=tunefleet.trial_dir() or "runs/train_ddp")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    # A GPU each where the rank sees GPUs (its LOCAL_RANK-th: one under tunefleet's per-rank
    # launch, several under torchrun), else the CPU and Gloo.
    cuda = torch.cuda.is_available() and os.environ.get("CUDA_VISIBLE_DEVICES", "x") != ""
    device = torch.device("cpu")
    if cuda:
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count())
        torch.cuda.set_device(device)
    if world > 1:
        dist.init_process_group("nccl" if cuda else "gloo")
    os.makedirs(os.path.join(args.out, "pids"), exist_ok=True)
    with open(os.path.join(args.out, "pids", "rank-%d" % rank), "w") as f:
        f.write("%d\n" % os.getpid())

    torch.manual_seed(args.seed)
    train = read_pairs(os.path.join(args.data, "sts-train.csv"))
    dev = read_pairs(os.path.join(args.data, "sts-dev.csv"))
    model = Encoder(args.dim).to(device)
    ddp = torch.nn.parallel.DistributedDataParallel(model) if world > 1 else model
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr)
    dev_a, dev_b, dev_y = batch_tensors(dev)
    dev_a = tuple(t.to(device) for t in dev_a)
    dev_b = tuple(t.to(device) for t in dev_b)

    g = torch.Generator().manual_seed(args.seed)
    global_batch = args.batch_size * world
    steps_per_epoch = len(train) // global_batch
    total = max(1, int(steps_per_epoch * args.epochs))
    start = time.time()
    step = 0
    while step < total:
        order = torch.randperm(len(train), generator=g).tolist()
        for first in range(0, steps_per_epoch * global_batch, global_batch):
            if step >= total:
                break
            mine = order[first + rank * args.batch_size: first + (rank + 1) * args.batch_size]
            a, b, y = batch_tensors([train[i] for i in mine])
            a = tuple(t.to(device) for t in a)
            b = tuple(t.to(device) for t in b)
            loss = F.mse_loss(ddp(a, b), y.to(device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if rank == 0 and (step % args.eval_every == 0 or step == total):
                with torch.no_grad():
                    rho = spearman(model(dev_a, dev_b).float().cpu(), dev_y.float().cpu())
                tunefleet.report(step=step, samples=step * global_batch,
                                 **{"eval/spearman": rho, "train/loss": loss.item()})
                print("step %d/%d  loss %.4f  dev spearman %.4f  %.1f samples/s" %
                      (step, total, loss.item(), rho, step * global_batch / (time.time() - start)),
                      flush=True)
    if rank == 0:
        torch.save(model.state_dict(), os.path.join(args.out, "model.pt"))
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
