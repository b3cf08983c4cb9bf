"""Plugin registry: entry-point discovery (gbmo's own installed distribution and
fake *.dist-info directories on sys.path), lazy import, broken plugins,
duplicate and unknown names, contract checks, the off switch, construction."""
import functools
import importlib.metadata
import os
import subprocess
import sys
import textwrap
import uuid
import warnings

import numpy as np
import pytest

import gbmo
from gbmo import registry
from gbmo.losses import Loss, SigmoidCrossEntropy, SoftmaxCrossEntropy, SquaredError
from gbmo.registry import (
    MissingParameterError, PluginConflictWarning, PluginContractError, PluginLoadError, Registry,
)

BUILTIN_NAMES = ["mse", "multiclassova", "multitask", "sigmoid", "softmax"]
# Losses of plugin distributions installed beside gbmo (the test command
# installs gbmo-losses): the tests below count only gbmo's and their own.
INSTALLED_PLUGINS = {ep.name for ep in importlib.metadata.entry_points(group="gbmo.losses")
                     if ep.dist is not None and ep.dist.name != "gbmo"}


def _own(names):
    return [name for name in names if name not in INSTALLED_PLUGINS]

GOOD_LOSS = """
import numpy as np

class HalfSquared:
    name = "{name}"
    default_metric = "rmse"

    def __init__(self, n_threads=1):
        self.n_threads = n_threads

    def prepare_target(self, y):
        y = np.asarray(y, dtype=np.float64)
        return y.reshape(-1, 1) if y.ndim == 1 else y

    def n_outputs(self, y):
        return y.shape[1]

    def init_score(self, y, weight):
        return np.average(y, axis=0, weights=weight)

    def gradients(self, y, raw, weight):
        return (raw - y).astype(np.float32), np.ones((len(y), 1), np.float32)

    def transform(self, raw):
        return raw
"""


@pytest.fixture(autouse=True)
def _plugins_on(monkeypatch):
    monkeypatch.delenv(registry.DISABLE_ENV, raising=False)


@pytest.fixture
def fake_dist(tmp_path, monkeypatch):
    """make(dist, entry_points={group: {name: value}}, modules={module: source})
    writes <dist>-<version>.dist-info and the modules into a new directory put
    at the front of sys.path; the modules are dropped from sys.modules after."""
    modules_made = []

    def make(dist, entry_points, modules=(), version="1.0"):
        root = tmp_path / f"site_{uuid.uuid4().hex[:8]}"
        info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        lines = []
        for group, eps in entry_points.items():
            lines.append(f"[{group}]")
            lines += [f"{name} = {value}" for name, value in eps.items()]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
        for module, source in dict(modules).items():
            (root / f"{module}.py").write_text(textwrap.dedent(source))
            modules_made.append(module)
        monkeypatch.syspath_prepend(str(root))
        return root

    yield make
    for module in modules_made:
        sys.modules.pop(module, None)


def _unique(prefix):
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


# ------------------------------------------------------------ gbmo's own distribution

def test_gbmo_declares_its_losses_as_installed_entry_points():
    eps = importlib.metadata.entry_points(group="gbmo.losses")
    ours = {ep.name: ep.value for ep in eps if ep.dist is not None and ep.dist.name == "gbmo"}
    assert ours == registry._BUILTINS["gbmo.losses"], (
        "gbmo's installed entry points are stale: run pip install -e . --no-build-isolation")


def test_builtins_are_discovered_through_gbmo_distribution():
    reg = Registry("gbmo.losses", "loss")
    assert _own(reg.names()) == BUILTIN_NAMES
    assert reg.get("mse") is SquaredError
    assert reg.get("softmax") is SoftmaxCrossEntropy
    assert reg.get("sigmoid") is SigmoidCrossEntropy
    for name in BUILTIN_NAMES:
        assert "distribution 'gbmo'" in reg.sources()[name] and name in reg.sources()[name]


def test_fallback_list_matches_the_installed_entry_points():
    """The built-in list used without metadata is the one pyproject.toml installs."""
    installed = importlib.metadata.distribution("gbmo").entry_points
    for group, builtins in registry._BUILTINS.items():
        table = {ep.name: ep.value for ep in installed if ep.group == group}
        assert table == builtins, group


def test_builtins_work_without_installed_metadata(monkeypatch):
    """A source checkout that is not pip-installed: no gbmo entry points at all."""
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **kw: [])
    reg = Registry("gbmo.losses", "loss")
    assert _own(reg.names()) == BUILTIN_NAMES
    assert reg.get("softmax") is SoftmaxCrossEntropy
    assert "gbmo built-in" in reg.sources()["mse"]


def test_discovery_failure_warns_and_keeps_builtins(monkeypatch):
    def broken(**kw):
        raise ValueError("malformed entry_points.txt")

    monkeypatch.setattr(importlib.metadata, "entry_points", broken)
    reg = Registry("gbmo.losses", "loss")
    with pytest.warns(UserWarning, match="malformed entry_points.txt"):
        assert _own(reg.names()) == BUILTIN_NAMES
    assert reg.get("mse") is SquaredError


