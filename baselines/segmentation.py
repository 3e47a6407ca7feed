"""What the demonstration-segmenting baselines (CompILE, LOVE) share: inputs, options, scores.

Both learn skills from the same demonstrations as ``offline_options`` and must hand the learner the
same kind of option set, so they reuse its demonstration layout (padded index arrays, or numbered
frames) and its option networks (:mod:`opt_suite.option_networks`): every skill is one option
network with a softmax ``mu`` head over actions and a sigmoid ``beta`` head, tabulated over every
state on tabular families and a keras conv network on image families. TensorFlow is imported by
the functions that need it, never at import time.

:func:`boundary_f1` scores a segmentation against known sub-task boundaries (the fidelity tests
and the methods' ``info``).
"""

from __future__ import annotations

import abc
import dataclasses
import time
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, Literal

import numpy as np

from opt_suite.families.capabilities import (
    DISCRETE_ACTIONS,
    EXACT_MODEL,
    IMAGE_OBSERVATIONS,
    INDEX_OBSERVATIONS,
)
from opt_suite.methods.base import DISCOVERY_WARNINGS, Discovery, DiscoveryContext, Method
from opt_suite.methods.budget import DiscoveryBudget, DiscoverySteps
from opt_suite.option_networks.trunk import MAX_LAYERS
from opt_suite.options import OptionSet

__all__ = [
    "FeatureChoice",
    "SegmentInputs",
    "Segmentation",
    "SegmentingMethod",
    "boundary_f1",
    "check_activation_memory",
    "feature_problems",
    "feature_requirements",
    "features_param",
    "hidden_layer_problems",
    "segment_inputs",
    "skill_option_set",
]

#: The option networks' input, as offline_options' ``features``.
FeatureChoice = Literal["onehot", "coords", "both", "frames"]


def features_param() -> Any:
    """The ``features`` param of the segmentation baselines (offline_options' choices)."""
    from opt_suite.params import param

    return param(
        "coords",
        doc="state input of the networks, as offline_options' features; frames: conv networks "
        "on image observations",
    )


def feature_requirements(features: str) -> frozenset[str]:
    """What a family must offer for these option networks: images for frames, else a model."""
    if features == "frames":
        return frozenset({DISCRETE_ACTIONS, IMAGE_OBSERVATIONS})
    return frozenset({EXACT_MODEL, DISCRETE_ACTIONS, INDEX_OBSERVATIONS})


def feature_problems(method: str, features: str, family: Any) -> list[tuple[str, str]]:
    """``features`` against the family's observations, as (key, message) for ``validate``."""
    from opt_suite.families.capabilities import offered

    has = offered(family)
    missing = feature_requirements(features) - has
    if not missing:
        return []
    if features == "frames":
        hint = ": use 'coords', 'onehot' or 'both'" if INDEX_OBSERVATIONS in has else ""
        need = "a family with image observations (convolutional skills)"
    else:
        hint = ": its observations are images, use 'frames'" if IMAGE_OBSERVATIONS in has else ""
        need = "a family with an exact model and index observations (skills tabulated over states)"
    return [("features", f"{method}: {features!r} needs {need}; {family.name} has none{hint}")]


def hidden_layer_problems(hidden_sizes: Sequence[int]) -> list[tuple[str, str]]:
    """``hidden_sizes`` must hold 1 to MAX_LAYERS layers, as a Params ``check`` problem."""
    if not hidden_sizes or len(hidden_sizes) > MAX_LAYERS:
        return [
            (
                "hidden_sizes",
                f"expected 1 to {MAX_LAYERS} hidden layers, got {len(hidden_sizes)}",
            )
        ]
    return []


@dataclasses.dataclass(frozen=True, eq=False)
class Segmentation:
    """A fitted segmentation model's skills and its reading of the demonstrations.

    Attributes:
      skills: the weights of every skill's option network (``mu`` and ``beta`` heads), in order.
      used: the skills some segment of the demonstrations is assigned to, sorted.
      boundaries: per demonstration, the steps t >= 1 at which a new segment starts.
      segment_skills: per demonstration, the skill of each segment in order.
      curves: per training step, the objective and its parts.
    """

    skills: list[dict[str, np.ndarray]]
    used: list[int]
    boundaries: list[list[int]]
    segment_skills: list[list[int]]
    curves: dict[str, np.ndarray]


