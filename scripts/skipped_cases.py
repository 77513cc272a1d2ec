#!/usr/bin/env python3
"""Counts the test cases that skipped themselves (GTEST_SKIP: no GPU here, no Gloo in this
LibTorch, ...) inside the test targets of a `bazel test` log, so that a passing summary says what
did not run. Reads each target's bazel-testlogs/PKG/NAME/test.xml.

  scripts/skipped_cases.py BAZEL_TEST_LOG [--testlogs DIR]

Prints one line: "N test cases skipped in M targets: //t:a (3: no GPU, ...), ..." (or "no test
case skipped"). Always exits 0: skipping is not failing.
"""
import argparse
import collections
import os
import re
import sys
import xml.etree.ElementTree as ET

SUMMARY = re.compile(r"^(//[^ :]+):(\S+) +(\(cached\) )?PASSED", re.M)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("--testlogs", default="bazel-testlogs")
    opts = ap.parse_args()
    text = open(opts.log, encoding="utf-8", errors="replace").read()
    per_target = {}
    for m in SUMMARY.finditer(text):
        pkg, name = m.group(1)[2:], m.group(2)
        path = os.path.join(opts.testlogs or "bazel-testlogs", pkg, name, "test.xml")
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError):
            continue
        reasons = collections.Counter()
        for case in root.iter("testcase"):
            skipped = case.find("skipped")
            if case.get("result") == "skipped" or skipped is not None:
                msg = (skipped.get("message", "") if skipped is not None else "") or "skipped"
                msg = msg.strip().splitlines()[-1] if msg.strip() else "skipped"
                reasons[msg[:60]] += 1
        if reasons:
            per_target["//%s:%s" % (pkg, name)] = reasons
    if not per_target:
        print("no test case skipped")
        return 0
    total = sum(sum(r.values()) for r in per_target.values())
    parts = ["%s (%d: %s)" % (t, sum(r.values()), "; ".join(sorted(r)))
             for t, r in sorted(per_target.items())]
    print("%d test cases skipped in %d targets: %s" % (total, len(per_target), ", ".join(parts)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
