"""Option sets: the protocol (:mod:`.base`), tables (:mod:`.tabular`), networks (:mod:`.network`).

Importing this package never imports TensorFlow; ``NetworkOptionSet`` is imported from
``opt_suite.options.network`` (it loads TensorFlow only when a set is built or loaded).
"""

from opt_suite.options.base import (
    OptionSet,
    OptionSetError,
    from_bytes,
    load_option_set,
    option_set_kind,
    to_bytes,
)
from opt_suite.options.tabular import TabularOptionSet

__all__ = [
    "OptionSet",
    "OptionSetError",
    "TabularOptionSet",
    "from_bytes",
    "load_option_set",
    "option_set_kind",
    "to_bytes",
]
