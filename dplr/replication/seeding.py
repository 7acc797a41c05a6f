"""Content-addressed random streams: every task of a study draws from a stream named by what it is.

A task's stream is ``numpy.random.SeedSequence(seed, spawn_key=key)`` with ``key`` computed from the
task's identity (data set, fold, training size, algorithm, ...) and never from the worker or the order
of execution; this is the mechanism ``SeedSequence.spawn`` uses, addressed by content instead of by
position. So results are identical for any number of workers, locally or on a cluster
(:mod:`dplr.replication.runner`). The studies choose their keys to leave out what should share draws
(ε, λ, the form of Algorithm 2, the readings of a paper): those reuse the same underlying Gamma and
Gaussian draws (*common random numbers*), which makes comparisons paired.
"""
from __future__ import annotations

import zlib

import numpy as np

__all__ = ["task_seed_sequence", "task_stream"]


def _key_part(part) -> int:
    if isinstance(part, (bool, np.bool_)):
        return int(part)
    if isinstance(part, (int, np.integer)):
        if part < 0:
            raise ValueError("integer key parts must be non-negative.")
        return int(part)
    if part is None:
        return 0xFFFFFFFF
    return zlib.crc32(str(part).encode("utf-8"))


def task_seed_sequence(seed, *key):
    """``SeedSequence(seed, spawn_key=key)`` with strings mapped to stable 32-bit integers (CRC-32).

    Equal keys give equal streams in any process; different keys give independent streams, exactly
    as the children of ``SeedSequence(seed).spawn`` (which differ only in ``spawn_key``).
    """
    return np.random.SeedSequence(int(seed), spawn_key=tuple(_key_part(p) for p in key))


def task_stream(seed, *key) -> np.random.Generator:
    """A ``Generator`` on :func:`task_seed_sequence` ``(seed, *key)``."""
    return np.random.default_rng(task_seed_sequence(seed, *key))
