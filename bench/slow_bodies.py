"""``wean serve`` against clients that send request bodies slowly, with normal requests beside
them: do the normal ones still get answered, and in how long against the unloaded server?

    python bench/slow_bodies.py --slow 1100 --seconds 60 --out results/bench-slow-bodies

The server (this checkout, the shipped simplifier) first answers ``--baseline`` requests one at a
time: their median latency is the unloaded time. Then ``--slow`` connections open in one burst,
each sending a request's headers with a 200-byte Content-Length: half trickle their body one
byte every ``--trickle-s`` seconds, half send ten bytes and stall. While they hold on, a normal
client sends one sentence per new connection every ``--every`` seconds for ``--seconds``. Reported:
each normal request's status and latency (how many within 2 s of the unloaded time), how each
slow connection ended (answered with a status, reset, or still open at the end), and the server
log's tracebacks. Stop other work first: the run records the load average it started under.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import time
from pathlib import Path

import httpx

from server_load import HERE, free_port, start_server  # bench/ is the script's folder, so on sys.path
from timing import report

SENTENCE = "The committee, which was established in 1998, is responsible for the administration of the competition."
BODY = json.dumps({"texts": [SENTENCE]})


async def slow_client(port: int, trickle: bool, trickle_s: float, stop: asyncio.Event) -> str:
    """One slow connection; how it ended: ``status NNN``, ``reset``, ``refused`` or ``open``."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return "refused"
    head = (f"POST /v1/generate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: 200\r\n\r\n").encode()
    try:
        writer.write(head + (b"" if trickle else b'{"texts": '))
        await writer.drain()
        answer = asyncio.ensure_future(reader.read(200))
        while not stop.is_set():
            done, _ = await asyncio.wait({answer}, timeout=trickle_s)
            if done:
                data = answer.result()
                return f"status {data.split()[1].decode()}" if data.startswith(b"HTTP/") else "closed"
            if trickle:
                writer.write(b" ")
                await writer.drain()
        answer.cancel()
        return "open"
    except (ConnectionError, OSError):
        return "reset"
    finally:
        writer.close()


async def normal_client(port: int, every: float, seconds: float) -> list[dict]:
    results = []
    end = time.monotonic() + seconds

    async def one() -> None:
        started = time.perf_counter()
        try:
            async with httpx.AsyncClient(timeout=60) as session:
                response = await session.post(f"http://127.0.0.1:{port}/v1/generate", content=BODY,
                                              headers={"Content-Type": "application/json"})
            results.append({"status": response.status_code, "seconds": time.perf_counter() - started})
        except httpx.HTTPError as error:
            results.append({"status": type(error).__name__, "seconds": time.perf_counter() - started})

    tasks = []
    while time.monotonic() < end:
        tasks.append(asyncio.ensure_future(one()))
        await asyncio.sleep(every)
    await asyncio.gather(*tasks)
    return results


async def attack(port: int, slow: int, trickle_s: float, every: float, seconds: float) -> tuple[list[dict], list[str]]:
    stop = asyncio.Event()
    slow_tasks = [asyncio.ensure_future(slow_client(port, number % 2 == 0, trickle_s, stop)) for number in range(slow)]
    await asyncio.sleep(1.0)  # the burst is in
    normal = await normal_client(port, every, seconds)
    stop.set()
    return normal, list(await asyncio.gather(*slow_tasks))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", type=int, default=1100, help="slow connections, half trickling, half stalled")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long normal requests are sent beside them")
    parser.add_argument("--every", type=float, default=0.5, help="seconds between normal requests")
    parser.add_argument("--trickle-s", type=float, default=7.0, help="seconds between a trickling body's bytes")
    parser.add_argument("--baseline", type=int, default=20, help="requests to the unloaded server")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * args.slow + 256)), hard))
    load_before = os.getloadavg()
    port = free_port()
    server = start_server(HERE, "none", HERE / "src/wean/pretrained/simplifier", port, threads=1)
    try:
        unloaded = []
        for _ in range(args.baseline):
            started = time.perf_counter()
            httpx.post(f"http://127.0.0.1:{port}/v1/generate", content=BODY,
                       headers={"Content-Type": "application/json"}, timeout=60).raise_for_status()
            unloaded.append(time.perf_counter() - started)
        normal, slow = asyncio.run(attack(port, args.slow, args.trickle_s, args.every, args.seconds))
        alive = httpx.get(f"http://127.0.0.1:{port}/health", timeout=10).status_code
    finally:
        server.terminate()
        server.wait(timeout=30)
    server.log.seek(0)
    log = server.log.read()
    unloaded_s = statistics.median(unloaded)
    latencies = sorted(r["seconds"] for r in normal)
    outcomes: dict[str, int] = {}
    for kind, ending in zip(("trickled", "stalled") * args.slow, slow):
        outcomes[f"{kind}: {ending}"] = outcomes.get(f"{kind}: {ending}", 0) + 1
    result = {
        "slow_connections": args.slow, "seconds": args.seconds, "trickle_s": args.trickle_s,
        "load_before": load_before, "unloaded_median_s": unloaded_s,
        "normal_requests": len(normal), "normal_answered_200": sum(r["status"] == 200 for r in normal),
        "normal_statuses": sorted({str(r["status"]) for r in normal}),
        "normal_within_2s_of_unloaded": sum(r["status"] == 200 and r["seconds"] <= unloaded_s + 2 for r in normal),
        "normal_median_s": statistics.median(latencies), "normal_max_s": latencies[-1],
        "slow_endings": dict(sorted(outcomes.items())), "health_after": alive,
        "log_tracebacks": log.count("Traceback"), "log_too_many_open_files": log.count("Too many open files"),
    }
    report(result, args.out)


if __name__ == "__main__":
    main()
