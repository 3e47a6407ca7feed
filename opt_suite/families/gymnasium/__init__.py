"""Any registered gymnasium env as a task family: the family, its task env wrapper, its ids.

Named like the library it wraps; inside it, ``import gymnasium`` still means the library
(absolute imports), never this package.
"""
