#!/usr/bin/env python3
"""The tables of `bench/gpu/run.sh ddp_real` from its JSON lines.
  ddp_real_table.py REAL.jsonl ANCHOR.jsonl
REAL.jsonl: one line per `trainer train` run (run.sh's real_run): name, task, gpus, batch, wall_s,
steps_s (the steps phase, CUDA-graph captures included, the first step not), capture_s, samples
(samples seen at the end), eval, warnings. ANCHOR.jsonl: hf_ddp_anchor.py's lines.
Samples/s of the steps phase = (samples - one global batch) / steps_s."""
import json
import statistics
import sys


def load(path):
    try:
        return [json.loads(l) for l in open(path) if l.startswith("{")]
    except FileNotFoundError:
        return []


def rate(r):
    if not r.get("steps_s") or not r.get("samples"):
        return None
    return (r["samples"] - r["batch_global"]) / r["steps_s"]


def fmt(v, spec=",.0f"):
    return "-" if v is None else format(v, spec)


def main():
    runs = load(sys.argv[1])
    anchors = load(sys.argv[2]) if len(sys.argv) > 2 else []
    by_name = {r["name"]: r for r in runs}
    anchor = {}
    for a in anchors:
        kind = "compile" if "compiled" in a["impl"] else "eager"
        anchor[(a["world"], a["batch_per_gpu"], kind)] = a
    gpus = sorted({r["gpus"] for r in runs if r["name"].count("-") == 2})
    batches = sorted({r["batch"] for r in runs})
    print("| task | batch/GPU | GPUs | steps phase s (captures) | samples/s | speed-up, steps | "
          "process wall s | speed-up, wall | graphs | anchor eager / compiled samples/s | x anchor |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for task in ("sts", "nli"):
        for b in batches:
            one = by_name.get(f"{task}-b{b}-g1")
            for n in gpus:
                r = by_name.get(f"{task}-b{b}-g{n}")
                if r is None:
                    continue
                ae = anchor.get((n, b, "eager")) if task == "sts" else None
                ac = anchor.get((n, b, "compile")) if task == "sts" else None
                a_rates = [a["samples_per_s_after10"] for a in (ae, ac) if a]
                sp = one["steps_s"] / r["steps_s"] if one and r.get("steps_s") else None
                wall = one["wall_s"] / r["wall_s"] if one and r.get("wall_s") else None
                ratio = " / ".join(f"{rate(r) / x:.2f}" for x in a_rates) if a_rates and rate(r) else "-"
                print(f"| {task} | {b} | {n} | {fmt(r.get('steps_s'), '.2f')} ({fmt(r.get('capture_s'), '.2f')}) | "
                      f"{fmt(rate(r))} | {fmt(sp, '.2f')}x | {r['wall_s']:.1f} | {fmt(wall, '.2f')}x | "
                      f"{fmt(r.get('graphs'), '.0f')} | "
                      f"{fmt(ae['samples_per_s_after10'] if ae else None)} / {fmt(ac['samples_per_s_after10'] if ac else None)} | "
                      f"{ratio} |" + ("" if r["exit"] == 0 else f" exit {r['exit']}"))
    variants = [r for r in runs if r["name"].count("-") >= 3 and r["name"].startswith("sts-")]
    if variants:
        print("\n| run | settings | steps phase s (captures) | samples/s | graphs | eval |")
        print("|---|---|---|---|---|---|")
        shown = set()
        for r in variants:
            base = by_name.get("-".join(r["name"].split("-")[:3]))
            for row in ([base] if base else []) + [r]:
                if row["name"] in shown:
                    continue
                shown.add(row["name"])
                print(f"| {row['name']} | {' '.join(x for x in (row.get('env', ''), row['extra']) if x) or 'defaults'} | {fmt(row.get('steps_s'), '.2f')} "
                      f"({fmt(row.get('capture_s'), '.2f')}) | {fmt(rate(row))} | {fmt(row.get('graphs'), '.0f')} | "
                      f"{fmt(row.get('eval'), '.4f')} |")
    # Variants run on 1 GPU and on more: their own speed-up.
    tags = {}
    for r in variants:
        parts = r["name"].split("-", 3)
        tags.setdefault((r["task"], r["batch"], parts[3]), {})[r["gpus"]] = r
    pairs = [(k, v) for k, v in sorted(tags.items()) if 1 in v and len(v) > 1]
    if pairs:
        print("\n| variant | batch/GPU | GPUs | steps phase s (captures) | speed-up, steps | speed-up, wall |")
        print("|---|---|---|---|---|---|")
        for (task, b, tag), by_gpus in pairs:
            one = by_gpus[1]
            for n in sorted(by_gpus):
                r = by_gpus[n]
                sp = one["steps_s"] / r["steps_s"] if r.get("steps_s") and one.get("steps_s") else None
                print(f"| {tag} | {b} | {n} | {fmt(r.get('steps_s'), '.2f')} ({fmt(r.get('capture_s'), '.2f')}) | "
                      f"{fmt(sp, '.2f')}x | {one['wall_s'] / r['wall_s']:.2f}x |")
    quality = [r for r in runs if r["name"].startswith("quality-")]
    if quality:
        grouped = [r["eval"] for r in quality if not r["name"].endswith("nogroup") and r.get("eval") is not None]
        plain = [r["eval"] for r in quality if r["name"].endswith("nogroup") and r.get("eval") is not None]
        first = min(batches)
        n = max(gpus)
        base = by_name.get(f"sts-b{first}-g{n}")
        base_ng = by_name.get(f"sts-b{first}-g{n}-nogroup")
        if base and base.get("eval") is not None:
            grouped.append(base["eval"])
        if base_ng and base_ng.get("eval") is not None:
            plain.append(base_ng["eval"])
        def stats(v):
            return f"{statistics.mean(v):.4f} +- {statistics.stdev(v):.4f} ({', '.join(f'{x:.4f}' for x in v)})" if len(v) > 1 else str(v)
        print(f"\nfinal eval/spearman on sts-dev, {n} GPUs, batch {first}/GPU, seeds 42 and the others: "
              f"grouped by length {stats(grouped)}; shuffled {stats(plain)}")
    warned = [r["name"] for r in runs if r.get("warnings")]
    print(f"\nprocess-group warnings at exit: {', '.join(warned) if warned else 'none'} "
          f"({len(runs)} runs, {sum(r['exit'] != 0 for r in runs)} failed)")


if __name__ == "__main__":
    main()
