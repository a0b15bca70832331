"""``wean serve`` over real HTTP on loopback: outputs, dynamic batching, limits and bad requests,
the operator's log, and the web page in a real headless Chromium."""

import dataclasses
import json
import logging
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import uvicorn

from synthetic import tiny_config, write_corpus
from wean.inference.generator import load
from wean.search_options import SearchOptions
from wean.server.app import create_app, uvicorn_config
from wean.server.limits import Limits
from wean.training import Trainer

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def generator(tmp_path_factory):
    folder = tmp_path_factory.mktemp("serve")
    data = write_corpus(folder / "data", train=600, valid=20)
    Trainer(tiny_config(data, folder / "model", max_epochs=3)).train()
    return load(folder / "model")


class Server:
    """uvicorn on a free loopback port, in a thread, for the length of a test module."""

    def __init__(self, app, limits=None):
        self.server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", 0, limits or Limits(), log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(timeout=30)


LIMITS = Limits(max_texts=4, max_chars=60, max_tokens=15, max_beam=4, max_output_length=40,
                max_body_bytes=2000, max_request_steps=320, max_batch_size=16, max_wait_ms=300)


@pytest.fixture(scope="module")
def server(generator):
    with Server(create_app(generator, LIMITS), LIMITS) as running:
        yield running


def post(server, body, **kwargs):
    return httpx.post(f"{server.url}/v1/generate", json=body, timeout=60, **kwargs)


def test_health_docs_and_openapi(server, generator):
    health = httpx.get(f"{server.url}/health").json()
    assert health["status"] == "ok" and health["model"] == "model"
    docs = httpx.get(f"{server.url}/docs").text
    # every script, style sheet and icon of the page comes from this server: /docs works offline
    linked = re.findall(r"""(?:src|href|url)\s*[:=]\s*['"]([^'"]+)['"]""", docs)
    assert "swagger" in docs.lower() and linked and all(link.startswith("/") for link in linked), linked
    for link in linked:
        assert httpx.get(server.url + link).status_code == 200, link
    schema = httpx.get(f"{server.url}/openapi.json").json()
    assert "/v1/generate" in schema["paths"]
    assert set(schema["components"]["schemas"]["GenerateRequest"]["properties"]) >= {
        "texts", "attention", "control", *SearchOptions.names()}
    assert health["search"] == dataclasses.asdict(SearchOptions.of(generator.config.generation))


def test_outputs_are_the_generators(server, generator):
    texts = ["a b c d e", "j h g f e d c"]
    response = post(server, {"texts": texts, "beam": 3, "attention": True})
    assert response.status_code == 200
    result = response.json()
    assert result["model"] == httpx.get(f"{server.url}/health").json()["model"] == "model"
    expected = generator.generate(texts, beam=3)
    assert [o["text"] for o in result["outputs"]] == [g.text for g in expected]
    for output, generation in zip(result["outputs"], expected):
        assert output["score"] == pytest.approx(generation.score, abs=1e-4)
        attention = output["attention"]
        assert attention["source_tokens"] == texts[result["outputs"].index(output)].split()
        assert len(attention["weights"]) == len(attention["output_tokens"]) == len(generation.tokens) + 1
        for row in attention["weights"]:
            assert len(row) == len(attention["source_tokens"]) and sum(row) == pytest.approx(1, abs=1e-3)
    assert "attention" not in post(server, {"texts": texts}).json()["outputs"][0]
    assert result["timings"]["total_ms"] >= result["timings"]["generate_ms"] > 0


def test_n_best_lists_and_samples_are_the_generators(server, generator):
    texts = ["a b c d e", "j h g f e d c"]
    result = post(server, {"texts": texts, "beam": 4, "nbest": 3}).json()
    expected = generator.generate(texts, beam=4, nbest=3)
    for output, generation in zip(result["outputs"], expected):
        assert [output["text"]] + [a["text"] for a in output["alternatives"]] == [g.text for g in generation.nbest]
        scores = [output["score"]] + [a["score"] for a in output["alternatives"]]
        assert scores == sorted(scores, reverse=True) and len(scores) == 3
    sampled = {"texts": texts, "strategy": "sampling", "nbest": 2, "seed": 3, "temperature": 0.7}
    first, again = post(server, sampled).json(), post(server, sampled).json()
    assert first["outputs"] == again["outputs"]  # seeded: the same answer, whatever shared the batch
    assert "alternatives" not in post(server, {"texts": texts}).json()["outputs"][0]


