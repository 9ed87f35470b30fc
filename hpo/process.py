"""Start, watch and kill processes. Mechanism only: nothing here knows what a trial or a failure is.

Workers are started with ``forkserver`` (or ``spawn``), never ``fork`` after CUDA is initialised.
Each worker calls ``os.setsid()`` at start and so leads its own process group: killing the group
takes its DataLoader workers and other descendants with it. The supervisor makes itself a child
subreaper, so a descendant that escaped into its own session is re-parented to the supervisor when
its worker dies, and :func:`sweep_orphans` kills it.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import multiprocessing as mp
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from typing import Any

import psutil

log = logging.getLogger(__name__)

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Adopt orphaned descendants (Linux); True when it worked."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except Exception:
        return False


def make_context(
    start_method: str, preload: list[str], env: dict[str, str] | None = None
) -> BaseContext:
    """A multiprocessing context; ``env`` is given to the forkserver (and so to every worker)."""
    ctx = mp.get_context(start_method)
    if start_method == "forkserver":
        # Preloading torch (without touching CUDA) makes a fresh worker cost milliseconds.
        # hpo._freeze comes last: it collects and gc.freeze()s what the preload imported, so a
        # new worker's first collection does not walk torch's objects (~90 ms a worker).
        ctx.set_forkserver_preload(["hpo.child", *preload, "hpo._freeze"])
        from multiprocessing import forkserver

        saved = {k: os.environ.get(k) for k in env or {}}
        os.environ.update(env or {})
        try:
            forkserver.ensure_running()  # returns at once; the server imports in the background
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    return ctx


def kill_tree(
    pid: int,
    sig: int = signal.SIGKILL,
    *,
    grace_s: float = 0.0,
    include_root: bool = True,
    exclude: Iterable[int] = (),
    spare_trees: Iterable[int] = (),
    reap_children: bool = False,
) -> list[int]:
    """Signal ``pid``, its process group (if it leads one) and every descendant; the one way
    ``hpo`` kills a process tree.

    With ``sig`` other than SIGKILL and ``grace_s`` > 0, whatever is still alive after the grace
    period gets SIGKILL (psutil's ``wait_procs``: wait, then kill). Descendants that left the
    group (their own session) are found through the tree. Processes in ``exclude`` are spared,
    and so are those in ``spare_trees`` with all their descendants.
    Only with ``grace_s`` > 0 does it wait, and not for the caller's direct children unless
    ``reap_children`` (by default their owner reaps them: a ``multiprocessing.Process`` must see
    its own child's exit). Returns the pids signalled.
    """
    spared = set(exclude) | {os.getpid()}
    try:
        root = psutil.Process(pid)
        procs = root.children(recursive=True)
        if include_root:
            procs.insert(0, root)
    except psutil.Error:
        procs = []
    keep = set(spare_trees)
    for p in procs:
        if p.pid in keep:
            spared.add(p.pid)
            with contextlib.suppress(psutil.Error):
                spared.update(c.pid for c in p.children(recursive=True))
    procs = [p for p in procs if p.pid not in spared]
    if include_root:
        with contextlib.suppress(OSError):
            if os.getpgid(pid) == pid:  # it leads its group (setsid at start)
                os.killpg(pid, sig)
    for p in procs:
        with contextlib.suppress(psutil.Error):
            p.send_signal(sig)
    me = os.getpid()
    waitable = []
    for p in procs:
        with contextlib.suppress(psutil.Error):
            if reap_children or p.ppid() != me:
                waitable.append(p)
    if grace_s > 0 and waitable:
        _, alive = psutil.wait_procs(waitable, timeout=grace_s)
        if sig != signal.SIGKILL and alive:
            for p in alive:
                with contextlib.suppress(psutil.Error):
                    p.kill()
            psutil.wait_procs(alive, timeout=2.0)
    return [p.pid for p in procs]


def tree_usage(pid: int, exclude: Iterable[int] = ()) -> tuple[int, float]:
    """``(descendants, rss_mb)``: how many processes ``pid`` has below it, and the resident memory
    of ``pid`` with all of them, in MB; processes in ``exclude`` are left out of both."""
    left_out = set(exclude)
    try:
        root = psutil.Process(pid)
        kids = [p for p in root.children(recursive=True) if p.pid not in left_out]
    except psutil.Error:
        return 0, 0.0
    return len(kids), _rss_mb([root, *kids])


def _rss_mb(procs: Iterable[psutil.Process]) -> float:
    total = 0
    for p in procs:
        with contextlib.suppress(psutil.Error):
            total += p.memory_info().rss
    return total / 2**20


class WorkerProcess:
    """One worker process, its message channel and its lifeline.

    ``target(chan, lifeline, *args)`` runs in the new process: ``chan`` is its end of the duplex
    message pipe, ``lifeline`` the read end of a pipe that reaches EOF when this process dies.
    """

    def __init__(
        self, ctx: BaseContext, target: Callable[..., None], args: tuple[Any, ...], name: str
    ) -> None:
        self.chan, child_chan = ctx.Pipe(duplex=True)
        lifeline_r, self._lifeline_w = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(  # type: ignore[attr-defined]
            target=target,
            args=(child_chan, lifeline_r, *args),
            name=name,
            daemon=False,  # daemonic processes may not have children (DataLoader workers)
        )
        self.proc.start()
        child_chan.close()
        lifeline_r.close()
        self.pid: int = self.proc.pid
        self.started = time.monotonic()
        self._ps: psutil.Process | None = None

    @property
    def sentinel(self) -> int:
        return int(self.proc.sentinel)

    def alive(self) -> bool:
        return self.proc.exitcode is None and self.proc.is_alive()

    def exit_status(self) -> tuple[int | None, int | None]:
        """(exit_code, signal): one of them set once the process has ended."""
        code = self.proc.exitcode
        if code is None:
            return None, None
        if code < 0:
            return None, -code
        return code, None

    def descendants(self) -> list[psutil.Process]:
        try:
            if self._ps is None:
                self._ps = psutil.Process(self.pid)
            return list(self._ps.children(recursive=True))
        except psutil.Error:
            return []

    def tree_rss_mb(self) -> float:
        """The worker's whole tree: the trial, and the pools the worker keeps between trials."""
        try:
            if self._ps is None:
                self._ps = psutil.Process(self.pid)
            procs = [self._ps, *self._ps.children(recursive=True)]
        except psutil.Error:
            return 0.0
        return _rss_mb(procs)

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Signal the worker's whole tree (see :func:`kill_tree`); its exit is reaped by join."""
        kill_tree(self.pid, sig)

    def send(self, message: Any) -> bool:
        """Send ``message``; False when the worker's end is gone (its sentinel will tell why)."""
        try:
            self.chan.send(message)
            return True
        except (OSError, ValueError):
            return False

    def join(self, timeout: float) -> bool:
        self.proc.join(timeout)
        return self.proc.exitcode is not None

    def close(self) -> None:
        for c in (self.chan, self._lifeline_w):
            with contextlib.suppress(Exception):
                c.close()
        with contextlib.suppress(Exception):
            self.proc.close()


def terminate_all(workers: list[WorkerProcess], grace_s: float) -> None:
    """End every worker group: within ``grace_s`` the workers (told to stop) may exit on their
    own, cleaning up as they go (the pools they kept, the libraries' temporary files); then
    SIGTERM, and SIGKILL for what is left a moment later."""
    deadline = time.monotonic() + grace_s
    for w in workers:
        w.join(max(0.0, deadline - time.monotonic()))
    for w in workers:
        if w.alive():
            w.kill(signal.SIGTERM)
    deadline = time.monotonic() + min(grace_s, 1.0)
    for w in workers:
        w.join(max(0.0, deadline - time.monotonic()))
    for w in workers:
        if w.alive() or w.descendants():
            w.kill(signal.SIGKILL)
            w.join(5.0)


def _mp_helper_pids() -> set[int]:
    pids: set[int] = set()
    try:
        from multiprocessing import forkserver, resource_tracker

        fs = getattr(forkserver, "_forkserver", None)
        if fs is not None and getattr(fs, "_forkserver_pid", None):
            pids.add(fs._forkserver_pid)
        rt = getattr(resource_tracker, "_resource_tracker", None)
        if rt is not None and getattr(rt, "_pid", None):
            pids.add(rt._pid)
    except Exception:
        pass
    return pids


def sweep_orphans(known: set[int]) -> list[int]:
    """Kill children of this process that are neither workers nor multiprocessing helpers.

    With the subreaper flag set, these are descendants of dead workers that escaped the worker's
    process group. Returns the pids killed.
    """
    keep = known | _mp_helper_pids()
    killed: list[int] = []
    try:
        kids = psutil.Process().children(recursive=False)
    except psutil.Error:
        return killed
    for p in kids:
        if p.pid in keep:
            continue
        try:
            if p.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(p.pid, os.WNOHANG)
                continue
        except (psutil.Error, OSError):
            continue
        kill_tree(p.pid, signal.SIGKILL)
        killed.append(p.pid)
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(p.pid, 0)
    return killed


def pid_alive(pid: int, create_time: float | None = None) -> bool:
    """Whether ``pid`` runs and (if given) is the same process that started at ``create_time``."""
    try:
        p = psutil.Process(pid)
        if p.status() == psutil.STATUS_ZOMBIE:
            return False
        return create_time is None or abs(p.create_time() - create_time) < 1.0
    except psutil.Error:
        return False


def recv_all(chan: Connection) -> list[Any]:
    """Every message waiting on ``chan``; stops at EOF."""
    out: list[Any] = []
    try:
        while chan.poll():
            out.append(chan.recv())
    except (EOFError, OSError):
        pass
    return out


_EARLY: list[int] = []


def record_signals_early() -> None:
    """From now on SIGINT and SIGTERM are only recorded; :class:`SignalWake` picks them up.

    ``hpo run`` calls this first thing, so a signal during start-up (imports, config, opening
    the study) stops the run cleanly (exit 130) instead of killing it without a word.
    """
    for s in SignalWake.SIGNALS:
        signal.signal(s, lambda signum, _frame: _EARLY.append(signum))


class SignalWake:
    """SIGINT/SIGTERM handlers that only record the signal and wake a ``wait`` (gunicorn's
    arbiter: handlers enqueue, the loop acts). ``fd`` becomes readable when a signal arrives;
    ``take()`` returns the pending signal number (or None) and how many were seen in all.
    Use as a context manager: the previous handlers are restored on exit."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.pending: int | None = None
        self.seen = 0
        self.fd = -1

    def _handler(self, signum: int, _frame: Any) -> None:
        self.pending = signum
        self.seen += 1

    def __enter__(self) -> SignalWake:
        self.fd, self._w = os.pipe()
        for fd in (self.fd, self._w):
            os.set_blocking(fd, False)
        self._old_wakeup = signal.set_wakeup_fd(self._w)
        self._old = [signal.signal(s, self._handler) for s in self.SIGNALS]
        if _EARLY:  # signals that arrived before the loop could wake
            self.seen, self.pending = len(_EARLY), _EARLY[-1]
            _EARLY.clear()
        return self

    def __exit__(self, *exc: object) -> None:
        for s, old in zip(self.SIGNALS, self._old, strict=True):
            signal.signal(s, old)
        signal.set_wakeup_fd(self._old_wakeup)
        os.close(self.fd)
        os.close(self._w)

    def drain(self) -> None:
        with contextlib.suppress(OSError):
            while os.read(self.fd, 512):
                pass

    def take(self) -> int | None:
        signum, self.pending = self.pending, None
        return signum
