"""Upper bounds of the numbers a user can type, shared by the spec schema and the components.

Far above any sensible benchmark, far below what would exhaust a machine before the first cell
ends; a value above one is a typo (an extra zero), reported with its file and line. They live
below every layer (this module imports nothing) so that a component's ``Params`` can bound its
fields by them without importing the spec package (which imports the components' bases).
"""

MAX_TASKS = 10_000
MAX_SEEDS = 1_000
MAX_SEED = 2**32 - 1  # numpy SeedSequence entropy words are 32-bit
MAX_EPISODES = 100_000
MAX_STEPS = 1_000_000
MAX_BUDGET = 10**10
MAX_BOOTSTRAP = 1_000_000
MAX_ZERO_SHOT = 1_000