def test_concurrent_requests_share_a_batch_and_keep_their_outputs(server, generator):
    requests = [["a b c d e f"], ["b c d e f g h", "c d e f g"], ["j j i i h h"], ["a c e g i"], ["b d f h j a"]]
    with ThreadPoolExecutor(len(requests)) as pool:
        responses = list(pool.map(lambda texts: post(server, {"texts": texts, "beam": 2}), requests))
    assert all(r.status_code == 200 for r in responses)
    timings = [r.json()["timings"] for r in responses]
    # all five arrive within the 300 ms a batch waits: at least two requests must have shared one
    assert max(t["batch_requests"] for t in timings) >= 2
    assert any(t["batch_texts"] > len(texts) for t, texts in zip(timings, requests))
    for texts, response in zip(requests, responses):
        alone = generator.generate(texts, beam=2)
        assert [o["text"] for o in response.json()["outputs"]] == [g.text for g in alone]
        # the contract the API states: a score's company changes its last digits only
        for output, generation in zip(response.json()["outputs"], alone):
            assert output["score"] == pytest.approx(generation.score, rel=1e-5, abs=1e-6)


def test_requests_with_different_options_never_share_a_batch(server):
    bodies = [{"texts": ["a b c d e"], "beam": 1}, {"texts": ["a b c d e"], "beam": 3}]
    with ThreadPoolExecutor(2) as pool:
        responses = list(pool.map(lambda body: post(server, body), bodies))
    assert [r.json()["timings"]["batch_requests"] for r in responses] == [1, 1]


@pytest.mark.parametrize("body, status, message", [
    ({"texts": ["a b"] * 5}, 413, "at most 4 per request"),
    ({"texts": ["a " * 40]}, 413, "characters; at most 60"),
    ({"texts": ["a b c d e f g h i j a b c d e f"]}, 413, "16 tokens; at most 15"),
    ({"texts": ["a b", "  "]}, 422, "texts[1] is empty"),
    ({"texts": []}, 422, "texts:"),
    ({"texts": ["a b"], "beam": 5}, 422, "beam 5; at most 4"),
    ({"texts": ["a b"], "beam": 0}, 422, "beam is 0; it must be an integer from 1 to 100"),
    ({"texts": ["a b"], "beam": True}, 422, "beam: Input should be a valid integer"),
    ({"texts": ["a b"], "attention": "yes"}, 422, "attention: Input should be a valid boolean"),
    ({"texts": ["a b"], "min_length": 10**9}, 422, "min_length is 1000000000"),
    ({"texts": ["a b"], "min_length": 30, "max_length": 20}, 422, "min_length is 30, not below max_length (20)"),
    ({"texts": ["a b"], "max_length": 41}, 422, "max_length 41; at most 40"),
    ({"texts": ["a b"] * 3, "beam": 4, "max_length": 40}, 413, "480 decoder steps asked for (texts x hypotheses x"),
    ({"texts": ["a b"] * 3, "strategy": "sampling", "nbest": 4, "max_length": 40}, 413, "480 decoder steps"),
    ({"texts": ["a b"], "temp": 1}, 422, "temp: Extra inputs"),
    ({"texts": ["a b"], "beam": 3, "nbest": 4}, 422, "nbest is 4, more than beam (3)"),
    ({"texts": ["a b"], "strategy": "sampling", "nbest": 5}, 422, "nbest 5; at most 4"),
    ({"texts": ["a b"], "strategy": "sampling", "sampling_topp": 0.0}, 422, "sampling_topp is 0.0; it must be a number above 0"),
    ({"texts": ["a b"], "strategy": "sampling", "temperature": -1.0}, 422, "temperature is -1.0"),
    ({"texts": ["a b"], "strategy": "nucleus"}, 422, "strategy is 'nucleus'; choose one of"),
    ({"texts": "a b"}, 422, "texts:"),
    ({"text": ["a b"]}, 422, "texts: Field required"),
])
def test_bad_requests_get_a_clear_4xx(server, body, status, message):
    response = post(server, body)
    assert response.status_code == status
    error = response.json()["error"]
    assert message in error and "\n" not in error




def test_the_step_budget_counts_the_beam_a_reranking_model_widens_to(generator):
    generation = dataclasses.replace(generator.config.generation, rerank="length=1", rerank_size=8)
    config = dataclasses.replace(generator.config, generation=generation)
    reranking = load(generator.directory)
    reranking.assets = dataclasses.replace(reranking.assets, config=config)
    with Server(create_app(reranking, LIMITS), LIMITS) as running:
        response = post(running, {"texts": ["a b"] * 3, "beam": 2, "max_length": 20})
        assert response.status_code == 413
        assert "480 decoder steps asked for (texts x hypotheses x max_length = 3 x 8 x 20)" in response.json()["error"]
        assert post(running, {"texts": ["a b"], "beam": 2, "max_length": 20}).status_code == 200

def test_malformed_and_oversized_bodies(server):
    broken = httpx.post(f"{server.url}/v1/generate", content=b'{"texts": [', timeout=30,
                        headers={"content-type": "application/json"})
    assert broken.status_code == 422 and "JSON" in broken.json()["error"]
    huge = httpx.post(f"{server.url}/v1/generate", content=json.dumps({"texts": ["a"] * 1000}), timeout=30,
                      headers={"content-type": "application/json"})
    assert huge.status_code == 413 and "2000 bytes" in huge.json()["error"]
    assert httpx.get(f"{server.url}/v1/nothing").status_code == 404


