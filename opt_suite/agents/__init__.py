"""Deep RL agents over gymnasium envs, built with tf-agents.

- :mod:`opt_suite.agents.environment`: :class:`GymnasiumPyEnvironment`, the gymnasium -> tf-agents
  adapter (tf-agents 0.18 ships none for gymnasium 1.x);
- :mod:`opt_suite.agents.ppo`: the networks and the PPO agent (what the Atari experts and the
  test-time learner are built from);
- :mod:`opt_suite.agents.expert`: an expert trained per task within a frame budget, its checkpoints,
  and the demonstrations sampled from it.

Importing this package does not import TensorFlow; its submodules do.
"""
