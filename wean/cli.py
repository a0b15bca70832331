"""The ``wean`` command. Each subcommand is a thin layer over the library function of the same
name; a :class:`~wean.errors.WeanError` becomes one line on stderr and exit status 1."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from wean.checkpoint import atomic_write_text
from wean.config import DEVICES
from wean.errors import WeanError
from wean.evaluation import BENCHMARKS, METRICS, EvaluationSettings, data_root, evaluate_files, get_benchmark
from wean.evaluation.normalize import TOKENIZERS
from wean.evaluation.sari import VARIANTS, sentence_sari
from wean.textio import check_same_length, read_lines


def _add_evaluate(subparsers) -> None:
    parser = subparsers.add_parser(
        "evaluate",
        help="score system outputs (SARI, BLEU, ROUGE, FKGL, statistics)",
        description="Score a file of system outputs against a source and references, or against a "
        "named benchmark. Every score is printed with the signature of the settings it used.",
    )
    parser.add_argument("--hyp", type=Path, help="system outputs, one line per source line")
    _add_scoring_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON record instead of a table")
    parser.add_argument("--sentence-sari", type=Path, metavar="FILE",
                        help="also write the SARI of every sentence to FILE (tab-separated: sari add keep del)")
    parser.add_argument("--list-benchmarks", action="store_true", help="list the named benchmarks and exit")
    parser.set_defaults(run=_run_evaluate)


def _add_scoring_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--src", type=Path, help="source (complex) sentences; needed for SARI and statistics")
    parser.add_argument("--refs", type=Path, nargs="+", default=[], help="reference files, one line per source line")
    parser.add_argument("--benchmark", help="take source and references from a named benchmark (see --list-benchmarks)")
    parser.add_argument("--data-root", type=Path, help="folder the benchmark paths are relative to "
                        "(default: $WEAN_DATA_ROOT, else ../shared/data)")
    parser.add_argument("--metrics", help=f"comma-separated, from {','.join(METRICS)} "
                        "(default: the benchmark's, else sari,bleu,fkgl,stats)")
    parser.add_argument("--sari-variant", choices=VARIANTS, default="default",
                        help="default: EASSE corpus SARI; legacy: EASSE legacy=True; del-precision: deletion "
                        "scored by precision; xu2016: the original sentence-averaged SARIsent")
    parser.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=None,
                        help="lowercase before scoring (default: yes, or the benchmark's convention)")
    parser.add_argument("--tokenize", choices=TOKENIZERS, default=None,
                        help="13a (sacrebleu), none (already tokenized) or char (Chinese) "
                        "(default: 13a, or the benchmark's convention)")


def _list_benchmarks() -> str:
    lines = []
    for benchmark in BENCHMARKS.values():
        lines.append(f"{benchmark.name}: {benchmark.note}")
        lines.append(f"    outputs must be: {benchmark.output_convention}")
        lines.append(
            f"    default scoring: metrics {','.join(benchmark.metrics)}; "
            f"{'lowercased' if benchmark.lowercase else 'cased'}; tokenizer {benchmark.tokenizer}"
        )
    return "\n".join(lines)


def _scoring_inputs(args: argparse.Namespace, default_metrics: tuple[str, ...] | None = None):
    """(benchmark or None, source, references, settings) from --benchmark or --src/--refs and the
    casing, tokenizer and metric options; a benchmark brings its own conventions."""
    benchmark = None
    source, references = args.src, list(args.refs)
    metrics = ("sari", "bleu", "fkgl", "stats") if source is not None else ("bleu", "fkgl")
    lowercase, tokenizer = True, "13a"
    if args.benchmark:
        if source is not None or references:
            raise WeanError("give either --benchmark or --src/--refs, not both")
        benchmark = get_benchmark(args.benchmark)
        source, references = benchmark.paths(data_root(args.data_root))
        metrics, lowercase, tokenizer = benchmark.metrics, benchmark.lowercase, benchmark.tokenizer
    elif not references:
        raise WeanError("no references: give --refs FILE [FILE ...] or --benchmark NAME")
    if default_metrics is not None:
        metrics = tuple(m for m in metrics if m in default_metrics) or default_metrics
    if args.metrics:
        metrics = tuple(m.strip() for m in args.metrics.split(",") if m.strip())
    settings = EvaluationSettings(
        metrics=metrics,
        sari_variant=args.sari_variant,
        lowercase=lowercase if args.lowercase is None else args.lowercase,
        tokenizer=tokenizer if args.tokenize is None else args.tokenize,
    )
    return benchmark, source, references, settings


def _add_compare(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="paired bootstrap test of two systems' outputs (SARI, BLEU, ROUGE)",
        description="Is system A better than system B on this test set beyond what resampling its "
        "sentences explains? Prints each score, the difference A - B with its 95 %% bootstrap interval "
        "and the p-value of the paired bootstrap test (Koehn 2004, as sacreBLEU's --paired-bs).",
    )
    parser.add_argument("--hyp", type=Path, nargs=2, required=True, metavar=("A", "B"), help="two output files")
    _add_scoring_options(parser)
    parser.add_argument("--samples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the resampling (default 1)")
    parser.add_argument("--json", action="store_true", help="print JSON records instead of a table")
    parser.set_defaults(run=_run_compare)


def _run_compare(args: argparse.Namespace) -> int:
    from wean.evaluation.significance import PAIRED_METRICS, paired_bootstrap

    benchmark, source, references, settings = _scoring_inputs(args, default_metrics=PAIRED_METRICS)
    unknown = [m for m in settings.metrics if m not in PAIRED_METRICS]
    if unknown:
        raise WeanError(f"no paired test for metric {unknown[0]!r}; choose from {', '.join(PAIRED_METRICS)}")
    source_lines = read_lines(source) if source is not None else None
    reference_streams = [read_lines(path) for path in references]
    outputs = [read_lines(path) for path in args.hyp]
    for path, lines in zip(args.hyp, outputs):
        if not lines:
            raise WeanError(f"{path}: empty file, no outputs to compare")
    named = [(Path(source), source_lines)] if source is not None else []
    named += list(zip(map(Path, references), reference_streams)) + list(zip(args.hyp, outputs))
    check_same_length(named)
    results = paired_bootstrap(
        outputs[0], outputs[1], source_lines, reference_streams, settings.metrics, settings.sari_variant,
        settings.lowercase, settings.tokenizer, args.samples, args.seed,
    )
    if args.json:
        record = {"a": str(args.hyp[0]), "b": str(args.hyp[1]), "benchmark": benchmark.name if benchmark else None,
                  "comparisons": [result.as_dict() for result in results]}
        print(json.dumps(record, indent=2))
        return 0
    print(f"A = {args.hyp[0]}\nB = {args.hyp[1]}\n{args.samples} paired bootstrap resamples of "
          f"{len(outputs[0])} sentences")
    print(f"{'metric':<10}  {'A':>7}  {'B':>7}  {'A - B':>7}  {'95 % interval':>17}  {'p':>6}")
    for r in results:
        interval = f"[{r.low:+.2f}, {r.high:+.2f}]"
        print(f"{r.metric:<10}  {r.score_a:7.2f}  {r.score_b:7.2f}  {r.difference:+7.2f}  {interval:>17}  {r.p_value:6.3f}")
    return 0


def _run_evaluate(args: argparse.Namespace) -> int:
    if args.list_benchmarks:
        print(_list_benchmarks())
        return 0
    if args.hyp is None:
        raise WeanError("--hyp FILE is required (or --list-benchmarks)")
    benchmark, source, references, settings = _scoring_inputs(args)
    evaluation = evaluate_files(args.hyp, source, references, settings, benchmark)
    if args.sentence_sari:
        _write_sentence_sari(args.sentence_sari, args.hyp, source, references, settings)
    if args.json:
        print(json.dumps(evaluation.to_dict(), indent=2, ensure_ascii=False))
    else:
        against = benchmark.name if benchmark else ", ".join(str(p) for p in references)
        print(f"{args.hyp}: {evaluation.segments} segments against {against} ({evaluation.references} references)")
        print(evaluation.table())
    return 0


def _write_sentence_sari(path: Path, hyp: Path, source: Path | None, references, settings) -> None:
    if source is None:
        raise WeanError("--sentence-sari needs a source (--src or --benchmark)")
    outputs, sources = read_lines(hyp), read_lines(source)
    streams = [read_lines(p) for p in references]
    with open(path, "w", encoding="utf-8") as out:
        for i, (src, output) in enumerate(zip(sources, outputs)):
            scores = sentence_sari(
                src, output, [s[i] for s in streams], settings.sari_variant, settings.lowercase, settings.tokenizer
            )
            out.write(f"{scores.sari:.4f}\t{scores.add:.4f}\t{scores.keep:.4f}\t{scores.delete:.4f}\n")


def _add_train(subparsers) -> None:
    parser = subparsers.add_parser("train", help="train a model from a YAML config",
                                   description="Train a model; checkpoints, logs and the selected model "
                                   "go to the config's model_dir.")
    parser.add_argument("config", type=Path, help="YAML config (see configs/)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config key, e.g. --set training.max_epochs=3 (repeatable)")
    parser.add_argument("--resume", action="store_true", help="continue the run in model_dir exactly")
    parser.set_defaults(run=_run_train)


def _run_train(args: argparse.Namespace) -> int:
    from wean.config import load_config
    from wean.training import Trainer

    config = load_config(args.config, args.overrides)
    state = Trainer(config, resume=args.resume).train()
    best = state.best[0] if state.best else None
    if best:
        print(f"{config.model_dir}: best {config.training.selection_metric} {best[0]:.4f} at update {best[1]}")
    return 0


def _add_generation_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--beam", type=int, help="beam width; 1 is greedy (default: the model's config)")
    parser.add_argument("--length-penalty", type=float, help="alpha in score / length**alpha; 0 ranks by log-probability")
    parser.add_argument("--min-length", type=int)
    parser.add_argument("--max-length", type=int)
    parser.add_argument("--block-ngram-repeat", type=int, metavar="N", help="never repeat an N-gram (0: off)")
    parser.add_argument("--no-replace-unk", dest="replace_unk", action="store_false", default=None,
                        help="keep <unk> instead of copying the most-attended source token")
    parser.add_argument("--batch-size", type=int)
    parser.add_argument("--scores", action="store_true", help="prefix every output with its score and a tab")
    _add_control_option(parser)
    _add_device_option(parser)


def _add_control_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--control", metavar="NAME=VALUE,...",
                        help="for a model trained with control tokens: the values asked for, e.g. "
                        "chars_ratio=0.8,levenshtein=0.6,word_rank=0.8 (lower: shorter, more changed, simpler "
                        "words; 1: like the source). Names not given take the model's tuned defaults")


def _control(args: argparse.Namespace) -> dict[str, float] | None:
    from wean.data.control import parse_control

    return parse_control(args.control) if getattr(args, "control", None) else None


def _add_device_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", choices=DEVICES, default="auto",
                        help="where the model runs; auto: the GPU if PyTorch sees one (default)")


def _add_generate(subparsers) -> None:
    parser = subparsers.add_parser("generate", help="generate outputs with a trained model",
                                   description="Read one input per line (a file or stdin), write one output "
                                   "per line in the same order (a file or stdout).")
    parser.add_argument("--model", type=Path, required=True, help="model directory written by wean train")
    parser.add_argument("--input", type=Path, help="input file (default: stdin)")
    parser.add_argument("--output", type=Path, help="output file (default: stdout)")
    _add_generation_options(parser)
    parser.add_argument("--plain-text", action=argparse.BooleanOptionalAction, default=None,
                        help="inputs are untokenized text and outputs are text for people "
                        "(default: the model's generation.plain_text)")
    parser.add_argument("--detokenize", choices=("none", "ptb"), default="none",
                        help="ptb: undo PTB tokenization (-LRB-, ``, do n't) in the outputs")
    parser.set_defaults(run=_run_generate)


def _add_simplify(subparsers) -> None:
    parser = subparsers.add_parser("simplify", help="simplify plain English with the shipped model (or --model)",
                                   description="Simplify the sentences given as arguments, or one per line "
                                   "of stdin. Plain untokenized text goes in and comes out.")
    parser.add_argument("text", nargs="*", help="sentences to simplify (default: read stdin)")
    parser.add_argument("--model", type=Path, help="model directory (default: the pretrained simplifier)")
    _add_generation_options(parser)
    parser.set_defaults(run=_run_generate, input=None, output=None, plain_text=True, detokenize="none")


def _add_serve(subparsers) -> None:
    from dataclasses import fields

    from wean.server.limits import Limits

    parser = subparsers.add_parser("serve", help="serve a model over HTTP, with a web page at /",
                                   description="POST /v1/generate, GET /health, OpenAPI docs at /docs and "
                                   "a page at / to try the model. Concurrent requests share batches.")
    parser.add_argument("--model", type=Path, help="model directory (default: the pretrained simplifier)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    for limit in fields(Limits):
        parser.add_argument(f"--{limit.name.replace('_', '-')}", type=type(limit.default), default=limit.default,
                            metavar="N", help=f"{limit.metadata['help']} (default: {limit.default})")
    _add_device_option(parser)
    parser.set_defaults(run=_run_serve)


def _run_serve(args: argparse.Namespace) -> int:
    from dataclasses import fields

    from wean.generator import load
    from wean.server.app import serve
    from wean.server.limits import Limits

    limits = Limits(**{f.name: getattr(args, f.name) for f in fields(Limits)})
    for name, value in vars(limits).items():
        if value <= 0:
            raise WeanError(f"--{name.replace('_', '-')} must be positive")
    serve(load(args.model, args.device), args.host, args.port, limits)
    return 0


def _run_generate(args: argparse.Namespace) -> int:
    from wean.generator import load

    for name in ("beam", "max_length", "batch_size"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise WeanError(f"--{name.replace('_', '-')} must be at least 1")
    generator = load(args.model, args.device)  # before reading input: a bad model fails at once
    control = _control(args)
    generator.control_prefix(control)  # a wrong name or value fails before any input is read
    if getattr(args, "text", None):
        sources = [" ".join(text.split()) for text in args.text]
    else:
        sources = read_lines(args.input) if args.input is not None else _read_stdin()
    for number, line in enumerate(sources, start=1):
        if not line:
            print(f"warning: {args.input or 'stdin'}:{number}: empty input, empty output", file=sys.stderr)
    generations = generator.generate(
        sources, beam=args.beam, length_penalty=args.length_penalty, min_length=args.min_length,
        max_length=args.max_length, block_ngram_repeat=args.block_ngram_repeat,
        replace_unk=args.replace_unk, batch_size=args.batch_size, plain_text=args.plain_text, control=control,
    )
    from wean.data.ptb import detokenize

    for number, generation in enumerate(generations, start=1):
        if generation.warning:
            print(f"warning: {args.input or 'input'}:{number}: {generation.warning}", file=sys.stderr)
    texts = [detokenize(g.text, args.detokenize) for g in generations]
    text = "".join((f"{g.score:.4f}\t{t}" if args.scores else t) + "\n" for g, t in zip(generations, texts))
    if args.output is not None:
        atomic_write_text(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def _read_stdin() -> list[str]:
    data = sys.stdin.buffer.read()
    try:
        lines = data.decode("utf-8").split("\n")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise WeanError(f"stdin:{line}: not valid UTF-8") from None
    if lines[-1] == "":
        lines.pop()
    return [line.strip() for line in lines]


def _add_test(subparsers) -> None:
    parser = subparsers.add_parser("test", help="generate for named benchmarks and score the outputs",
                                   description="For each benchmark: generate for its source, write "
                                   "OUT_DIR/SYSTEM.BENCHMARK.txt, score it with the benchmark's conventions "
                                   "and gather the scores in OUT_DIR/metrics.json.")
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--benchmark", nargs="+", required=True, help="names from wean evaluate --list-benchmarks")
    parser.add_argument("--system", help="name of the system in file names (default: the model directory's name)")
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--data-root", type=Path)
    parser.add_argument("--beam", type=int)
    parser.add_argument("--length-penalty", type=float)
    parser.add_argument("--max-length", type=int)
    parser.add_argument("--detokenize", choices=("none", "ptb"), default="none",
                        help="ptb: undo PTB tokenization, for benchmarks with detokenized references")
    parser.add_argument("--plain-text", action="store_true",
                        help="the benchmark's source is plain text: tokenize it as the model's corpus was, "
                        "and detokenize the outputs (for turkcorpus-test with a PTB-trained model)")
    _add_control_option(parser)
    _add_device_option(parser)
    parser.set_defaults(run=_run_test)


def _run_test(args: argparse.Namespace) -> int:
    from wean.generator import load
    from wean.scoring import score_on_benchmarks

    for name in args.benchmark:
        get_benchmark(name)  # fail on a typo before loading anything
    system = args.system or args.model.resolve().name
    generator = load(args.model, args.device)
    control = _control(args)
    generator.control_prefix(control)
    records = score_on_benchmarks(
        generator, args.benchmark, system, args.out_dir, args.data_root, args.detokenize,
        plain_text=args.plain_text, beam=args.beam, length_penalty=args.length_penalty, max_length=args.max_length,
        control=control,
    )
    for name, record in records.items():
        scores = ", ".join(f"{k} {v:.2f}" for k, v in record["scores"].items()
                           if k in ("sari", "bleu", "multi_bleu", "fkgl", "rouge1", "rouge2", "rougeL"))
        print(f"{system} on {name}: {scores}")
    return 0


def _add_tune_control(subparsers) -> None:
    parser = subparsers.add_parser(
        "tune-control", help="choose a controllable model's default control values on validation data",
        description="Coordinate ascent over the control values for the SARI of a sample of a validation "
        "benchmark, counting only settings whose BLEU reaches --min-bleu. The chosen values become the "
        "model's generation.control; the search is written to MODEL/control-tuning.json.",
    )
    parser.add_argument("--model", type=Path, required=True, help="model directory trained with data.control")
    parser.add_argument("--benchmark", default="turkcorpus-tune", help="a validation benchmark (default: turkcorpus-tune)")
    parser.add_argument("--sentences", type=int, default=300, help="sentences sampled for the search (default 300)")
    parser.add_argument("--skip", type=int, default=500,
                        help="leave out the first N sentences, e.g. those that selected the checkpoint (default 500)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the sample (default 1)")
    parser.add_argument("--min-bleu", type=float, default=60.0,
                        help="settings below this BLEU do not count: they ignore the source (default 60)")
    parser.add_argument("--rounds", type=int, default=2, help="passes over the attributes (default 2)")
    parser.add_argument("--beam", type=int, help="beam width (default: the model's)")
    parser.add_argument("--plain-text", action=argparse.BooleanOptionalAction, default=None,
                        help="the benchmark's source is plain text (default: the model's generation.plain_text)")
    parser.add_argument("--data-root", type=Path)
    _add_device_option(parser)
    parser.set_defaults(run=_run_tune_control)


def _run_tune_control(args: argparse.Namespace) -> int:
    from wean.generator import load
    from wean.tune_control import tune_control

    for name in ("sentences", "rounds", "beam"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise WeanError(f"--{name} must be at least 1")
    if args.skip < 0:
        raise WeanError("--skip must be 0 or more")
    get_benchmark(args.benchmark)
    values = tune_control(
        load(args.model, args.device), args.model, args.benchmark, args.sentences, args.skip, args.seed,
        args.min_bleu, args.rounds, args.plain_text, args.data_root, beam=args.beam,
    )
    print(f"{args.model}: generation.control set to " + ",".join(f"{k}={v:.2f}" for k, v in values.items()))
    return 0


def _add_inspect(subparsers) -> None:
    parser = subparsers.add_parser("inspect", help="parameters per module of a model or config")
    parser.add_argument("target", type=Path, help="a model directory or a YAML config")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--source-vocabulary", type=int, help="vocabulary size to assume for a config "
                        "(default: data.tokenizer.vocab_size + 4 specials)")
    parser.add_argument("--target-vocabulary", type=int)
    parser.add_argument("--compare-output-layers", action="store_true",
                        help="also count the output-layer parameters of the linear layer and of each WEAN "
                        "score function at these sizes (the WEAN paper's Table 5)")
    parser.set_defaults(run=_run_inspect)


def _run_inspect(args: argparse.Namespace) -> int:
    from wean.inspect import inspect_target

    print(inspect_target(args.target, args.overrides, args.source_vocabulary, args.target_vocabulary,
                         args.compare_output_layers))
    return 0


def _labels(text: str | None, count: int, what: str) -> list[str] | None:
    """The comma-separated --labels, one per input, or None when not given."""
    if not text:
        return None
    labels = text.split(",")
    if len(labels) != count:
        raise WeanError(f"--labels has {len(labels)} names for {count} {what}")
    return labels


def _add_plot(subparsers) -> None:
    parser = subparsers.add_parser("plot", help="validation curves of training runs as a PNG")
    parser.add_argument("model_dirs", type=Path, nargs="+", help="model directories written by wean train")
    parser.add_argument("--metric", default="bleu", help="bleu, sari, rouge2, loss or perplexity (default: bleu)")
    parser.add_argument("--labels", help="comma-separated legend labels, one per model directory")
    parser.add_argument("--out", type=Path, required=True, help="PNG file to write")
    parser.set_defaults(run=_run_plot)


def _run_plot(args: argparse.Namespace) -> int:
    from wean.plotting import convergence, plot_curves, read_validations

    labels = _labels(args.labels, len(args.model_dirs), "model directories")
    plot_curves(args.model_dirs, args.metric, args.out, labels)
    print(f"wrote {args.out}")
    if args.metric in ("bleu", "sari", "rouge2"):
        for label, directory in zip(labels or [d.name for d in args.model_dirs], args.model_dirs):
            summary = convergence(read_validations(directory), args.metric)
            print(f"{label}: best {args.metric} {summary['best']:.2f} at epoch {summary['best_epoch']:.2f}; "
                  f"95% of it first at epoch {summary['epochs_to_95pct']:.2f}"
                  f"{' (still improving at the last validation: lower bounds)' if summary['still_improving'] else ''}")
    return 0


def _add_attention(subparsers) -> None:
    parser = subparsers.add_parser("attention", help="attention maps of one sentence pair as PNGs",
                                   description="Write attention.png (and, for word attention models, "
                                   "word_attention.png, gated_attention.png and gates.png) for a source and "
                                   "a target (teacher-forced) or the model's own greedy output.")
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--source", required=True, help="the input sentence")
    parser.add_argument("--target", help="the output to explain (default: the model's greedy output)")
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.set_defaults(run=_run_attention)


def _run_attention(args: argparse.Namespace) -> int:
    from wean.generator import load
    from wean.plotting import plot_attention_maps

    maps = load(args.model).attention_maps(args.source, args.target)
    for path in plot_attention_maps(maps, args.out_dir):
        print(f"wrote {path}")
    return 0


def _add_odd_generation(subparsers) -> None:
    parser = subparsers.add_parser("odd-gen", help="odd-generation counts of several systems, table and bar plot",
                                   description="Kiyono et al. (2018) section 6.1: per system, repeated tokens "
                                   "beyond the reference's and the length shortfall against the reference.")
    parser.add_argument("--hyp", type=Path, nargs="+", required=True, help="one output file per system")
    parser.add_argument("--labels", help="comma-separated system names (default: file names)")
    parser.add_argument("--benchmark", help="take the references from a named benchmark")
    parser.add_argument("--refs", type=Path, nargs="+", default=[])
    parser.add_argument("--data-root", type=Path)
    parser.add_argument("--tokenize", choices=TOKENIZERS, help="default: the benchmark's, else 13a")
    parser.add_argument("--out", type=Path, help="PNG with the paper's Figure 2")
    parser.set_defaults(run=_run_odd_generation)


def _run_odd_generation(args: argparse.Namespace) -> int:
    tokenizer, lowercase, references = "13a", True, list(args.refs)
    if args.benchmark:
        benchmark = get_benchmark(args.benchmark)
        _, references = benchmark.paths(data_root(args.data_root))
        tokenizer, lowercase = benchmark.tokenizer, benchmark.lowercase
    if not references:
        raise WeanError("no references: give --refs FILE [FILE ...] or --benchmark NAME")
    tokenizer = args.tokenize or tokenizer
    labels = _labels(args.labels, len(args.hyp), "output files") or [p.stem for p in args.hyp]
    settings = EvaluationSettings(metrics=("stats",), lowercase=lowercase, tokenizer=tokenizer)
    summaries = {}
    for label, path in zip(labels, args.hyp):
        scores = evaluate_files(path, None, references, settings).scores
        summaries[label] = scores
    keys = ("repeated_tokens", "outputs_with_repeats", "length_shortfall", "outputs_shorter_than_reference")
    print("system".ljust(20) + "".join(k.rjust(32) for k in keys))
    for label, scores in summaries.items():
        print(label.ljust(20) + "".join(f"{scores[k]:>32}" for k in keys))
    if args.out:
        from wean.plotting import plot_odd_generation

        plot_odd_generation(summaries, args.out)
        print(f"wrote {args.out}")
    return 0


def _add_prepare(subparsers) -> None:
    parser = subparsers.add_parser("prepare", help="build training splits from the benchmark data",
                                   description="gigaword: train10k + validation samples without duplicates "
                                   "and without test1951/valid1k sources; lcsts: PART III score < 3 for "
                                   "training, >= 3 for testing. See wean/data/prepare.py.")
    parser.add_argument("corpus", choices=("gigaword", "lcsts"))
    parser.add_argument("--out", type=Path, required=True, help="folder for <split>.src / <split>.dst")
    parser.add_argument("--data-root", type=Path)
    parser.set_defaults(run=_run_prepare)


def _run_prepare(args: argparse.Namespace) -> int:
    from wean.data.prepare import prepare

    counts = prepare(args.corpus, data_root(args.data_root), args.out)
    print(", ".join(f"{name} {count}" for name, count in counts.items()))
    return 0


def _add_export(subparsers) -> None:
    parser = subparsers.add_parser("export", help="a trained model as a directory to ship (fp16, no checkpoints)")
    parser.add_argument("model", type=Path, help="model directory written by wean train")
    parser.add_argument("out", type=Path, help="new model directory")
    parser.add_argument("--fp16", action="store_true", help="store the weights in half precision (half the size)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="generation.KEY=VALUE",
                        help="change a generation setting, e.g. generation.plain_text=true")
    parser.set_defaults(run=_run_export)


def _run_export(args: argparse.Namespace) -> int:
    from wean.export import export_model

    size = export_model(args.model, args.out, args.fp16, args.overrides)
    print(f"{args.out}: weights {size / 2**20:.1f} MiB")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wean", description="Simplification and headline generation toolkit.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_train(subparsers)
    _add_simplify(subparsers)
    _add_serve(subparsers)
    _add_generate(subparsers)
    _add_evaluate(subparsers)
    _add_compare(subparsers)
    _add_test(subparsers)
    _add_tune_control(subparsers)
    _add_inspect(subparsers)
    _add_plot(subparsers)
    _add_attention(subparsers)
    _add_prepare(subparsers)
    _add_odd_generation(subparsers)
    _add_export(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status = args.run(args)
        sys.stdout.flush()  # a closed pipe shows up here, inside the handler below, not at exit
        return status
    except WeanError as error:
        print(f"wean {args.command}: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `wean ... | head`: the reader left; stop quietly like other filters
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 141


if __name__ == "__main__":
    sys.exit(main())
