"""The Atari family under the env contract: no exact model, frames, frame skips."""

from opt_suite.families.atari.family import Atari, Params
from opt_suite.testing import EnvContract


class TestAtariEnvContract(EnvContract):
    episode_step_limit = 20_000  # a random Breakout agent loses its lives well within this

    def family(self):
        return Atari(Params(game="breakout"))
