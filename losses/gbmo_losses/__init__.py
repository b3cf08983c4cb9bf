"""Extra objectives and an ensembler for gbmo, registered as entry points.

Installing this distribution makes the objectives ``huber``, ``quantile``,
``poisson`` and ``focal`` and the ensembler ``sketch_svd`` available by name
(``gbmo.train({"objective": "huber", "objective_params": {"delta": 2.0}}, ...)``).
Nothing here is imported at ``import gbmo``: gbmo imports a module the first
time its name is used.
"""

__version__ = "0.1.0"
