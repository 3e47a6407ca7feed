"""Tabular families: an exact model beside the env (four rooms, the Appendix D chains).

Their tasks carry a :class:`~opt_suite.families.base.TabularModel` that the model-based experts,
eigenoptions, option-critic, covering options and the learners' model engines read; the layouts,
grid dynamics and Sutton et al.'s hallway options of four rooms live here with them.
"""
