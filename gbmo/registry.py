"""Plugin registry for losses and gradient ensemblers.

Any installed distribution can add a loss or an ensembler by declaring an
entry point, e.g. in its ``pyproject.toml``::

    [project.entry-points."gbmo.losses"]
    huber = "gbmo_losses.huber:Huber"

    [project.entry-points."gbmo.ensemblers"]
    my_sketch = "my_pkg.sketch:MySketch"

gbmo's own losses register through the very same table in gbmo's
``pyproject.toml``. Code that is not a package registers with the decorators::

    @gbmo.registry.register_loss("my_loss")
    class MyLoss(gbmo.losses.Loss): ...

Lifecycle of a name
-------------------
* Nothing happens at ``import gbmo``. The first ``get``/``names``/``in`` on a
  registry lists the entry points of its group with
  ``importlib.metadata.entry_points(group=...)`` -- listing reads metadata
  only, it imports no plugin module -- and caches the list.
* A plugin's module is imported (``EntryPoint.load()``) on the first ``get`` of
  its name, its object is checked against the contract, and the result (the
  object or the failure) is cached. An installed plugin that is broken but
  never used costs nothing.
* A plugin that fails to import raises :class:`PluginLoadError` (a subclass of
  ``ImportError``) naming the entry point, its distribution and the cause, on
  every use of that name; other names keep working.
* An object that breaks the contract raises :class:`PluginContractError` (a
  subclass of ``TypeError``) with the reason: at registration for code
  registrations, at load for entry points.
* An unknown name raises ``ValueError`` listing the available names.

Names claimed twice
-------------------
A :class:`PluginConflictWarning` (a ``UserWarning``) names both sources, and
the winner is, in this order of precedence:

1. an explicit registration in code (``register``/``register_loss``/
   ``register_ensembler``) beats any entry point; between two code
   registrations the later one replaces the earlier (re-registering the same
   object, or a class of the same module and qualified name -- a re-run
   notebook cell, a reloaded module -- is silent);
2. gbmo's own built-ins beat entry points of other distributions;
3. between two other distributions, the first one ``importlib.metadata``
   lists wins, i.e. the one earlier on ``sys.path`` (the same rule by which
   Python chooses between two copies of a module); two installed in the same
   directory (one environment's site-packages) come in the order the
   directory lists them, which no rule fixes: uninstall one, or register the
   one wanted in code, which wins.

Off switch
----------
``GBMO_DISABLE_PLUGINS=1`` (also ``true``/``yes``/``on``), read when a
registry first discovers, turns entry-point discovery off: only gbmo's own
built-ins (from :data:`_BUILTINS`, without reading any metadata) and explicit
code registrations are available. The same built-in list fills in any
built-in that gbmo's installed metadata does not declare, so a plain source
checkout that is not pip-installed still has ``mse``, ``softmax`` and
``sigmoid``.

Contracts
---------
Loss: a class (or a factory callable) whose instances have callable
``prepare_target(y)``, ``n_outputs(y)``, ``init_score(y, weight)``,
``gradients(y, raw, weight)`` and ``transform(raw)``, a ``default_metric`` that
is one of gbmo's metrics, and a ``name`` (a string, or None to take the name
it is registered under; a saved model records it, so it must be a registered
name). Subclasses of :class:`gbmo.losses.Loss` must override the methods the
base leaves unimplemented (``transform`` has a default). Classes are checked
when registered or loaded; the instances a plain factory returns are checked
by :func:`create_loss`. What the methods receive and return:

* ``gradients(y, raw, weight)``: y as ``prepare_target`` returned it, raw (n, d)
  float64, weight (n,) float64 or None: copies of the run's own arrays
  (y and weight made once a run, raw every round), which the loss may write
  into (a Cython kernel's memoryviews need not be const). It applies the
  weights itself (gbmo weighs only a custom objective *function*'s
  gradients) and returns ``(grad, hess)``: grad (n, d), hess (n, d) or (n, 1)
  (one hessian for every output; a constant column lets the histograms count
  rows), (n,) each when d is 1, numbers of any dtype and order, made
  contiguous float32; or a :class:`gbmo.ObjectiveResult`. A wrong shape,
  kind, count or an inf / NaN is refused at that round, naming the loss.
* ``transform(raw)``: a numeric array of raw's shape (raw, a copy, may be
  written into). Optional: ``onnx_transform``, how ``Booster.to_onnx``
  writes it: ``"identity"``, ``"sigmoid"``, ``"softmax"`` (across the
  outputs) or ``"exp"``, or None when none of them is it; a class that
  overrides ``transform`` says it again, or its models export raw scores
  only (:func:`gbmo.onnx_export.declared_transform`).
* ``default_metric``: a metric gbmo has (``gbmo.metrics``); a plugin cannot add
  metrics, a user can (``feval``).
* Parameters: a saved model records the objective's name and rebuilds the
  loss with ``create_loss(name, **params)``; params are ``get_params()`` when
  the instance has it, else its attributes named as the constructor's
  parameters (scikit-learn's convention), and saving refuses an instance that
  keeps one under another name. A loss instance given as the objective is
  saved under its name, or under its class's registered name when that is
  None; saving (and so copying and pickling a Booster) refuses one that a
  loaded model could not rebuild: a name not registered, a name registered
  to another class, or a factory's product without get_params().

Ensembler: either a class whose instances are callable as
``ensembler(grad, hess, context)``, constructed by :func:`create_ensembler`
with the user's parameters, or a plain function
``ensembler(grad, hess, context)`` used as is (it takes no parameters).
An instance may define ``check_outputs(d)`` (optional), which training calls
once the targets give the number of outputs d, before binning, to refuse
parameters that do not fit d.

Losses and ensemblers run every round between gbmo's OpenMP kernels. numpy's
matmul (``@``, ``np.dot``, ``np.corrcoef``) runs large products in the BLAS
library's own thread pool, whose threads keep spinning after the call and
take the cores from the kernels that follow: the built-in ensemblers ran
2.2-2.3x slower on 2 cores before they stopped using it. Per-round code does
better with ``np.einsum`` (numpy's own loops) or with the BLAS held to one
thread (``threadpoolctl.threadpool_limits(1, "blas")``). A loss's thread
count: training sets its ``n_threads`` every round; under ``predict`` a
subclass of :class:`gbmo.losses.Loss` that asks ``self._threads(raw)`` gets
predict's ``n_threads`` (``parallel.caller_thread_count``), where reading
``self.n_threads`` gives the run's.
"""
import importlib
import importlib.metadata
import inspect
import os
import threading
import warnings

