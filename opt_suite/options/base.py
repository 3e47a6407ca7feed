"""The option-set protocol: what a method hands to the test-time learner, however it is stored.

An option set is m options over the family's A primitive actions. Each option o has a policy
mu_o(a | x) and a termination function beta_o(x) over the env's observations x. The primitives are
never part of the set: learners always act over the A primitives plus the set's m options (as in the
paper, where Algorithm 1 starts from the primitive options).

Two implementations ship: :class:`~opt_suite.options.tabular.TabularOptionSet` (mu and beta
tabulated over every state index; acting is a look-up) and
:class:`~opt_suite.options.network.NetworkOptionSet` (keras networks; acting calls them). Both act
through one batched call, :meth:`OptionSet.probabilities`: an observation batch [n, ...] in, action
probabilities [n, m, A] and termination probabilities [n, m] out.

An option may also have an *initiation set* I_o (Sutton, Precup & Singh 1999, Sec. 2): the
observations where it may be started. :meth:`OptionSet.initiation` gives it as a bool batch
[n, m]; by default every option may start everywhere (:attr:`OptionSet.has_initiation` is False
and learners take their unmasked path, so sets without initiation sets give the numbers they always
gave). Learners never start an option outside its initiation set; once started, an option runs
until beta stops it, wherever that takes it (as in the paper).

An option set is saved to, and loaded from, one ``.npz`` file whose ``kind`` entry names its class
(:func:`load_option_set` dispatches on it). The runner and the store only ever pass these *files*
(or their bytes) around, never live objects: a network option set holds keras models, which do not
travel between processes. Plugins add kinds through the ``opt_suite.option_sets`` entry point group
(name = kind, value = ``module:Class``).

This package sits below methods, learners and the store and imports none of them; nothing here
imports TensorFlow at import time.
"""

from __future__ import annotations

import abc
import io
from pathlib import Path
from typing import IO, Any, ClassVar

import numpy as np

from opt_suite import installed
from opt_suite.files_guard import regular_file

__all__ = [
    "OptionSet",
    "OptionSetError",
    "KIND_KEY",
    "load_option_set",
    "option_set_kind",
    "to_bytes",
    "from_bytes",
]

KIND_KEY = "kind"
ENTRY_POINT_GROUP = "opt_suite.option_sets"

# Built-in kinds, imported only when a file of that kind is loaded.
_BUILT_IN = {
    "tabular": "opt_suite.options.tabular:TabularOptionSet",
    "network": "opt_suite.options.network:NetworkOptionSet",
    "policy_start": "opt_suite.options.policy_start:PolicyStart",
    "minigrid_subgoals": "opt_suite.options.subgoals:SubgoalOptions",
}

PathOrFile = str | Path | IO[bytes]


class OptionSetError(ValueError):
    """An option-set file that is missing, truncated, of an unknown kind or inconsistent."""


class OptionSet(abc.ABC):
    """m options over A primitive actions; saved to one ``.npz`` file tagged with :attr:`kind`.

    Subclasses set :attr:`kind`, implement the abstract members and write ``kind`` into their file
    (:meth:`_savez` does it).
    """

    kind: ClassVar[str]

    @property
    @abc.abstractmethod
    def names(self) -> tuple[str, ...]:
        """The m readable option names (e.g. ``option-0``)."""

    @property
    @abc.abstractmethod
    def num_actions(self) -> int:
        """A, the number of primitive actions the options choose among."""

    def __len__(self) -> int:
        return len(self.names)

    @abc.abstractmethod
    def probabilities(self, observations: Any) -> tuple[np.ndarray, np.ndarray]:
        """Act on a batch of observations (one per env), all options at once.

        Args:
          observations: [n, ...], the observations of n envs (int state indices [n] for tabular
            families, arrays [n, *shape] for image families).

        Returns:
          (mu [n, m, A], beta [n, m]): mu[i, o, a] = probability that option o takes action a on
          observation i; beta[i, o] = probability that option o terminates on observation i.
        """

    @property
    def has_initiation(self) -> bool:
        """Whether some option may not start everywhere (default: False, no initiation sets)."""
        return False

    def initiation(self, observations: Any) -> np.ndarray:
        """Bool [n, m]: whether option o may start on observation i (default: everywhere).

        Args:
          observations: [n, ...], as for :meth:`probabilities`.
        """
        return np.ones((len(observations), len(self)), dtype=bool)

    @abc.abstractmethod
    def non_finite(self) -> str | None:
        """Name the first NaN/inf in the set's numbers (tables or weights), None when all finite."""

    @abc.abstractmethod
    def save(self, path: PathOrFile) -> None:
        """Write the set to ``path`` (an ``.npz`` file, or a binary file object)."""

    @classmethod
    @abc.abstractmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> OptionSet:
        """Rebuild a set from the arrays of its file (every entry, ``kind`` included)."""

    @classmethod
    def load(cls, path: PathOrFile) -> OptionSet:
        """Read a file written by :meth:`save`; raises :class:`OptionSetError` on a bad file."""
        loaded = load_option_set(path)
        if not isinstance(loaded, cls):
            raise OptionSetError(
                f"{_describe(path)}: holds a {loaded.kind!r} option set, expected {cls.kind!r}"
            )
        return loaded

    def _savez(self, path: PathOrFile, **arrays: Any) -> None:
        np.savez_compressed(path, **{KIND_KEY: np.array(self.kind), **arrays})


