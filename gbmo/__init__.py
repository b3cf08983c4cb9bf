"""gbmo: gradient boosted decision trees with multiple outputs."""
import importlib

from .booster import Booster, ModelFormatError
from .callback import (EarlyStopException, early_stopping, log_evaluation, progress_bar,
                       record_evaluation, reset_parameter)
from .cv import CVBooster, cv
from .dataset import Dataset
from .engine import train
from .losses import Loss, MultiTaskLoss
from .multitask import EnsemblerContext
from .objective_results import ObjectiveResult
from .registry import PluginContractError, PluginLoadError, register_ensembler, register_loss
from ._version import __version__

# Names whose modules need optional packages (scikit-learn, matplotlib): imported
# on first use, so that gbmo imports without them and LightGBM's top-level
# names (lgb.LGBMRegressor, lgb.plot_importance) have their counterparts here.
_OPTIONAL = {"GBMORegressor": "sklearn", "GBMOClassifier": "sklearn",
             "plot_importance": "plotting", "plot_metric": "plotting", "plot_tree": "plotting",
             "plot_split_value_histogram": "plotting", "create_tree_digraph": "plotting"}
# and those modules themselves, as lightgbm.sklearn after `import lightgbm`, and
# gbmo.datasets (README's gbmo.datasets.load_yeast() after `import gbmo` raised
# AttributeError)
_OPTIONAL_MODULES = ("sklearn", "plotting", "datasets")


def __getattr__(name):
    if name in _OPTIONAL:
        return getattr(importlib.import_module(f".{_OPTIONAL[name]}", __name__), name)
    if name in _OPTIONAL_MODULES:
        try:
            return importlib.import_module(f".{name}", __name__)
        except ImportError as err:  # hasattr(gbmo, "sklearn") is then False, not an error
            raise AttributeError(f"gbmo.{name} cannot be imported here: {err}") from err
    raise AttributeError(f"module 'gbmo' has no attribute {name!r}")
__all__ = ["Booster", "CVBooster", "Dataset", "EarlyStopException", "EnsemblerContext", "Loss",
           "ModelFormatError", "MultiTaskLoss", "ObjectiveResult", "PluginContractError",
           "PluginLoadError", "cv", "early_stopping", "log_evaluation", "progress_bar", "record_evaluation", "reset_parameter",
           "register_ensembler", "register_loss", "train", "__version__"]