def test_a_malformed_distribution_hides_its_own_entry_points_only(fake_dist):
    """Found by a plugin author's audit: one unrelated distribution's
    malformed entry_points.txt hid every plugin, and the next error said a
    plugin was not installed when it was."""
    good = _unique("plug_good")
    fake_dist("fake-good", {"gbmo.losses": {"halfsq_beside_broken": f"{good}:HalfSquared"}},
              {good: GOOD_LOSS.format(name="halfsq_beside_broken")})
    root = fake_dist("fake-unrelated", {"console_scripts": {"tool": "tool:main"}})
    info = next(root.glob("*.dist-info"))
    (info / "entry_points.txt").write_text("[console_scripts]\na line without its equals\n")
    reg = Registry("gbmo.losses", "loss")
    with pytest.warns(UserWarning, match="it read them distribution by distribution and skipped "
                                         "the unreadable distribution 'fake-unrelated'") as record:
        names = reg.names()
    assert record[0].filename == __file__  # the caller's line, not gbmo's
    assert "halfsq_beside_broken" in names and "mse" in names
    assert reg.get("halfsq_beside_broken").__name__ == "HalfSquared"


def test_distributions_without_a_name_are_each_read_when_the_listing_fails(fake_dist, tmp_path,
                                                                          monkeypatch):
    """Found by the review: read distribution by distribution, two without a
    Name in their metadata counted as one."""
    modules = {}
    # each goes to the front of sys.path: the blank name is read after the missing ones
    for loss, name_line in (("blank_named", "Name: \n"), ("nameless_one", ""),
                            ("nameless_two", "")):
        module = _unique(loss)
        root = tmp_path / f"site_{module}"
        info = root / f"{module}-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\n{name_line}Version: 1.0\n")
        (info / "entry_points.txt").write_text(f"[gbmo.losses]\n{loss} = {module}:HalfSquared\n")
        (root / f"{module}.py").write_text(textwrap.dedent(GOOD_LOSS.format(name=loss)))
        monkeypatch.syspath_prepend(str(root))
        modules[loss] = module
    root = fake_dist("fake-unrelated", {"console_scripts": {"tool": "tool:main"}})
    (next(root.glob("*.dist-info")) / "entry_points.txt").write_text("[x]\nno equals\n")
    reg = Registry("gbmo.losses", "loss")
    try:
        with pytest.warns(UserWarning, match="distribution by distribution"):
            assert {"nameless_one", "nameless_two", "blank_named"} <= set(reg.names())
    finally:
        for module in modules.values():
            sys.modules.pop(module, None)


def test_discovery_is_lazy_and_cached(monkeypatch):
    calls = []
    real = importlib.metadata.entry_points

    def counting(**kw):
        calls.append(kw)
        return real(**kw)

    monkeypatch.setattr(importlib.metadata, "entry_points", counting)
    reg = Registry("gbmo.losses", "loss")
    assert calls == []
    reg.names()
    reg.get("mse")
    assert "mse" in reg
    assert calls == [{"group": "gbmo.losses"}]
    reg.reset()
    reg.names()
    assert len(calls) == 2


# ------------------------------------------------------------ fake distributions

def test_fake_dist_info_plugin_is_discovered_and_imported_on_first_use(fake_dist):
    module = _unique("plug_good")
    fake_dist("fake-good", {"gbmo.losses": {"halfsq": f"{module}:HalfSquared"}},
              {module: GOOD_LOSS.format(name="halfsq")})
    reg = Registry("gbmo.losses", "loss")
    assert _own(reg.names()) == sorted(BUILTIN_NAMES + ["halfsq"])
    assert "distribution 'fake-good' 1.0" in reg.sources()["halfsq"]
    assert module not in sys.modules  # listed, not imported
    cls = reg.get("halfsq")
    assert module in sys.modules
    assert cls.__name__ == "HalfSquared" and cls.__module__ == module
    assert reg.get("halfsq") is cls  # cached


def test_broken_plugin_fails_only_on_use_naming_entry_point_and_distribution(fake_dist):
    good, bad = _unique("plug_good"), _unique("plug_broken")
    fake_dist("fake-plugins", {"gbmo.losses": {"halfsq": f"{good}:HalfSquared",
                                               "exploding": f"{bad}:Exploding"}},
              {good: GOOD_LOSS.format(name="halfsq"),
               bad: "raise RuntimeError('boom at import time')\n"})
    reg = Registry("gbmo.losses", "loss")
    assert "exploding" in reg.names()  # listing costs nothing
    assert reg.get("halfsq").__name__ == "HalfSquared"
    assert reg.get("mse") is SquaredError
    assert bad not in sys.modules  # the unused broken plugin was never imported
    with pytest.raises(PluginLoadError) as info:
        reg.get("exploding")
    message = str(info.value)
    assert "'exploding'" in message
    assert f"exploding = {bad}:Exploding" in message
    assert "fake-plugins" in message
    assert "RuntimeError: boom at import time" in message
    assert isinstance(info.value, ImportError)
    assert isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(PluginLoadError, match="boom at import time"):
        reg.get("exploding")  # the failure is cached and raised again
    assert reg.get("halfsq").__name__ == "HalfSquared"  # others keep working