from .validation import user_stacklevel

__all__ = [
    "ENSEMBLERS", "LOSSES", "MissingParameterError", "PluginConflictWarning",
    "PluginContractError", "PluginError", "PluginLoadError", "Registry", "create_ensembler",
    "create_loss", "loss_parameters", "plugins_disabled", "register_ensembler", "register_loss",
    "saved_ensembler", "saved_loss_name",
]

DISABLE_ENV = "GBMO_DISABLE_PLUGINS"
_TRUE = {"1", "true", "yes", "on"}
_GBMO_DIST = "gbmo"

# gbmo's own entry points, used without reading any metadata when discovery is
# off, and to fill in those missing from the installed metadata (a source
# checkout that is not pip-installed, a stale install). Keep in step with the
# [project.entry-points.*] tables of pyproject.toml (a test checks it).
_BUILTINS = {
    "gbmo.losses": {
        "mse": "gbmo.losses:SquaredError",
        "softmax": "gbmo.losses:SoftmaxCrossEntropy",
        "sigmoid": "gbmo.losses:SigmoidCrossEntropy",
        "multiclassova": "gbmo.losses:OneVsAllCrossEntropy",
        "multitask": "gbmo.losses:MultiTaskLoss",
    },
    "gbmo.ensemblers": {
        "mtgbm": "gbmo.multitask:MTGBM",
        "sketch_topk": "gbmo.multitask:SketchTopK",
        "sketch_random": "gbmo.multitask:SketchRandom",
        "sketch_projection": "gbmo.multitask:SketchProjection",
        "weighted_sum": "gbmo.multitask:WeightedSum",
    },
}


class PluginError(Exception):
    """Base of the registry's errors."""


class PluginLoadError(PluginError, ImportError):
    """A plugin's entry point could not be loaded (its module failed to import,
    or the object it names does not exist). ``__cause__`` is the original error."""