def test_a_chunked_body_is_cut_at_the_limit(server):
    """Chunked transfer declares no length: the limit must count the bytes as they arrive (before,
    a 256 MiB chunked body was read whole and answered "JSON decode error")."""
    def chunks():
        yield b'{"texts": ["'
        for _ in range(128):
            yield b"a" * 65536  # 8 MiB in all

    response = httpx.post(f"{server.url}/v1/generate", content=chunks(), timeout=60,
                          headers={"content-type": "application/json"})
    assert response.status_code == 413 and response.json() == {"error": "request body over 2000 bytes"}
    assert post(server, {"texts": ["a b c"]}).status_code == 200  # and the server goes on


def test_non_finite_numbers_and_lone_surrogates(server):
    """JSON as Python reads it allows NaN, and "\\ud800" escapes a lone surrogate: neither is text
    or a number the model can take, and neither may end in a 500."""
    def send(raw):
        return httpx.post(f"{server.url}/v1/generate", content=raw.encode(), timeout=60,
                          headers={"content-type": "application/json"})

    nan = send('{"texts": ["a b c"], "length_penalty": NaN}')
    assert nan.status_code == 422 and "length_penalty is nan" in nan.json()["error"]
    surrogate = send('{"texts": ["a \\ud800 b c", "d \\udca8"], "beam": 1}')
    assert surrogate.status_code == 200
    assert all("\ud800" not in output["text"] for output in surrogate.json()["outputs"])


def test_only_allowed_host_names_and_with_a_token_only_its_bearers(server, generator):
    from wean.server.app import Access, host_name

    assert [host_name(h) for h in ("[::1]:8000", "LocalHost:80", "127.0.0.1", "::1")] == \
        ["::1", "localhost", "127.0.0.1", "::1"]
    # a page of another site whose name resolves to 127.0.0.1 (DNS rebinding) sends its own name
    rebound = post(server, {"texts": ["a b c"]}, headers={"host": "attacker.example:8000"})
    assert rebound.status_code == 400 and "Host 'attacker.example'" in rebound.json()["error"]
    with Server(create_app(generator, LIMITS, Access(token="s3cret", allowed_hosts=("*",)))) as guarded:
        assert post(guarded, {"texts": ["a b c"]}, headers={"host": "any.example"}).status_code == 401
        wrong = post(guarded, {"texts": ["a b c"]}, headers={"authorization": "Bearer guess"})
        assert wrong.status_code == 401 and "Authorization: Bearer" in wrong.json()["error"]
        assert post(guarded, {"texts": ["a b c"]}, headers={"authorization": "Bearer s3cret"}).status_code == 200
        assert httpx.get(f"{guarded.url}/health").status_code == 200  # for load balancers' probes


def test_a_request_whose_client_hung_up_is_never_generated(server):
    """The test server waits 300 ms for requests to share a batch: a client gone within it leaves
    a request that must be dropped, not run."""
    before = httpx.get(f"{server.url}/health").json()
    with pytest.raises(httpx.TimeoutException):
        httpx.post(f"{server.url}/v1/generate", json={"texts": ["a b c"]}, timeout=0.1)
    gone_before = before["dropped_unrun"]["client_gone"]
    deadline = time.monotonic() + 10  # polled, not slept: a loaded machine may notice late
    while httpx.get(f"{server.url}/health").json()["dropped_unrun"]["client_gone"] == gone_before:
        assert time.monotonic() < deadline, "the hung-up request was never dropped"
        time.sleep(0.05)
    time.sleep(0.3)  # a batch wrongly run after the drop would show in the counters by now
    after = httpx.get(f"{server.url}/health").json()
    assert after["dropped_unrun"]["client_gone"] == before["dropped_unrun"]["client_gone"] + 1
    assert after["batches"] == before["batches"] and after["queued_texts"] == 0


class SlowGenerator:
    """Stands in for a Generator: each call takes ``seconds`` and is recorded."""

    def __init__(self, seconds: float):
        self.seconds, self.calls = seconds, []

    def generate(self, texts, **options):
        time.sleep(self.seconds)
        self.calls.append(list(texts))
        return [f"out of {text}" for text in texts]


