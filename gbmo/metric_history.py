"""Records of metric values that also answer to LightGBM's and XGBoost's
names of a metric.

gbmo records a metric under its own name ("l2" as "mse", "binary_logloss"
and "mlogloss" as "logloss"), so that one metric is evaluated and recorded
once however it was asked for. Code written for LightGBM reads the records
under LightGBM's names, as in evals_result["valid_0"]["l2"]: these dicts
look a key up under gbmo's spelling when it is not there as given. The keys
themselves stay gbmo's.
"""
import re

from .metrics import canonical_metric

PER_OUTPUT = "_per_output"


class MetricHistory(dict):
    """{metric: values} of one data set: booster.evals_result[name],
    booster.best_score[name], record_evaluation's dict[name]."""

    @staticmethod
    def gbmo_key(key):
        for suffix in (PER_OUTPUT, "-mean", "-stdv"):  # the last two: cv's records
            if isinstance(key, str) and key.endswith(suffix):
                return canonical_metric(key[:-len(suffix)]) + suffix
        return canonical_metric(key)

    def _stored_key(self, key):
        return key if dict.__contains__(self, key) else self.gbmo_key(key)

    def __getitem__(self, key):
        stored = self._stored_key(key)
        if dict.__contains__(self, stored):
            return dict.__getitem__(self, stored)
        spelled = "" if stored == key else f" (gbmo's name: {stored!r})"
        raise KeyError(f"metric {key!r}{spelled} was not recorded; recorded: "
                       f"{', '.join(map(repr, self)) or 'none'}")

    def __contains__(self, key):
        return dict.__contains__(self, self._stored_key(key))

    def get(self, key, default=None):
        return self[key] if key in self else default


_CV_KEY = re.compile(r"^(\S+) (.+)-(mean|stdv)$")


class CVHistory(MetricHistory):
    """cv's {"valid <metric>-mean": values, "valid <metric>-stdv": values}."""

    @staticmethod
    def gbmo_key(key):
        match = _CV_KEY.match(key) if isinstance(key, str) else None
        if match is None:
            return key
        data, metric, statistic = match.groups()
        return f"{data} {canonical_metric(metric)}-{statistic}"
