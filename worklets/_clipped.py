"""A clip's output where its scalars live (:class:`Clipped`): the kept points, whose
values are copied, and the points the clip makes, each a weighted sum of input points.

Examples
--------
>>> import numpy as np
>>> made = Clipped(np.array([0, 2]), np.array([[0, 1]]), np.array([[0.5, 0.5]]),
...                *(None,) * 7)
>>> made.n_kept, made.n_points
(2, 3)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ._numba import compiled

# A host clip's kept ids copied out of its terms' first column on every core.
_KEPT_IDS = compiled("_gather_cpu", "column", lambda ids, n_rows: ids[:n_rows, 0].copy())


@dataclass(frozen=True)
class Clipped:
    """A clip's output, where the scalars live.

    Output points, in order: the kept input points, then the points the clip makes
    (cut edges, then centre points).

    Attributes
    ----------
    kept : int64 array or None
        The kept input points' ids, ascending: the output's first points, whose
        values every point field (coordinates included) copies as they are. None
        where ``kept_words`` holds them (:meth:`with_ids` makes them).
    ids, weights : arrays, shape (m, 2)
        Made point ``r`` (output point ``n_kept + r``) is ``weights[r, 0] *
        x[ids[r, 0]] + weights[r, 1] * x[ids[r, 1]]`` for every point field ``x``
        (coordinates included): a cut edge's two ends, or a centre point's first term.
    centre_rows : int64 array, shape (c,)
        The centre points' rows among the made points, ascending: the few points
        with terms past their first (every centre of the tables has two terms at
        least, and one of a term's two weights is never zero, so each has a nonzero
        weight past column 1: NaN counts).
    centre_ids, centre_weights : arrays, shape (c, w)
        Their later terms' ids and weights (padded with zero weights): row ``r``'s
        sum is its two columns' plus ``sum(centre_weights[j] * x[centre_ids[j]])``
        (:func:`daxpy.filters._geometry.weighted_sum` says in which order).
    connectivity, offsets, cell_types : arrays
        The output cells, in vtkCellArray's form.
    source : int64 array
        The input cell of each output cell.
    keys : int64 array, optional
        Each made point's key, ascending: a cut edge ``n + lo * n + hi``; a centre
        point ``n + n * n + cell * 64 + j`` (``n`` the input's points; a kept point's
        key is its id). Chunks of a grid are merged by them
        (:mod:`daxpy.worklets._chunk_merge`).
    kept_words : daxpy.cuda.bit_words.BitWords or None
        The GPU's clip of a 3-D structured grid: the kept points as bit words, by
        which their values are gathered without ids. On the device only.
    """

    kept: Any
    ids: Any
    weights: Any
    centre_rows: Any
    centre_ids: Any
    centre_weights: Any
    connectivity: Any
    offsets: Any
    cell_types: Any
    source: Any
    keys: Any = None
    kept_words: Any = field(default=None, metadata={"device_only": True})

    @classmethod
    def from_rows(cls, n_kept: int, ids: Any, weights: Any, centre_rows: Any, *rest: Any,
                  keys: Any = None) -> "Clipped":
        """A Clipped from terms of every output point, the first ``n_kept`` of them
        kept input points (``ids[p] == (id, id)``), ``centre_rows`` and ``keys``
        counted over them all; ``rest``: the centre table and the cells, in this
        class's order.

        Examples
        --------
        >>> import numpy as np
        >>> made = Clipped.from_rows(1, np.array([[4, 4], [4, 5]]),
        ...                          np.array([[1.0, 0.0], [0.5, 0.5]]), np.zeros(0, int),
        ...                          *(None,) * 6)
        >>> made.kept.tolist(), made.ids.tolist(), made.n_points
        ([4], [[4, 5]], 2)
        """
        # The kept ids contiguous, once: every gather by them would copy them (host
        # ids on every core; device ids never load Numba).
        kept = _KEPT_IDS(ids, n_kept) if isinstance(ids, np.ndarray) else ids[:n_kept, 0].copy()
        return cls(kept, ids[n_kept:], weights[n_kept:], centre_rows - n_kept,
                   *rest, keys=None if keys is None else keys[n_kept:])

    @property
    def n_kept(self) -> int:
        """The kept input points (the output's first).

        Examples
        --------
        >>> import numpy as np
        >>> made = Clipped(np.array([0, 2]), *(np.zeros((0, 2)),) * 2, *(None,) * 7)
        >>> made.n_kept
        2
        """
        return int(self.kept_words.count if self.kept is None else self.kept.shape[0])

    @property
    def n_points(self) -> int:
        """The output's points.

        Examples
        --------
        >>> import numpy as np
        >>> made = Clipped(np.array([0, 2]), np.zeros((3, 2), int), np.zeros((3, 2)),
        ...                *(None,) * 7)
        >>> made.n_points
        5
        """
        return self.n_kept + int(self.ids.shape[0])

    def with_ids(self) -> "Clipped":
        """This Clipped with its kept points' ids as an array (made from its words
        where it has none).

        Examples
        --------
        >>> import numpy as np
        >>> made = Clipped(np.array([0]), *(np.zeros((0, 2)),) * 2, *(None,) * 7)
        >>> made.with_ids() is made
        True
        """
        if self.kept is not None:
            return self
        words = self.kept_words.with_ids()
        return replace(self, kept=words.ids, kept_words=words)
