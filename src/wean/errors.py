"""The one exception type that the command line turns into a one-line message."""


class WeanError(Exception):
    """A problem with the user's input (a file, a line, an option), not a bug in wean.

    The command line prints ``error: <message>`` and exits with status 2; library callers can
    catch it. Messages name the file and, where there is one, the line.
    """


class UntrustedPlugins(WeanError):
    """A model directory's config names plug-in code that nobody asked to run (``plugins``: the
    files it names that are not imported)."""

    def __init__(self, message: str, plugins: tuple[str, ...] = ()):  # a default: pickle passes the message alone
        super().__init__(message)
        self.plugins = tuple(plugins)
