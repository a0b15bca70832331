"""Dynamic batching: texts of concurrent requests are gathered into one ``generate`` call.

A request waits at most ``max_wait_ms`` for others to join it, and a batch holds at most
``max_batch_size`` texts (a larger request runs alone). Only requests with the same generation
options share a batch; the others wait for the next one, in arrival order. One worker thread
runs the model, so requests never compete for the CPU or GPU inside PyTorch.

Work nobody waits for is not done: a request whose client went away (its future cancelled) is
dropped when its batch is formed, and so is one that waited longer than ``max_queue_s``
(:class:`Overloaded`); if its client goes while its batch runs, its texts leave the search at the
next step (``Generator.generate``'s ``wanted``) and the rest of the batch goes on, and so do those
of a request still searched ``max_request_s`` after it arrived (:class:`Overloaded`). A new
request is refused at once while ``max_queue_texts`` texts wait.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from wean.inference.generator import Generator
from wean.inference.outputs import Generation
from wean.search_options import SearchOptions


@dataclass(frozen=True)
class Options:
    """What requests must share to share a batch: all their search options (resolved, so that a
    default given and one left out are alike) and their control values."""

    search: SearchOptions = field(default_factory=SearchOptions)
    control: tuple[tuple[str, float], ...] | None = None  # (name, value) pairs: comparable


class Overloaded(Exception):
    """The server cannot take or finish this request in time (the app answers 503)."""


@dataclass
class BatchInfo:
    texts: int  # texts in the batch this request ran in
    requests: int  # requests that shared it
    queue_ms: float  # from arrival to the start of the batch
    generate_ms: float  # the batch's generate call


@dataclass
class _Job:
    texts: list[str]
    options: Options
    future: asyncio.Future
    arrived: float = field(default_factory=time.perf_counter)
    queued: bool = True  # counted in DynamicBatcher.queued_texts
    gone: bool = False  # its client went away: set on the event loop, read by the model's thread
    deadline: float = float("inf")  # when its search stops (time.perf_counter)

    def wanted(self) -> bool:
        return not self.gone and time.perf_counter() < self.deadline


class DynamicBatcher:
    def __init__(self, generator: Generator, max_batch_size: int = 32, max_wait_ms: float = 10.0,
                 max_queue_texts: int = 256, max_queue_s: float = 30.0, max_request_s: float = 60.0):
        self.generator = generator
        self.max_batch_size = max_batch_size
        self.max_wait = max_wait_ms / 1000
        self.max_queue_texts = max_queue_texts
        self.max_queue_s = max_queue_s
        self.max_request_s = max_request_s
        self._queue: asyncio.Queue[_Job] | None = None
        self._waiting: deque[_Job] = deque()  # taken from the queue, but for a later batch
        self._worker: asyncio.Task | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wean-generate")
        self.queued_texts = 0  # texts of requests not yet in a batch
        self.batches = 0
        self.abandoned = 0  # requests dropped unrun: their client went away
        self.stopped_mid_search = 0  # requests whose client went away while they were searched: stopped there
        self.finished_before_gone = 0  # requests whose search had ended when their client went (batch still running)
        self.expired = 0  # requests dropped unrun: they waited longer than max_queue_s
        self.timed_out = 0  # requests stopped mid-search: still searched max_request_s after they arrived

    def start(self) -> None:
        self._queue = asyncio.Queue()
        self._worker = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            try:
                await self._worker
            except asyncio.CancelledError:
                pass
        self._executor.shutdown(wait=True)

    async def generate(self, texts: list[str], options: Options) -> tuple[list[Generation], BatchInfo]:
        """The outputs for ``texts`` once a batch has run them. Cancelling the awaiting task (the
        client went away) withdraws the request if it has not started."""
        if self.queued_texts + len(texts) > self.max_queue_texts:
            raise Overloaded(f"{self.queued_texts} texts are waiting already; try again later")
        job = _Job(texts, options, asyncio.get_running_loop().create_future())
        job.deadline = job.arrived + self.max_request_s
        self.queued_texts += len(texts)
        job.future.add_done_callback(lambda future: self._withdraw(job) if future.cancelled() else None)
        await self._queue.put(job)
        return await job.future

    def _withdraw(self, job: _Job) -> None:
        job.gone = True
        self._unqueue(job)

    def _unqueue(self, job: _Job) -> None:
        """``job`` no longer waits: it entered a batch, or its client went away."""
        if job.queued:
            job.queued = False
            self.queued_texts -= len(job.texts)

    def _still_wanted(self, job: _Job, now: float) -> bool:
        """False for a job nobody waits for (cancelled) or one that waited too long (failed)."""
        if job.future.done():
            self.abandoned += 1
            return False
        if now - job.arrived > self.max_queue_s:
            self.expired += 1
            job.future.set_exception(Overloaded(f"waited over {self.max_queue_s:g} s for the model; try again later"))
            return False
        return True

    async def _next_job(self, timeout: float | None) -> _Job | None:
        if self._waiting:
            return self._waiting.popleft()
        try:
            if timeout is None:
                return await self._queue.get()
            return await asyncio.wait_for(self._queue.get(), max(timeout, 0))
        except asyncio.TimeoutError:
            return None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            first = await self._next_job(None)
            batch, size = [first], len(first.texts)
            deadline = time.perf_counter() + self.max_wait
            postponed = []
            while size < self.max_batch_size:
                job = await self._next_job(deadline - time.perf_counter())
                if job is None:
                    break
                if job.options != first.options or size + len(job.texts) > self.max_batch_size:
                    postponed.append(job)
                    if size + len(job.texts) > self.max_batch_size:
                        break
                    continue
                batch.append(job)
                size += len(job.texts)
            self._waiting.extendleft(reversed(postponed))
            started = time.perf_counter()
            for job in batch:
                self._unqueue(job)
            batch = [job for job in batch if self._still_wanted(job, started)]
            if not batch:
                continue
            size = sum(len(job.texts) for job in batch)
            texts = [text for job in batch for text in job.texts]
            job_of_text = [job for job in batch for _ in job.texts]
            try:
                generations = await loop.run_in_executor(
                    self._executor, self._generate, texts, first.options, lambda i: job_of_text[i].wanted()
                )
            except Exception as error:  # every request of the batch learns why
                for job in batch:
                    if not job.future.done():
                        job.future.set_exception(error)
                continue
            self.batches += 1
            generate_ms = (time.perf_counter() - started) * 1000
            offset = 0
            for job in batch:
                info = BatchInfo(size, len(batch), (started - job.arrived) * 1000, generate_ms)
                outputs = generations[offset : offset + len(job.texts)]
                offset += len(job.texts)
                stopped = None in outputs  # the search asks only about texts it still runs
                if job.future.done():  # its client went away while the batch ran
                    if stopped:
                        self.stopped_mid_search += 1
                    else:
                        self.finished_before_gone += 1
                elif stopped:
                    self.timed_out += 1
                    job.future.set_exception(Overloaded(f"took over {self.max_request_s:g} s; try again later"))
                else:
                    job.future.set_result((outputs, info))

    def _generate(self, texts: list[str], options: Options, wanted) -> list[Generation | None]:
        return self.generator.generate(
            texts, batch_size=self.max_batch_size, control=dict(options.control) if options.control else None,
            wanted=wanted, **dataclasses.asdict(options.search),
        )