class SegmentingMethod(Method):
    """What CompILE and LOVE share: demonstrations in, segments read, an option per used skill.

    Subclasses set :attr:`skills_param` (the params field holding their number of skills) and
    :attr:`termination` (how an option's beta is obtained, stated in ``info``), and implement
    :meth:`segment`. The family requirements follow ``params.features`` (images for frames, else a
    model).
    """

    skills_param: ClassVar[str]
    termination: ClassVar[str]
    requires: ClassVar[frozenset[str]] = feature_requirements("coords")

    @abc.abstractmethod
    def segment(self, inputs: SegmentInputs, seed: np.random.SeedSequence) -> Segmentation:
        """Fit the model to the demonstrations (TensorFlow is loaded) and read their segments."""

    def min_actions(self) -> int:
        """The fewest actions a demonstration needs (default 1)."""
        return 1

    def option_prefix(self) -> str:
        """The options' names are ``{prefix}-{i}`` (default: the method's name)."""
        return self.name

    def settings_info(self) -> dict[str, Any]:
        """Settings to record in ``info`` beside the segmentation (default: none)."""
        return {}

    def discover(self, context: DiscoveryContext) -> Discovery:
        """Segment ``context.demonstrations``; one option per skill some segment uses.

        Info: the boundaries and skills read from each demonstration (``boundaries``,
        ``segment_skills``), the skills kept (``skills_used``), the mean segment length, how the
        options terminate, and :meth:`settings_info`.

        Raises:
          ValueError: no demonstrations, all shorter than :meth:`min_actions` (shorter ones are
            left out with a warning), one of the wrong kind, or conv skills too large for memory.
          FloatingPointError: the objective or a learned option turns non-finite.
        """
        start = time.perf_counter()
        features = self.params.features
        inputs = segment_inputs(context, self.name, features, self.min_actions())
        skills = self.option_count(self.params)
        check_activation_memory(inputs, skills, self.name, self.skills_param)
        found = self.segment(inputs, context.seed)
        used = [found.skills[k] for k in found.used]
        options = skill_option_set(used, inputs, self.option_prefix())
        segments = sum(len(seq) for seq in found.segment_skills)
        info = {
            **self.settings_info(),
            "options_kept": len(options),
            "skills_used": found.used,
            "boundaries": found.boundaries,
            "segment_skills": found.segment_skills,
            "mean_segment_length": float(inputs.demos.lengths.sum()) / max(segments, 1),
            "demonstrations": len(context.demonstrations) - len(inputs.dropped),
            DISCOVERY_WARNINGS: list(inputs.dropped),
            "termination": self.termination,
            "wall_time_s": round(time.perf_counter() - start, 3),
        }
        return Discovery(options=options, curves=found.curves, info=info)

    @classmethod
    def discovery_budget(cls, params: Any) -> DiscoveryBudget:
        """The demonstrations it segments, no env step."""
        return DiscoveryBudget(True, 0)

    @classmethod
    def discovery_steps(cls, params: Any) -> DiscoverySteps:
        """``iterations`` full-batch Adam steps (:func:`baselines.skill_networks.fit`)."""
        return DiscoverySteps(int(params.iterations), "iterations")

    @classmethod
    def option_count(cls, params: Any) -> int:
        """At most one option per skill (latent)."""
        return int(getattr(params, cls.skills_param))

    @classmethod
    def requirements(cls, params: Any) -> frozenset[str]:
        """Image observations with ``features: frames``, else an exact model and state indices."""
        return feature_requirements(params.features)

    @classmethod
    def check_family(cls, params: Any, family: Any) -> list[tuple[str, str]]:
        """``features`` must fit the family's observations (reported at ``params.features``)."""
        return feature_problems(cls.name, params.features, family)


