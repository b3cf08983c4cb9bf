"""The package's version: one place, read by the package, its model files and the build."""
__version__ = "0.1.0"
