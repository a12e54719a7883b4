"""A fair share of the solver's threads for every client (issue 28, item 4).

The solver's searches are the service's one expensive thing: a Solve may search for seconds on
a worker thread. With one shared FIFO queue in front of the workers, one client's long Solves
took every worker and every place in the queue, and another client's easy Solve waited behind
them until its budget was gone. ``FairPool`` stands in front of the threads instead:

* each client has its own FIFO queue, and at most ``per_client_running`` of its searches run at
  once (its share of the CPU), whatever else is idle;
* when a worker is free, the client to go next is the one that has used the least worker time
  recently (least attained service: each search's seconds on a worker, halved every
  ``half_life`` seconds, plus the time its running searches have had so far), ties to the call
  that came first. A client that asks rarely goes ahead of one with a backlog, however many
  clients there are; clients with equal use take turns;
* at most ``per_client_queued`` searches wait per client and ``queued`` in all: beyond them
  ``PoolFull`` (the service answers RESOURCE_EXHAUSTED with a RetryInfo), before anything waits;
* a search that has not started by its ``start_by`` (monotonic time: the caller's budget or
  deadline) leaves the queue with ``NotStarted`` and never runs;
* a caller that is cancelled while its search waits takes it out of the queue; while it runs,
  its ``stop`` is called (the solver's stop flag) and the worker stays counted until the search
  has really ended, so a cancelled search cannot let more searches run than there are threads.

All bookkeeping runs on the event loop (a worker's end is handed back with
``call_soon_threadsafe``), so it needs no lock. The clients are whatever the caller names: the
service uses the identity its limits count calls by (``limits.current_client``).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")

HALF_LIFE = 30.0  # seconds after which a client's past use of the workers counts half
RETRY_AFTER = 1.0  # seconds a refused client is asked to wait (a search's budget is seconds)
_FORGET_BELOW = 0.001  # seconds of decayed use below which an idle client is forgotten


class PoolFull(Exception):
    """The search was refused before it waited: the client's queue, or the pool's, is full."""

    def __init__(self, what: str, limit: int, retry_after: float = RETRY_AFTER) -> None:
        super().__init__(f"too many {what} (at most {limit})")
        self.what, self.limit, self.retry_after = what, limit, retry_after


class NotStarted(Exception):
    """The search was still queued when its start-by time came: it never ran."""


@dataclass(eq=False)
class _Job(Generic[T]):
    client: str
    work: Callable[[], T]
    stop: Callable[[], None]
    seq: int  # arrival order: ties go to the earlier call
    done: asyncio.Future[T]
    expiry: asyncio.TimerHandle | None = None
    started: float = 0.0  # monotonic; 0: still queued
    ended: bool = False  # the work has returned (or raised) on its worker


@dataclass(eq=False)
class _Client:
    queue: deque[_Job[Any]] = field(default_factory=deque)
    running: list[_Job[Any]] = field(default_factory=list)


class FairPool:
    """``threads`` worker threads shared fairly among clients (see the module's docstring)."""

    def __init__(
        self,
        threads: int,
        *,
        per_client_running: int = 1,
        per_client_queued: int = 4,
        queued: int = 100,
        name: str = "solve",
        half_life: float = HALF_LIFE,
    ) -> None:
        self.threads = max(1, threads)
        self.per_client_running = max(1, per_client_running)
        self.per_client_queued = max(0, per_client_queued)
        self.queued_max = max(0, queued)
        self.half_life = half_life
        self._executor = ThreadPoolExecutor(self.threads, thread_name_prefix=name)
        self._clients: dict[str, _Client] = {}  # clients with a search queued or running
        self._used: dict[str, tuple[float, float]] = {}  # client → (worker seconds, as of when)
        self._queued = 0
        self._running = 0
        self._seq = 0
        self._closed = False

    @property
    def queued(self) -> int:
        return self._queued

    @property
    def running(self) -> int:
        return self._running

    async def run(
        self, client: str, work: Callable[[], T], *, stop: Callable[[], None], start_by: float | None = None
    ) -> T:
        """``work()`` on a worker, in ``client``'s turn; its result or exception. Raises
        ``PoolFull`` (nothing queued) or ``NotStarted`` (it waited past ``start_by``)."""
        if self._closed:
            raise RuntimeError("the solver's pool is closed")
        loop = asyncio.get_running_loop()
        self.check_room(client)
        entry = self._clients.get(client)
        can_start = self._can_start(entry)
        if entry is None:
            entry = self._clients[client] = _Client()
        self._seq += 1
        job: _Job[T] = _Job(client, work, stop, self._seq, loop.create_future())
        if can_start:
            self._start(job, entry, loop)
        else:
            entry.queue.append(job)
            self._queued += 1
            if start_by is not None:
                job.expiry = loop.call_later(max(0.0, start_by - time.monotonic()), self._expire, job)
        try:
            return await job.done
        except asyncio.CancelledError:
            if not job.started:
                self._unqueue(job)
            elif not job.ended:  # (cancelling this task cancelled ``job.done`` too: not a sign)
                job.stop()  # the worker stays counted until the search has ended (``_ended``)
            raise

    def _can_start(self, entry: _Client | None) -> bool:
        """Whether a new search of the client of ``entry`` would start at once (else it waits)."""
        return self._running < self.threads and (
            entry is None or (len(entry.running) < self.per_client_running and not entry.queue)
        )

    def check_room(self, client: str) -> None:
        """Raise ``PoolFull`` if a search of ``client``'s would be refused now: what ``run``
        checks first, for a caller to refuse before it does any work for the search (a client
        that ignores the RetryInfo then costs no store call per refusal)."""
        entry = self._clients.get(client)
        if self._can_start(entry):
            return
        if (len(entry.queue) if entry is not None else 0) >= self.per_client_queued:
            raise PoolFull("solver searches queued from one client", self.per_client_queued)
        if self._queued >= self.queued_max:
            raise PoolFull("solver searches queued on this server", self.queued_max)

    def _unqueue(self, job: _Job[Any]) -> None:
        entry = self._clients.get(job.client)
        if entry is None or job not in entry.queue:
            return
        entry.queue.remove(job)
        self._queued -= 1
        if job.expiry is not None:
            job.expiry.cancel()
        self._forget_if_idle(job.client, entry)

    def _expire(self, job: _Job[Any]) -> None:
        if job.started or job.done.done():
            return
        self._unqueue(job)
        job.done.set_exception(NotStarted())

    def _start(self, job: _Job[Any], entry: _Client, loop: asyncio.AbstractEventLoop) -> None:
        if job.expiry is not None:
            job.expiry.cancel()
        job.started = time.monotonic()
        entry.running.append(job)
        self._running += 1

        def ended(future: Future[Any]) -> None:  # on the worker thread
            try:
                loop.call_soon_threadsafe(self._ended, job, future)
            except RuntimeError:  # the loop is closed: nobody is waiting any more
                pass

        self._executor.submit(job.work).add_done_callback(ended)

    def _ended(self, job: _Job[Any], future: Future[Any]) -> None:
        job.ended = True
        entry = self._clients[job.client]
        entry.running.remove(job)
        self._running -= 1
        now = time.monotonic()
        self._used[job.client] = (self._past_use(job.client, now) + (now - job.started), now)
        if not job.done.done():
            error = future.exception()
            if error is not None:
                job.done.set_exception(error)
            else:
                job.done.set_result(future.result())
        self._forget_if_idle(job.client, entry)
        self._dispatch()

    def _past_use(self, client: str, now: float) -> float:
        """The client's ended searches' worker seconds, each halved every ``half_life``."""
        used = self._used.get(client)
        if used is None:
            return 0.0
        seconds, since = used
        return seconds * math.exp2(-(now - since) / self.half_life)

    def attained(self, client: str, now: float | None = None) -> float:
        """The worker time ``client`` has had recently: what decides whose search goes next."""
        now = time.monotonic() if now is None else now
        entry = self._clients.get(client)
        running = sum(now - job.started for job in entry.running) if entry is not None else 0.0
        return self._past_use(client, now) + running

    def _dispatch(self) -> None:
        """Start queued searches while workers are free: the least served client's first."""
        if self._closed:
            return
        loop = asyncio.get_running_loop()
        while self._running < self.threads and self._queued:
            now = time.monotonic()
            best: tuple[float, int, str] | None = None
            for client, entry in self._clients.items():
                if entry.queue and len(entry.running) < self.per_client_running:
                    rank = (self.attained(client, now), entry.queue[0].seq, client)
                    if best is None or rank < best:
                        best = rank
            if best is None:  # every client with a queue is at its share
                return
            entry = self._clients[best[2]]
            job = entry.queue.popleft()
            self._queued -= 1
            self._start(job, entry, loop)

    def _forget_if_idle(self, client: str, entry: _Client) -> None:
        """Drop what is kept of a client with nothing queued or running, and of the clients whose
        past use has faded: the maps hold only clients in play (client ids come from callers)."""
        if entry.queue or entry.running:
            return
        self._clients.pop(client, None)
        if len(self._used) > 1024:
            now = time.monotonic()
            for name in [c for c in self._used if c not in self._clients]:
                if self._past_use(name, now) < _FORGET_BELOW:
                    del self._used[name]

    def close(self) -> None:
        """Take no more searches; queued ones never start (their callers see a cancellation),
        running ones end within their budgets."""
        self._closed = True
        for entry in list(self._clients.values()):
            for job in list(entry.queue):
                if job.expiry is not None:
                    job.expiry.cancel()
                job.done.cancel()
            entry.queue.clear()
        self._queued = 0
        self._executor.shutdown(wait=False, cancel_futures=True)