@dataclasses.dataclass(frozen=True, eq=False)
class SegmentInputs:
    """The demonstrations as the sequence models read them.

    Attributes:
      demos: the padded batch (``offline_options``' layout: ``positions`` index ``states``).
      features: what the networks see of each entry of ``demos.states`` (``StateFeatures`` over
        every state of the family, or ``FrameFeatures`` over the demonstrated frames).
      num_actions: A.
      frames: whether the observations are frames (conv networks, a network option set).
      num_states: S of a tabular family (0 on frames).
      dropped: one line per demonstration left out as too short (:func:`short_demonstrations`).
    """

    demos: Any
    features: Any
    num_actions: int
    frames: bool
    num_states: int
    dropped: tuple[str, ...] = ()

    def state_input(self) -> tuple[np.ndarray, np.ndarray | None]:
        """(int32 [U] state indices, float inputs [U, ...] or None) of the demonstrated states.

        On frames the U "states" are the demonstrations' frames (their coords are the frames).
        """
        states = self.demos.states
        coords = self.features.coords
        if coords is None:
            return states, None
        return states, (coords if self.frames else coords[states])


def segment_inputs(
    context: DiscoveryContext, method: str, features: FeatureChoice, min_actions: int = 1
) -> SegmentInputs:
    """``context.demonstrations`` padded, with the networks' input (TensorFlow loads here).

    Raises:
      ValueError: no train task or demonstration, every demonstration of fewer than
        ``min_actions`` actions (none can hold the segments the method needs; shorter ones are
        left out and named in ``dropped``), or one of the wrong kind.
    """
    from opt_suite._tf import tensorflow

    tensorflow()  # quietly, before the modules below import it
    from opt_suite.methods.offline_options.demos import demo_batch, frame_demo_batch
    from opt_suite.option_networks.conv import FrameFeatures
    from opt_suite.option_networks.features import state_features
    from opt_suite.option_networks.initial import task_actions

    if not context.train_tasks:
        raise ValueError(f"{method}: needs at least one train task, got none")
    if not context.demonstrations:
        raise ValueError(f"{method}: needs at least one demonstration, got none")
    kept, short = short_demonstrations(context.demonstrations, min_actions)
    if not kept:
        i, h = short[0]
        raise ValueError(
            f"{method}: every demonstration is shorter than the {min_actions} segments the method"
            f" splits each into (demonstration {i} ({h.task_id}) has {len(h)} actions); lower"
            " num_segments or demonstrate longer"
        )
    dropped = tuple(
        f"{method}: dropped demonstration {i} ({h.task_id}): {len(h)} action(s), fewer than the"
        f" {min_actions} segments the method splits each demonstration into"
        for i, h in short
    )
    if features == "frames":
        actions = task_actions(context.family, context.train_tasks[0], method)
        demos, frames = frame_demo_batch(kept, actions)
        return SegmentInputs(demos, FrameFeatures.of(frames), actions, True, 0, dropped)
    model = context.tabular_models(method)[0]
    demos = demo_batch(kept, model.num_states, model.num_actions)
    return SegmentInputs(
        demos, state_features(model, features), model.num_actions, False, model.num_states, dropped
    )


def short_demonstrations(
    demonstrations: Sequence[Any], min_actions: int
) -> tuple[list[Any], list[tuple[int, Any]]]:
    """(demonstrations of at least ``min_actions`` actions, (index, demonstration) of the rest).

    A demonstration too short to hold the segments cannot be segmented: it is left out of the fit
    (and named in the cell's warnings, which the report shows) rather than failing the method,
    e.g. a MinAtar Breakout demonstration whose ball is lost during the task's random start
    actions has one action.
    """
    kept = [h for h in demonstrations if len(h) >= min_actions]
    short = [(i, h) for i, h in enumerate(demonstrations) if len(h) < min_actions]
    return kept, short


#: The most bytes the K skill networks' activations on every demonstrated frame may take (the
#: forward pass and its gradient hold them all at once: full-batch training).
MAX_ACTIVATION_BYTES = 4 << 30


