"""gbmo: gradient boosted decision trees with multiple outputs."""
from .booster import Booster, ModelFormatError
from .callback import EarlyStopException, early_stopping, log_evaluation, record_evaluation
from .dataset import Dataset
from .engine import train

__version__ = "0.1.0"
__all__ = ["Booster", "Dataset", "EarlyStopException", "ModelFormatError", "early_stopping",
           "log_evaluation", "record_evaluation", "train", "__version__"]