def test_missing_object_in_plugin_module_is_a_load_error(fake_dist):
    module = _unique("plug_empty")
    fake_dist("fake-empty", {"gbmo.losses": {"ghost": f"{module}:Nothing"}},
              {module: "x = 1\n"})
    reg = Registry("gbmo.losses", "loss")
    with pytest.raises(PluginLoadError, match=r"fake-empty.*AttributeError"):
        reg.get("ghost")


def test_import_gbmo_survives_a_broken_plugin(fake_dist):
    bad = _unique("plug_broken")
    root = fake_dist("fake-broken", {"gbmo.losses": {"exploding": f"{bad}:Exploding"}},
                     {bad: "raise RuntimeError('boom')\n"})
    code = ("import gbmo, gbmo.registry as r, sys; names = r.LOSSES.names(); "
            f"assert 'exploding' in names and 'mse' in names; assert {bad!r} not in sys.modules; "
            "print(r.create_loss('mse').name)\n"
            "try:\n    r.LOSSES.get('exploding')\n"
            "except r.PluginLoadError as e:\n    print('LOADERROR', e)\n")
    # The installed gbmo is imported: the subprocess runs outside the source tree.
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop(registry.DISABLE_ENV, None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120, cwd=root)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("mse\nLOADERROR")
    assert "fake-broken" in out.stdout and "boom" in out.stdout


def test_entry_point_object_breaking_the_contract_is_rejected_at_load(fake_dist):
    module = _unique("plug_bad_contract")
    fake_dist("fake-contract", {"gbmo.losses": {"nograd": f"{module}:NoGradients"}},
              {module: GOOD_LOSS.format(name="nograd").replace("def gradients", "def _gradients")
               .replace("class HalfSquared", "class NoGradients")})
    reg = Registry("gbmo.losses", "loss")
    assert "nograd" in reg.names()
    with pytest.raises(PluginContractError, match=r"fake-contract.*no method gradients\(\)"):
        reg.get("nograd")


# ------------------------------------------------------------ duplicate names

def test_two_distributions_claiming_a_name_warn_and_first_on_path_wins(fake_dist):
    first, second = _unique("plug_a"), _unique("plug_b")
    fake_dist("fake-second", {"gbmo.losses": {"dup": f"{second}:HalfSquared"}},
              {second: GOOD_LOSS.format(name="dup")})
    fake_dist("fake-first", {"gbmo.losses": {"dup": f"{first}:HalfSquared"}},
              {first: GOOD_LOSS.format(name="dup")})  # prepended last: first on sys.path
    reg = Registry("gbmo.losses", "loss")
    with pytest.warns(PluginConflictWarning) as record:
        reg.names()
    messages = [str(w.message) for w in record if "'dup'" in str(w.message)]
    assert len(messages) == 1
    assert "fake-first" in messages[0] and "fake-second" in messages[0]
    assert "using the one from distribution 'fake-first'" in messages[0]
    assert reg.get("dup").__module__ == first
    assert second not in sys.modules


def test_a_distribution_cannot_silently_replace_a_builtin(fake_dist):
    module = _unique("plug_mse")
    fake_dist("fake-hijack", {"gbmo.losses": {"mse": f"{module}:HalfSquared"}},
              {module: GOOD_LOSS.format(name="mse")})
    reg = Registry("gbmo.losses", "loss")
    with pytest.warns(PluginConflictWarning, match=r"'mse' is claimed twice.*fake-hijack") as record:
        reg.names()
    assert record[0].filename == __file__  # the caller's line, not gbmo's
    assert reg.get("mse") is SquaredError


def test_decorator_and_distribution_claiming_a_name_warn_and_the_decorator_wins(fake_dist):
    module = _unique("plug_c")
    fake_dist("fake-clash", {"gbmo.losses": {"clash": f"{module}:HalfSquared"}},
              {module: GOOD_LOSS.format(name="clash")})
    reg = Registry("gbmo.losses", "loss")

    @reg.register("clash")
    class Mine(SquaredError):
        name = "clash"

    with pytest.warns(PluginConflictWarning) as record:
        assert reg.get("clash") is Mine
    message = str(record[0].message)
    assert "fake-clash" in message and "Mine" in message
    assert "using the one from code registration" in message
    assert module not in sys.modules

    # registering after discovery warns at once
    with pytest.warns(PluginConflictWarning, match="'mse' is claimed twice"):
        reg.register("mse", Mine)
    assert reg.get("mse") is Mine


def test_code_registrations_later_wins_and_same_class_is_silent():
    reg = Registry("gbmo.losses", "loss")

    class A(SquaredError):
        pass

    class B(SquaredError):
        pass

    reg.register("mine", A)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reg.register("mine", A)  # the same object again: no warning
    with pytest.warns(PluginConflictWarning, match=r"claimed twice.*B.*A"):
        reg.register("mine", B)
    assert reg.get("mine") is B
    reg.unregister("mine")
    assert "mine" not in reg