def test_the_batcher_runs_only_requests_someone_still_waits_for():
    import asyncio

    from wean.server.batcher import DynamicBatcher, Options, Overloaded

    async def scenario(generator):
        batcher = DynamicBatcher(generator, max_batch_size=1, max_wait_ms=1, max_queue_texts=4, max_queue_s=1.0)
        batcher.start()
        first = asyncio.ensure_future(batcher.generate(["first"], Options()))
        await asyncio.sleep(0.05)  # the first batch is running now (0.3 s)
        gone = [asyncio.ensure_future(batcher.generate([f"gone {i}"], Options())) for i in range(3)]
        await asyncio.sleep(0.01)
        for task in gone:
            task.cancel()
        await asyncio.sleep(0.01)
        assert batcher.queued_texts == 0  # requests withdrawn do not fill the queue
        generator.seconds = 0.05
        waiting = [asyncio.ensure_future(batcher.generate([f"kept {i}"], Options())) for i in range(4)]
        await asyncio.sleep(0.01)
        with pytest.raises(Overloaded, match="4 texts are waiting already"):
            await batcher.generate(["one too many"], Options())
        assert [(await task)[0] for task in [first, *waiting]] == [["out of first"]] + [[f"out of kept {i}"] for i in range(4)]
        # a request that waits longer than max_queue_s behind a long batch fails unrun
        generator.seconds = 1.2
        long = asyncio.ensure_future(batcher.generate(["long"], Options()))
        await asyncio.sleep(0.05)
        with pytest.raises(Overloaded, match="waited over 1 s"):
            await batcher.generate(["late"], Options())
        await long
        await batcher.stop()
        return batcher

    generator = SlowGenerator(0.3)
    batcher = asyncio.run(scenario(generator))
    assert generator.calls == [["first"]] + [[f"kept {i}"] for i in range(4)] + [["long"]]
    assert (batcher.abandoned, batcher.expired, batcher.queued_texts) == (3, 1, 0)


class SteppingGenerator:
    """Stands in for a Generator whose search runs ``steps`` steps of ``seconds`` and, as the real
    one, asks ``wanted`` between them: a text no longer wanted stops and comes back None."""

    def __init__(self, steps: int, seconds: float):
        self.steps, self.seconds, self.steps_run = steps, seconds, {}

    def generate(self, texts, wanted=None, **options):
        searching = set(range(len(texts)))
        for _ in range(self.steps):
            searching = {i for i in searching if wanted is None or wanted(i)}
            for i in searching:
                self.steps_run[texts[i]] = self.steps_run.get(texts[i], 0) + 1
            time.sleep(self.seconds)
        return [f"out of {text}" if i in searching else None for i, text in enumerate(texts)]


def test_a_request_whose_client_leaves_while_its_batch_runs_stops_there():
    import asyncio

    from wean.server.batcher import DynamicBatcher, Options

    async def scenario(generator):
        batcher = DynamicBatcher(generator, max_batch_size=8, max_wait_ms=20)
        batcher.start()
        staying = asyncio.ensure_future(batcher.generate(["stays a", "stays b"], Options()))
        leaving = asyncio.ensure_future(batcher.generate(["leaves"], Options()))
        await asyncio.sleep(0.25)  # both are in the running batch (20 ms to form, 50 ms a step)
        leaving.cancel()
        outputs, info = await staying
        await batcher.stop()
        return batcher, outputs, info

    generator = SteppingGenerator(steps=20, seconds=0.05)
    batcher, outputs, info = asyncio.run(scenario(generator))
    assert outputs == ["out of stays a", "out of stays b"] and (info.texts, info.requests) == (3, 2)
    assert generator.steps_run["stays a"] == 20 and generator.steps_run["leaves"] <= 7
    assert (batcher.stopped_mid_search, batcher.finished_before_gone, batcher.abandoned) == (1, 0, 0)


def test_a_request_still_searched_after_max_request_s_stops_with_a_503_error():
    import asyncio

    from wean.server.batcher import DynamicBatcher, Options, Overloaded

    async def scenario(generator):
        batcher = DynamicBatcher(generator, max_batch_size=8, max_wait_ms=1, max_request_s=0.3)
        batcher.start()
        try:
            with pytest.raises(Overloaded, match="took over 0.3 s"):
                await batcher.generate(["slow"], Options())
        finally:
            await batcher.stop()
        return batcher

    generator = SteppingGenerator(steps=40, seconds=0.05)
    batcher = asyncio.run(scenario(generator))
    assert 5 <= generator.steps_run["slow"] <= 8 and batcher.timed_out == 1


def test_one_log_line_per_request_with_latency(server, caplog):
    with caplog.at_level(logging.INFO, logger="wean.serve"):
        post(server, {"texts": ["a b c"]})
        post(server, {"texts": ["a b"], "beam": 9})
    lines = [r.getMessage() for r in caplog.records if r.name == "wean.serve"]
    assert any('"POST /v1/generate" 200' in line and " ms (1 texts, batch of 1" in line for line in lines)
    assert any('"POST /v1/generate" 422' in line and "beam 9; at most 4" in line for line in lines)
    with caplog.at_level(logging.INFO, logger="wean.serve"):  # escape and NUL in a path: shown, not sent to a terminal
        httpx.get(f"{server.url}/v1/%1b%5b31mred%00", timeout=30)
    line = [r.getMessage() for r in caplog.records if r.name == "wean.serve"][-1]
    assert '"GET /v1/\\x1b[31mred\\x00" 404' in line and "\x1b" not in line and "\x00" not in line


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("WEAN_REQUIRE_BROWSER"):
            pytest.fail(f"{CHROMIUM} is missing (Debian package chromium)")
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium package to run the browser test")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # the flags keep Chromium from reaching for the network this machine does not have
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        yield launched
        launched.close()


