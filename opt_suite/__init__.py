"""opt_suite: a declarative benchmark suite for option discovery in multi-task RL.

Importing this package never imports TensorFlow (the CLI's non-training commands must answer in well
under a second); it only makes sure that, whenever TensorFlow *is* imported later, it uses Keras 2
(tf-keras), which tf-agents and tensorflow-probability require.
"""

import os as _os

# Must happen before anything imports TensorFlow; setdefault lets a user override it deliberately.
_os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# Before anything imports NumPy (gymnasium, below): the same kernels, so the same numbers, on every
# x86-64 machine (opt_suite/_numerics.py).
from opt_suite._numerics import pin as _pin  # noqa: E402

_pin()

__version__ = "0.3.0"

# Old import paths of moved modules (opt_suite/moved.py): plugins written for 0.2.0 keep importing.
from opt_suite.moved import install as _install_moved  # noqa: E402

_install_moved()

# Gymnasium convention: importing the package registers its env ids (opt_suite/FourRooms-v0, ...).
# Registration is lazy (string entry points): it imports gymnasium, never a family module or TF.
from opt_suite.families import register_envs as _register_envs  # noqa: E402

_register_envs()

__all__ = ["__version__"]