class PluginContractError(PluginError, TypeError):
    """A registered object does not satisfy the loss / ensembler contract."""


class MissingParameterError(TypeError):
    """A registered loss or ensembler was built without a parameter its
    constructor requires. ``missing`` names the parameters and ``given_in``
    the training parameter that passes them (objective_params or
    ensembler_params), so that a front end such as the command line can say
    how to give them there."""

    def __init__(self, what, missing, given_in):
        self.missing, self.given_in = list(missing), given_in
        several = len(self.missing) > 1
        example = ", ".join(f"{name!r}: ..." for name in self.missing)
        super().__init__(f"{what} needs the parameter{'s' if several else ''} "
                         f"{', '.join(map(repr, self.missing))}, which "
                         f"{'were' if several else 'was'} not given: give "
                         f"{'them' if several else 'it'} in {given_in}, "
                         f"e.g. {given_in}={{{example}}}")


class PluginConflictWarning(UserWarning):
    """Two sources claim the same name; the message names both and the winner."""


def plugins_disabled():
    """Whether GBMO_DISABLE_PLUGINS switches entry-point discovery off."""
    return os.environ.get(DISABLE_ENV, "").strip().lower() in _TRUE


def _plural(kind):
    return kind + ("es" if kind.endswith("s") else "s")


def _describe_cause(err):
    return f"{type(err).__name__}: {err}"


def _dist_name(ep):
    dist = getattr(ep, "dist", None)
    name = None
    if dist is not None:
        try:
            name = dist.name or dist.metadata["Name"]
        except Exception:
            name = None
    return name


def _entry_points_by_distribution(group):
    """(group's entry points, the names of the distributions whose metadata
    could not be read): one distribution at a time, the first of a name on
    sys.path as importlib.metadata.entry_points() takes it, so that one
    malformed entry_points.txt hides its own entry points only."""
    eps, unread, seen = [], [], set()
    for dist in importlib.metadata.distributions():
        try:
            name = dist.metadata["Name"]
        except Exception:
            name = None
        if name:  # as importlib.metadata.entry_points(), the first of a name on sys.path
            if _normalize(name) in seen:
                continue
            seen.add(_normalize(name))
        try:
            eps += [ep for ep in dist.entry_points if ep.group == group]
        except Exception:
            unread.append(f"distribution {name!r}" if name else "a distribution without a name")
    return eps, unread


def _dist_label(ep):
    dist = getattr(ep, "dist", None)
    name = _dist_name(ep)
    if name is None:
        return "an unknown distribution"
    version = getattr(dist, "version", None)
    return f"distribution {name!r}" + (f" {version}" if version else "")


def _normalize(dist_name):
    return (dist_name or "").lower().replace("_", "-").replace(".", "-")


class _Entry:
    """One name: where it comes from, and, once used, its object or its failure."""

    __slots__ = ("name", "source", "ep", "obj", "error", "explicit", "builtin", "loaded")

    def __init__(self, name, source, ep=None, obj=None, explicit=False, builtin=False):
        self.name = name
        self.source = source
        self.ep = ep
        self.obj = obj
        self.error = None
        self.explicit = explicit
        self.builtin = builtin
        self.loaded = obj is not None


# --------------------------------------------------------------------------- contracts

def _has_own_call(cls):
    return any("__call__" in vars(k) for k in cls.__mro__ if k is not object)


# each method of a loss and the arguments training calls it with
_LOSS_METHODS = {"prepare_target": ("y",), "n_outputs": ("y",), "init_score": ("y", "weight"),
                 "gradients": ("y", "raw", "weight"), "transform": ("raw",)}


def _default_metric_problems(target, what):
    """A metric name or a non-empty list of them; a property is checked on instances."""
    from .metrics import METRICS, is_known

    if isinstance(target, type) and isinstance(vars(target).get("default_metric"), property):
        return []
    metric = getattr(target, "default_metric", None)
    names = metric if isinstance(metric, list) and metric else [metric]
    if not all(isinstance(name, str) and name for name in names):
        return [f"{what}.default_metric must be a metric name or a list of them, got {metric!r}"]
    return [f"{what}.default_metric {name!r} is not a known metric "
            f"(known: {', '.join(sorted(METRICS))})" for name in names if not is_known(name)]


