"""``wean serve``: a model behind HTTP. FastAPI app, served by uvicorn.

- ``POST /v1/generate``: texts in, outputs with scores and timings out (attention on request);
  concurrent requests share batches (:mod:`wean.server.batcher`).
- ``GET /health``: the model's name, its default search options, the batches run so far, the texts waiting, the requests
  dropped unrun (client gone, or waited longer than ``--max-queue-s``), stopped mid-search (client
  gone) and timed out (``--max-request-s``).
- ``GET /``: a page where a person types a sentence and sees its output and attention heat map.
- ``GET /rate``, ``/v1/rate/...``: with ``rating_sheet``, a page that rates a blind sheet of
  ``wean rate prepare`` and saves each rating as it is given (:mod:`wean.server.rating`).
- ``GET /docs``: the OpenAPI documentation FastAPI writes from the types below (served from local
  files: it works offline).

Errors are JSON ``{"error": "one line"}`` with a 4xx status (503 when too much work is waiting);
every request is logged on one line with its latency.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import resource
import secrets
import time
import warnings
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi_offline import FastAPIOffline
from pydantic import BaseModel, ConfigDict, Field, create_model
from starlette.exceptions import HTTPException

from wean.errors import WeanError
from wean.inference.generator import Generator, UntrainedControlWarning
from wean.search_options import SearchOptions, capabilities, option_kind
from wean.server.batcher import DynamicBatcher, Options, Overloaded
from wean.server.body_limit import StreamedBodyLimit
from wean.server.connections import BACKLOG, REFUSING_ROOM, QuietAcceptErrors, RateLimitedLog, guarded_protocol
from wean.server.limits import Limits
from wean.server.rating import rating_routes
from wean.textio import printable

log = logging.getLogger("wean.serve")
PAGE = Path(__file__).parent / "static" / "index.html"


class GenerateRequestFields(BaseModel):
    # strict: "beam": true or "attention": "yes" is refused, not read as 1 or True
    model_config = ConfigDict(extra="forbid", strict=True)

    texts: list[str] = Field(min_length=1, description="inputs, untokenized for a plain-text model")
    attention: bool = Field(False, description="also return each output's attention weights")
    control: dict[str, float] | None = Field(
        None, description="for a model trained with control tokens: values asked for, e.g. "
        '{"chars_ratio": 0.8, "levenshtein": 0.6}; names not given take the model\'s defaults (GET /health)')


# A field per search option (wean.search_options.SearchOptions), not given: the model's default;
# their ranges are checked there, as for every interface.
GenerateRequest = create_model(
    "GenerateRequest", __base__=GenerateRequestFields,
    **{name: (option_kind(name) | None, Field(None, description=SearchOptions.help(name)))
       for name in SearchOptions.names()},
)


class Attention(BaseModel):
    source_tokens: list[str]
    output_tokens: list[str] = Field(description="the model's output tokens, then </s>")
    weights: list[list[float]] = Field(description="one row per output token: weights over source tokens")


class Alternative(BaseModel):
    text: str
    score: float
    log_prob: float


class Output(BaseModel):
    text: str
    score: float | None = Field(description="the search's ranking score; none for the source the fallback returned. "
                                "Its digits past the fifth significant one may depend on the requests that shared "
                                "its batch: the products sum in another order")
    log_prob: float | None = Field(description="sum of the output's token log-probabilities; none likewise")
    attention: Attention | None = None
    warning: str | None = Field(None, description="e.g. a sentence too long for the model, returned unchanged")
    fell_back: bool = Field(False, description="the source returned unchanged: every output found (for each sentence) "
                            "failed a fidelity or meaning check (alternatives: those outputs, rejected)")
    alternatives: list[Alternative] | None = Field(
        None, description="with nbest above 1: the rest of the n-best list, best first")


class Timings(BaseModel):
    total_ms: float
    queue_ms: float = Field(description="waiting for a batch to start")
    generate_ms: float = Field(description="the batch's model call")
    batch_texts: int = Field(description="texts in the batch this request ran in")
    batch_requests: int = Field(description="requests that shared that batch")


class GenerateResponse(BaseModel):
    model: str
    outputs: list[Output]
    timings: Timings


class ClientLeft(Exception):
    pass


async def _unless_client_leaves(request: Request, work):
    """``await work``, cancelled if the client disconnects first (then ClientLeft): a request
    nobody will read must not keep its place in the queue."""
    async def disconnected():
        while (await request.receive())["type"] != "http.disconnect":
            pass

    task, watcher = asyncio.ensure_future(work), asyncio.ensure_future(disconnected())
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
    if not task.done():
        task.cancel()
        raise ClientLeft
    return task.result()


def _error(request: Request, status: int, message: str) -> JSONResponse:
    request.state.log_note = f": {message}"  # the operator's log line says why
    return JSONResponse({"error": message}, status_code=status)


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


@dataclass(frozen=True)
class Access:
    """Who may use the server. ``token``: requests under /v1/ must send ``Authorization:
    Bearer <token>``. ``allowed_hosts``: the names the Host header may give ("*": any); a web
    page of another site that resolves its own name to 127.0.0.1 (DNS rebinding) sends its own
    name, and is refused."""

    token: str | None = None
    allowed_hosts: tuple[str, ...] = LOOPBACK_NAMES


def host_name(header: str) -> str:
    """The name of a Host header, without its port: "[::1]:8000" -> "::1"."""
    if header.startswith("["):
        return header[1:].split("]", 1)[0].lower()
    return header.rsplit(":", 1)[0].lower() if header.count(":") == 1 else header.lower()


def create_app(generator: Generator, limits: Limits | None = None, access: Access | None = None,
               rating_sheet: Path | None = None) -> FastAPI:
    """``rating_sheet``: a folder of ``wean rate prepare``, rated at ``/rate``."""
    limits = limits or Limits()
    access = access or Access()
    name = generator.config.name

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        batcher = DynamicBatcher(generator, limits.max_batch_size, limits.max_wait_ms, limits.max_queue_texts,
                                 limits.max_queue_s, limits.max_request_s)
        batcher.start()
        app.state.batcher = batcher
        parameters = sum(p.numel() for p in generator.model.parameters())
        log.info("model %s: %s parameters, vocabulary %d; batches of up to %d texts, %g ms wait",
                 name, f"{parameters:,}", len(generator.assets.target_vocabulary),
                 limits.max_batch_size, limits.max_wait_ms)
        yield
        await batcher.stop()

    # /docs from fastapi-offline's copy of Swagger UI (5.x, which reads FastAPI's OpenAPI 3.1):
    # FastAPI's own page loads it from a CDN (blank offline)
    app = FastAPIOffline(title="wean", version="1", lifespan=lifespan, docs_url="/docs", redoc_url=None,
                         description=f"Text generation with the wean model `{name}`.")
    app.add_middleware(StreamedBodyLimit, max_bytes=limits.max_body_bytes, timeout_s=limits.body_timeout_s,
                       deadline_s=limits.body_deadline_s)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError):
        problems = []
        for problem in error.errors():
            where = ".".join(str(part) for part in problem["loc"] if part != "body") or "request body"
            problems.append(f"{where}: {problem['msg']}")
        return _error(request, 422, "; ".join(problems))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException):
        return _error(request, error.status_code, str(error.detail))

    @app.middleware("http")
    async def limit_and_log(request: Request, call_next):
        started = time.perf_counter()
        host = host_name(request.headers.get("host", ""))
        length = request.headers.get("content-length")  # a declared length is refused before reading
        if "*" not in access.allowed_hosts and host not in access.allowed_hosts:
            response = _error(request, 400, f"Host {host!r} is not a name this server answers to "
                              f"(wean serve --allowed-hosts)")
        elif access.token and request.url.path.startswith("/v1/") and not secrets.compare_digest(
                request.headers.get("authorization", "").encode(), f"Bearer {access.token}".encode()):
            response = _error(request, 401, "this server needs 'Authorization: Bearer <token>' (wean serve --token-file)")
            response.headers["WWW-Authenticate"] = "Bearer"
        elif length is not None and (not length.isdigit() or int(length) > limits.max_body_bytes):
            response = _error(request, 413, f"request body over {limits.max_body_bytes} bytes")
        else:
            response = await call_next(request)
        note = getattr(request.state, "log_note", "")
        log.info('%s "%s %s" %d %.1f ms%s', request.client.host if request.client else "-", printable(request.method),
                 printable(request.url.path), response.status_code, (time.perf_counter() - started) * 1000,
                 printable(note))
        return response

    if rating_sheet is not None:
        if access.token:
            raise WeanError("a rating sheet cannot be served with an access token: the rating page sends none")

        app.include_router(rating_routes(rating_sheet))

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page():
        return HTMLResponse(PAGE.read_text(encoding="utf-8"))

    @app.get("/health")
    async def health(request: Request):
        control, batcher = generator.control, request.app.state.batcher
        return {"status": "ok", "model": name, "batches": batcher.batches, "queued_texts": batcher.queued_texts,
                "dropped_unrun": {"client_gone": batcher.abandoned, "waited_too_long": batcher.expired},
                "timed_out_mid_search": batcher.timed_out,
                "client_gone_mid_batch": {"stopped_mid_search": batcher.stopped_mid_search,
                                          "finished_before": batcher.finished_before_gone},
                "control": {"attributes": control.attributes, "defaults": control.defaults},
                "search": dataclasses.asdict(generator.search_options()),
                "limits": {"max_texts": limits.max_texts, "max_chars": limits.max_chars}}

    @app.post("/v1/generate", response_model=GenerateResponse, response_model_exclude_none=True,
              responses={413: {"description": "too many or too long texts"}, 422: {"description": "bad request"},
                         503: {"description": "too much work waiting; try again later"}})
    async def generate(body: GenerateRequest, request: Request):
        started = time.perf_counter()
        if len(body.texts) > limits.max_texts:
            return _error(request, 413, f"{len(body.texts)} texts; this server takes at most {limits.max_texts} per request")
        for number, text in enumerate(body.texts):
            if not text.strip():
                return _error(request, 422, f"texts[{number}] is empty")
            if len(text) > limits.max_chars:
                return _error(request, 413, f"texts[{number}] has {len(text)} characters; at most {limits.max_chars}")
            tokens = len(generator.tokenizer.encode(generator.plain_text.to_model_source(text)))
            if tokens > limits.max_tokens:
                return _error(request, 413, f"texts[{number}] has {tokens} tokens; at most {limits.max_tokens}")
        given = {name: getattr(body, name) for name in SearchOptions.names()}
        try:
            search = generator.search_options(**given)
        except WeanError as error:
            return _error(request, 422, str(error))
        # hypotheses per text, in the search that runs: a model that reranks by itself widens its beam
        _, searched = generator.own_rerank(search)
        width = capabilities(searched.strategy).width(searched)
        for option, value in (("beam", body.beam), ("nbest", body.nbest)):
            if value is not None and value > limits.max_beam:
                return _error(request, 422, f"{option} {value}; at most {limits.max_beam}")
        if body.max_length is not None and body.max_length > limits.max_output_length:
            return _error(request, 422, f"max_length {body.max_length}; at most {limits.max_output_length}")
        steps = len(body.texts) * width * search.max_length
        if steps > limits.max_request_steps:
            return _error(request, 413, f"{steps} decoder steps asked for (texts x hypotheses x max_length = "
                          f"{len(body.texts)} x {width} x {search.max_length}); at most {limits.max_request_steps}")
        try:
            generator.control_prefix(body.control)
        except WeanError as error:
            return _error(request, 422, str(error))
        control = tuple(sorted(body.control.items())) if body.control else None
        options = Options(search, control)
        try:
            generations, batch = await _unless_client_leaves(request, request.app.state.batcher.generate(body.texts, options))
        except ClientLeft:
            request.state.log_note = ": the client went away; not generated unless its batch had started"
            return Response(status_code=499)  # nginx's "client closed request": nobody reads it
        except Overloaded as error:
            return _error(request, 503, str(error))
        except WeanError as error:
            return _error(request, 422, str(error))
        untrained = generator.untrained_control(body.control)  # said in each output's warning
        outputs = []
        for generation in generations:
            attention = None
            if body.attention:
                attention = Attention(
                    source_tokens=generation.source_tokens,
                    output_tokens=generation.tokens + ["</s>"],
                    weights=[[round(float(w), 5) for w in row] for row in
                             (generation.attention.to_dense() if generation.attention.is_sparse else generation.attention)],
                )
            warning = "\n".join(filter(None, (generation.warning, untrained))) or None
            alternatives = [Alternative(text=a.text, score=a.score, log_prob=a.log_prob)
                            for a in generation.alternatives] if search.nbest > 1 else None
            unchanged = generation.returned_source
            outputs.append(Output(text=generation.text, score=None if unchanged else generation.score,
                                  log_prob=None if unchanged else generation.log_prob, attention=attention,
                                  warning=warning, fell_back=unchanged, alternatives=alternatives))
        request.state.log_note = f" ({len(body.texts)} texts, batch of {batch.texts} from {batch.requests} requests)"
        timings = Timings(total_ms=(time.perf_counter() - started) * 1000, queue_ms=batch.queue_ms,
                          generate_ms=batch.generate_ms, batch_texts=batch.texts, batch_requests=batch.requests)
        return GenerateResponse(model=name, outputs=outputs, timings=timings)

    return app


def uvicorn_config(app: FastAPI, host: str, port: int, limits: Limits, log_level: str = "info"):
    """uvicorn's settings for ``app``: its HTTP protocol with wean's connection guards
    (:mod:`wean.server.connections`), the connection cap kept below the open-file limit."""

    limit = open_file_limit()
    # room for the files of logs and the model, the listener, refused connections lingering and
    # closed ones not yet gone (connections.py: REFUSING_ROOM + BACKLOG), and the connections
    # asyncio accepts in one go before any is counted (up to BACKLOG)
    connections = min(limits.max_connections, limit - files_open() - 64 - REFUSING_ROOM - 2 * BACKLOG)
    if connections < limits.max_connections:
        log.warning("--max-connections %d lowered to %d: the process may open %d files and has %d open",
                    limits.max_connections, connections, limit, files_open())
    # ws="none": wean serves no WebSocket, and an upgraded connection would escape the guards
    return uvicorn.Config(app, host=host, port=port, access_log=False, log_level=log_level, backlog=BACKLOG, ws="none",
                          http=guarded_protocol(limits.header_timeout_s, limits.body_timeout_s, max(connections, 1)))


def files_open() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:  # no /proc (macOS): a generous guess
        return 256


def open_file_limit() -> int:
    """The process's limit on open files (each connection holds one), after raising it to the
    hard limit where it is lower: a server wants every descriptor it may have."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
        wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def serve(generator: Generator, host: str, port: int, limits: Limits | None = None, access: Access | None = None,
          rating_sheet: Path | None = None) -> None:
    limits = limits or Limits()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("asyncio").addFilter(QuietAcceptErrors())  # first: the one line is what is rate-limited
    for name in ("asyncio", "uvicorn.error"):  # broken connections in numbers must not flood the log
        logging.getLogger(name).addFilter(RateLimitedLog())
    warnings.simplefilter("ignore", UntrainedControlWarning)  # each answer says it, in its outputs' warning
    uvicorn.Server(uvicorn_config(create_app(generator, limits, access, rating_sheet), host, port, limits)).run()
