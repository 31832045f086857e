"""The facade: fit/predict on arrays and tables, validation, the result, scikit-learn's checks."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from naive import min_consistent_depth, min_error

import satdt
from satdt import OptimalTreeClassifier, SatdtError
from satdt.core.errors import ContradictionError, InfeasibleError, NotFittedError, NotProvenWarning


def xor_data():
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 3, dtype=float)
    y = np.array(["a", "b", "b", "a"] * 3)
    return X, y


def test_fit_predict_minimum_depth_with_string_labels():
    X, y = xor_data()
    model = OptimalTreeClassifier().fit(X, y)
    assert model.result_.objective == "depth"
    assert model.result_.objective_value == 2 and model.result_.proven_optimal
    assert model.tree_.depth == 2
    np.testing.assert_array_equal(model.predict(X), y)
    assert model.score(X, y) == 1.0
    assert list(model.classes_) == ["a", "b"]
    assert model.n_features_in_ == 2
    proba = model.predict_proba(X)
    assert proba.shape == (12, 2) and np.allclose(proba.sum(axis=1), 1)


def test_single_class_is_a_one_leaf_tree():
    model = OptimalTreeClassifier().fit(np.arange(6.0).reshape(3, 2), [5, 5, 5])
    assert model.tree_.depth == 0 and model.tree_.n_nodes == 1
    assert model.predict([[9.0, 9.0]]).tolist() == [5]


def test_contradictions_are_an_error_unless_resolved():
    X = np.array([[0.0], [0.0], [0.0], [1.0]])
    y = np.array([0, 1, 1, 0])
    with pytest.raises(ContradictionError, match="rows 1, 2, 3") as info:
        OptimalTreeClassifier().fit(X, y)
    assert info.value.groups
    model = OptimalTreeClassifier(resolve="majority").fit(X, y)
    assert model.result_.preparation.relabelled_rows == 1
    assert model.predict(X).tolist() == [1, 1, 1, 0]


def test_zero_weight_drops_a_row():
    X = np.array([[0.0], [0.0], [1.0]])
    y = np.array([0, 1, 1])
    model = OptimalTreeClassifier().fit(X, y, sample_weight=[0, 1, 1])
    assert model.tree_.n_nodes == 1


def test_categorical_table_and_unknown_category():
    X = np.array([["red", 1.0], ["blue", 1.0], ["green", 2.0], ["red", 2.0]], dtype=object)
    y = np.array([1, 0, 0, 1])
    model = OptimalTreeClassifier().fit(X, y, feature_names=["colour", "size"])
    assert "colour == red" in model.tree_.export_text()
    assert model.predict(np.array([["red", 5.0], ["pink", 1.0]], dtype=object)).tolist() == [1, 0]


def test_pandas_dataframe():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"colour": ["red", "blue", "green", "red"], "size": [1.0, 1.0, 2.0, 2.0]})
    model = OptimalTreeClassifier().fit(frame, pd.Series([1, 0, 0, 1], name="label"))
    assert list(model.feature_names_in_) == [
        "colour == blue",
        "colour == green",
        "colour == red",
        "size",
    ]
    assert model.predict(frame[["size", "colour"]]).tolist() == [1, 0, 0, 1]


def test_on_improve_and_history():
    seen = []
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(60, 6)).astype(float)
    y = (X[:, 0].astype(int) & X[:, 1].astype(int)) | X[:, 2].astype(int)
    model = OptimalTreeClassifier(method="sat", on_improve=seen.append).fit(X, y)
    assert seen, "on_improve was never called"
    values = [entry.value for entry in model.result_.history]
    assert values == sorted(values, reverse=True)
    assert model.result_.history[-1].value == model.result_.objective_value
    assert model.result_.objective_value == min_consistent_depth(X.astype(np.uint8), y) == 3
    assert all(len(entry) == 3 for entry in model.result_.history)
    assert model.result_.trace and model.result_.trace[0].n_examples == 0


def test_max_depth_below_minimum_is_infeasible():
    X, y = xor_data()
    with pytest.raises(InfeasibleError):
        OptimalTreeClassifier(max_depth=1).fit(X, y)


def test_time_limit_returns_best_tree_with_warning():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 8))
    y = rng.integers(0, 3, size=300)
    with pytest.warns(NotProvenWarning):
        model = OptimalTreeClassifier(time_limit=1.0).fit(X, y)
    assert not model.result_.proven_optimal
    assert model.result_.runtime < 1.0 + 2.0
    assert model.score(X, y) == 1.0  # still consistent: the greedy tree at worst


def test_bad_options_and_unfitted():
    X, y = xor_data()
    for options in (
        {"objective": "speed"},
        {"max_depth": -1},
        {"time_limit": 0},
        {"resolve": "vote"},
    ):
        with pytest.raises(SatdtError):
            OptimalTreeClassifier(**options).fit(X, y)
    with pytest.raises(NotFittedError):
        OptimalTreeClassifier().predict(X)
    with pytest.raises(ValueError, match="NaN"):
        OptimalTreeClassifier(missing="error").fit(np.array([[np.nan], [1.0]]), [0, 1])
    with pytest.raises(SatdtError, match="missing must be"):
        OptimalTreeClassifier(missing="impute").fit(X, y)


def test_deterministic():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 4, size=(80, 5)).astype(float)
    y = (X[:, 0] + X[:, 1] > 3).astype(int) + (X[:, 2] > 2)
    first = OptimalTreeClassifier().fit(X, y).tree_
    assert OptimalTreeClassifier().fit(X, y).tree_ == first


def test_sat_path_imports_no_numba():
    code = (
        "import sys, numpy as np; from satdt import OptimalTreeClassifier as T; "
        "T().fit(np.array([[0.],[1.]]), [0, 1]); print('numba' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _expected_failures(estimator: OptimalTreeClassifier) -> dict[str, str]:
    """scikit-learn checks that ask for something other than these objectives' optimum."""
    if isinstance(estimator, satdt.OptimalDiagramClassifier):
        why = (
            "the check expects class 0 (weighted 10^7 times the others) predicted on 87 % of "
            "the test rows; objective (18) gives the other classes the regions holding no "
            "class-0 row, as the trees' fewest weighted errors do"
        )
    elif estimator.objective != "error":
        why = (
            "a consistent tree classifies every training row correctly whatever the class "
            "weights (they matter to objective='error')"
        )
    elif estimator.leaf_penalty == 0:
        why = (
            "the check expects class 0 (weighted 10^7 times the others) predicted on 87 % of "
            "the test rows; the fewest weighted errors still give the other classes the "
            "regions holding no class-0 row, which only a leaf penalty (or CART's "
            "min_weight_fraction_leaf, which the check sets) smooths away"
        )
    else:
        return {}
    return {"check_class_weight_classifiers": why}