def _check_loss_target(target, what):
    """Reasons `target` (a loss class or instance) breaks the loss contract."""
    from .losses import Loss

    cls = target if isinstance(target, type) else type(target)
    problems = []
    for method, arguments in _LOSS_METHODS.items():
        attr = getattr(target, method, None)
        if attr is None:
            problems.append(f"{what} has no method {method}()")
        elif not callable(attr):
            problems.append(f"{what}.{method} is not callable")
        elif (issubclass(cls, Loss) and method != "transform"
              and getattr(cls, method) is getattr(Loss, method)):
            problems.append(
                f"{what} does not implement {method}() (gbmo.losses.Loss leaves it abstract)")
        elif not _accepts_positional(attr, len(arguments) + _unbound(target, method)):
            problems.append(f"{what}.{method} must take ({', '.join(arguments)}), as "
                            "training calls it")
    problems.extend(_default_metric_problems(target, what))
    if not hasattr(target, "name"):
        problems.append(f"{what} has no 'name' attribute (a string, or None for the "
                        "registered name)")
    elif target.name is not None and not (isinstance(target.name, str) and target.name):
        problems.append(f"{what}.name must be a non-empty string or None, got {target.name!r}")
    return problems


def check_loss(obj):
    """Reasons a registered loss object breaks the contract ([] when it is fine)."""
    if isinstance(obj, type):
        return _check_loss_target(obj, f"loss class {obj.__qualname__}")
    if callable(obj):
        return []  # a factory: its instances are checked by create_loss
    return [f"a loss must be a class or a factory callable, got {type(obj).__name__} {obj!r}"]


def _unbound(target, method):
    """1 when target's method still takes self (a class's plain function;
    not a static or class method, nor a callable object such as a partial),
    else 0."""
    return int(isinstance(target, type)
               and inspect.isfunction(inspect.getattr_static(target, method)))


def _accepts_positional(func, count):
    try:
        inspect.signature(func).bind(*[None] * count)
    except TypeError:
        return False
    except ValueError:  # no signature available (some builtins): give it the benefit
        return True
    return True


def check_ensembler(obj):
    """Reasons a registered ensembler object breaks the contract ([] when it is fine)."""
    if isinstance(obj, type):
        if not _has_own_call(obj):
            return [f"ensembler class {obj.__qualname__} does not define __call__(grad, hess, "
                    "context); its instances must be callable"]
        if not _accepts_positional(_call_without_self(obj), 3):
            return [f"{obj.__qualname__}.__call__ must take (grad, hess, context)"]
        return []
    if callable(obj):
        if not _accepts_positional(obj, 3):
            return [f"ensembler function {getattr(obj, '__qualname__', obj)!r} must take "
                    "(grad, hess, context)"]
        return []
    return [f"an ensembler must be a class or a function, got {type(obj).__name__} {obj!r}"]


def _call_without_self(cls):
    """Something whose signature is cls.__call__'s without `self`."""
    try:
        sig = inspect.signature(cls.__call__)
    except (TypeError, ValueError):
        return cls.__call__
    return _SignatureOnly(sig.replace(parameters=list(sig.parameters.values())[1:]))


class _SignatureOnly:
    def __init__(self, sig):
        self.__signature__ = sig

    def __call__(self, *args, **kwargs):  # pragma: no cover - never called
        raise NotImplementedError


_CHECKS = {"loss": check_loss, "ensembler": check_ensembler}


# --------------------------------------------------------------------------- registry