# ------------------------------------------------------------ unknown names and contracts

def test_unknown_name_lists_available_names(fake_dist):
    module = _unique("plug_listed")
    fake_dist("fake-listed", {"gbmo.losses": {"halfsq": f"{module}:HalfSquared"}},
              {module: GOOD_LOSS.format(name="halfsq")})
    reg = Registry("gbmo.losses", "loss")
    with pytest.raises(ValueError) as info:
        reg.get("msee")
    message = str(info.value)
    assert "unknown loss 'msee'" in message
    assert "halfsq" in reg.names()
    assert f"available losses: {', '.join(reg.names())}" in message
    assert "did you mean 'mse'" in message
    empty = Registry("gbmo.ensemblers", "ensembler")
    with pytest.raises(ValueError, match="unknown ensembler 'x'; available ensemblers"):
        empty.get("x")
    with pytest.raises(TypeError, match="must be a string"):
        reg.get(None)


def test_contract_violations_are_rejected_at_registration_with_the_reason():
    reg = Registry("gbmo.losses", "loss")

    class NoGradients:
        name, default_metric = "x", "rmse"
        prepare_target = n_outputs = init_score = transform = staticmethod(lambda *a: None)

    with pytest.raises(PluginContractError, match=r"no method gradients\(\)"):
        reg.register("x", NoGradients)

    class Abstract(Loss):
        name, default_metric = "x", "rmse"

        def gradients(self, y, raw, weight):
            return raw, raw

    with pytest.raises(PluginContractError) as info:
        reg.register("x", Abstract)
    for method in ("prepare_target", "n_outputs", "init_score"):
        assert f"does not implement {method}()" in str(info.value)
    assert "gradients" not in str(info.value)

    class UnknownMetric(SquaredError):
        default_metric = "huber_score"

    with pytest.raises(PluginContractError, match="'huber_score' is not a known metric"):
        reg.register("x", UnknownMetric)

    class NotCallable(SquaredError):
        transform = 3

    with pytest.raises(PluginContractError, match="transform is not callable"):
        reg.register("x", NotCallable)

    class NoWeight(SquaredError):  # failed at the first round: 'takes 3 positional arguments'
        def gradients(self, y, raw):
            return raw - y, np.ones_like(raw)

    with pytest.raises(PluginContractError, match=r"NoWeight.gradients must take \(y, raw, "
                                                  r"weight\), as training calls it"):
        reg.register("x", NoWeight)

    class ShortInit(SquaredError):
        def init_score(self, y):
            return y.mean(axis=0)

    # an instance's bound methods, as a factory's products are checked
    assert registry._check_loss_target(ShortInit(), "loss 'x' instance") == [
        "loss 'x' instance.init_score must take (y, weight), as training calls it"]

    class Static(SquaredError):  # static and class methods are called without self
        @staticmethod
        def transform(raw):
            return raw


        @classmethod
        def n_outputs(cls, y):
            return y.shape[1]

    reg.register("static", Static)

    class PartialTransform(SquaredError):  # nor is a callable object: a partial was refused
        transform = functools.partial(np.clip, a_min=-1e300, a_max=1e300)

    reg.register("partial", PartialTransform)

    with pytest.raises(PluginContractError, match="class or a factory"):
        reg.register("x", 42)
    assert "x" not in reg.names()

    ens = Registry("gbmo.ensemblers", "ensembler")

    class NotCallableEnsembler:
        pass

    with pytest.raises(PluginContractError, match="does not define __call__"):
        ens.register("e", NotCallableEnsembler)
    with pytest.raises(PluginContractError, match=r"must take \(grad, hess, context\)"):
        ens.register("e", lambda grad: grad)
    assert "e" not in ens.names()


def test_module_level_decorators_register_and_check(monkeypatch):
    monkeypatch.setattr(registry, "LOSSES", Registry("gbmo.losses", "loss"))
    monkeypatch.setattr(registry, "ENSEMBLERS", Registry("gbmo.ensemblers", "ensembler"))

    @registry.register_loss("doubled")
    class Doubled(SquaredError):
        name = "doubled"

    @registry.register_ensembler("identity")
    def identity(grad, hess, context):
        return grad, hess, grad, hess

    assert registry.LOSSES.get("doubled") is Doubled
    assert registry.ENSEMBLERS.get("identity") is identity
    assert _own(registry.LOSSES.names()) == sorted(BUILTIN_NAMES + ["doubled"])
    with pytest.raises(PluginContractError):
        registry.register_loss("bad")(object)


# ------------------------------------------------------------ off switch