def _estimator_checks():
    pytest.importorskip("sklearn")
    from sklearn.utils.estimator_checks import parametrize_with_checks

    return parametrize_with_checks(
        [
            OptimalTreeClassifier(resolve="majority", max_thresholds=8, time_limit=10),
            OptimalTreeClassifier(objective="error", max_depth=2, max_thresholds=8),
            OptimalTreeClassifier(
                objective="error",
                max_depth=2,
                max_thresholds=8,
                leaf_penalty=0.01,
                class_weight="balanced",
            ),
        ],
        expected_failed_checks=_expected_failures,
    )


def _diagram_checks():
    pytest.importorskip("sklearn")
    pytest.importorskip("highspy")
    from sklearn.utils.estimator_checks import parametrize_with_checks

    return parametrize_with_checks(
        [
            satdt.OptimalDiagramClassifier(widths=(1, 2), time_limit=2),
            satdt.OptimalDiagramClassifier(
                widths=(1, 2), time_limit=2, method="milp", milp_solver="highs"
            ),
        ],
        expected_failed_checks=_expected_failures,
    )


def _checks_or_skip(make_checks, marks=()):
    """scikit-learn's estimator checks as a test, or a skipped test when a package is missing."""
    try:
        checks = make_checks()
    except BaseException:  # scikit-learn (or HiGHS) is not installed
        return pytest.mark.skip(reason="scikit-learn or highspy is not installed")(lambda: None)

    @checks
    def test(estimator, check):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotProvenWarning)
            check(estimator)

    for mark in marks:
        test = mark(test)
    return test


test_scikit_learn_compatible = _checks_or_skip(_estimator_checks)
# about two minutes: every check solves MILPs and MaxSAT formulas
test_scikit_learn_compatible_diagrams = _checks_or_skip(_diagram_checks, [pytest.mark.slow])