class Registry:
    """Names -> plugin objects (classes or factories) of one entry-point group.

    ``get(name)`` returns the registered object, importing its plugin on first
    use; ``names()`` lists every available name (sorted) without importing
    anything; ``register(name, obj)`` adds one from code (also usable as a
    decorator: ``@registry.register(name)``).
    """

    def __init__(self, group, kind, check=None):
        self.group = group
        self.kind = kind
        self._check = check if check is not None else _CHECKS.get(kind, lambda obj: [])
        self._lock = threading.RLock()
        self._entries = None     # name -> _Entry from discovery; None until discovered
        self._explicit = {}      # name -> _Entry from register()
        self.disabled = None     # whether discovery was off when it ran

    # ------------------------------------------------------------ discovery
    def _discover(self):
        if self._entries is not None:
            return self._entries
        with self._lock:
            if self._entries is not None:
                return self._entries
            entries = {}
            self.disabled = plugins_disabled()
            from_gbmo = set()
            if not self.disabled:
                try:
                    eps = list(importlib.metadata.entry_points(group=self.group))
                except Exception as err:  # malformed metadata somewhere on sys.path
                    eps, unread = _entry_points_by_distribution(self.group)
                    skipped = (f"skipped the unreadable {', '.join(unread)}" if unread
                               else "read them all")
                    warnings.warn(
                        f"gbmo could not list the {self.group!r} entry points at once "
                        f"({_describe_cause(err)}); it read them distribution by "
                        f"distribution and {skipped}. Set {DISABLE_ENV}=1 to silence this.",
                        PluginConflictWarning, stacklevel=user_stacklevel())
                for ep in eps:
                    is_gbmo = _normalize(_dist_name(ep)) == _GBMO_DIST
                    if is_gbmo:
                        from_gbmo.add(ep.name)
                    entry = _Entry(ep.name, self._ep_source(ep), ep=ep, builtin=is_gbmo)
                    self._add_discovered(entries, entry)
            for name, value in _BUILTINS.get(self.group, {}).items():
                if name in from_gbmo:
                    continue
                ep = importlib.metadata.EntryPoint(name=name, value=value, group=self.group)
                entry = _Entry(name, f"gbmo built-in ({name} = {value})", ep=ep, builtin=True)
                self._add_discovered(entries, entry)
            for name, explicit in self._explicit.items():
                if name in entries:
                    self._warn_conflict(name, winner=explicit, loser=entries[name])
            self._entries = entries
            return entries

    def _ep_source(self, ep):
        return f"{_dist_label(ep)} (entry point '{ep.name} = {ep.value}' in group {self.group!r})"

    def _add_discovered(self, entries, entry):
        old = entries.get(entry.name)
        if old is None:
            entries[entry.name] = entry
            return
        if old.ep is not None and entry.ep is not None and old.ep.value == entry.ep.value \
                and _normalize(_dist_name(old.ep)) == _normalize(_dist_name(entry.ep)):
            return  # the same declaration seen twice
        if entry.builtin and not old.builtin:
            entries[entry.name] = entry
            self._warn_conflict(entry.name, winner=entry, loser=old)
        else:
            self._warn_conflict(entry.name, winner=old, loser=entry)

    def _warn_conflict(self, name, winner, loser):
        warnings.warn(
            f"{self.kind} {name!r} is claimed twice: by {winner.source} and by {loser.source}; "
            f"using the one from {winner.source}",
            PluginConflictWarning, stacklevel=user_stacklevel())

    # ------------------------------------------------------------ lookup
    def _entry(self, name):
        if not isinstance(name, str):
            raise TypeError(f"a {self.kind} name must be a string, got {type(name).__name__}")
        with self._lock:
            entries = self._discover()
            entry = self._explicit.get(name) or entries.get(name)
        if entry is None:
            raise ValueError(self._unknown_message(name))
        return entry

    def _unknown_message(self, name):
        import difflib

        available = self.names()
        close = difflib.get_close_matches(name, available, n=3)
        hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
        listing = ", ".join(available) if available else "(none)"
        return (f"unknown {self.kind} {name!r}{hint}; available {_plural(self.kind)}: "
                f"{listing}{self.discovery_note()}")

    def discovery_note(self):
        """What an unknown name's message adds when plugins are switched off."""
        return f" (plugin discovery is off: {DISABLE_ENV} is set)" if self.disabled else ""

    def get(self, name):
        """The object registered under `name`, importing its plugin on first use."""
        entry = self._entry(name)
        if entry.loaded:
            return entry.obj
        with self._lock:
            if not entry.loaded and entry.error is None:
                self._load(entry)
        if entry.error is not None:
            err = type(entry.error)(*entry.error.args)
            raise err from entry.error.__cause__
        return entry.obj

    def _load(self, entry):
        ep = entry.ep
        try:
            obj = ep.load()
        except Exception as cause:
            dist = _dist_label(ep)
            hint = (f"fix or uninstall {dist}, or set {DISABLE_ENV}=1 to use only gbmo's "
                    "built-ins" if not entry.builtin else "gbmo itself is broken")
            err = PluginLoadError(
                f"{self.kind} {entry.name!r} could not be loaded: entry point "
                f"'{ep.name} = {ep.value}' (group {self.group!r}) of {dist} failed: "
                f"{_describe_cause(cause)}; {hint}", name=ep.value.split(":")[0])
            err.__cause__ = cause
            entry.error = err
            return
        problems = self._check(obj)
        if problems:
            err = PluginContractError(
                f"{self.kind} {entry.name!r} from {entry.source} does not satisfy the "
                f"{self.kind} contract: " + "; ".join(problems))
            entry.error = err
            return
        entry.obj = obj
        entry.loaded = True

    def names(self):
        """Every available name, sorted; imports nothing."""
        with self._lock:
            return sorted(set(self._discover()) | set(self._explicit))

    def __contains__(self, name):
        return isinstance(name, str) and name in self.names()

    def holds(self, name, cls):
        """Whether name is registered to cls itself (a plugin that fails to
        load holds nothing)."""
        try:
            return name in self and self.get(name) is cls
        except PluginError:
            return False

    def __iter__(self):
        return iter(self.names())

    def distribution(self, name):
        """(name, version) of the installed distribution whose entry point
        registers name; None for gbmo's own, code registrations and unknown
        names. Imports nothing."""
        with self._lock:
            if name in self._explicit:
                return None
            entry = self._discover().get(name)
        if entry is None or entry.builtin or entry.ep is None or _dist_name(entry.ep) is None:
            return None
        return _dist_name(entry.ep), getattr(entry.ep.dist, "version", None)

    def sources(self):
        """name -> where it comes from (the winning source), imports nothing."""
        with self._lock:
            found = {name: e.source for name, e in self._discover().items()}
            found.update({name: e.source for name, e in self._explicit.items()})
            return dict(sorted(found.items()))

    # ------------------------------------------------------------ registration
    def register(self, name, obj=None, source=None):
        """Registers `obj` under `name` from code; with `obj` omitted, returns a
        decorator. Checks the contract now (PluginContractError) and wins over
        any entry point of the same name (with a PluginConflictWarning)."""
        if obj is None:
            def decorator(target):
                self.register(name, target, source=source)
                return target
            return decorator
        if not isinstance(name, str) or not name:
            raise TypeError(f"a {self.kind} name must be a non-empty string, got {name!r}")
        problems = self._check(obj)
        if problems:
            raise PluginContractError(
                f"cannot register {self.kind} {name!r}: it does not satisfy the {self.kind} "
                "contract: " + "; ".join(problems))
        if source is None:
            where = f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"
            source = f"code registration of {where}"
        entry = _Entry(name, source, obj=obj, explicit=True)
        with self._lock:
            old = self._explicit.get(name)
            if old is not None and not _same_object(old.obj, obj):
                self._warn_conflict(name, winner=entry, loser=old)
            elif old is None and self._entries is not None and name in self._entries:
                self._warn_conflict(name, winner=entry, loser=self._entries[name])
            self._explicit[name] = entry
        return obj

    def unregister(self, name):
        """Removes a code registration (entry points cannot be removed)."""
        with self._lock:
            if self._explicit.pop(name, None) is None:
                raise ValueError(f"{self.kind} {name!r} was not registered from code")

    def reset(self, explicit=False):
        """Forgets the discovered entry points and every cached load, so the next
        use discovers again (and re-reads the environment variable); with
        explicit=True forgets the code registrations too."""
        with self._lock:
            self._entries = None
            self.disabled = None
            if explicit:
                self._explicit.clear()

    def __repr__(self):
        state = "not yet discovered" if self._entries is None else f"{len(self.names())} names"
        return f"Registry({self.group!r}, {self.kind!r}; {state})"