def test_off_switch_keeps_builtins_and_code_registrations_only(fake_dist, monkeypatch):
    module = _unique("plug_off")
    fake_dist("fake-off", {"gbmo.losses": {"halfsq": f"{module}:HalfSquared"}},
              {module: GOOD_LOSS.format(name="halfsq")})
    assert "halfsq" in Registry("gbmo.losses", "loss").names()  # on: found

    real_entry_points = importlib.metadata.entry_points

    def forbidden(**kw):
        raise AssertionError("entry points read while plugins are disabled")

    monkeypatch.setenv(registry.DISABLE_ENV, "1")
    monkeypatch.setattr(importlib.metadata, "entry_points", forbidden)
    reg = Registry("gbmo.losses", "loss")
    assert _own(reg.names()) == BUILTIN_NAMES
    assert reg.get("mse") is SquaredError and reg.get("softmax") is SoftmaxCrossEntropy
    with pytest.raises(ValueError, match=r"unknown loss 'halfsq'.*GBMO_DISABLE_PLUGINS"):
        reg.get("halfsq")
    assert module not in sys.modules

    class Mine(SquaredError):
        name = "mine"

    reg.register("mine", Mine)  # code registrations are not plugin discovery
    assert reg.get("mine") is Mine

    monkeypatch.setattr(importlib.metadata, "entry_points", real_entry_points)
    monkeypatch.setenv(registry.DISABLE_ENV, "0")
    reg.reset()  # re-reads the variable: discovery is on again
    assert _own(reg.names()) == sorted(BUILTIN_NAMES + ["halfsq", "mine"])


# ------------------------------------------------------------ construction

def test_create_loss_passes_only_the_arguments_a_loss_takes(monkeypatch):
    monkeypatch.setattr(registry, "LOSSES", Registry("gbmo.losses", "loss"))
    softmax = registry.create_loss("softmax", num_class=4, n_threads=3)
    assert isinstance(softmax, SoftmaxCrossEntropy)
    assert (softmax.num_class, softmax.n_threads) == (4, 3)
    mse = registry.create_loss("mse", n_threads=2)
    assert isinstance(mse, SquaredError) and mse.n_threads == 2
    # a num_class the loss does not take was dropped without a word, as in
    # gbmo.train({"num_class": 3}) for regression; LightGBM refuses it
    with pytest.raises(ValueError, match=r"objective 'mse' takes no num_class: its outputs are "
                                         r"y's columns; num_class=4 is for objectives of class "
                                         r"indices \(softmax, multiclassova\) and objective "
                                         r"functions; leave it out here"):
        registry.create_loss("mse", num_class=4, n_threads=2)

    @registry.register_loss("pinball")
    class Pinball(SquaredError):
        name = "pinball"

        def __init__(self, alpha=0.5, n_threads=1):
            super().__init__(n_threads)
            self.alpha = alpha

    assert registry.create_loss("pinball", alpha=0.9).alpha == 0.9
    with pytest.raises(TypeError, match=r"takes no parameter\(s\) 'delta'; it takes: alpha"):
        registry.create_loss("pinball", delta=1.0)


def test_a_plugin_keyword_named_as_a_lightgbm_setting_stays_the_objective_s(monkeypatch):
    """LightGBM's settings without effect (tree, sparse, ...) are dropped at the
    top level, but not a name the objective takes, which is folded into its
    objective_params as its other keywords are."""
    from gbmo.params import resolve_params

    monkeypatch.setattr(registry, "LOSSES", Registry("gbmo.losses", "loss"))

    @registry.register_loss("sparse_aware")
    class SparseAware(SquaredError):
        name = "sparse_aware"

        def __init__(self, sparse=False, n_threads=1):
            super().__init__(n_threads)
            self.sparse = sparse

    resolved = resolve_params({"objective": "sparse_aware", "sparse": True, "tree": "serial"})
    assert resolved["objective_params"] == {"sparse": True}
    assert resolve_params({"objective": "mse", "sparse": True})["objective_params"] is None


def test_a_required_parameter_not_given_is_named_with_where_to_give_it(monkeypatch):
    """Not Python's "__init__() missing 1 required positional argument": the
    objective or ensembler, the parameter, and the training parameter that
    passes it."""
    monkeypatch.setattr(registry, "LOSSES", Registry("gbmo.losses", "loss"))
    monkeypatch.setattr(registry, "ENSEMBLERS", Registry("gbmo.ensemblers", "ensembler"))

    @registry.register_loss("banded")
    class Banded(SquaredError):
        name = "banded"

        def __init__(self, low, high, n_threads=1):
            super().__init__(n_threads)
            self.low, self.high = low, high

    @registry.register_ensembler("scaled")
    class Scaled:
        def __init__(self, *, factor):
            self.factor = factor

        def __call__(self, grad, hess, context):
            return grad * self.factor, hess, grad, hess

    with pytest.raises(MissingParameterError) as caught:
        registry.create_loss("banded", low=0.0)
    assert str(caught.value) == ("objective 'banded' needs the parameter 'high', which was not "
                                 "given: give it in objective_params, e.g. "
                                 "objective_params={'high': ...}")
    assert (caught.value.missing, caught.value.given_in) == (["high"], "objective_params")
    with pytest.raises(MissingParameterError, match=r"'low', 'high', which were not given: "
                                                    r"give them in objective_params"):
        registry.create_loss("banded")
    with pytest.raises(MissingParameterError, match=r"ensembler 'scaled' needs the parameter "
                                                    r"'factor'.*ensembler_params=\{'factor'"):
        registry.create_ensembler("scaled")
    assert registry.create_loss("banded", low=0.0, high=1.0).high == 1.0
    assert registry.create_ensembler("scaled", factor=2.0).factor == 2.0


