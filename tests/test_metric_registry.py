"""One metric registry end to end: a metric declares its score keys and their directions, and
evaluation, comparison, validation, checkpoint selection and plots take any registered one,
a user's own from a plug-in file included."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

from synthetic import tiny_config, write_corpus
from wean.cli import main
from wean.config import config_from_dict
from wean.errors import WeanError
from wean.evaluation import EvaluationSettings, evaluate, metric, score_key
from wean.training import Trainer

PLUGIN = textwrap.dedent('''
    """How far each output's length is from its first reference's, in tokens: lower is better."""
    from wean.evaluation import metric


    @metric("length-error", {"length_error": "lower"}, needs_references=True)
    def length_error(inputs):
        gaps = [abs(len(o.split()) - len(r.split())) for o, r in zip(inputs.outputs, inputs.reference_streams[0])]
        return {"length_error": sum(gaps) / len(gaps)}
''')


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):  # one file: a name is registered once per process
    path = tmp_path_factory.mktemp("plugin") / "length_error.py"
    path.write_text(PLUGIN, encoding="utf-8")
    return path


def test_score_keys_name_their_metric_and_direction():
    assert score_key("sari") == ("sari", "higher")
    assert score_key("rouge2") == ("rouge", "higher")
    assert score_key("invented_names") == ("fidelity", "lower")
    assert score_key("copied") == ("fidelity", None)
    assert score_key("loss") == (None, "lower")
    with pytest.raises(WeanError, match="no registered metric reports 'sarii'; did you mean 'sari'"):
        score_key("sarii")


@pytest.mark.parametrize("keys, options, message", [
    ({"sideways": "up"}, {}, "choose higher, lower or None"),
    ({"sari": "higher"}, {}, "score key 'sari' is another's already"),
    ({"loss": "lower"}, {}, "score key 'loss' is another's already"),
    ({"x": "lower"}, {"yardstick": True, "needs_references": True}, "cannot need them"),
    ({"x": "lower"}, {"statistics": len}, "statistics and from_statistics come together"),
])
def test_a_metric_is_refused_at_registration_when_it_cannot_work(keys, options, message):
    with pytest.raises(WeanError, match=message):
        metric("refused", keys, **options)(lambda inputs: {})


@pytest.mark.parametrize("case, returned, message", [
    (1, {"undeclared": 1.0}, "reported 'undeclared', which it does not declare"),
    (2, {"odd_2": float("nan")}, "odd_2 is nan, not a finite number"),
    (3, {"odd_3": "high"}, "odd_3 is 'high', not a number"),
    (4, [1.0], "returned list, not a dict of scores"),
])
def test_a_plug_ins_scores_are_checked(case, returned, message):
    name, key = f"odd-{case}", f"odd_{case}"
    given = {"value": returned}

    @metric(name, {key: "higher"})
    def odd(inputs):
        return given["value"]

    with pytest.raises(WeanError, match=message):
        evaluate(["a"], None, [["a"]], EvaluationSettings((name,)))
    given["value"] = {key: np.float32(0.5)}  # numpy numbers are numbers
    scores = evaluate(["a"], None, [["a"]], EvaluationSettings((name,)))
    assert scores.scores == {key: 0.5} and json.dumps(scores.to_dict())
    metric(name, {key: "higher"})(odd)  # the same function again: nothing happens
    with pytest.raises(WeanError, match=f"metric {name!r} is registered already"):
        metric(name, {key: "higher"})(lambda inputs: {key: 1.0})  # another function under its name


def test_a_metric_may_return_a_plain_dict_and_gets_a_signature(plugin, capsys, tmp_path):
    hyp, ref = tmp_path / "hyp", tmp_path / "ref"
    hyp.write_text("a b c\nd\n", encoding="utf-8")
    ref.write_text("a b\nd e f\n", encoding="utf-8")
    assert main(["evaluate", "--hyp", str(hyp), "--refs", str(ref), "--plugins", str(plugin),
                 "--metrics", "length-error,bleu", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["scores"]["length_error"] == 1.5
    assert record["signatures"]["length-error"]["library"].startswith("wean_plugin_length_error")


def test_an_unknown_or_undirected_selection_metric_is_one_line(tmp_path):
    data = write_corpus(tmp_path / "data", train=50, valid=10)
    with pytest.raises(WeanError, match="training.selection_metric: 'copied' is neither better high nor low"):
        tiny_config(data, tmp_path / "model", selection_metric="copied")
    with pytest.raises(WeanError, match="training.validation_metrics is 'fidelty'; choose one of"):
        tiny_config(data, tmp_path / "model", validation_metrics=["fidelty"])


def test_a_checkpoint_is_selected_on_a_plug_in_metric_in_its_own_direction(tmp_path, plugin):
    data = write_corpus(tmp_path / "data", train=600, valid=40)
    values = tiny_config(data, tmp_path / "model", selection_metric="length_error", max_epochs=3,
                         validate_every=6, early_stopping_patience=0, validation_metrics=["fidelity"]).to_dict()
    values["plugins"] = [str(plugin)]
    config = config_from_dict(values)
    state = Trainer(config).train()

    validations = json.loads((tmp_path / "model" / "validations.json").read_text())
    errors = [record["length_error"] for record in validations]
    assert len(errors) >= 5 and len(set(errors)) > 1  # the selection had something to choose
    best = json.loads((tmp_path / "model" / "best.json").read_text())
    # the first validation with the lowest error: lower is better, ties keep the earlier one
    assert best["updates"] == validations[errors.index(min(errors))]["updates"]
    assert [entry[0] for entry in state.best] == sorted(errors)
    assert "invented_names" in validations[-1] and "sari" in validations[-1]  # validation_metrics too

    # the same key can be plotted, and the validation log names it
    out = tmp_path / "curve.png"
    assert main(["plot", str(tmp_path / "model"), "--metric", "length_error", "--out", str(out)]) == 0
    assert out.stat().st_size > 0
    assert "length_error" in (tmp_path / "model" / "train.log").read_text()