def test_the_api_docs_render_in_a_browser(server, browser):
    """Swagger UI 3 drew "Unable to render this definition" for FastAPI's OpenAPI 3.1: the page
    must show the generate operation and its request schema, offline."""
    page = browser.new_page()
    page.goto(server.url + "/docs")
    page.wait_for_selector(".opblock-summary-path", timeout=30000)
    text = page.inner_text("body")
    assert "/v1/generate" in text and "/health" in text and "Unable to render" not in text
    page.close()


def test_web_page_shows_the_output_and_its_heat_map(server, browser, generator):
    page = browser.new_page()
    page.goto(server.url + "/")
    sentence = "a b c d e f g"
    page.fill("#source", sentence)
    page.click("#submit")
    page.wait_for_function("document.getElementById('output').textContent.length > 0", timeout=30000)
    expected = generator.generate([sentence])[0]
    assert page.text_content("#output") == expected.text
    assert "score" in page.text_content("#meta")
    assert page.locator("#heatmap tbody tr").count() == len(expected.tokens)  # words only: no </s> row
    assert page.locator("#heatmap tbody tr").first.locator("td").count() == len(sentence.split())
    assert "(up to 60 characters)" in page.text_content("#length-limit")
    assert page.eval_on_selector("#source", "box => box.maxLength") == 60
    # an over-long input shows the server's error instead of an output
    page.fill("#source", "a " * 40)  # the box keeps 60 characters: 30 tokens, over the server's 15
    page.click("#submit")
    page.wait_for_function("document.getElementById('error').textContent.length > 0", timeout=30000)
    assert "has 30 tokens; at most 15" in page.text_content("#error")
    assert page.text_content("#output") == "" and page.locator("#heatmap tr").count() == 0  # nothing stale
    # sentencepiece pieces are shown as words, a word's bytes as its characters; control tokens,
    # </s> and bytes that make no character are left out
    groups = page.evaluate("wordGroups(['<chars_ratio_1.00>', '\u2581The', '\u2581comm', 'ittee', '\u2581caf',"
                           " '<0xC3>', '<0xA9>', '\u2581', '.', '\u2581Z', '<0xC3>', '\u2581', '<0xEF>', '<0xBF>',"
                           " '<0xBD>', '</s>'])")
    assert [(g["label"], g["indices"]) for g in groups] == [
        ("The", [1]), ("committee", [2, 3]), ("café", [4, 5, 6]), (".", [7, 8]), ("Z", [9, 10]),
        ("\ufffd", [11, 12, 13, 14])]
    assert [g["label"] for g in page.evaluate("wordGroups(['a', 'b', '\u2581', '天'])")] == ["a", "b", "\u2423", "天"]
    # alternatives, when asked for, are listed under the output, best first
    page.fill("#source", sentence)
    page.select_option("#nbest", "3")
    page.click("#submit")
    page.wait_for_function("document.getElementById('alternatives').children.length > 0", timeout=30000)
    nbest = generator.generate([sentence], nbest=3)[0]
    assert page.text_content("#output") == nbest.text
    assert page.locator("#alternatives li").all_text_contents() == [g.text for g in nbest.alternatives]
    # whatever the model's default search, the page asks for one that finds n outputs
    for default, expected in (({"strategy": "greedy", "beam": 1}, {"nbest": 3, "strategy": "beam", "beam": 5}),
                              ({"strategy": "beam", "beam": 2}, {"nbest": 3, "beam": 3}),
                              ({"strategy": "sampling", "beam": 5}, {"nbest": 3})):
        assert page.evaluate(f"defaultSearch = {json.dumps(default)}; nbestOptions(3)") == expected
    page.close()


@pytest.fixture(scope="module")
def control_server(control_model):
    with Server(create_app(load(control_model), LIMITS)) as running:
        yield running


def test_control_values_change_outputs_and_bad_ones_get_a_422(control_server, server):
    health = httpx.get(f"{control_server.url}/health").json()
    assert health["control"] == {"attributes": ["chars_ratio"], "defaults": {"chars_ratio": 1.0}}
    assert httpx.get(f"{server.url}/health").json()["control"] == {"attributes": [], "defaults": {}}
    text = "a b c d e f g h i j a b"
    lengths = {}
    for ratio in (0.3, 1.0):
        response = post(control_server, {"texts": [text], "beam": 1, "control": {"chars_ratio": ratio}})
        assert response.status_code == 200
        lengths[ratio] = len(response.json()["outputs"][0]["text"].split())
    assert lengths[0.3] < lengths[1.0]
    for body, message in [
        ({"control": {"shorter": 0.5}}, "unknown attribute 'shorter'; this model knows chars_ratio"),
        ({"control": {"chars_ratio": 9}}, "chars_ratio is 9.0; it must be a number from 0 to 2"),
        ({"control": {"chars_ratio": "low"}}, "control.chars_ratio:"),
    ]:
        response = post(control_server, {"texts": [text], **body})
        assert response.status_code == 422 and message in response.json()["error"]
    response = post(server, {"texts": [text], "control": {"chars_ratio": 0.5}})
    assert response.status_code == 422 and "trained without control tokens" in response.json()["error"]