def test_create_loss_checks_factory_products_and_names(monkeypatch):
    monkeypatch.setattr(registry, "LOSSES", Registry("gbmo.losses", "loss"))

    class Anonymous(SquaredError):
        name = None

    registry.register_loss("anon")(lambda n_threads=1: Anonymous(n_threads))
    loss = registry.create_loss("anon")
    assert loss.name == "anon"  # what a saved model records
    y = loss.prepare_target(np.arange(6.0))
    grad, hess = loss.gradients(y, np.zeros_like(y), None)
    np.testing.assert_allclose(grad, -y)

    registry.register_loss("returns_junk")(lambda: object())
    with pytest.raises(PluginContractError, match="returns_junk.*no method gradients"):
        registry.create_loss("returns_junk")

    class WrongName(SquaredError):
        name = "not_registered"

    registry.register_loss("wrongname")(WrongName)
    with pytest.raises(PluginContractError, match="'not_registered' is not a registered loss"):
        registry.create_loss("wrongname")


def test_create_ensembler(monkeypatch):
    monkeypatch.setattr(registry, "ENSEMBLERS", Registry("gbmo.ensemblers", "ensembler"))

    @registry.register_ensembler("scaled")
    class Scaled:
        def __init__(self, factor=1.0):
            self.factor = factor

        def __call__(self, grad, hess, context):
            return grad * self.factor, hess, grad, hess

    @registry.register_ensembler("plain")
    def plain(grad, hess, context):
        return grad, hess, grad, hess

    g = np.ones((3, 2), np.float32)
    split_grad, *_ = registry.create_ensembler("scaled", factor=2.0)(g, g, None)
    np.testing.assert_array_equal(split_grad, 2 * g)
    assert registry.create_ensembler("plain") is plain
    with pytest.raises(TypeError, match="is a function and takes no parameters"):
        registry.create_ensembler("plain", factor=2.0)


def test_a_loss_registered_in_code_trains_saves_and_loads(tmp_path):
    """End to end through the registry: train by name, save, load by name."""
    import gbmo
    from gbmo import registry
    from gbmo.losses import SquaredError

    class HalfSquaredError(SquaredError):
        name = "half_mse_for_test"

        def gradients(self, y, raw, weight):
            grad, hess = super().gradients(y, raw, weight)
            return grad * 0.5, hess * 0.5

    gbmo.register_loss("half_mse_for_test")(HalfSquaredError)
    try:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(300, 3))
        y = X[:, 0] * 2
        booster = gbmo.train({"objective": "half_mse_for_test", "verbosity": 0},
                             gbmo.Dataset(X, y), 20)
        assert booster.loss.name == "half_mse_for_test"
        assert np.corrcoef(booster.predict(X), y)[0, 1] > 0.95
        booster.save_model(tmp_path / "m.json")
        np.testing.assert_array_equal(gbmo.Booster(model_file=tmp_path / "m.json").predict(X),
                                      booster.predict(X))
    finally:
        registry.LOSSES.unregister("half_mse_for_test")
    with pytest.raises(gbmo.ModelFormatError, match="half_mse_for_test"):
        gbmo.Booster(model_file=tmp_path / "m.json")


@pytest.mark.parametrize("shape", ["scalar", "row"])
def test_a_loss_whose_init_score_is_a_scalar_or_a_row_predicts_from_it(shape):
    """np.tile took either before the kernels started rows themselves; the
    booster now stores init_score as the (n_outputs,) array they read."""
    import gbmo
    from gbmo import registry
    from gbmo.losses import SquaredError

    class ShapedInit(SquaredError):
        name = "shaped_init_for_test"

        def init_score(self, y, weight):
            mean = np.mean(y, axis=0)
            return float(mean[0]) if shape == "scalar" else mean[None, :]

    gbmo.register_loss("shaped_init_for_test")(ShapedInit)
    try:
        X = np.random.default_rng(1).normal(size=(100, 2))
        y = 3.0 + X[:, 0]
        booster = gbmo.train({"objective": "shaped_init_for_test", "verbosity": 0},
                             gbmo.Dataset(X, y), 3)
    finally:
        registry.LOSSES.unregister("shaped_init_for_test")
    assert booster.init_score.shape == (1,)
    np.testing.assert_allclose(booster.init_score, [y.mean()])
    leaves = sum(tree.leaf_values[leaf, 0] for tree, leaf in zip(
        booster.trees, booster.predict_leaf(X).T))
    np.testing.assert_allclose(booster.predict(X), y.mean() + leaves, rtol=1e-12)