def _same_object(a, b):
    if a is b:
        return True
    key = lambda o: (getattr(o, "__module__", None), getattr(o, "__qualname__", None))
    return key(a)[1] is not None and key(a) == key(b)


LOSSES = Registry("gbmo.losses", "loss")
ENSEMBLERS = Registry("gbmo.ensemblers", "ensembler")


def register_loss(name):
    """Class decorator: ``@register_loss("huber") class Huber(Loss): ...``."""
    return LOSSES.register(name)


def register_ensembler(name):
    """Decorator for an ensembler class or function."""
    return ENSEMBLERS.register(name)


# --------------------------------------------------------------------------- construction

def _parameters(factory):
    """factory's signature's parameters, None when it has none to read (some
    builtins and C types)."""
    try:
        return inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return None


def _named_parameters(params):
    """The names of a signature's parameters that a keyword can give."""
    return [k for k, p in params.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]


def keyword_parameters(factory):
    """The parameters a keyword can give factory; none when its signature
    cannot be read."""
    return _named_parameters(_parameters(factory) or {})


def saved_loss_name(loss):
    """The name a model file records for a loss instance given as the
    objective: its name, or when that is None the name its class is
    registered under. Refused when a loaded model could not rebuild it: a
    name not registered (the file would not load), or one registered to
    another class (it would load as that class's loss, in silence)."""
    cls = type(loss)
    name = loss.name if loss.name is not None else _registered_name(cls)
    what = f"objective: a {cls.__module__}.{cls.__qualname__} instance"
    if name is None:
        raise ValueError(f"{what} whose name is None and whose class is not registered, so a "
                         "saved model could not rebuild it; register the class "
                         "(gbmo.register_loss(name)) or give the loss a registered name")
    if name not in LOSSES:
        raise ValueError(f"{what} named {name!r}, which is not a registered loss, so a saved "
                         f"model could not be loaded; register the class under {name!r} "
                         "(gbmo.register_loss) before saving, copying or pickling the model")
    registered = LOSSES.get(name)
    # a loaded model needs the transform only: a subclass of the registered
    # class that keeps its transform (its own gradients) predicts the same
    if isinstance(registered, type) and registered is not cls and not (
            issubclass(cls, registered) and cls.transform is registered.transform):
        raise ValueError(f"{what} named {name!r}, the name of "
                         f"{registered.__module__}.{registered.__qualname__}, whose transform "
                         "it does not keep: a saved model would load as that class's loss; "
                         "give the instance's class a name of its own and register it")
    return name


