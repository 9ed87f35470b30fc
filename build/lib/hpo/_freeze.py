"""Imported last by the forkserver's preload: freeze everything imported so far.

Objects that live as long as the process (modules, torch's registries) are moved out of the
garbage collector's reach, so collections in the workers forked from the server only scan what
they create themselves.
"""

from __future__ import annotations

import gc

gc.collect()
gc.freeze()
