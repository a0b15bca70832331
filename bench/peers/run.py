"""wean against fairseq, OpenNMT-py, Joey NMT and a plain-PyTorch reference on the identical model
and data, interleaved: every round runs every toolkit (in a rotated order), so a slow spell of the
machine hits all of them alike. See bench/peers/README.md for the model, the data and what is timed.

    bash bench/peers/install.sh                        # once: the peers' virtual environments
    python bench/peers/run.py --rounds 3 --out results/bench-peers

Each round: per toolkit, train 300 updates of 64 sentences (target tokens/s over updates 21-300,
from the toolkit's own per-10-update log), then decode the 1,000 test sentences with beam 5 and
greedily, 16 decoder steps each (sentences/s from the toolkit's own generation timer). Every run's
figures go to WORK/runs.json as soon as it ends, so an interrupted benchmark goes on where it stopped.
A run during which other processes used more than --max-foreign of a core is run again (at most
twice): pause background jobs first (kill -STOP).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import yaml

from wean.models.device import bf16_lstm_supported

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent))
import roofline  # noqa: E402
from timing import cpu  # noqa: E402

TOOLKITS = ["reference", "wean", "fairseq", "opennmt", "joeynmt"]
PEERS = ["fairseq", "opennmt", "joeynmt"]
WARMUP_UPDATES = 20  # start-up and the first updates are left out of the training rate
SHORTLIST = 1000  # the wean-shortlist row: the 1,000 most frequent target words, each batch's own and their table's
# wean's decoding modes, by the prefix of their runs' names: fp32 with the kernels auto chooses
# (the default), with oneDNN's and with PyTorch's own products (wean.models.kernels), int8, the
# vocabulary shortlist
WEAN_MODES = {"": [], "onednn-": ["--kernels", "onednn"], "blas-": ["--kernels", "blas"],
              "int8-": ["--quantize", "int8"], "shortlist-": ["--shortlist", str(SHORTLIST)],
              "int8-shortlist-": ["--quantize", "int8", "--shortlist", str(SHORTLIST)]}
# wean's training runs besides the default's, each in a folder of its own: fixed kernels, and bf16
# where the CPU computes it (AVX-512 BF16 or AMX; wean.training.precision)
WEAN_TRAININGS = {"onednn-": ["training.kernels=onednn"], "blas-": ["training.kernels=blas"],
                  **({"bf16-": ["training.precision=bf16"]} if bf16_lstm_supported(torch.device("cpu")) else {})}
# the rows wean's other modes and trainings fill
MODE_ROWS = {"wean-onednn": "onednn-", "wean-blas": "blas-", "wean-bf16": "bf16-", "wean-int8": "int8-",
             "wean-shortlist": "shortlist-", "wean-int8-shortlist": "int8-shortlist-"}


# --- what each toolkit runs ----------------------------------------------------------------------

def substitute(template: Path, target: Path, **values: str) -> Path:
    text = template.read_text()
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    target.write_text(text)
    return target


def commands(toolkit: str, data: Path, run: Path, peers: Path) -> dict[str, list[str]]:
    """{'train': argv, 'beam5': argv, 'greedy': argv}, and for wean each decoding run again in each
    of its other modes (WEAN_MODES: 'int8-beam5', 'shortlist-greedy', ...) and training again in
    each of WEAN_TRAININGS ('blas-train', 'bf16-train', ...)"""
    python = sys.executable  # the environment wean is installed in
    if toolkit == "reference":
        script, model = str(HERE / "reference.py"), str(run / "model.safetensors")
        decode = [python, script, "decode", "--data", str(data), "--model", model]
        return {"train": [python, script, "train", "--data", str(data), "--model", model],
                "beam5": decode + ["--beam", "5", "--out", str(run / "beam5.txt")],
                "greedy": decode + ["--beam", "1", "--out", str(run / "greedy.txt")]}
    if toolkit == "wean":
        script = str(HERE / "wean_runner.py")
        decode = [python, script, "decode", "--data", str(data), "--run", str(run)]
        runs = {"train": [python, script, "train", "--data", str(data), "--run", str(run)]}
        for prefix, mode in WEAN_MODES.items():
            for name, beam in (("beam5", "5"), ("greedy", "1")):
                runs[prefix + name] = decode + ["--beam", beam, *mode, "--out", str(run / f"{prefix}{name}.txt")]
        # each in a folder of its own: the decoding runs read the default training's model
        for prefix, settings in WEAN_TRAININGS.items():
            runs[prefix + "train"] = [python, script, "train", "--data", str(data), "--run", str(run / prefix[:-1]),
                                      *[item for setting in settings for item in ("--set", setting)]]
        return runs
    bin_dir = peers / toolkit / "bin"
    if toolkit == "fairseq":
        flags = yaml.safe_load((HERE / "configs" / "fairseq.yaml").read_text())
        binary, checkpoints = run / "bin", run / "checkpoints"
        if not (binary / "dict.dst.txt").exists():
            splits = ["--trainpref", str(data / "train"), "--validpref", str(data / "valid"),
                      "--testpref", str(data / "test")]
            subprocess.run([str(bin_dir / "fairseq-preprocess"), *flags["preprocess"], *splits,
                            "--destdir", str(binary)], check=True, capture_output=True)
        generate = [str(bin_dir / "fairseq-generate"), str(binary), "--path", str(checkpoints / "checkpoint_last.pt"),
                    *flags["generate"]]
        return {"train": [str(bin_dir / "fairseq-train"), str(binary), *flags["train"], "--save-dir", str(checkpoints)],
                "beam5": generate + ["--beam", "5"], "greedy": generate + ["--beam", "1"]}
    if toolkit == "opennmt":
        config = substitute(HERE / "configs" / "opennmt.yaml", run / "opennmt.yaml", DATA=str(data), RUN=str(run))
        if not (run / "vocab.dst").exists():
            subprocess.run([str(bin_dir / "onmt_build_vocab"), "-config", str(config), "-n_sample", "-1"],
                           check=True, capture_output=True)
        # -min_length = -max_length = 16: 16 decoder steps; -max_length_ratio 0: no cap by source length
        translate = [str(bin_dir / "onmt_translate"), "-model", str(run / "model_step_300.pt"), "-src",
                     str(data / "test.src"), "-batch_size", "64", "-batch_type", "sents", "-min_length", "16",
                     "-max_length", "16", "-max_length_ratio", "0", "-report_time"]
        return {"train": [str(bin_dir / "onmt_train"), "-config", str(config)],
                "beam5": translate + ["-beam_size", "5", "-output", str(run / "beam5.txt")],
                "greedy": translate + ["-beam_size", "1", "-output", str(run / "greedy.txt")]}
    if toolkit == "joeynmt":
        python = str(bin_dir / "python")
        runs = {}
        for name, beam in (("train", "5"), ("beam5", "5"), ("greedy", "1")):
            config = substitute(HERE / "configs" / "joeynmt.yaml", run / f"joeynmt-{name}.yaml", DATA=str(data),
                                RUN=str(run), BEAM=beam)
            if name == "train":
                runs[name] = [python, "-m", "joeynmt", "train", str(config), "--skip-test"]
            else:  # decode the test set only
                config.write_text(re.sub(r"^  dev: .*\n", "", config.read_text(), flags=re.M))
                runs[name] = [python, str(HERE / "configs" / "joeynmt_min_length.py"), "test", str(config),
                              "--output-path", str(run / f"{name}.txt")]
        return runs
    raise ValueError(toolkit)


# --- reading each toolkit's own figures ----------------------------------------------------------

def training_windows(toolkit: str, log: str) -> list[tuple[int, float, float]]:
    """(last update of the window, target tokens, seconds) for every 10-update window."""
    windows = []
    if toolkit in ("reference", "wean"):
        for m in re.finditer(r"^update (\d+) loss \S+ tokens (\d+) seconds ([\d.]+)", log, re.M):
            windows.append((int(m[1]), float(m[2]), float(m[3])))
    elif toolkit == "fairseq":
        for m in re.finditer(r"wps=([\d.]+), ups=[\d.]+, wpb=([\d.]+), bsz=\d+, num_updates=(\d+)", log):
            tokens = float(m[2]) * 10
            windows.append((int(m[3]), tokens, tokens / float(m[1])))
    elif toolkit == "opennmt":
        for m in re.finditer(r"Step (\d+)/\s*\d+;.*?bsz:\s*\d+/\s*(\d+)/\s*\d+;\s*\d+/\s*(\d+) tok/s", log):
            tokens = float(m[2]) * 10
            windows.append((int(m[1]), tokens, tokens / float(m[3])))
    elif toolkit == "joeynmt":
        previous = None
        for m in re.finditer(r"^(\S+ \S+) - INFO - joeynmt.training - Epoch\s+\d+, Step:\s+(\d+),.*?"
                             r"Tokens per Sec:\s+([\d.]+)", log, re.M):
            stamp = time.mktime(time.strptime(m[1].split(",")[0], "%Y-%m-%d %H:%M:%S")) + int(m[1].split(",")[1]) / 1000
            if previous is not None:
                seconds = stamp - previous
                windows.append((int(m[2]), float(m[3]) * seconds, seconds))
            previous = stamp
    return windows


def decoding_seconds(toolkit: str, log: str) -> float:
    patterns = {
        "reference": r"decoded \d+ sentences in ([\d.]+) s",
        "wean": r"decoded \d+ sentences in ([\d.]+) s",
        "opennmt": r"Total translation time \(s\): ([\d.]+)",
        "joeynmt": r"Generation took ([\d.]+)\[sec\]",
    }
    if toolkit == "fairseq":  # its sentences/s has more digits than its seconds
        return 1000 / float(re.search(r"Translated [\d,]+ sentences .*?\(([\d.]+) sentences/s", log)[1])
    return float(re.search(patterns[toolkit], log)[1])


def output_lengths(toolkit: str, run: Path, name: str, log: str) -> list[int]:
    """Words per output: 16 decoder steps give 15 words and </s> (fairseq, the reference, wean) or
    16 words, where the search stops at its maximum without writing </s> (OpenNMT-py, Joey NMT)."""
    if toolkit == "fairseq":
        return [len(m[1].split()) for m in re.finditer(r"^H-\d+\t\S+\t(.*)$", log, re.M)]
    path = run / (f"{name}.txt.test" if toolkit == "joeynmt" else f"{name}.txt")  # Joey adds .test
    return [len(line.split()) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


# --- running one command quietly -----------------------------------------------------------------

def busy_jiffies() -> int:
    fields = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return sum(fields) - fields[3] - fields[4]  # all but idle and iowait


def run_once(argv: list[str], log_path: Path, environment: dict) -> dict:
    """Run argv, its output to log_path. Returns wall seconds, its own CPU seconds, and the CPU
    seconds other processes took meanwhile."""
    ticks = os.sysconf("SC_CLK_TCK")
    busy_before, start = busy_jiffies(), time.perf_counter()
    with open(log_path, "w", encoding="utf-8") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=environment)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    own = usage.ru_utime + usage.ru_stime
    foreign = max(0.0, (busy_jiffies() - busy_before) / ticks - own)
    return {"status": os.waitstatus_to_exitcode(status), "wall_s": wall, "cpu_s": own, "foreign_cpu_s": foreign}


def measured(toolkit: str, name: str, argv: list[str], run: Path, environment: dict, max_foreign: float) -> dict:
    for attempt in range(3):
        result = run_once(argv, run / f"{name}.log", environment)
        log = (run / f"{name}.log").read_text(encoding="utf-8", errors="replace")
        if result["status"] != 0:
            raise SystemExit(f"{toolkit} {name} failed (exit {result['status']}); see {run / f'{name}.log'}")
        if result["foreign_cpu_s"] <= max_foreign * result["wall_s"] or attempt == 2:
            break
        print(f"  {toolkit} {name}: other processes took {result['foreign_cpu_s']:.1f} CPU-s; again", flush=True)
    figures = {"wall_s": round(result["wall_s"], 2), "cpu_s": round(result["cpu_s"], 2),
               "foreign_cpu_s": round(result["foreign_cpu_s"], 2), "attempts": attempt + 1}
    if name.endswith("train"):
        windows = [w for w in training_windows(toolkit, log) if w[0] > WARMUP_UPDATES]
        if not windows:
            raise SystemExit(f"{toolkit}: no training figures in {run / f'{name}.log'}")
        figures["updates_timed"] = len(windows) * 10
        figures["target_tokens_per_s"] = round(sum(w[1] for w in windows) / sum(w[2] for w in windows), 1)
    else:
        figures["sentences_per_s"] = round(1000 / decoding_seconds(toolkit, log), 1)
    chosen = re.search(r"^kernels (\S+)$", log, re.M)  # wean's: what its products ran with
    if chosen:
        figures["kernels"] = chosen[1]
    return figures


# --- the benchmark -------------------------------------------------------------------------------

def by_round(runs: list[dict], toolkit: str, measure: str) -> dict[int, float]:
    """{round: figure} of one row (``wean-int8``, ``wean-shortlist``: wean's runs in that mode) and
    one measure (train, beam5 or greedy)."""
    key = "target_tokens_per_s" if measure == "train" else "sentences_per_s"
    return {round_: figures[key] for round_, figures in row_runs(runs, toolkit, measure).items()}


def row_runs(runs: list[dict], toolkit: str, measure: str) -> dict[int, dict]:
    """{round: the figures of the run} behind one row and measure."""
    source, prefix = ("wean", MODE_ROWS[toolkit]) if toolkit in MODE_ROWS else (toolkit, "")
    name = prefix + measure
    return {r["round"]: r[name] for r in runs if r["toolkit"] == source and name in r}


def corpus_lengths(data: Path) -> dict:
    def mean_tokens(path):  # words + </s>
        lines = path.read_text(encoding="utf-8").splitlines()
        return sum(len(line.split()) + 1 for line in lines) / len(lines)

    return {"train_source": mean_tokens(data / "train.src"), "train_target": mean_tokens(data / "train.dst"),
            "test_source": mean_tokens(data / "test.src")}


def output_length_check(runs: list[dict], work: Path) -> dict:
    """The output lengths (in words) each toolkit's decoding runs wrote: a single value each."""
    seen: dict[str, set] = {}
    for entry in runs:
        run = work / f"round{entry['round']}" / entry["toolkit"]
        for name in entry:
            if "beam5" in name or "greedy" in name:
                log = (run / f"{name}.log").read_text(encoding="utf-8", errors="replace")
                seen.setdefault(f"{entry['toolkit']} {name}", set()).update(output_lengths(entry["toolkit"], run, name, log))
    return {key: sorted(lengths) for key, lengths in seen.items()}


def mode_agreement(runs: list[dict], work: Path) -> dict:
    """Per wean decoding mode and measure, the share of outputs identical to fp32's, per round."""
    shares: dict[str, list[float]] = {}
    for entry in runs:
        if entry["toolkit"] != "wean":
            continue
        run = work / f"round{entry['round']}" / "wean"
        for prefix in MODE_ROWS.values():
            for measure in ("beam5", "greedy"):
                mode, fp32 = run / f"{prefix}{measure}.txt", run / f"{measure}.txt"
                if mode.exists() and fp32.exists():
                    outputs, expected = mode.read_text().splitlines(), fp32.read_text().splitlines()
                    if not outputs or len(outputs) != len(expected):
                        raise SystemExit(f"{mode}: {len(outputs)} outputs, {fp32} {len(expected)}")
                    same = sum(a == b for a, b in zip(outputs, expected)) / len(outputs)
                    shares.setdefault(prefix + measure, []).append(round(same, 4))
    return shares


def summary(runs: list[dict], peaks: list[float], data: Path) -> dict:
    lengths = corpus_lengths(data)
    vocabulary = len({w for line in (data / "train.dst").read_text().splitlines() for w in line.split()}) + 4
    train_flops = roofline.training_flops_per_target_token(lengths["train_source"], lengths["train_target"], vocabulary)
    peak = statistics.median(peaks)
    rows = {}
    for toolkit in TOOLKITS + list(MODE_ROWS):
        row = {}
        for measure in ("train", "beam5", "greedy"):
            values = list(by_round(runs, toolkit, measure).values())
            if values:
                row[measure] = {"median": statistics.median(values), "min": min(values), "max": max(values),
                                "n": len(values)}
                kernels = {f["kernels"] for f in row_runs(runs, toolkit, measure).values() if "kernels" in f}
                if kernels:  # wean's: what its products ran with, per round (auto may differ)
                    row[measure]["kernels"] = sorted(kernels)
        if row:
            rows[toolkit] = row
    fastest = {}
    for measure in ("train", "beam5", "greedy"):
        medians = {t: rows[t][measure]["median"] for t in PEERS if t in rows and measure in rows[t]}
        if medians:
            fastest[measure] = max(medians, key=medians.get)
    for toolkit, row in rows.items():
        for measure, figures in row.items():
            if measure in fastest:
                figures["vs_fastest_peer"] = round(figures["median"] / rows[fastest[measure]][measure]["median"], 3)
                # the same ratio within each round: the machine's drift between rounds cancels
                mine, peer = by_round(runs, toolkit, measure), by_round(runs, fastest[measure], measure)
                figures["vs_fastest_peer_by_round"] = [round(mine[r] / peer[r], 3) for r in sorted(mine) if r in peer]
            if "reference" in rows and measure in rows["reference"]:
                figures["vs_reference"] = round(figures["median"] / rows["reference"][measure]["median"], 3)
            flops = (train_flops if measure == "train" else roofline.decoding_flops_per_sentence(
                lengths["test_source"], 5 if measure == "beam5" else 1, 16, vocabulary))
            figures["gflops"] = round(figures["median"] * flops / 1e9, 2)
            figures["fraction_of_peak"] = round(figures["median"] * flops / 1e9 / peak, 3)
    return {"rows": rows, "fastest_peer": fastest, "peak_gemm_gflops": round(peak, 1),
            "peak_gemm_gflops_rounds": [round(p, 1) for p in peaks], "corpus": lengths,
            "target_vocabulary": vocabulary, "training_gflop_per_target_token": round(train_flops / 1e9, 6)}


def table(result: dict) -> str:
    names = {"reference": "plain PyTorch reference", "wean": "**wean fp32** (`kernels: auto`, the default)",
             "wean-onednn": "wean fp32, oneDNN's products (`kernels: onednn`)",
             "wean-blas": "wean fp32, PyTorch's own operations (`kernels: blas`)",
             "wean-bf16": "wean bf16 autocast (`training.precision: bf16`, training)",
             "wean-int8": "wean int8 (decoding)",
             "wean-shortlist": f"wean fp32, shortlist {SHORTLIST} (decoding)",
             "wean-int8-shortlist": f"wean int8, shortlist {SHORTLIST} (decoding)",
             "fairseq": "fairseq", "opennmt": "OpenNMT-py", "joeynmt": "Joey NMT"}
    lines = ["| toolkit | train tgt tok/s | beam-5 sent/s | greedy sent/s |", "|---|---:|---:|---:|"]
    for toolkit, row in result["rows"].items():
        cells = []
        for measure in ("train", "beam5", "greedy"):
            f = row.get(measure)
            if not f:
                cells.append("–")
                continue
            ratio = f" ({f['vs_fastest_peer']:.2f}x)" if "vs_fastest_peer" in f else ""
            cells.append(f"{f['median']:,.0f}{ratio} [{f['min']:,.0f}–{f['max']:,.0f}] {100 * f['fraction_of_peak']:.1f} %")
        lines.append(f"| {names[toolkit]} | " + " | ".join(cells) + " |")
    ran = [f"{toolkit} {measure}: {', '.join(f['kernels'])}" for toolkit, row in result["rows"].items()
           for measure, f in row.items() if "kernels" in f]
    if ran:
        lines += ["", "Kernels each wean run computed with: " + "; ".join(ran) + "."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--toolkits", default=",".join(TOOLKITS))
    parser.add_argument("--peers", type=Path, default=ROOT / ".peers", help="bench/peers/install.sh's folder")
    parser.add_argument("--work", type=Path, default=Path(os.environ.get("RUNS", "runs")) / "bench-peers")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-foreign", type=float, default=0.1,
                        help="other processes' CPU, in cores, above which a run is repeated")
    parser.add_argument("--out", type=Path, help="write metrics.json and table.md here")
    args = parser.parse_args()
    toolkits = args.toolkits.split(",")
    unknown = set(toolkits) - set(TOOLKITS)
    if unknown:
        parser.error(f"--toolkits: unknown {sorted(unknown)}; choose from {TOOLKITS}")
    for peer in set(toolkits) & set(PEERS):
        if not (args.peers / peer / "bin" / "python").exists():
            parser.error(f"--peers: {args.peers / peer} not installed; run bash bench/peers/install.sh {args.peers}")
    work = args.work.resolve()
    data = work / "data"
    if not (data / "test.dst").exists():
        subprocess.run([sys.executable, str(HERE / "corpus.py"), "--out", str(data)], check=True)
    environment = dict(os.environ, OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads),
                       PYTHONUNBUFFERED="1", PYTHONWARNINGS="ignore", TOKENIZERS_PARALLELISM="false",
                       # fairseq and OpenNMT-py pickle argparse objects into their checkpoints
                       TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1")
    record = work / "runs.json"
    state = json.loads(record.read_text()) if record.exists() else {"runs": [], "peaks": []}
    for round_ in range(1, args.rounds + 1):
        if len(state["peaks"]) < round_:
            state["peaks"].append(roofline.peak_gflops(args.threads))
        order = toolkits[round_ - 1:] + toolkits[:round_ - 1]  # rotated: no toolkit always runs first
        for toolkit in order:
            if any(r["toolkit"] == toolkit and r["round"] == round_ for r in state["runs"]):
                continue
            run = work / f"round{round_}" / toolkit
            run.mkdir(parents=True, exist_ok=True)
            entry = {"toolkit": toolkit, "round": round_}
            for name, argv in commands(toolkit, data, run, args.peers).items():
                entry[name] = measured(toolkit, name, argv, run, environment, args.max_foreign)
                figure = entry[name].get("target_tokens_per_s") or entry[name].get("sentences_per_s")
                print(f"round {round_} {toolkit} {name}: {figure:,.1f}", flush=True)
            state["runs"].append(entry)
            record.write_text(json.dumps(state, indent=1))
    result = summary(state["runs"], state["peaks"], data)
    result["words_per_output"] = output_length_check(state["runs"], work)
    result["identical_to_fp32"] = mode_agreement(state["runs"], work)
    result.update(rounds=args.rounds, threads=args.threads, cpu=cpu(),
                  python=platform.python_version(), runs=state["runs"])
    print(table(result))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "metrics.json").write_text(json.dumps(result, indent=1) + "\n")
        (args.out / "table.md").write_text(table(result))


if __name__ == "__main__":
    main()
