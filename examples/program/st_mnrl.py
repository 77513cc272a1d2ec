#!/usr/bin/env python3
"""A sentence-transformers script of your own, tuned by tunefleet: an encoder trained with
MultipleNegativesRankingLoss (in-batch negatives, scale 20, cosine) on (anchor, positive) pairs,
evaluated by InformationRetrievalEvaluator on a BEIR-layout set (ndcg@10 and friends).

Three ways to train, the same model and loss:
  --mode st_trainer  sentence-transformers' SentenceTransformerTrainer (needs `datasets`) with
                     tunefleet.TunefleetCallback: every evaluation is a report;
  --mode hf_trainer  transformers' Trainer on a torch Dataset with the same callback (what
                     SentenceTransformerTrainer builds on), for hosts without `datasets`;
  --mode loop        a plain PyTorch loop (DDP under torchrun or tunefleet's ranks) reporting
                     through tunefleet.report();
  --mode auto        st_trainer where `datasets` imports, else loop (the default).

  python3 examples/program/st_mnrl.py --model data/bert-tiny-random --train pairs.jsonl \
      --eval-dir data/retrieval/stsb-dev --lr 2e-4 --batch-size 64

Reported metrics: eval/ndcg@10, eval/mrr@10, eval/recall@10 (loop), or the Trainer's
eval_<name>_cosine_ndcg@10 ... (the trainers), with train/loss and train/samples_per_s.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist

try:
    import tunefleet
except ImportError:  # from a checkout, without `pip install ./python`
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    import tunefleet

from sentence_transformers import SentenceTransformer, util
from sentence_transformers.evaluation import InformationRetrievalEvaluator


def read_pairs(path):
    pairs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                pairs.append((row["anchor"], row["positive"]))
    return pairs


def ir_evaluator(folder, name):
    def rows(file):
        with open(os.path.join(folder, file), encoding="utf-8") as f:
            return [json.loads(l) for l in f if l.strip()]
    queries = {r["_id"]: r["text"] for r in rows("queries.jsonl")}
    corpus = {r["_id"]: r["text"] for r in rows("corpus.jsonl")}
    relevant = {}
    with open(os.path.join(folder, "qrels.tsv"), encoding="utf-8") as f:
        next(f)
        for line in f:
            q, c, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                relevant.setdefault(q, set()).add(c)
    return InformationRetrievalEvaluator(queries, corpus, relevant, name=name,
                                         show_progress_bar=False, batch_size=256)


def tokenize(model, texts):
    """The model's tokenizer on `texts` (sentence-transformers 6: preprocess; before: tokenize)."""
    return (model.preprocess if hasattr(model, "preprocess") else model.tokenize)(texts)


def to_device(features, device):
    """A tokenizer's batch on `device` (its tensors; other entries as they are)."""
    return {k: v.to(device) if hasattr(v, "to") else v for k, v in features.items()}


def mnrl(embed, anchors, positives, scale=20.0):
    """sentence-transformers' MultipleNegativesRankingLoss: cross-entropy over scaled cosine
    similarities, each anchor against every positive of the batch (one forward for both)."""
    both = embed(list(anchors) + list(positives))
    a, p = both[:len(anchors)], both[len(anchors):]
    scores = util.cos_sim(a, p) * scale
    return torch.nn.functional.cross_entropy(scores, torch.arange(len(a), device=scores.device))