def test_web_page_slider_changes_the_output_and_shows_the_changes(control_server, browser, control_model):
    generator = load(control_model)
    # a sentence whose output the length token changes (the tiny model does not obey on every one)
    candidates = [" ".join("abcdefghij"[(i * k) % 10] for i in range(12)) for k in (1, 3, 7, 9)]
    text = next(t for t in candidates
                if generator.generate([t], control={"chars_ratio": 0.5})[0].text != generator.generate([t])[0].text)
    page = browser.new_page()
    page.goto(control_server.url + "/")
    page.wait_for_selector("#control-chars_ratio")
    assert "How much shorter" in page.text_content("#controls")
    # at the model's default (chars_ratio 1.0: "0 % shorter"), at the slider's left end
    assert page.text_content("#controls output") == "0 %"
    assert page.eval_on_selector("#control-chars_ratio", "slider => [slider.value, slider.min]") == ["0", "0"]
    page.fill("#source", text)
    with page.expect_response("**/v1/generate"):
        page.click("#submit")
    page.wait_for_function("document.getElementById('output').textContent.length > 0", timeout=30000)
    assert page.text_content("#output") == generator.generate([text])[0].text
    # 50 % shorter (the slider's end): chars_ratio 0.5
    page.eval_on_selector("#control-chars_ratio",
                          "slider => { slider.value = 50; slider.dispatchEvent(new Event('input')); }")
    assert page.text_content("#controls output") == "50 %"
    expected = generator.generate([text], control={"chars_ratio": 0.5})[0].text
    page.click("#submit")
    page.wait_for_function(f"document.getElementById('output').textContent === {json.dumps(expected)}",
                           timeout=30000)
    # what changed is shown: the words removed and added
    removed, added = page.locator("#diff del").count(), page.locator("#diff ins").count()
    assert removed + added > 0 and removed >= len(text.split()) - len(expected.split())
    page.close()


@pytest.fixture(scope="module")
def rating_server(generator, tmp_path_factory):
    from wean.rating.sheet import prepare

    folder = tmp_path_factory.mktemp("rating") / "sheet"
    sources = [f"source sentence {i}" for i in range(6)]
    prepare(sources, {"first_system": [f"first {i}" for i in range(6)], "second_system": [f"second {i}" for i in range(6)]},
            folder, sentences=4, seed=1)
    with Server(create_app(generator, LIMITS, rating_sheet=folder)) as running:
        running.folder = folder
        yield running


def test_the_rating_api_saves_each_rating_and_never_shows_the_key(rating_server, server):
    url = rating_server.url
    sheet = httpx.get(f"{url}/v1/rate/sheet", timeout=30).json()
    assert len(sheet["items"]) == 4 and sheet["rated"] == {} and "adequacy" in sheet["protocol"]
    assert "_system" not in json.dumps(sheet)  # the key's system names are never served
    candidate = sheet["items"][0]["candidates"][0]["id"]
    rating = {"rater": "ann", "candidate": candidate, "adequacy": 4, "fluency": 5, "simplicity": 2}
    response = httpx.post(f"{url}/v1/rate", json=rating, timeout=30)
    assert response.status_code == 200 and response.json() == {"saved": candidate, "rated": 1, "candidates": 8}
    saved = (rating_server.folder / "ratings" / "ann.jsonl").read_text().splitlines()
    assert len(saved) == 1 and json.loads(saved[0])["adequacy"] == 4  # on disk before the answer
    httpx.post(f"{url}/v1/rate", json={**rating, "adequacy": 1}, timeout=30)  # changed: the later one counts
    again = httpx.get(f"{url}/v1/rate/sheet", params={"rater": "ann"}, timeout=30).json()
    assert again["rated"] == {candidate: {"adequacy": 1, "fluency": 5, "simplicity": 2}}
    for body, message in [
        ({**rating, "adequacy": 6}, "adequacy of"),
        ({**rating, "fluency": "5"}, "fluency: Input should be a valid integer"),
        ({**rating, "candidate": "9.9"}, "candidate '9.9' is not on this sheet"),
        ({**rating, "rater": "../../etc/x"}, "rater '../../etc/x': 1-40 letters"),
        ({**rating, "extra": 1}, "extra: Extra inputs are not permitted"),
    ]:
        response = httpx.post(f"{url}/v1/rate", json=body, timeout=30)
        assert response.status_code == 422 and message in response.json()["error"], (body, response.text)
    response = httpx.get(f"{url}/v1/rate/sheet", params={"rater": "a b"}, timeout=30)
    assert response.status_code == 422 and "rater 'a b'" in response.json()["error"]
    assert not (rating_server.folder.parent / "etc").exists()
    # a server started without a sheet has no rating page
    assert httpx.get(f"{server.url}/rate", timeout=30).status_code == 404


