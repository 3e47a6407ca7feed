"""The Atari family (ale-py): the paper's second domain, and its C++ thread batch of envs."""
