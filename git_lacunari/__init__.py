"""git-lacunari: `git lac`, a shared board of claims and path locks for a fleet of workers."""

__version__ = "0.1.0"
