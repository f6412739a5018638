"""One rooted error tree. The CLI prints ``str(error)`` as a single line and exits non-zero."""


class StorbenchError(Exception):
    """Root of every error storbench raises on purpose."""

    exit_code = 1


class InputError(StorbenchError):
    """Bad input from the user: a suite file, a CLI option, a parameter."""

    exit_code = 2


class TargetError(StorbenchError):
    """The target cannot be used (not writable, too little free space, not ours to touch)."""

    exit_code = 2


class ResultsError(StorbenchError):
    """The results store cannot be read (unknown run, newer schema, corrupt files)."""

    exit_code = 3


class WorkloadError(StorbenchError):
    """A workload failed while running."""

    exit_code = 4


class EngineError(StorbenchError):
    """An engine (Spark, ...) could not be started or used."""

    exit_code = 5