def _registered_name(cls):
    """The name cls is registered under, None for none (a plugin that fails
    to load is passed over)."""
    return next((name for name in LOSSES.names() if LOSSES.holds(name, cls)), None)


def loss_parameters(loss, name):
    """The parameters that rebuild loss by its name (create_loss), for a
    saved model: its get_params(), else, as scikit-learn reads an
    estimator's, its attributes named as its class's constructor's
    parameters (gbmo's num_class and n_threads left out); None when the
    constructor takes none. Refused when an attribute is missing, or when the
    name is a factory's, whose parameters the instance does not show: the
    loaded model would have rebuilt the loss with its defaults, in silence."""
    # None for 'custom', a function's record, which keeps its parameters as given
    registered = LOSSES.get(name) if name in LOSSES else None
    if hasattr(loss, "get_params"):
        params = loss.get_params()
        foreign = [k for k in params or ()
                   if registered is not None and not _takes_keyword(registered, k)]
        if foreign:  # a subclass's own, which the registered class would refuse at load
            raise ValueError(f"objective {name!r}: this {type(loss).__qualname__} instance's "
                             f"get_params() gives {', '.join(map(repr, foreign))}, which the "
                             f"loss registered as {name!r} does not take, so a saved model "
                             "could not rebuild it; give the class a name of its own and "
                             "register it")
        return params
    if not (isinstance(registered, type) and isinstance(loss, registered)):
        raise ValueError(f"objective {name!r} is made by a factory, and this instance shows "
                         "no parameters (no get_params()), so a saved model would rebuild it "
                         "with the factory's defaults; give the objective by name with "
                         "objective_params, or define get_params() on the loss")
    # a subclass's too (see saved_loss_name): the registered class rebuilds it
    names, missing = _constructor_attributes(loss, registered, ("num_class", "n_threads"))
    if missing:
        raise ValueError(f"objective {name!r}: its class takes {', '.join(missing)}, and "
                         f"the instance has no get_params() nor attributes of those names, "
                         "so a saved model could not rebuild it; define get_params() "
                         "returning its constructor's parameters")
    return {k: getattr(loss, k) for k in names} or None


def _constructor_attributes(obj, cls, left_out=()):
    """(the keyword parameters of cls's constructor but left_out, those of
    them obj has no attribute of)."""
    names = [k for k in keyword_parameters(cls) if k not in left_out]
    return names, [k for k in names if not hasattr(obj, k)]


