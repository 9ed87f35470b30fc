"""Which processes a trial leaves behind that its libraries own and will reuse.

Mechanism only, run in the worker. ``joblib.Parallel`` (and through it scikit-learn's
``n_jobs``) keeps one reusable loky executor per process; ``multiprocessing.Pool``,
``concurrent.futures.ProcessPoolExecutor`` and a ``DataLoader`` with ``persistent_workers=True``
keep their workers while the object lives. Killing them after a trial frees nothing the next
trial will not rebuild, and it breaks the library: joblib's next call meets a dead pool
(``TerminatedWorkerError``) before its manager thread has noticed.

A helper is recognised by *ownership*, never by name or age: a live child that this process
started through :mod:`multiprocessing` (loky's processes are ``BaseProcess`` objects too) to
run one of :data:`POOL_TARGETS`, the worker loops of those libraries; with its descendants.
``BaseProcess.start`` drops ``_target`` once the process runs, so :func:`track_targets` (called
once when the worker starts) records it on the process object first. The servers such pools
rely on (loky's and multiprocessing's resource trackers, a forkserver this process started) are
helpers too, without their other children. A process started with ``subprocess``, ``os.fork``
or ``multiprocessing.Process(target=user_function)`` is not a helper.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from multiprocessing.process import BaseProcess
from types import MappingProxyType
from typing import Any

import psutil

POOL_TARGETS: Mapping[str, str] = MappingProxyType(
    {
        "joblib.externals.loky.process_executor._process_worker": "joblib/loky executor",
        "loky.process_executor._process_worker": "loky executor",
        "multiprocessing.pool.worker": "multiprocessing.Pool",
        "concurrent.futures.process._process_worker": "ProcessPoolExecutor",
        "torch.utils.data._utils.worker._worker_loop": "DataLoader workers",
        "multiprocessing.managers.BaseManager._run_server": "multiprocessing manager",
    }
)
"""The function a pool's worker process runs (``module.qualname``) -> the library that owns it."""

#: Module-level servers of those libraries: (module, attribute path of the pid, owner).
_SERVERS: tuple[tuple[str, str, str], ...] = (
    (
        "joblib.externals.loky.backend.resource_tracker",
        "_resource_tracker._pid",
        "joblib/loky resource tracker",
    ),
    ("loky.backend.resource_tracker", "_resource_tracker._pid", "loky resource tracker"),
    ("multiprocessing.resource_tracker", "_resource_tracker._pid", "multiprocessing tracker"),
    ("multiprocessing.forkserver", "_forkserver._forkserver_pid", "multiprocessing forkserver"),
)

_TARGET_ATTR = "_hpo_target"


@dataclass
class Helpers:
    """This process's helpers: ``pools`` (kept with their descendants) and ``servers`` (kept
    alone: a forkserver's other children are whatever they are), each ``pid -> owner``."""

    pools: dict[int, str] = field(default_factory=dict)
    servers: dict[int, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.pools or self.servers)

    def owners(self) -> str:
        return ", ".join(sorted({*self.pools.values(), *self.servers.values()}))


def _target_name(target: Any) -> str:
    func = getattr(target, "__func__", target)  # a bound (class)method: its function
    module = getattr(func, "__module__", None)
    qualname = getattr(func, "__qualname__", None)
    return f"{module}.{qualname}" if module and qualname else ""


def track_targets() -> None:
    """Make every ``multiprocessing`` process started from now on in this process remember the
    function it runs. Idempotent; the worker calls it before loading the objective."""
    start = BaseProcess.start
    if getattr(start, "_hpo_tracks", False):
        return

    def tracked_start(self: BaseProcess) -> None:
        setattr(self, _TARGET_ATTR, _target_name(getattr(self, "_target", None)))
        start(self)

    tracked_start._hpo_tracks = True  # type: ignore[attr-defined]
    tracked_start.__doc__ = start.__doc__
    BaseProcess.start = tracked_start  # type: ignore[method-assign]


def library_helpers() -> Helpers:
    """The helper processes of this process (see the module docstring).

    Only libraries already imported are consulted (nothing is imported here), and only this
    interpreter's own records: no scan of the process table.
    """
    found = Helpers()
    for proc in multiprocessing.active_children():  # also reaps children that have ended
        owner = POOL_TARGETS.get(getattr(proc, _TARGET_ATTR, ""))
        if owner is not None and proc.pid is not None:
            found.pools[proc.pid] = owner
    for module_name, path, owner in _SERVERS:
        module = sys.modules.get(module_name)
        pid = _attr_path(module, path) if module is not None else None
        if isinstance(pid, int) and pid > 0 and _is_my_child(pid):
            found.servers[pid] = owner  # not a server inherited from the supervisor
    return found


def _attr_path(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _is_my_child(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).ppid() == os.getpid())
    except psutil.Error:
        return False


#: Modules whose module-level reusable executor (``_executor``) a worker ends its own way.
_REUSABLE_EXECUTORS = ("joblib.externals.loky.reusable_executor", "loky.reusable_executor")


def end_pools(timeout_s: float = 5.0) -> None:
    """Let the libraries end their reusable pools their own way before the worker kills what is
    left: joblib removes the temporary folders it registered in ``/dev/shm`` (a worker that
    leaves by ``os._exit`` runs no ``atexit``, and a SIGKILLed loky resource tracker cleans
    nothing: one empty folder per trial was left behind). Bounded: a pool that hangs is killed
    with the rest."""
    executors = []
    for name in _REUSABLE_EXECUTORS:
        module = sys.modules.get(name)
        executor = getattr(module, "_executor", None) if module is not None else None
        if executor is not None:
            executors.append(executor)
    if not executors:
        return

    def end() -> None:
        for executor in executors:
            try:
                if hasattr(executor, "terminate"):  # joblib's: cleans its temporary folders
                    executor.terminate(kill_workers=True)
                else:
                    executor.shutdown(wait=True, kill_workers=True)
            except Exception:
                pass

    thread = threading.Thread(target=end, daemon=True, name="end-pools")
    thread.start()
    thread.join(timeout_s)


def run_exit_handlers(timeout_s: float = 5.0) -> None:
    """Run the ``atexit`` handlers now, bounded, for a process about to leave by ``os._exit``
    (its descendants already killed): what the libraries clean up at a normal exit."""
    thread = threading.Thread(target=atexit._run_exitfuncs, daemon=True, name="exit-handlers")
    thread.start()
    thread.join(timeout_s)