def _describe(path: PathOrFile) -> str:
    return str(path) if isinstance(path, str | Path) else "option-set file"


def _kind_class(kind: str, where: str) -> type[OptionSet]:
    target = _BUILT_IN.get(kind)
    if target is None:
        for entry in installed.entry_points(ENTRY_POINT_GROUP):
            if entry.name == kind:
                target = entry.value
                break
    if target is None:
        known = sorted(set(_BUILT_IN) | {e.name for e in installed.entry_points(ENTRY_POINT_GROUP)})
        raise OptionSetError(f"{where}: unknown option-set kind {kind!r} (known: {known})")
    module, _, name = target.partition(":")
    try:
        cls = getattr(installed.import_installed(module), name)
    except installed.NotInstalled as exc:
        raise OptionSetError(
            f"{where}: kind {kind!r} names {target}, not imported: {exc}"
        ) from None
    if not (isinstance(cls, type) and issubclass(cls, OptionSet)):
        raise OptionSetError(f"{where}: kind {kind!r} names {target}, not an OptionSet subclass")
    return cls


# Conv option networks are a few MB; an option-set file far above this is not one.
MAX_FILE_BYTES = 4 << 30


def load_option_set(path: PathOrFile) -> OptionSet:
    """Load any option-set file, dispatching on its ``kind`` entry.

    Files written before kinds existed (no ``kind`` entry, ``mu`` and ``beta`` arrays) are tabular.

    Raises:
      OptionSetError: the file is missing, truncated or not an option set, or its kind is unknown.
    """
    where = _describe(path)
    try:
        arrays = _read(path)
    except FileNotFoundError as exc:
        raise OptionSetError(f"{where}: option-set file not found") from exc
    except Exception as exc:  # OSError, zipfile.BadZipFile, zlib.error: truncated or not npz
        raise OptionSetError(f"{where}: not a readable option-set file ({exc})") from exc
    kind = str(arrays[KIND_KEY]) if KIND_KEY in arrays else "tabular"
    try:
        return _kind_class(kind, where).from_arrays(arrays)
    except OptionSetError:
        raise
    except (KeyError, ValueError) as exc:
        raise OptionSetError(f"{where}: a {kind!r} option set with bad contents ({exc})") from exc


def option_set_kind(path: PathOrFile) -> str:
    """The ``kind`` of an option-set file without building the set (no TensorFlow)."""
    try:
        arrays = _read(path)
    except Exception as exc:
        raise OptionSetError(f"{_describe(path)}: not a readable option-set file ({exc})") from exc
    return str(arrays[KIND_KEY]) if KIND_KEY in arrays else "tabular"


def _read(path: PathOrFile) -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` file; the file is closed even when it is truncated."""
    if isinstance(path, str | Path):
        if Path(path).exists():  # missing: FileNotFoundError below, as before
            # np.load on a FIFO waits forever, on a link to /dev/zero never ends.
            regular_file(path, "option-set file", MAX_FILE_BYTES)
        with open(path, "rb") as file:
            return _read(file)
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def to_bytes(options: OptionSet) -> bytes:
    """The file ``options.save`` writes, as bytes (what cells pass between processes)."""
    buffer = io.BytesIO()
    options.save(buffer)
    return buffer.getvalue()


def from_bytes(data: bytes) -> OptionSet:
    """The option set of a file's bytes (:func:`to_bytes`)."""
    return load_option_set(io.BytesIO(data))
