"""train's and cv's answer to another library's keywords.

XGBoost's train and cv, and LightGBM's before 4.0, took keywords that gbmo
(as LightGBM 4) spells otherwise: mostly callbacks. A user who types them
gets the gbmo way named rather than Python's bare "unexpected keyword".
"""
_EQUIVALENTS = {
    "evals": "valid_sets=[Dataset, ...] with valid_names=[name, ...] (XGBoost's "
             "evals=[(dmatrix, name)])",
    "early_stopping_rounds": "callbacks=[gbmo.early_stopping(rounds)], or "
                             "params['early_stopping_round']",
    "evals_result": "callbacks=[gbmo.record_evaluation(a_dict)]; the booster also keeps it "
                    "as booster.evals_result",
    "verbose_eval": "callbacks=[gbmo.log_evaluation(period)]",
    "obj": "params['objective'] = the function (y_true, raw_pred) -> (grad, hess)",
    "fobj": "params['objective'] = the function (y_true, raw_pred) -> (grad, hess)",
    "custom_metric": "feval=the function (preds, eval_data) -> (name, value, "
                     "is_higher_better)",
    "maximize": "a feval's own is_higher_better (its result's third item)",
    "xgb_model": "init_model=a Booster or a model file's path",
    "learning_rates": "callbacks=[gbmo.reset_parameter(learning_rate=a list or a function "
                      "of the round)]",
    "categorical_feature": "Dataset(X, y, categorical_feature=...)",
    "feature_name": "Dataset(X, y, feature_name=...)",
    "as_pandas": "pandas.DataFrame(gbmo.cv(...)) (cv returns a dict of lists)",
    "show_stdv": "callbacks=[gbmo.log_evaluation(period, show_stdv=True)]",
}


# fit and predict (the estimators', the Booster's predict): XGBoost's keywords
METHOD_EQUIVALENTS = {
    "early_stopping_rounds": "it to the estimator's constructor (early_stopping_rounds=...), "
                             "as XGBoost 2's estimators take it",
    "feature_weights": "colsample_bytree or colsample_bynode instead: gbmo draws features "
                       "uniformly, without weights",
    "base_margin": "predict(X, output_margin=True) + base_margin, then the objective's link "
                   "(fit and Dataset take base_margin, as init_score)",
    "pred_contribs": "pred_contrib=True, whose array for several outputs is (n, features + 1, "
                     "outputs): XGBoost's (n, outputs, features + 1) is its .transpose(0, 2, 1)",
    "approx_contribs": "pred_contrib=True: gbmo's SHAP values are always exact (TreeSHAP)",
    "pred_interactions": "pred_contrib=True: gbmo computes SHAP values, not their pairwise "
                         "interactions",
    # CatBoost's
    "cat_features": "cat_features to the constructor (or fit(categorical_feature=...))",
    "use_best_model": "nothing: after early stopping the estimators predict with the best "
                      "round already",
    "prediction_type": "predict_proba(X) for 'Probability', predict(X) for 'Class', "
                       "predict(X, raw_score=True) for 'RawFormulaVal'",
}


# Dataset: XGBoost's DMatrix keywords gbmo spells otherwise or has not
DATASET_EQUIVALENTS = {
    "feature_types": "categorical_feature=[...] (the categorical features' indices or names), "
                     "or a DataFrame's category columns",
    "nthread": "the threads to train (params={'n_threads': ...})",
    "silent": "params={'verbosity': -1}",
}


def refuse_foreign_keywords(function, keywords, equivalents=_EQUIVALENTS):
    """Raises a TypeError for keywords (a dict) that `function` (its name)
    does not take, naming gbmo's way (from equivalents) for those another
    library takes."""
    if keywords:
        raise TypeError(f"{function}() " + "; ".join(
            f"takes no {key!r}: give {equivalents[key]}" if key in equivalents
            else f"got an unexpected keyword argument {key!r}" for key in keywords))
