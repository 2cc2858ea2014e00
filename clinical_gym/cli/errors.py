"""The CLI's error type."""


class CLIError(Exception):
    """A user error: printed as one line (``clinical-gym: error: ...``), exit status 2."""