def check_activation_memory(inputs: SegmentInputs, skills: int, method: str, key: str) -> None:
    """Refuse, before anything is built, K conv skills whose activations on all frames won't fit.

    Each skill's conv layers run on every demonstrated frame (U of them) in one batch; their
    float32 outputs, kept for the gradient, take about 2 x 4 x U x K x (sum of the layers' output
    sizes) bytes. Atari demonstrations of thousands of frames with dozens of skills pass 4 GiB.

    Raises:
      ValueError: naming the frames, the skills (``key``) and the estimate.
    """
    if not inputs.frames:
        return
    from opt_suite.option_networks.trunk import conv_output_sides

    features = inputs.features
    sides = conv_output_sides(features.frame_shape[:2], features.layers)
    per_frame = sum(h * w * f for (h, w), (f, _, _) in zip(sides, features.layers, strict=True))
    per_frame += int(np.prod(features.frame_shape))  # the float input
    needed = 2 * 4 * len(features.coords) * skills * per_frame
    if needed > MAX_ACTIVATION_BYTES:
        raise ValueError(
            f"{method}: {skills} conv skills ({key}) on {len(features.coords)} demonstrated "
            f"frames need about {needed / 2**30:.1f} GiB of activations in full-batch training "
            f"(at most {MAX_ACTIVATION_BYTES / 2**30:.0f} GiB); lower {key} or use fewer or "
            "shorter demonstrations"
        )


def skill_option_set(
    weights: Sequence[dict[str, np.ndarray]], inputs: SegmentInputs, prefix: str
) -> OptionSet:
    """Skill networks (``mu`` and ``beta`` heads) as the learners' option set, named ``prefix-i``.

    Tabular families: tables over every state (``TabularOptionSet``); frames: keras conv models.

    Raises:
      FloatingPointError: a skill whose tables or weights hold a NaN/inf (never a NaN option).
    """
    from opt_suite.option_networks.initial import frame_option_set, tabulate
    from opt_suite.options import TabularOptionSet

    names = tuple(f"{prefix}-{i}" for i in range(len(weights)))
    options: OptionSet
    if inputs.frames:
        frame_shape = inputs.features.frame_shape
        options = frame_option_set(weights, frame_shape, inputs.num_actions, prefix)
    elif not weights:
        options = TabularOptionSet.empty(inputs.num_states, inputs.num_actions)
    else:
        states = np.arange(inputs.num_states, dtype=np.int32)
        tables = [tabulate(w, inputs.features, states) for w in weights]
        mu = np.stack([m for m, _ in tables])
        beta = np.stack([b for _, b in tables])
        options = TabularOptionSet(mu, beta, names)
    bad = options.non_finite()
    if bad is not None:
        raise FloatingPointError(f"{prefix}: the learned skills hold a NaN/inf in {bad}")
    return options


def boundary_f1(
    predicted: Iterable[Iterable[int]], true: Iterable[Iterable[int]], tolerance: int = 0
) -> float:
    """F1 of predicted sub-task boundaries against true ones, pooled over demonstrations.

    A boundary is the step index t at which a new segment starts (t >= 1; the start of a
    demonstration is never counted). A predicted boundary is a hit when a not yet matched true
    boundary lies within ``tolerance`` steps (greedy, in order), as segmentation papers score it
    (Kipf et al. 2019 report it with tolerance 0 on their grid world).
    """
    hits = n_pred = n_true = 0
    for pred, truth in zip(predicted, true, strict=True):
        pred = sorted({int(t) for t in pred if int(t) >= 1})
        free = sorted({int(t) for t in truth if int(t) >= 1})
        n_pred, n_true = n_pred + len(pred), n_true + len(free)
        for t in pred:
            near = [u for u in free if abs(u - t) <= tolerance]
            if near:
                free.remove(min(near, key=lambda u: abs(u - t)))
                hits += 1
    if n_pred == 0 or n_true == 0:
        return float(n_pred == n_true)
    precision, recall = hits / n_pred, hits / n_true
    return 0.0 if hits == 0 else 2 * precision * recall / (precision + recall)
