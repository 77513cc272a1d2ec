#!/usr/bin/python3
"""The golden numbers of tests/hpo/tpe_sampler_test.cc, from Optuna 3.1's own TPE internals.

Run with Debian's python3 (optuna 3.1.0): /usr/bin/python3 tests/hpo/tpe_golden.py
It prints C++ initializers; paste them into the test's kGolden* constants. The study below is
the test's Study() trial for trial (keep the two in step).
With --proposals it prints instead what TPESampler proposes for a 13th trial of
tpe_sampler_test.cc's FixedStudy() over seeds 0-3999 (independent, then multivariate): the
share of each batch size and the quartiles of log10(lr).
"""
import math
import warnings

warnings.simplefilter("ignore")
import numpy as np  # noqa: E402
import optuna  # noqa: E402
from optuna.distributions import (  # noqa: E402
    CategoricalDistribution, FloatDistribution, IntDistribution)
from optuna.samplers._tpe import _truncnorm  # noqa: E402
from optuna.samplers._tpe.parzen_estimator import (  # noqa: E402
    _ParzenEstimator, _ParzenEstimatorParameters)
from optuna.samplers._tpe.sampler import (  # noqa: E402
    _get_observation_pairs, _split_observation_pairs, default_gamma, default_weights)
from optuna.trial import TrialState, create_trial  # noqa: E402

assert optuna.__version__.startswith("3.1"), optuna.__version__

SPACE = {
    "batch_size": CategoricalDistribution([16, 32, 64, 128]),
    "lr": FloatDistribution(1e-5, 1e-2, log=True),
    "train.epochs": IntDistribution(1, 3),
    "train.weight_decay": FloatDistribution(0.0, 0.1),
}
C, P, F, R = TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL, TrialState.RUNNING
nan = float("nan")
# state, value, intermediate values, lr, batch, epochs, weight decay
TRIALS = [
    (C, 0.80, {}, 3e-4, 32, 2, 0.01),
    (C, 0.75, {}, 1e-3, 64, 1, 0.05),
    (P, None, {100: 0.5, 200: 0.6}, 2e-5, 16, 3, 0.09),
    (C, 0.82, {}, 5e-4, 32, 3, 0.02),
    (F, None, {}, 1e-4, 128, 1, 0.03),
    (P, None, {100: 0.7}, 8e-3, 128, 2, 0.07),
    (C, 0.78, {}, 2e-4, 16, 2, 0.0),
    (P, None, {}, 5e-5, 64, 1, 0.1),
    (R, None, {}, 6e-4, 32, 2, 0.04),
    (C, 0.82, {}, 7e-4, 64, 3, 0.015),
    (P, None, {100: 0.4, 200: nan}, 1e-5, 16, 1, 0.06),
    (C, 0.70, {}, 3e-3, 128, 2, 0.08),
    (C, 0.81, {}, 4e-4, 32, 1, 0.025),
]


def study():
    s = optuna.create_study(direction="maximize")
    for state, value, iv, lr, bs, ep, wd in TRIALS:
        params = {"batch_size": bs, "lr": lr, "train.epochs": ep, "train.weight_decay": wd}
        s.add_trial(create_trial(state=state, value=value, intermediate_values=iv,
                                 params=params, distributions=SPACE))
    return s


CC_NAME = {"batch_size": "Batch", "lr": "Lr", "train.epochs": "Epochs",
           "train.weight_decay": "Wd"}


def cc(xs):
    return "{" + ", ".join(c1(x) for x in xs) + "}"


def c1(x):
    x = float(x)
    if math.isinf(x):
        return "kInf" if x > 0 else "-kInf"
    return repr(x)


def params(**kw):
    base = dict(consider_prior=True, prior_weight=1.0, consider_magic_clip=True,
                consider_endpoints=False, weights=default_weights, multivariate=False)
    base.update(kw)
    return _ParzenEstimatorParameters(**base)


def dump(var, pe, points, components=True):
    """One Golden constant of the test: weights, numerical (without mus and sigmas unless
    `components`) and categorical parameters, log_pdf."""
    numerical, categorical = [], []
    for name in pe._search_space:
        if pe._mus[name] is not None:
            numerical.append('{"%s", {%s, %s, %s, %s}}' % (
                name, c1(pe._low[name]), c1(pe._high[name]),
                cc(pe._mus[name] if components else []),
                cc(pe._sigmas[name] if components else [])))
        else:
            rows = ", ".join(cc(r) for r in pe._categorical_weights[name])
            categorical.append('{"%s", {%s}}' % (name, rows))
    print(f"const Golden {var} = {{{cc(pe._weights)},\n    {{{', '.join(numerical)}}},\n"
          f"    {{{', '.join(categorical)}}},\n    {cc(pe.log_pdf(points))}}};")