def test_a_loss_whose_init_score_has_the_wrong_size_is_refused_by_name():
    import gbmo
    from gbmo import registry
    from gbmo.losses import SquaredError

    class WrongInit(SquaredError):
        name = "wrong_init_for_test"

        def init_score(self, y, weight):
            return np.zeros(y.shape[1] + 1)

    gbmo.register_loss("wrong_init_for_test")(WrongInit)
    try:
        X = np.random.default_rng(2).normal(size=(50, 2))
        with pytest.raises(ValueError, match="objective 'wrong_init_for_test': init_score "
                                             "returned 2 values for 1 outputs; it must "
                                             "return one per output"):
            gbmo.train({"objective": "wrong_init_for_test", "verbosity": 0},
                       gbmo.Dataset(X, X[:, 0]), 2)
    finally:
        registry.LOSSES.unregister("wrong_init_for_test")


def test_a_gbmo_losses_objective_with_plugins_switched_off_says_so(monkeypatch):
    """Not "gbmo-losses is not installed", which it may well be."""
    from gbmo.params import resolve_params

    monkeypatch.setenv(registry.DISABLE_ENV, "1")
    monkeypatch.setattr(registry, "LOSSES", Registry("gbmo.losses", "loss"))
    with pytest.raises(ValueError, match="objective 'huber' is in gbmo-losses, gbmo's plugin "
                                         "distribution, and plugins are switched off "
                                         r"\(GBMO_DISABLE_PLUGINS is set\)"):
        resolve_params({"objective": "huber"})


# ------------------------------------------------------------ a plugin author's audit

class _Pinball(SquaredError):
    """A loss of one parameter, registered under a name it does not carry."""
    name = None
    default_metric = "mae"

    def __init__(self, tau=0.5, n_threads=1):
        super().__init__(n_threads)
        self.tau = tau

    def init_score(self, y, weight):
        return np.quantile(y, self.tau, axis=0)

    def gradients(self, y, raw, weight):
        return np.where(raw > y, 1.0 - self.tau, -self.tau), np.ones((len(y), 1))


def _pinball_data():
    X = np.random.default_rng(0).normal(size=(200, 3))
    return X, gbmo.Dataset(X, X[:, 0] + 0.1 * X[:, 1])


def test_a_loss_instance_saves_under_its_class_s_registered_name(monkeypatch, tmp_path):
    """Found by a plugin author's audit: an instance whose name is None saved
    a model that could not be loaded nor pickled."""
    import pickle

    monkeypatch.setattr(registry, "LOSSES", Registry("gbmo.losses", "loss"))
    registry.register_loss("pinball_for_test")(_Pinball)
    X, train = _pinball_data()
    booster = gbmo.train({"objective": _Pinball(tau=0.9), "verbosity": 0}, train, 5)
    booster.save_model(tmp_path / "m.json")
    loaded = gbmo.Booster(model_file=tmp_path / "m.json")
    assert loaded.params["objective"] == "pinball_for_test"
    assert loaded.params["objective_params"] == {"tau": 0.9}
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(booster)).predict(X),
                                  booster.predict(X))


def test_a_loss_instance_a_loaded_model_could_not_rebuild_is_refused_at_saving(monkeypatch):
    """Found by a plugin author's audit: an unregistered name saved a file
    that would not load; a subclass keeping its parent's registered name, or
    an instance of a factory's without get_params, loaded as another loss
    (the parent's transform, the factory's defaults) in silence."""
    monkeypatch.setattr(registry, "LOSSES", Registry("gbmo.losses", "loss"))
    registry.register_loss("pinball_for_test")(_Pinball)
    _, train = _pinball_data()

    class Unregistered(_Pinball):
        name = "unregistered_for_test"

    class Exponentiated(_Pinball):
        name = "pinball_for_test"

        def transform(self, raw):
            return np.exp(raw)

    class Shifted(_Pinball):
        name = "shift_for_test"

        def __init__(self, shift=0.0, n_threads=1):
            super().__init__(n_threads=n_threads)
            self.shift = shift

    registry.register_loss("shift_for_test")(lambda shift=0.0: Shifted(shift))
    refusals = [
        (Unregistered(), r"named 'unregistered_for_test', which is not a registered loss, so "
                         r"a saved model could not be loaded; register the class"),
        (Exponentiated(), r"named 'pinball_for_test', the name of .*_Pinball, whose transform "
                          r"it does not keep: a saved model would load as that class's loss"),
        (Shifted(100.0), r"objective 'shift_for_test' is made by a factory, and this instance "
                         r"shows no parameters"),
    ]
    for loss, message in refusals:
        booster = gbmo.train({"objective": loss, "verbosity": 0}, train, 2)
        for saving in (booster.model_to_string, booster.copy):
            with pytest.raises(ValueError, match=message):
                saving()

    class NotRegistered(_Pinball):
        pass

    booster = gbmo.train({"objective": NotRegistered(), "verbosity": 0}, train, 2)
    with pytest.raises(ValueError, match="whose name is None and whose class is not registered"):
        booster.model_to_string()


