"""Method ``offline_options``: options learned offline from demonstrations (Garcia et al. 2020).

Modules, in reading order: ``params`` (the spec's knobs), ``features`` (what networks see of a
state), ``networks`` (μ/β options and π), ``demos`` (padded demonstrations), ``training``
(lines 9–14 of Algorithm 1), ``algorithm`` (Algorithm 1), ``method`` (the method contract). Only
``params`` and ``method`` are imported here: TensorFlow loads when training starts.
"""

from opt_suite.methods.offline_options.method import OfflineOptions, initial_options
from opt_suite.methods.offline_options.params import Params

__all__ = ["OfflineOptions", "Params", "initial_options"]
