"""Options several subcommands share."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from wean.config import DEVICES, KERNELS, QUANTIZATIONS
from wean.control import parse_control
from wean.errors import WeanError
from wean.evaluation import METRICS, EvaluationSettings, data_root, get_benchmark
from wean.evaluation.evaluate import metric_list
from wean.evaluation.normalize import TOKENIZERS
from wean.evaluation.sari import VARIANTS
from wean.inference.rerank import resolve
from wean.registry import load_plugins
from wean.search_options import SearchOptions, check_batch_size, check_search_options, option_choices, option_kind


def add_scoring_options(parser: argparse.ArgumentParser, metric_names: tuple[str, ...] | None = None) -> None:
    parser.add_argument("--src", type=Path, help="source (complex) sentences; needed for SARI and statistics")
    parser.add_argument("--refs", type=Path, nargs="+", default=[], help="reference files, one line per source line")
    parser.add_argument("--benchmark", help="take source and references from a named benchmark (see --list-benchmarks)")
    add_data_root_option(parser)
    parser.add_argument("--metrics", help=f"comma-separated, from {','.join(metric_names or METRICS.names())} "
                        "(default: the benchmark's, else sari,bleu,fkgl,stats,fidelity); a list that starts with + "
                        "adds to the default")
    add_plugins_option(parser)
    parser.add_argument("--reverse-model", type=Path, metavar="DIR",
                        help="a model trained from simple to complex: adds the metric reverse, log P(source | "
                        "output) per source token")
    parser.add_argument("--plain-text", action=argparse.BooleanOptionalAction, default=None,
                        help="the scored text is plain (--plain-text) or tokenized as the training corpora "
                        "(--no-plain-text), as --reverse-model must read it (default: as the benchmark writes "
                        "it; files: as the reverse model's generation.plain_text says)")
    parser.add_argument("--sari-variant", choices=VARIANTS, default="default",
                        help="default: EASSE corpus SARI; legacy: EASSE legacy=True; del-precision: deletion "
                        "scored by precision; xu2016: the original sentence-averaged SARIsent")
    parser.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=None,
                        help="lowercase before scoring (default: yes, or the benchmark's convention)")
    parser.add_argument("--tokenize", choices=TOKENIZERS, default=None,
                        help="13a (sacrebleu), none (already tokenized) or char (Chinese) "
                        "(default: 13a, or the benchmark's convention)")


def add_plugins_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plugins", nargs="+", default=[], metavar="FILE",
                        help="Python files of your own (components, metrics, search strategies, reranking "
                        "scorers), imported before anything else is read; a model directory whose config "
                        "names a file of the same content then loads without --trust-plugins")


def load_plugin_files(args: argparse.Namespace) -> None:
    """Import the user's --plugins files (every command that has the option, before it runs), so
    that what they register can be named."""
    load_plugins(list(getattr(args, "plugins", None) or []), option="--plugins")


def add_data_root_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-root", type=Path, help="folder the benchmark paths are relative to "
                        "(default: $WEAN_DATA_ROOT)")


def scoring_inputs(args: argparse.Namespace, default_metrics: tuple[str, ...] | None = None,
                   output_statistics: tuple[str, ...] = ()):
    """(benchmark or None, source, references, settings, metrics) from --benchmark or --src/--refs
    and the casing, tokenizer and metric options; a benchmark brings its own conventions. Names in
    ``output_statistics`` (``wean compare``'s per-sentence statistics) may be asked for by
    --metrics: they are in ``metrics`` but not in ``settings.metrics``, which holds registered metrics."""
    benchmark = None
    source, references = args.src, list(args.refs)
    # fidelity reads English words: not a default for character-level (Chinese) scoring
    english = args.tokenize != "char"
    metrics = ("sari", "bleu", "fkgl", "stats") + ("fidelity",) * english if source is not None else ("bleu", "fkgl")
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
    metrics = metric_list(args.metrics, metrics)
    reverse_model = getattr(args, "reverse_model", None)
    if reverse_model is not None:
        if not (reverse_model / "config.yaml").is_file():
            raise WeanError(f"--reverse-model {reverse_model}: not a model directory (no config.yaml)")
        if "reverse" not in metrics:
            metrics += ("reverse",)
    settings = EvaluationSettings(
        metrics=tuple(m for m in metrics if m not in output_statistics),
        sari_variant=args.sari_variant,
        lowercase=lowercase if args.lowercase is None else args.lowercase,
        tokenizer=tokenizer if args.tokenize is None else args.tokenize,
        reverse_model=str(reverse_model) if reverse_model is not None else None,
        plain_text=args.plain_text if args.plain_text is not None else benchmark.plain_text if benchmark else None,
    )
    return benchmark, source, references, settings, metrics


def add_search_options(parser: argparse.ArgumentParser, notes: dict[str, str] | None = None) -> None:
    """A flag for each search option (wean.search_options.SearchOptions), --beam for beam; not
    given: the model's generation config. ``notes``: what an option does in this command besides,
    by option name, added to its help."""
    group = parser.add_argument_group("search (default: the model's generation config)")
    for name in SearchOptions.names():
        choices = option_choices(name)
        metavar = None if choices else {int: "N", float: "X", str: "NAME"}[option_kind(name)]
        group.add_argument(_flag(name), type=option_kind(name), choices=choices, dest=name, metavar=metavar,
                           help=SearchOptions.help(name) + (f"; {notes[name]}" if name in (notes or {}) else ""))


def search_arguments(args: argparse.Namespace) -> dict:
    """The search options given on the command line (those not given: None)."""
    return {name: getattr(args, name, None) for name in SearchOptions.names()}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_generation_options(parser: argparse.ArgumentParser) -> None:
    # what n-best lists change in the output of the commands that write them
    add_search_options(parser, {"nbest": 'above 1, each input\'s outputs are one JSON line, {"source": ..., '
                                         '"nbest": [{"text", "score", "log_prob"}, ...]}'})
    add_rerank_option(parser)
    parser.add_argument("--no-replace-unk", dest="replace_unk", action="store_false", default=None,
                        help="keep <unk> instead of copying the most-attended source token")
    parser.add_argument("--batch-size", type=int, help="sentences per model call (default: the model's)")
    parser.add_argument("--scores", action="store_true", help="prefix every output with its score and a tab")
    add_control_option(parser)
    add_device_option(parser)
    add_product_options(parser)


def add_rerank_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rerank", metavar="NAME=WEIGHT,...",
                        help="reorder each n-best list by search score + WEIGHT * scorer (length, log_prob, "
                        "unchanged, channel:DIR (log P(source | output) under DIR's model), lm:DIR (log P(output) "
                        "under a language model), or one --plugins registers), e.g. unchanged=-2; needs --nbest "
                        "above 1")


def add_control_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--control", metavar="NAME=VALUE,...",
                        help="for a model trained with control tokens: the values asked for, e.g. "
                        "chars_ratio=0.8,levenshtein=0.6,word_rank=0.8 (lower: shorter, more changed, simpler "
                        "words; 1: like the source). Names not given take the model's tuned defaults")


def control_values(args: argparse.Namespace) -> dict[str, float] | None:
    return parse_control(args.control) if getattr(args, "control", None) else None


def add_device_option(parser: argparse.ArgumentParser) -> None:
    """--device, and the options of add_trust_options: every command that runs a model has them."""
    parser.add_argument("--device", choices=DEVICES, default="auto",
                        help="where the model runs; auto: the GPU if PyTorch sees one (default)")
    add_trust_options(parser)


def add_trust_options(parser: argparse.ArgumentParser) -> None:
    """--trust-plugins and --plugins: every command that loads a model directory has both."""
    parser.add_argument("--trust-plugins", action="store_true",
                        help="import the plug-in files a model directory's config names (its code runs); "
                        "without it such a model loads only if --plugins names files of the same content")
    add_plugins_option(parser)


def add_product_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quantize", choices=QUANTIZATIONS, default="none",
                        help="int8: int8 weights for the LSTM and linear layers, faster on a CPU, "
                        "outputs slightly different (default: none)")
    parser.add_argument("--kernels", choices=KERNELS, default="auto",
                        help="what computes the float32 products in inference: onednn, blas (PyTorch's own "
                        "product, what training.kernels: blas trains with), or auto, the faster of the two for "
                        "this model on this machine, measured once and cached (default: auto); the last bits of "
                        "a score may differ between them")


def labels(text: str | None, count: int, what: str) -> list[str] | None:
    """The comma-separated --labels, one per input, or None when not given."""
    if not text:
        return None
    labels = text.split(",")
    if len(labels) != count:
        raise WeanError(f"--labels has {len(labels)} names for {count} {what}")
    return labels


def check_generation_arguments(args: argparse.Namespace) -> None:
    """The search options given on the command line, in range (before the model is loaded)."""
    check_search_options(search_arguments(args), _flag)
    check_batch_size(getattr(args, "batch_size", None), "--batch-size")
    if getattr(args, "rerank", None):
        resolve(args.rerank)


def require_at_least_one(args: argparse.Namespace, *names: str) -> None:
    """Counts and sizes given on the command line must be 1 or more (None: not given)."""
    for name in names:
        value = getattr(args, name)
        if value is not None and value < 1:
            raise WeanError(f"--{name.replace('_', '-')} must be at least 1")


def load_generator(args: argparse.Namespace):
    """The model of --model (several: an ensemble) on --device (--quantize and --kernels where the
    command has them), and the search options and --control values checked against it, before any
    input is read: a bad model or value fails at once."""
    # deferred: it imports torch, which `wean --help` and the light commands never load
    from wean.inference.generator import UntrainedControlWarning, load

    generator = load(args.model, args.device, getattr(args, "quantize", "none"), trust_plugins=args.trust_plugins,
                     kernels=getattr(args, "kernels", "auto"))
    generator.search_options(**search_arguments(args))  # against the model's defaults: --nbest 8 with its beam 5
    control = control_values(args)
    generator.control_prefix(control)
    untrained = generator.untrained_control(control)
    if untrained:  # said once here, not by every generate() call
        print(f"warning: {untrained}", file=sys.stderr)
        warnings.simplefilter("ignore", UntrainedControlWarning)
    return generator, control