def open_rating_page(browser, url: str, rater: str):
    """The rating page, started as ``rater``: the first item shown."""
    page = browser.new_page()
    page.goto(url + "/rate")
    page.wait_for_function("document.getElementById('protocol').textContent.length > 0", timeout=30000)
    page.fill("#rater", rater)
    page.click("#begin")
    page.wait_for_selector(".candidate")
    return page


def test_the_rating_page_saves_each_rating_as_it_is_given_and_resumes(rating_server, browser):
    folder = rating_server.folder
    page = open_rating_page(browser, rating_server.url, "bea")
    assert "adequacy" in page.text_content("#protocol")
    first = page.locator(".candidate").first
    candidate = first.get_attribute("data-id")
    for scale, value in (("adequacy", 5), ("fluency", 4)):
        page.click(f"label[for='{candidate}-{scale}-{value}']")
    assert not (folder / "ratings" / "bea.jsonl").exists()  # not all three scales yet
    with page.expect_response("**/v1/rate"):
        page.click(f"label[for='{candidate}-simplicity-3']")
    page.wait_for_function("document.querySelector('.candidate .status').textContent === 'saved'", timeout=30000)
    saved = json.loads((folder / "ratings" / "bea.jsonl").read_text().splitlines()[-1])
    assert (saved["candidate"], saved["adequacy"], saved["fluency"], saved["simplicity"]) == (candidate, 5, 4, 3)
    assert "1 of 8 candidates rated" in page.text_content("#progress")
    # a new page for the same rater resumes where she was, her rating shown
    page.close()
    page = open_rating_page(browser, rating_server.url, "bea")
    assert "1 of 8 candidates rated" in page.text_content("#progress")
    assert page.is_checked(f"[id='{candidate}-adequacy-5']")
    page.click("#next")
    assert "item 2 of 4" in page.text_content("#progress")
    page.close()


GUARDED = dataclasses.replace(LIMITS, header_timeout_s=1.0, body_timeout_s=1.0, max_connections=20)


@pytest.fixture(scope="module")
def guarded_server(generator):
    with Server(create_app(generator, GUARDED), GUARDED) as running:
        yield running


def connect(server):
    import socket

    host, port = server.url.removeprefix("http://").split(":")
    connection = socket.create_connection((host, int(port)), timeout=30)
    return connection


