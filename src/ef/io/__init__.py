"""ef's one I/O layer: every file the distribution reads or writes goes through here.

- :mod:`ef.io.atomic` writes files atomically.
"""