def test_error_objective_through_the_facade():
    rng = np.random.default_rng(8)
    X = rng.integers(0, 2, size=(40, 4)).astype(float)
    y = (X[:, 0].astype(int) ^ X[:, 1].astype(int)) | (rng.random(40) < 0.1)
    weights = rng.integers(1, 3, size=40)
    model = OptimalTreeClassifier(objective="error", max_depth=2).fit(X, y, sample_weight=weights)
    expected = min_error(X.astype(np.uint8), y, weights.astype(float), 2, 2)
    assert model.result_.objective_value == expected and model.result_.proven_optimal
    assert float(weights[model.predict(X) != y].sum()) == expected
    assert model.tree_.simplify(X) == model.tree_  # every objective returns a simplified tree
    with pytest.raises(SatdtError, match="max_depth"):
        OptimalTreeClassifier(objective="error").fit(X, y)


def test_works_without_scikit_learn():
    code = (
        "import sys; sys.modules['sklearn'] = None; import numpy as np; "
        "from satdt import OptimalTreeClassifier as T; "
        "m = T().fit(np.array([[0.], [1.], [2.]]), ['a', 'b', 'a']); "
        "print(m.predict(np.array([[1.]]))[0], m.score(np.array([[0.]]), ['a']), m.get_params()['objective'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["b", "1.0", "depth"]


def test_n_jobs_is_checked_and_resolved_the_scikit_learn_way():
    import os

    from satdt.estimators.base import resolve_n_jobs

    cores = os.cpu_count() or 1
    assert resolve_n_jobs(None) == 1
    assert resolve_n_jobs(1) == 1
    assert resolve_n_jobs(-1) == cores
    assert resolve_n_jobs(10**6) == cores
    assert resolve_n_jobs(-(10**6)) == 1
    X, y = np.array([[0.0], [1.0]]), np.array([0, 1])
    for bad in (0, 1.5, "two", True):
        with pytest.raises(SatdtError, match="n_jobs"):
            OptimalTreeClassifier(n_jobs=bad).fit(X, y)


def test_n_jobs_2_gives_the_same_minimum_depth_and_size():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 4, size=(60, 4)).astype(float)
    y = ((X[:, 0] > 1) ^ (X[:, 1] > 2) ^ (X[:, 2] > 0)).astype(int)
    for objective in ("depth", "size"):
        one = OptimalTreeClassifier(objective=objective, method="sat").fit(X, y)
        for solver in ("glucose4", "race"):
            two = OptimalTreeClassifier(
                objective=objective, method="sat", solver=solver, n_jobs=2
            ).fit(X, y)
            assert two.result_.proven_optimal
            assert two.result_.objective_value == one.result_.objective_value
            assert (two.predict(X) == y).all()


@pytest.mark.parametrize(
    "make",
    [
        lambda: OptimalTreeClassifier(objective="nope"),
        lambda: OptimalTreeClassifier(objective="error"),  # no max_depth
        lambda: OptimalTreeClassifier(time_limit=-1),
        lambda: OptimalTreeClassifier(objective="error", max_depth=2, leaf_penalty="x"),
        lambda: OptimalTreeClassifier(n_jobs=0),
        lambda: satdt.OptimalDiagramClassifier(alpha=-1),
        lambda: satdt.OptimalDiagramClassifier(method="nope"),
    ],
)
def test_a_bad_parameter_is_a_value_error_and_a_type_error_as_in_sklearn(make):
    X, y = np.array([[0.0], [1.0]]), np.array([0, 1])
    with pytest.raises(satdt.ParameterError) as caught:
        make().fit(X, y)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, TypeError)
    assert isinstance(caught.value, satdt.SatdtError)


def test_sklearn_sees_a_classifier_on_every_version():
    base = pytest.importorskip("sklearn.base")
    assert base.is_classifier(OptimalTreeClassifier())
    assert base.is_classifier(satdt.OptimalDiagramClassifier())
    assert OptimalTreeClassifier._estimator_type == "classifier"  # what sklearn < 1.6 reads


def test_a_subclass_keeps_its_own_init_and_its_parameters():
    class Shallow(OptimalTreeClassifier):
        def __init__(self, depth_cap=2, **params):
            super().__init__(**params)
            self.depth_cap = depth_cap

        def fit(self, X, y, sample_weight=None):
            self.max_depth = self.depth_cap
            return super().fit(X, y, sample_weight)

    model = Shallow(depth_cap=3, time_limit=5)
    assert model.depth_cap == 3 and model.time_limit == 5
    assert model.get_params()["depth_cap"] == 3
    assert model.set_params(depth_cap=1).depth_cap == 1


def test_the_names_users_meet_are_public():
    for name in ("Dataset", "NotProvenWarning", "DataError", "InfeasibleError", "ParameterError"):
        assert name in satdt.__all__ and getattr(satdt, name).__module__.startswith("satdt.")
