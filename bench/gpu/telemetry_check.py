#!/usr/bin/env python3
"""Each trial's GPU telemetry as hpo journaled it (the agent's NVML samples) beside nvidia-smi's
own readings over the same trial (sampled every 0.5 s by the telemetry suite of bench/gpu/run.sh):
mean utilisation, peak memory used, and energy (nvidia-smi: mean power x the trial's duration).

  telemetry_check.py JOURNAL SMI.csv   (SMI.csv: timestamp, utilization.gpu, memory.used,
                                        power.draw, temperature.gpu; csv,noheader,nounits)
"""
import datetime
import json
import subprocess
import sys

journal, smi_csv, hpo = sys.argv[1], sys.argv[2], sys.argv[3]
view = json.loads(subprocess.run([hpo, "status", "--journal", journal, "--format", "json"],
                                 check=True, capture_output=True, text=True).stdout)
rows = []
for line in open(smi_csv):
    f = [x.strip() for x in line.split(",")]
    try:
        rows.append((datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f"),
                     float(f[1]), float(f[2]), float(f[3]), float(f[4])))
    except (ValueError, IndexError):
        pass
print("| trial | batch | state | s | util % (hpo / smi) | peak MiB (hpo / smi) | energy J (hpo / smi) | W mean | max C |")
print("|---|---|---|---|---|---|---|---|---|")
for t in view["trials"]:
    a = t["user_attrs"]
    start = datetime.datetime.fromisoformat(t["datetime_start"])
    end = datetime.datetime.fromisoformat(t["datetime_complete"])
    seconds = (end - start).total_seconds()
    inside = [r for r in rows if start <= r[0] <= end]
    if inside:
        util = sum(r[1] for r in inside) / len(inside)
        peak = max(r[2] for r in inside)
        watts = sum(r[3] for r in inside) / len(inside)
        temp = max(r[4] for r in inside)
    else:
        util = peak = watts = temp = float("nan")
    print(f"| {t['number']} | {int(t['params']['batch_size'])} | {t['state']} | {seconds:.1f} | "
          f"{a.get('gpu_util_mean', float('nan')):.1f} / {util:.1f} | "
          f"{a.get('gpu_mem_peak_mib', float('nan')):.0f} / {peak:.0f} | "
          f"{a.get('gpu_energy_j', float('nan')):.0f} / {watts * seconds:.0f} | {watts:.0f} | {temp:.0f} |")