def test_a_subclass_that_keeps_its_parents_transform_saves_under_its_name(monkeypatch):
    """Found by the review: a Loss subclass of its own gradients under its
    parent's name predicts as the parent, and pickled and copied before the
    refusal above; it still does, as the parent's loss with its parameters."""
    import copy
    import pickle

    monkeypatch.setattr(registry, "LOSSES", Registry("gbmo.losses", "loss"))
    registry.register_loss("pinball_for_test")(_Pinball)

    class Doubled(_Pinball):
        name = "pinball_for_test"

        def gradients(self, y, raw, weight):
            grad, hess = super().gradients(y, raw, weight)
            return 2 * grad, 2 * hess

    X, train = _pinball_data()
    booster = gbmo.train({"objective": Doubled(tau=0.8), "verbosity": 0}, train, 3)
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    assert loaded.params["objective_params"] == {"tau": 0.8}
    for restored in (loaded, pickle.loads(pickle.dumps(booster)), copy.deepcopy(booster),
                     booster.copy()):
        np.testing.assert_array_equal(restored.predict(X), booster.predict(X))


    class Scaled(Doubled):
        """get_params of a parameter of its own, which _Pinball would refuse."""

        def __init__(self, tau=0.5, factor=2.0, n_threads=1):
            super().__init__(tau, n_threads)
            self.factor = factor

        def get_params(self):
            return {"tau": self.tau, "factor": self.factor}

    booster = gbmo.train({"objective": Scaled(), "verbosity": 0}, train, 2)
    with pytest.raises(ValueError, match=r"this .*Scaled instance's get_params\(\) gives "
                                         r"'factor', which the loss registered as "
                                         r"'pinball_for_test' does not take"):
        booster.model_to_string()


def test_a_loss_s_non_finite_start_score_is_refused_by_name(monkeypatch):
    monkeypatch.setattr(registry, "LOSSES", Registry("gbmo.losses", "loss"))

    class NanStart(_Pinball):
        name = "nan_start_for_test"

        def init_score(self, y, weight):
            return np.full(y.shape[1], np.nan)

    registry.register_loss("nan_start_for_test")(NanStart)
    _, train = _pinball_data()
    with pytest.raises(ValueError, match=r"objective 'nan_start_for_test': init_score returned "
                                         r"\[nan\]; it must return finite numbers"):
        gbmo.train({"objective": "nan_start_for_test", "verbosity": 0}, train, 2)


def test_a_plugin_loss_that_is_no_gbmo_loss_trains_through_every_door(monkeypatch, tmp_path):
    """Found by a plugin author's audit: the estimators, MultiTaskLoss and
    the command line read masks_missing_targets, which the contract does not
    ask of a loss that is no gbmo.Loss."""
    from gbmo.cli import main
    from gbmo.sklearn import GBMORegressor

    namespace = {}  # a plugin's class, which is no gbmo.Loss
    exec(GOOD_LOSS.format(name="plain_for_test"), namespace)
    Plain = namespace["HalfSquared"]
    monkeypatch.setattr(registry, "LOSSES", Registry("gbmo.losses", "loss"))
    registry.register_loss("plain_for_test")(Plain)
    X, _ = _pinball_data()
    y = X[:, 0]
    by_name = gbmo.train({"objective": "plain_for_test", "verbosity": 0}, gbmo.Dataset(X, y),
                         5).predict(X)
    np.testing.assert_array_equal(
        GBMORegressor(objective="plain_for_test", n_estimators=5).fit(X, y).predict(X), by_name)
    tasks = gbmo.MultiTaskLoss([("plain_for_test", [0]), ("mse", [1])])
    assert not tasks.masks_missing_targets
    gbmo.train({"objective": tasks, "verbosity": 0}, gbmo.Dataset(X, np.c_[y, y]), 2)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.c_[X, y], delimiter=",", header="a,b,c,y", comments="")
    assert main(["train", "--data", str(data), "--target", "y", "--output",
                 str(tmp_path / "m.json"), "--rounds", "2", "--objective", "plain_for_test"]) == 0


def test_the_command_line_reports_a_plugin_that_fails_to_import_in_one_line(
        fake_dist, tmp_path, capsys, monkeypatch):
    """Found by a plugin author's audit: a traceback, exit code 1."""
    from gbmo.cli import main

    bad = _unique("plug_broken")
    fake_dist("fake-broken", {"gbmo.losses": {"broken_for_test": f"{bad}:Broken"}},
              {bad: "raise RuntimeError('boom at import time')\n"})
    monkeypatch.setattr(registry, "LOSSES", Registry("gbmo.losses", "loss"))
    data = tmp_path / "d.csv"
    np.savetxt(data, np.random.default_rng(0).normal(size=(50, 3)), delimiter=",",
               header="a,b,y", comments="")
    assert main(["train", "--data", str(data), "--target", "y", "--output",
                 str(tmp_path / "m.json"), "--objective", "broken_for_test"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gbmo: error: ") and "boom at import time" in err
    assert "Traceback" not in err
