"""gbmo: gradient boosted decision trees with multiple outputs."""
from .booster import Booster, ModelFormatError
from .callback import (EarlyStopException, early_stopping, log_evaluation, progress_bar,
                       record_evaluation)
from .cv import cv
from .dataset import Dataset
from .engine import train
from .losses import Loss, MultiTaskLoss
from .multitask import EnsemblerContext, ObjectiveResult
from .registry import PluginContractError, PluginLoadError, register_ensembler, register_loss

__version__ = "0.1.0"
__all__ = ["Booster", "Dataset", "EarlyStopException", "EnsemblerContext", "Loss",
           "ModelFormatError", "MultiTaskLoss", "ObjectiveResult", "PluginContractError",
           "PluginLoadError", "cv", "early_stopping", "log_evaluation", "progress_bar", "record_evaluation",
           "register_ensembler", "register_loss", "train", "__version__"]
