"""gbmo: gradient boosted decision trees with multiple outputs."""
from .booster import Booster, ModelFormatError
from .dataset import Dataset
from .engine import train

__version__ = "0.1.0"
__all__ = ["Booster", "Dataset", "ModelFormatError", "train", "__version__"]
