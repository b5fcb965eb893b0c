"""The guards the hooks run: refuse changes to paths another agent holds.

- :mod:`.changes`: what a commit, push, merge or received push changes, read
  with the ``git`` CLI (a hook may be handed a temporary index that only
  ``GIT_INDEX_FILE`` names, and git's own commands honour it);
- :mod:`.policy`: what a hook does when the board cannot answer, who a
  server's pusher is, switches and bounds, from git config and environment;
- :mod:`.judge`: each hook's question to the board, answered as a
  :class:`.verdict.Verdict` (data);
- :mod:`git_lacunari.views.guard` says it: output, refusal, exit code.

Nothing is imported here: the hook path loads only the parts it uses.
"""
