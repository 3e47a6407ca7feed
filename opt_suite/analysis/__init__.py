"""What a run's option sets mean, computed: above the objective, below the reports and commands.

:mod:`.diagnosis` scores option sets on Ĵ under their own and a fitted π and explains which option
explains which demonstrated segment (``opt-suite diagnose``); :mod:`opt_suite.report` only lays
such results out.
"""