def run_loop(args, model, pairs, evaluator):
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    device = model.device
    net = model
    if world > 1:
        net = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index] if device.type == "cuda" else None)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    steps_per_epoch = len(pairs) // (args.batch_size * world)
    total = max(1, int(steps_per_epoch * args.epochs))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / max(1, int(0.1 * total))) * max(0.0, (total - s) / total))
    g = torch.Generator().manual_seed(args.seed)
    eval_every = max(1, total // args.evals)
    amp = torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else torch.autocast(
        "cpu", enabled=False)

    def embed(texts):
        features = to_device(tokenize(model, texts), device)
        with amp:
            return net(features)["sentence_embedding"].float()

    def metric(metrics, suffix):  # "stsb-dev_cosine_ndcg@10", as the evaluator names it
        keys = [k for k in metrics if k.endswith(suffix) and "cosine" in k] or \
            [k for k in metrics if k.endswith(suffix)]
        return metrics[keys[0]]

    train_seconds, step, seen = 0.0, 0, 0
    while step < total:
        order = torch.randperm(len(pairs), generator=g).tolist()
        for first in range(0, steps_per_epoch * args.batch_size * world, args.batch_size * world):
            if step >= total:
                break
            mine = order[first + rank * args.batch_size:first + (rank + 1) * args.batch_size]
            batch = [pairs[i] for i in mine]
            t0 = time.time()
            model.train()
            loss = mnrl(embed, [b[0] for b in batch], [b[1] for b in batch])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            if device.type == "cuda":
                torch.cuda.synchronize()
            train_seconds += time.time() - t0
            step += 1
            seen += args.batch_size * world
            if step % eval_every == 0 or step == total:
                if rank == 0:
                    model.eval()
                    metrics = evaluator(model)
                    rate = seen / train_seconds
                    ndcg = metric(metrics, "ndcg@10")
                    tunefleet.report(step=step, samples=seen, **{
                        "eval/ndcg@10": ndcg, "eval/mrr@10": metric(metrics, "mrr@10"),
                        "eval/recall@10": metric(metrics, "recall@10"),
                        "train/loss": loss.item(), "train/samples_per_s": rate})
                    print("step %d/%d  loss %.4f  ndcg@10 %.4f  %.0f samples/s (training)" %
                          (step, total, loss.item(), ndcg, rate), flush=True)
                if world > 1:
                    dist.barrier()


def hf_arguments(args):
    steps = max(1, int(len(read_pairs(args.train)) // args.batch_size * args.epochs))
    return dict(output_dir=args.out, per_device_train_batch_size=args.batch_size,
                learning_rate=args.lr, num_train_epochs=args.epochs,
                warmup_steps=max(1, int(0.1 * steps)),  # transformers 5 has no warmup_ratio
                weight_decay=0.01, max_grad_norm=1.0, bf16=torch.cuda.is_available(),
                eval_strategy="steps", eval_steps=max(1, steps // args.evals), logging_steps=10,
                save_strategy="no", report_to="none", seed=args.seed,
                dataloader_drop_last=True, remove_unused_columns=False)


def run_hf_trainer(args, model, pairs, evaluator):
    """transformers' Trainer on a torch Dataset: the loss and the evaluator as
    SentenceTransformerTrainer wires them, TunefleetCallback reporting each evaluation."""
    from transformers import Trainer, TrainingArguments

    class Pairs(torch.utils.data.Dataset):
        def __len__(self):
            return len(pairs)

        def __getitem__(self, i):
            return {"anchor": pairs[i][0], "positive": pairs[i][1]}

    def collate(rows):
        return {"anchor": [r["anchor"] for r in rows], "positive": [r["positive"] for r in rows]}

    class MnrlTrainer(Trainer):
        def compute_loss(self, model_, inputs, return_outputs=False, num_items_in_batch=None):
            def embed(texts):
                return model_(to_device(tokenize(model, texts), self.args.device))[
                    "sentence_embedding"].float()
            loss = mnrl(embed, inputs["anchor"], inputs["positive"])
            return (loss, {}) if return_outputs else loss

        def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
            model.eval()
            metrics = {"%s_%s" % (metric_key_prefix, k): v for k, v in evaluator(model).items()}
            self.log(metrics)
            self.control = self.callback_handler.on_evaluate(self.args, self.state, self.control,
                                                             metrics)
            return metrics

    # evaluate() runs the evaluator: the eval_dataset only satisfies the Trainer's checks.
    trainer = MnrlTrainer(model=model, args=TrainingArguments(**hf_arguments(args)),
                          train_dataset=Pairs(), eval_dataset=Pairs(), data_collator=collate,
                          callbacks=[tunefleet.TunefleetCallback()])
    trainer.train()


def run_st_trainer(args, model, pairs, evaluator):
    from datasets import Dataset
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.losses import MultipleNegativesRankingLoss
    data = Dataset.from_dict({"anchor": [p[0] for p in pairs], "positive": [p[1] for p in pairs]})
    trainer = SentenceTransformerTrainer(
        model=model, args=SentenceTransformerTrainingArguments(**hf_arguments(args)),
        train_dataset=data, loss=MultipleNegativesRankingLoss(model), evaluator=evaluator,
        callbacks=[tunefleet.TunefleetCallback()])
    trainer.train()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="data/bert-tiny-random")
    parser.add_argument("--train", required=True, help="JSON lines with anchor and positive")
    parser.add_argument("--eval-dir", default="data/retrieval/stsb-dev")
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--batch-size", type=int, default=64, help="per rank")
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--evals", type=int, default=4, help="evaluations over the run")
    parser.add_argument("--max-seq-len", type=int, default=128)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--mode", choices=["auto", "st_trainer", "hf_trainer", "loop"], default="auto")
    parser.add_argument("--out", default=tunefleet.trial_dir() or "runs/st_mnrl")
    args = parser.parse_args()
    if args.mode == "auto":
        try:
            import datasets  # noqa: F401
            args.mode = "st_trainer"
        except ImportError:
            args.mode = "loop"

    torch.manual_seed(args.seed)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count())
    if world > 1 and args.mode == "loop":
        dist.init_process_group("nccl" if cuda else "gloo")
    device = "cuda" if cuda else "cpu"
    model = SentenceTransformer(args.model, device=device)
    model.max_seq_length = args.max_seq_len
    pairs = read_pairs(args.train)
    evaluator = ir_evaluator(args.eval_dir, os.path.basename(os.path.normpath(args.eval_dir)))
    print("mode %s, %d pairs, %d rank(s), lr %g, batch %d a rank" %
          (args.mode, len(pairs), world, args.lr, args.batch_size), flush=True)
    {"loop": run_loop, "hf_trainer": run_hf_trainer, "st_trainer": run_st_trainer}[args.mode](
        args, model, pairs, evaluator)
    if world > 1 and dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
