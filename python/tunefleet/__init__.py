"""tunefleet's helper for training programs of your own, run as the trials of a sweep.

Standard library only. Under `hpo sweep` (a sweep YAML with ``trainer: {program: [...]}``) the
agent gives every process of a trial:

  TUNEFLEET_TRIAL_DIR  the trial's folder (made for it)
  TUNEFLEET_PARAMS     the trial's parameters as one JSON object, lr_effective included
  TUNEFLEET_METRICS    the file rank 0 appends its reports to, one JSON object a line

and follows TUNEFLEET_METRICS: each line is a report, as tunefleet's own trainer makes them, for
the pruner, the live table, the journal, the report and TensorBoard. Outside a sweep every
function here is a harmless no-op, so the same script runs alone.

    import tunefleet
    p = tunefleet.params()                     # {} outside a sweep
    lr = p.get("lr_effective", 1e-4)
    for step in range(1, steps + 1):
        ...
        if step % 100 == 0:
            tunefleet.report(step=step, samples=step * batch * world, **{"eval/loss": loss})

With transformers (or sentence-transformers, whose trainers are transformers Trainers):

    trainer = Trainer(..., callbacks=[tunefleet.TunefleetCallback()])
"""

import json
import os

__all__ = ["report", "params", "trial_dir", "in_sweep", "TunefleetCallback"]
__version__ = "0.1.0"


def in_sweep():
    """True in a trial of a sweep (TUNEFLEET_METRICS is set)."""
    return bool(os.environ.get("TUNEFLEET_METRICS"))


def params():
    """The trial's parameters: every searched one by name (the sampled lr as "lr", the lr to
    train with as "lr_effective", "batch_size" per rank, a categorical of strings by its
    label). An empty dict outside a sweep."""
    text = os.environ.get("TUNEFLEET_PARAMS")
    if not text:
        return {}
    return json.loads(text)


def trial_dir():
    """The trial's folder, or None outside a sweep."""
    return os.environ.get("TUNEFLEET_TRIAL_DIR") or None


def _rank():
    for name in ("RANK", "SLURM_PROCID", "LOCAL_RANK"):
        value = os.environ.get(name)
        if value is not None:
            try:
                return int(value)
            except ValueError:
                return 0
    return 0


def _number(value):
    # JSON numbers; NaN and infinities as Python's json writes them (the agent reads those).
    if isinstance(value, bool):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def report(step=None, samples=None, **metrics):
    """Reports metrics at `step` (an integer >= 0) and, where the sweep compares trials of
    different batch sizes at equal data, `samples` (the training samples seen so far across all
    ranks). Either may be left out, not both. Metric names are free ("eval/spearman",
    "eval_loss"); the sweep's metric.name picks the one it optimises. Tensors and numpy scalars
    are taken by their value; values that are not numbers are dropped.

    Only rank 0 writes (RANK, else LOCAL_RANK); elsewhere, and outside a sweep, it does nothing.
    Returns True when a line was written."""
    path = os.environ.get("TUNEFLEET_METRICS")
    if not path or _rank() != 0:
        return False
    if step is None and samples is None:
        raise ValueError("tunefleet.report: give step or samples")
    line = {}
    if step is not None:
        line["step"] = int(step)
    if samples is not None:
        line["samples"] = int(samples)
    for name, value in metrics.items():
        if hasattr(value, "item"):  # a torch tensor or numpy scalar
            try:
                value = value.item()
            except (TypeError, ValueError):
                continue
        number = _number(value)
        if number is not None:
            line[str(name)] = number
    text = json.dumps(line, allow_nan=True) + "\n"
    # One write(2) of one whole line: the agent never reads half of it as a line.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)
    return True


def _callback_class():
    from transformers import TrainerCallback  # only when the callback is asked for

    class TunefleetCallback(TrainerCallback):
        """Reports every evaluation of a transformers Trainer (and so of sentence-transformers'
        SentenceTransformerTrainer) to the sweep: its metrics as the Trainer names them
        ("eval_loss", "eval_sts-dev_spearman_cosine"), at its global step, with the samples seen
        so far: global step x per-device batch x gradient accumulation x processes."""

        def on_evaluate(self, args, state, control, metrics=None, **kwargs):
            if not metrics or not state.is_world_process_zero:
                return
            per_process = getattr(args, "train_batch_size", None) or args.per_device_train_batch_size
            samples = (state.global_step * per_process *
                       max(1, args.gradient_accumulation_steps) * max(1, args.world_size))
            report(step=state.global_step, samples=samples,
                   **{k: v for k, v in metrics.items() if _number(v) is not None})

    return TunefleetCallback


def __getattr__(name):
    if name == "TunefleetCallback":
        cls = _callback_class()
        globals()[name] = cls
        return cls
    raise AttributeError("module 'tunefleet' has no attribute %r" % name)
