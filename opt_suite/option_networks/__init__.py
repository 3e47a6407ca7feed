"""Option networks: what they see of a state, their layers, and their seeded initialisation.

Shared by the methods that build options from networks: ``offline_options`` trains them (Algorithm
1 of Garcia, Nota & Thomas 2020) and the ``random_options`` baseline uses them untrained, drawn
exactly as Algorithm 1 draws them (:mod:`opt_suite.option_networks.initial`). Below the methods,
above the option sets (:mod:`opt_suite.options`) and the families.

Modules: ``features`` (a tabular state's network input), ``networks`` (MLP options and the policy
over options as pure functions of their weights), ``conv`` (convolutional options on frames),
``initial`` (the seeds and the untrained options). Importing this package imports nothing; its
modules import TensorFlow.
"""
