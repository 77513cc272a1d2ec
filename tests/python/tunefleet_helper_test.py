#!/usr/bin/env python3
"""python/tunefleet, the helper a training program reports through: report() writes one JSON
line a call on rank 0 only (a no-op outside a sweep), the agent's reader takes each line
(NaN and tensors included), params() and trial_dir() read the agent's variables, and
TunefleetCallback turns a transformers Trainer's evaluations into reports with the samples seen
(a stand-in for transformers here: the class it subclasses and what the Trainer passes).
Usage: tunefleet_helper_test.py PYTHON_DIR"""
import json
import math
import os
import sys
import tempfile
import types
import unittest

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else "python")
import tunefleet  # noqa: E402


class Env:
    def __init__(self, **values):
        self.values = values

    def __enter__(self):
        self.saved = {k: os.environ.get(k) for k in self.values}
        for k, v in self.values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def lines(path):
    with open(path) as f:
        return [json.loads(l, parse_constant=lambda c: float(c)) for l in f]


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.metrics = os.path.join(self.dir, "reports.jsonl")

    def test_outside_a_sweep_nothing_happens(self):
        with Env(TUNEFLEET_METRICS=None, TUNEFLEET_PARAMS=None, TUNEFLEET_TRIAL_DIR=None):
            self.assertFalse(tunefleet.in_sweep())
            self.assertFalse(tunefleet.report(step=1, loss=0.5))
            self.assertEqual(tunefleet.params(), {})
            self.assertIsNone(tunefleet.trial_dir())

    def test_rank_zero_writes_one_line_a_report(self):
        class Scalar:  # a torch tensor or numpy scalar
            def item(self):
                return 0.25
        with Env(TUNEFLEET_METRICS=self.metrics, RANK="0"):
            self.assertTrue(tunefleet.report(step=3, samples=96, **{"eval/spearman": 0.5},
                                             loss=Scalar(), name="text", n=2))
            self.assertTrue(tunefleet.report(samples=128, loss=float("nan")))
        got = lines(self.metrics)
        self.assertEqual(got[0], {"step": 3, "samples": 96, "eval/spearman": 0.5, "loss": 0.25, "n": 2.0})
        self.assertEqual(got[1]["samples"], 128)
        self.assertTrue(math.isnan(got[1]["loss"]))
        with self.assertRaises(ValueError):
            with Env(TUNEFLEET_METRICS=self.metrics, RANK="0"):
                tunefleet.report(loss=1.0)

    def test_other_ranks_write_nothing(self):
        with Env(TUNEFLEET_METRICS=self.metrics, RANK="1"):
            self.assertFalse(tunefleet.report(step=1, loss=0.5))
        with Env(TUNEFLEET_METRICS=self.metrics, RANK=None, LOCAL_RANK="2"):
            self.assertFalse(tunefleet.report(step=1, loss=0.5))
        self.assertFalse(os.path.exists(self.metrics))

    def test_params_and_folder(self):
        with Env(TUNEFLEET_PARAMS='{"lr": 0.001, "batch_size": 16, "lr_effective": 0.0005, "pooling": "cls"}',
                 TUNEFLEET_TRIAL_DIR=self.dir):
            self.assertEqual(tunefleet.params()["pooling"], "cls")
            self.assertEqual(tunefleet.params()["lr_effective"], 0.0005)
            self.assertEqual(tunefleet.trial_dir(), self.dir)


class CallbackTest(unittest.TestCase):
    def test_each_evaluation_is_a_report_with_the_samples_seen(self):
        fake = types.ModuleType("transformers")
        fake.TrainerCallback = type("TrainerCallback", (), {})
        sys.modules["transformers"] = fake
        tunefleet.__dict__.pop("TunefleetCallback", None)
        callback = tunefleet.TunefleetCallback()
        self.assertIsInstance(callback, fake.TrainerCallback)
        metrics = os.path.join(tempfile.mkdtemp(), "reports.jsonl")
        args = types.SimpleNamespace(train_batch_size=16, per_device_train_batch_size=16,
                                     gradient_accumulation_steps=2, world_size=4)
        with Env(TUNEFLEET_METRICS=metrics, RANK="0"):
            state = types.SimpleNamespace(global_step=10, is_world_process_zero=True)
            callback.on_evaluate(args, state, None, metrics={"eval_loss": 0.4, "epoch": 1.0,
                                                            "eval_runtime_note": "x"})
            callback.on_evaluate(args, state, None, metrics=None)
            other = types.SimpleNamespace(global_step=10, is_world_process_zero=False)
            callback.on_evaluate(args, other, None, metrics={"eval_loss": 0.3})
        self.assertEqual(lines(metrics), [{"step": 10, "samples": 10 * 16 * 2 * 4, "eval_loss": 0.4, "epoch": 1.0}])


if __name__ == "__main__":
    unittest.main(verbosity=2)