def main():
    s = study()
    names = sorted(SPACE)
    values, scores, _ = _get_observation_pairs(s, names)
    print("// scores", "{" + ", ".join("{%s, %s}" % (c1(st), c1(v[0])) for st, v in scores) + "}")
    n = len(scores)
    print("// n", n, "default_gamma", default_gamma(n), "default_gamma(30)", default_gamma(30))
    for n_below in (default_gamma(n), 5):
        below, above = _split_observation_pairs(scores, n_below, None)
        print(f"// split {n_below}: below {list(below)} above {list(above)}")
    print("// default_weights(30)", cc(default_weights(30)))
    below, above = _split_observation_pairs(scores, 5, None)
    internal = {k: np.asarray(v, dtype=float) for k, v in values.items()}  # internal already
    points = {"batch_size": np.array([0, 1, 2, 3]), "lr": np.array([1e-5, 3e-4, 1e-2, 5e-3]),
              "train.epochs": np.array([1, 2, 3, 3]),
              "train.weight_decay": np.array([0.0, 0.05, 0.1, 0.02])}
    for side, idx in (("below", below), ("above", above)):
        for name in names:
            pe = _ParzenEstimator({name: internal[name][idx]}, {name: SPACE[name]}, params())
            dump(f"k{side.capitalize()}{CC_NAME[name]}", pe, {name: points[name]})
        pe = _ParzenEstimator({k: internal[k][idx] for k in names}, SPACE,
                              params(multivariate=True))
        dump(f"k{side.capitalize()}Multivariate", pe, points)
    # Variants: endpoints (on below's lr, far from both bounds), no prior, no magic clip, prior
    # weight 2 (on below's weight decay), no prior for a categorical; 30 observations (the ramp).
    lr_below = {"lr": internal["lr"][below]}
    dump("kBelowLrEndpoints", _ParzenEstimator(lr_below, {"lr": SPACE["lr"]},
                                               params(consider_endpoints=True)),
         {"lr": points["lr"]})
    wd = {"train.weight_decay": internal["train.weight_decay"][below]}
    wd_space = {"train.weight_decay": SPACE["train.weight_decay"]}
    wd_points = {"train.weight_decay": points["train.weight_decay"]}
    for var, kw in (("kBelowWdNoPrior", dict(consider_prior=False)),
                    ("kBelowWdNoMagicClip", dict(consider_magic_clip=False)),
                    ("kBelowWdPriorWeight2", dict(prior_weight=2.0))):
        dump(var, _ParzenEstimator(wd, wd_space, params(**kw)), wd_points)
    bs = {"batch_size": internal["batch_size"][below]}
    dump("kBelowBatchNoPrior", _ParzenEstimator(
        bs, {"batch_size": SPACE["batch_size"]}, params(consider_prior=False)),
        {"batch_size": points["batch_size"]})
    obs30 = np.array([((i * 37) % 30) / 300.0 for i in range(30)])
    dump("kThirtyWd", _ParzenEstimator({"train.weight_decay": obs30}, wd_space, params()),
         wd_points, components=False)
    # The truncated normal.
    for q, a, b in ((0.3, -1.0, 2.0), (0.9, 0.5, 3.0), (0.01, -30.0, -25.0), (0.5, 7.0, 9.0)):
        print(f"// ppf({q}, {a}, {b}) = {c1(_truncnorm.ppf(np.array([q]), a, b)[0])}")
    for a, b in ((-1.0, 2.0), (0.5, 3.0), (-30.0, -25.0), (-3.0, -2.5)):
        print(f"// log_gauss_mass({a}, {b}) = "
              f"{c1(_truncnorm._log_gauss_mass(np.array([a]), np.array([b]))[0])}")


def proposals():
    space = {"lr": FloatDistribution(1e-5, 1e-2, log=True),
             "batch_size": CategoricalDistribution([16, 32, 64, 128])}
    rows = [(3e-4, 32, C, 0.80, 0), (1e-3, 64, C, 0.75, 0), (2e-5, 16, P, 0.6, 200),
            (5e-4, 32, C, 0.82, 0), (8e-3, 128, P, 0.7, 100), (2e-4, 16, C, 0.78, 0),
            (5e-5, 64, P, 0.3, 100), (7e-4, 64, C, 0.82, 0), (1e-5, 16, P, 0.4, 200),
            (3e-3, 128, C, 0.70, 0), (4e-4, 32, C, 0.81, 0), (1e-4, 128, C, 0.79, 0)]
    s = optuna.create_study(direction="maximize")
    for lr, bs, state, v, step in rows:
        s.add_trial(create_trial(
            state=state, value=v if state == C else None,
            intermediate_values={step: v} if state == P else {},
            params={"lr": lr, "batch_size": bs}, distributions=space))
    for multivariate in (False, True):
        lrs, batches = [], []
        for seed in range(4000):
            s.sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=5,
                                                   multivariate=multivariate)
            t = s.ask(fixed_distributions=space)
            lrs.append(math.log10(t.params["lr"]))
            batches.append(t.params["batch_size"])
            s._storage.set_trial_state_values(t._trial_id, state=F)  # not an observation
        shares = [batches.count(b) / len(batches) for b in (16, 32, 64, 128)]
        print(f"// multivariate {multivariate}: batch shares {cc(shares)}, "
              f"log10(lr) quartiles {cc(np.quantile(lrs, [0.25, 0.5, 0.75]))}")


if __name__ == "__main__":
    import sys
    proposals() if "--proposals" in sys.argv else main()