def saved_ensembler(ensembler):
    """(name, parameters) a model file records for an ensembler given as an
    object: the name its class is registered under with its get_params(), or
    its attributes named as its constructor's parameters, as a loss's; else
    ("custom", None), which training again asks to be given anew (a model
    predicts without its ensembler)."""
    name = getattr(ensembler, "name", None)
    if not ENSEMBLERS.holds(name, type(ensembler)):
        return "custom", None
    if hasattr(ensembler, "get_params"):
        return name, ensembler.get_params()
    names, missing = _constructor_attributes(ensembler, type(ensembler))
    if missing:
        return "custom", None
    return name, {k: getattr(ensembler, k) for k in names} or None


def _call_with_supported(factory, soft, strict, what, given_in):
    """factory(**soft_that_it_accepts, **strict); `soft` keyword arguments are
    passed only when the signature takes them, `strict` ones always. A
    required parameter that neither gives raises MissingParameterError
    (given_in: the training parameter that passes `strict`)."""
    params = _parameters(factory)
    if params is None:
        kwargs = dict(strict)
    elif any(p.kind is p.VAR_KEYWORD for p in params.values()):
        kwargs = {**soft, **strict}
    else:
        kwargs = {k: v for k, v in soft.items() if k in params}
        unknown = [k for k in strict if k not in params]
        if unknown:
            # the soft ones (a loss's num_class, n_threads) are gbmo's to give
            accepted = [k for k in _named_parameters(params) if k not in soft]
            raise TypeError(f"{what} takes no parameter(s) {', '.join(map(repr, unknown))}; "
                            f"it takes: {', '.join(accepted) if accepted else 'none'}")
        kwargs.update(strict)
    missing = [k for k, p in (params or {}).items() if p.default is p.empty
               and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and k not in kwargs]
    if missing:
        raise MissingParameterError(what, missing, given_in)
    return factory(**kwargs)


def _takes_keyword(factory, keyword):
    """Whether factory's signature takes keyword (or any keyword); True when
    it has none to read, as _call_with_supported then passes what it can."""
    params = _parameters(factory)
    return params is None or keyword in params or any(p.kind is p.VAR_KEYWORD
                                                      for p in params.values())


def create_loss(name, num_class=None, n_threads=1, **params):
    """A ready loss instance for objective `name`.

    `num_class` and `n_threads` are passed only to losses whose constructor
    takes them; any other `params` are passed as keyword arguments and must be
    accepted. The instance is checked against the contract; a loss whose
    ``name`` is None gets the registered name (saved models record it)."""
    factory = LOSSES.get(name)
    if num_class is not None and not _takes_keyword(factory, "num_class"):
        # LightGBM refuses it too ("Number of classes must be 1 for non-multiclass training")
        raise ValueError(f"objective {name!r} takes no num_class: its outputs are y's columns; "
                         f"num_class={num_class!r} is for objectives of class indices "
                         "(softmax, multiclassova) and objective functions; leave it out here")
    loss = _call_with_supported(factory, {"num_class": num_class, "n_threads": n_threads},
                                params, f"objective {name!r}", "objective_params")
    problems = _check_loss_target(loss, f"loss {name!r} instance")
    if not problems and loss.name is None:
        try:
            loss.name = name
        except AttributeError as err:
            problems.append(f"its name is None and cannot be set ({err})")
    if not problems and loss.name != name and loss.name not in LOSSES:
        problems.append(f"its name {loss.name!r} is not a registered loss, so a saved model "
                        f"could not be loaded again; make it {name!r}")
    if problems:
        raise PluginContractError(f"loss {name!r} does not satisfy the loss contract: "
                                  + "; ".join(problems))
    return loss


def create_ensembler(name, **params):
    """A ready ensembler callable for `name`: an instance of a registered class
    built with `params`, or a registered function (which takes no params)."""
    obj = ENSEMBLERS.get(name)
    if isinstance(obj, type):
        return _call_with_supported(obj, {}, params, f"ensembler {name!r}", "ensembler_params")
    if params:
        raise TypeError(f"ensembler {name!r} is a function and takes no parameters, got "
                        f"{', '.join(map(repr, params))}; register a class to take parameters")
    return obj
