-- 0010: the board's case rule. Clones with different
-- core.ignorecase share a board, so the board says whether README and readme
-- are one path: `git lac init` records lac_settings 'case' (fold or exact).
-- lac_require_free (functions/team.sql) compares patterns by it, through
-- lac_folds(); a board without the setting compares exactly, as before.
ALTER TABLE lac_settings
    ADD CONSTRAINT lac_settings_case_ok CHECK (name <> 'case' OR value IN ('fold', 'exact'))
        NOT VALID;
