"""``wean serve`` under concurrent load: sentences/s and per-request latency (p50, p99) with many
loopback clients, for one or more servers, interleaved over rounds.

    python bench/server_load.py --system before=../wean-before \\
        --system after=. --system after-int8=.:int8 --rounds 3 --out results/bench-server

A system is ``NAME=CHECKOUT[:QUANTIZE]``: the server runs that checkout's code
(``python -m wean serve`` with the checkout first on ``PYTHONPATH``), on the same model
(``--model``, default the shipped simplifier of this checkout) and the same server options. Each
client sends one sentence per request (TurkCorpus test, plain text) and its next request when the
answer arrives (a closed loop); a load is ``--requests`` requests per client after a warm-up, and
each server takes ``--loads`` of them before it stops (its resident memory is read before the
first and after each). With ``--hang-up F``, the first F of the clients give up on every request
after ``--hang-up-after`` seconds, as impatient clients do: their requests count as left, not as
errors, and the server's /health says how many it dropped unrun, how many it stopped mid-search
and how many had finished their search before their client went.
Stop other work first: every run records the 1-minute load average it started under.

    python bench/server_load.py --system after=. --hang-up 0.25 --loads 2 --rounds 1 \
        --out results/bench-server/hang-up
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from revisions import package_root  # bench/ is the script's folder, so on sys.path

HERE = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(checkout: Path, quantize: str, model: Path, port: int, threads: int) -> subprocess.Popen:
    environment = {**os.environ, "PYTHONPATH": str(package_root(checkout)), "OMP_NUM_THREADS": str(threads)}
    command = [sys.executable, "-m", "wean", "serve", "--model", str(model.resolve()), "--port", str(port)]
    if quantize != "none":
        command += ["--quantize", quantize]
    # the server logs a line per request: to a file, since a pipe nobody reads fills and blocks it
    log = tempfile.NamedTemporaryFile("w+", prefix="wean-serve-", suffix=".log")
    server = subprocess.Popen(command, cwd=checkout, env=environment, stdout=subprocess.DEVNULL, stderr=log, text=True)
    server.log = log
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            log.seek(0)
            raise SystemExit(f"server of {checkout} exited: {log.read()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit(f"server of {checkout} did not answer /health within 120 s")


async def load(port: int, sentences: list[str], clients: int, requests: int, beam: int,
               leavers: int = 0, patience: float = 0.5) -> dict:
    """Each client sends ``requests`` one-sentence requests in turn; the first ``leavers`` give up
    on each after ``patience`` seconds. Returns the staying clients' latencies (s) and errors, the
    requests left, and the wall time."""
    url = f"http://127.0.0.1:{port}/v1/generate"
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    latencies: list[float] = []
    errors: list[str] = []
    left = 0

    async def client(number: int, session: httpx.AsyncClient) -> None:
        nonlocal left
        for request in range(requests):
            text = sentences[(number * requests + request) % len(sentences)]
            start = time.perf_counter()
            try:
                answer = await session.post(url, json={"texts": [text], "beam": beam},
                                            timeout=patience if number < leavers else 600)
            except httpx.TimeoutException:
                if number < leavers:
                    left += 1
                    continue
                raise
            if answer.status_code != 200:
                errors.append(f"{answer.status_code} {answer.text[:200]}")
            elif number >= leavers:
                latencies.append(time.perf_counter() - start)

    async with httpx.AsyncClient(limits=limits) as session:
        start = time.perf_counter()
        await asyncio.gather(*(client(number, session) for number in range(clients)))
        return {"latencies": latencies, "errors": errors, "left": left, "wall": time.perf_counter() - start}


def resident_mib(process: subprocess.Popen) -> float:
    for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--system", action="append", required=True, metavar="NAME=CHECKOUT[:QUANTIZE]")
    parser.add_argument("--model", type=Path, default=HERE / "src/wean/pretrained/simplifier")
    parser.add_argument("--sentences-file", type=Path,
                        help="default: TurkCorpus test's sources under $WEAN_DATA_ROOT")
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--requests", type=int, default=5, help="requests per client in a run")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2, help="the server's PyTorch threads")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--loads", type=int, default=1, help="loads one server takes before it stops")
    parser.add_argument("--hang-up", type=float, default=0.0, metavar="F",
                        help="share of the clients that give up on each request (default: none)")
    parser.add_argument("--hang-up-after", type=float, default=0.5, metavar="S",
                        help="seconds those clients wait for an answer")
    parser.add_argument("--out", type=Path, help="write metrics.json here")
    args = parser.parse_args()

    systems = {}
    for spec in args.system:
        name, _, where = spec.partition("=")
        checkout, _, quantize = where.partition(":")
        if not name or not checkout:
            parser.error(f"--system {spec!r}: expected NAME=CHECKOUT[:QUANTIZE]")
        systems[name] = (Path(checkout), quantize or "none")
    if args.sentences_file is None:
        if not os.environ.get("WEAN_DATA_ROOT"):
            sys.exit("server_load.py: give --sentences-file, or set WEAN_DATA_ROOT")
        args.sentences_file = Path(os.environ["WEAN_DATA_ROOT"]) / "turkcorpus/case_detok/test.src"
    sentences = [line.strip() for line in args.sentences_file.read_text(encoding="utf-8").splitlines() if line.strip()]

    runs: dict[str, list[dict]] = {name: [] for name in systems}
    names = list(systems)
    for round_number in range(args.rounds):
        shift = round_number % len(names)
        for name in names[shift:] + names[:shift]:  # rotated order: no system always goes first
            checkout, quantize = systems[name]
            port = free_port()
            server = start_server(checkout, quantize, args.model, port, args.threads)
            leavers = round(args.hang_up * args.clients)
            try:
                asyncio.run(load(port, sentences[:50], 10, 2, args.beam))  # warm-up
                memory = [resident_mib(server)]
                for _ in range(args.loads):
                    load_average = float(Path("/proc/loadavg").read_text().split()[0])
                    result = asyncio.run(load(port, sentences, args.clients, args.requests, args.beam, leavers,
                                              args.hang_up_after))
                    memory.append(resident_mib(server))
                    latencies = result["latencies"]
                    run = {"sentences_per_second": len(latencies) / result["wall"],
                           "p50_ms": percentile(latencies, 0.5) * 1000, "p99_ms": percentile(latencies, 0.99) * 1000,
                           "requests": len(latencies), "errors": len(result["errors"]), "left": result["left"],
                           "first_errors": result["errors"][:3], "load_average_at_start": load_average,
                           "resident_mib": list(memory)}
                    runs[name].append(run)
                    print(f"round {round_number + 1} {name}: {run['sentences_per_second']:.1f} sentences/s, "
                          f"p50 {run['p50_ms']:.0f} ms, p99 {run['p99_ms']:.0f} ms, {run['errors']} errors, "
                          f"{run['left']} left, server {' -> '.join(f'{m:.0f}' for m in memory)} MiB "
                          f"(load {load_average:.2f})", flush=True)
                time.sleep(max(1.0, args.hang_up_after))  # the last requests left reach the batcher
                health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=30).json()
                runs[name][-1]["health"] = {key: health.get(key) for key in
                                            ("batches", "dropped_unrun", "client_gone_mid_batch")}
                print(f"  /health: {runs[name][-1]['health']}", flush=True)
            finally:
                server.terminate()
                server.wait(timeout=60)
                server.log.close()

    medians = {name: {key: statistics.median(run[key] for run in values)
                      for key in ("sentences_per_second", "p50_ms", "p99_ms")} for name, values in runs.items()}
    baseline = names[0]
    for name, median in medians.items():
        median["throughput_ratio_to_" + baseline] = median["sentences_per_second"] / medians[baseline]["sentences_per_second"]
        print(f"median {name}: {median['sentences_per_second']:.1f} sentences/s "
              f"({median['throughput_ratio_to_' + baseline]:.2f}x {baseline}), "
              f"p50 {median['p50_ms']:.0f} ms, p99 {median['p99_ms']:.0f} ms")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        settings = {key: value for key, value in vars(args).items() if key not in ("out", "model", "sentences_file", "system")}
        metrics = {"settings": {**settings, "systems": {name: quantize for name, (_, quantize) in systems.items()},
                                "sentences_file": args.sentences_file.name},
                   "hardware": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()},
                   "runs": runs, "medians": medians}
        (args.out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")


if __name__ == "__main__":
    main()
