"""One rooted error tree. The CLI prints ``str(error)`` as a single line and exits with the class's code."""


class StorbenchError(Exception):
    """Root of every error storbench raises on purpose."""

    exit_code = 1
    where: tuple[str, int] = ("run", 0)  # the workload and repetition it happened in, set by the runner
    samples: tuple = ()  # what the failed workload measured before it failed: the runner stores them

    def __init_subclass__(cls, exit_code: int | None = None, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if exit_code is not None:
            cls.exit_code = exit_code


# Exit codes: 2 bad input or an unusable target, 3 unreadable results, 4 a workload failed, 5 an engine failed.
class InputError(StorbenchError, exit_code=2):
    """Bad input from the user: a suite file, a CLI option, a parameter."""


class TargetError(StorbenchError, exit_code=2):
    """The target cannot be used (not writable, too little free space, not ours to touch)."""


class ResultsError(StorbenchError, exit_code=3):
    """The results store cannot be read (unknown run, newer schema, corrupt files)."""


class WorkloadError(StorbenchError, exit_code=4):
    """A workload failed while running."""


class EngineError(StorbenchError, exit_code=5):
    """An engine (Spark, fio, rados, the native load engine) could not be started or used."""