def answer(connection) -> tuple[int, dict]:
    """The status and JSON body of the one response on ``connection``, read to its close."""
    data = b""
    while chunk := connection.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def test_clients_that_never_finish_their_headers_are_answered_408_and_let_go(guarded_server):
    silent, slow = connect(guarded_server), connect(guarded_server)
    slow.sendall(b"POST /v1/generate HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the rest
    started = time.monotonic()
    for connection in (silent, slow):
        status, body = answer(connection)
        assert status == 408 and "headers not received within 1 s" in body["error"]
    assert time.monotonic() - started < 10


def test_a_body_that_stops_arriving_gets_a_408(guarded_server):
    stalled = connect(guarded_server)
    stalled.sendall(b"POST /v1/generate HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                    b"content-length: 100\r\n\r\n{\"texts\": [")
    status, body = answer(stalled)
    assert status == 408 and "request body stalled" in body["error"]


def test_past_the_connection_cap_slow_clients_give_way_and_normal_requests_are_served(guarded_server):
    """1,100 such clients once took every file descriptor; here the cap is 20: 40 slow clients
    get 503s (or 408s when their time is up) while requests keep being answered."""
    slow = []
    for _ in range(40):
        connection = connect(guarded_server)
        connection.sendall(b"GET /health HTTP/1.1\r\n")
        slow.append(connection)
    for _ in range(3):
        assert httpx.get(f"{guarded_server.url}/health", timeout=30).status_code == 200
    statuses = [answer(connection)[0] for connection in slow]
    assert set(statuses) <= {503, 408} and statuses.count(503) >= 20


def test_errors_of_the_http_layer_are_json(guarded_server):
    broken = connect(guarded_server)
    broken.sendall(b"NOT HTTP AT ALL\r\n\r\n")
    status, body = answer(broken)
    assert status == 400 and body["error"].startswith("not a valid HTTP request")


@pytest.mark.parametrize("declared, close", [(True, False), (False, False), (True, True)])
def test_a_client_still_sending_an_oversized_body_gets_the_413(guarded_server, declared, close):
    """Answered before its body is read, a client that sends it all before reading used to get a
    connection reset; the rest of the body is now read and dropped, and the 413 reaches it, also
    when the request asked to close the connection after (urllib always does)."""
    body = json.dumps({"texts": ["a" * 1000] * 4000}).encode()  # 4 MB, the limit 2,000 bytes
    connection = connect(guarded_server)
    if declared:
        connection.sendall(b"POST /v1/generate HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                           + (b"connection: close\r\n" if close else b"")
                           + f"content-length: {len(body)}\r\n\r\n".encode() + body)
    else:
        chunks = b"".join(f"{len(body[i:i + 65536]):x}\r\n".encode() + body[i:i + 65536] + b"\r\n"
                          for i in range(0, len(body), 65536))
        connection.sendall(b"POST /v1/generate HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                           b"transfer-encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n")
    status, answered = answer(connection)
    assert status == 413 and answered == {"error": "request body over 2000 bytes"}
    assert httpx.get(f"{guarded_server.url}/health", timeout=30).status_code == 200


def test_a_flood_of_one_log_message_is_cut_to_a_few_lines_and_a_count():
    from wean.server.connections import RateLimitedLog

    logger = logging.getLogger("test.flood")
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger.addHandler(handler)
    logger.addFilter(RateLimitedLog(per_window=5, window_s=0.2))
    try:
        for _ in range(1000):
            logger.error("socket.send() raised exception.")
        time.sleep(0.25)
        logger.error("socket.send() raised exception.")
    finally:
        logger.removeHandler(handler)
    assert len(records) == 6 and records[-1].getMessage().endswith("(995 more like this were not logged)")


def test_a_body_that_trickles_in_is_cut_at_its_deadline(generator):
    """A byte every half second keeps each pause under body_timeout_s; the whole body still has
    body_deadline_s."""
    limits = dataclasses.replace(GUARDED, body_deadline_s=2.0)
    with Server(create_app(generator, limits), limits) as running:
        trickle = connect(running)
        trickle.sendall(b"POST /v1/generate HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                        b"content-length: 100\r\n\r\n")
        started = time.monotonic()
        trickle.settimeout(0.5)
        data = b""
        while not data and time.monotonic() - started < 10:
            try:
                trickle.sendall(b" ")
                data = trickle.recv(65536)
            except TimeoutError:
                continue
        elapsed = time.monotonic() - started
        trickle.settimeout(5)
        while not data.endswith(b"}"):  # the rest of the answer
            data += trickle.recv(65536)
        assert data.startswith(b"HTTP/1.1 408") and b"request body not received within 2 s" in data
        assert 1.5 < elapsed < 5


def test_past_the_connection_cap_a_trickling_body_gives_way_to_a_normal_request(generator, monkeypatch, caplog):
    """Clients whose bodies trickle in hold no request the server can answer: past the cap, the
    one whose body has arrived longest is closed to make room, and a normal request is served."""
    import threading

    from wean.server import connections

    monkeypatch.setattr(connections, "SLOW_BODY_S", 0.5)
    limits = dataclasses.replace(GUARDED, max_connections=4, body_deadline_s=60.0)
    with Server(create_app(generator, limits), limits) as running:
        trickling, stop = [], threading.Event()
        for _ in range(4):
            connection = connect(running)
            connection.sendall(b"POST /v1/generate HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                               b"content-length: 100\r\n\r\n ")
            trickling.append(connection)

        def trickle():
            while not stop.wait(0.3):
                for connection in trickling:
                    try:
                        connection.sendall(b" ")
                    except OSError:
                        pass

        thread = threading.Thread(target=trickle, daemon=True)
        thread.start()
        time.sleep(1.0)  # every body now older than SLOW_BODY_S
        started = time.monotonic()
        response = httpx.post(f"{running.url}/v1/generate", json={"texts": ["a b c"]}, timeout=30)
        assert response.status_code == 200 and time.monotonic() - started < 3
        stop.set()
        thread.join()
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]  # no traceback


def test_a_normal_request_right_after_a_burst_of_slow_bodies_is_served(generator, caplog):
    """Before any of a burst's bodies has been arriving long enough to count as slow, a newcomer
    past the cap is served all the same (within HELD_ROOM), not turned away with a 503."""
    limits = dataclasses.replace(GUARDED, max_connections=4, body_deadline_s=60.0)
    with Server(create_app(generator, limits), limits) as running:
        stalled = []
        for _ in range(4):
            connection = connect(running)
            connection.sendall(b"POST /v1/generate HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                               b"content-length: 100\r\n\r\n{")
            stalled.append(connection)
        time.sleep(0.1)  # the burst is in; none of its bodies is slow yet
        started = time.monotonic()
        response = httpx.post(f"{running.url}/v1/generate", json={"texts": ["a b c"]}, timeout=30)
        assert response.status_code == 200 and time.monotonic() - started < 3
        for connection in stalled:
            connection.close()
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]


def test_an_accept_out_of_file_descriptors_is_one_line():
    import errno

    from wean.server.connections import QuietAcceptErrors

    error = OSError(errno.EMFILE, "Too many open files")
    record = logging.LogRecord("asyncio", logging.ERROR, __file__, 1, "socket.accept() out of system resource\n"
                               "socket: <socket.socket fd=6>", (), (OSError, error, None))
    assert QuietAcceptErrors().filter(record) and record.exc_info is None
    assert record.getMessage() == ("socket.accept() out of system resource ([Errno 24] Too many open files): new "
                                   "connections wait a second")
